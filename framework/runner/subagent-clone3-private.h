/* subagent-clone3-private.h: vfork() through clone3(), for a child born
 * in its cgroup. Header-only, so that bench/command-floor.c starts its
 * children as the framework does. Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>
#include <linux/sched.h>
#include <sys/syscall.h>
#include <unistd.h>

G_BEGIN_DECLS

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SUBAGENT_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SUBAGENT_ASAN 1
#endif

/* x86-64 only (the system call is made in place), and not under
 * AddressSanitizer, which learns of a vfork() (and unpoisons the stack its
 * child used) only through its own vfork(). */
#if defined(__x86_64__) && defined(SYS_clone3) && defined(CLONE_INTO_CGROUP) && !defined(SUBAGENT_ASAN)
#define SUBAGENT_HAVE_CLONE3_VFORK 1

/* Called in the child, on the parent thread's stack: system calls only,
 * and it must exec or _exit(). */
typedef void (*SubagentClone3Child) (gpointer data);

/* clone3() with @args (CLONE_VM | CLONE_VFORK and what else they ask),
 * @child (@data) run in the child. Unlike vfork(), clone3() can start the
 * child in its cgroup (CLONE_INTO_CGROUP): it then needs not move itself
 * there by writing to cgroup.procs, a migration that takes the cgroups'
 * threadgroup lock for writing and sleeps on it (0.03 to 0.04 ms of wall
 * time a child, four at a time on two cores). As with vfork(), the child
 * runs on this thread's stack, which waits until the exec: hence the
 * system call made here, not through syscall(), whose return the child
 * would take from under its parent (glibc 2.36 has no clone3()).
 * Returns the pid, or a negative errno. */
static G_GNUC_NO_INLINE G_GNUC_UNUSED long
_subagent_clone3_vfork (struct clone_args   *args,
                        SubagentClone3Child  child,
                        gpointer             data)
{
  long ret;

  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "0" ((long) SYS_clone3), "D" (args), "S" (sizeof *args)
                    : "rcx", "r11", "memory");
  if (ret == 0)
    {
      child (data);
      _exit (127);
    }
  return ret;
}
#endif

G_END_DECLS
