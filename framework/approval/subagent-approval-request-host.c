/* subagent-approval-request-host.c: the process that waits for a request's
 * verdict: recorded when the request is made, checked to tell abandoned ones.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <unistd.h>

#include "subagent.h"
#include "subagent-approval-private.h"
#include "subagent-approval-request-private.h"

/* This process as the host that waits for its requests' verdicts. Its
 * start time and the boot id cannot change while it runs, so they are read
 * once (two /proc files, four system calls each, on every request's way to
 * the store otherwise); a forked child has another pid and reads its own. */
gboolean
_subagent_approval_request_own_host (gint64   *out_pid,
                                     guint64  *out_start,
                                     char    **out_boot_id)
{
  static GMutex lock;
  static gint64 cached_pid;
  static guint64 cached_start;
  static char *cached_boot_id;
  gint64 pid = getpid ();
  gboolean known;

  g_mutex_lock (&lock);
  if (cached_pid != pid || cached_boot_id == NULL)
    {
      guint64 start = 0;
      g_autofree char *boot_id = _subagent_host_boot_id ();

      if (boot_id != NULL && _subagent_host_process_start_time (pid, &start))
        {
          g_free (cached_boot_id);
          cached_boot_id = g_steal_pointer (&boot_id);
          cached_start = start;
          cached_pid = pid;
        }
    }
  known = cached_pid == pid && cached_boot_id != NULL;
  if (known)
    {
      *out_pid = pid;
      *out_start = cached_start;
      *out_boot_id = g_strdup (cached_boot_id);
    }
  g_mutex_unlock (&lock);
  return known;
}

gboolean
_subagent_host_process_start_time (gint64   pid,
                                   guint64 *out_start)
{
  /* Field 22 of /proc/<pid>/stat, as owner records keep it. */
  return pid > 0 && pid <= G_MAXINT && subagent_owner_get_process_start_time ((GPid) pid, out_start, NULL);
}

char *
_subagent_host_boot_id (void)
{
  char *text = NULL;

  if (!g_file_get_contents ("/proc/sys/kernel/random/boot_id", &text, NULL, NULL))
    return NULL;
  return g_strstrip (text);
}

void
_subagent_approval_request_set_host (SubagentApprovalRequest *self,
                                     gint64                   pid,
                                     guint64                  start_time,
                                     const char              *boot_id,
                                     const char              *host_name)
{
  g_return_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self));
  self->host_pid = pid;
  self->host_start_time = start_time;
  g_free (self->host_boot_id);
  self->host_boot_id = g_strdup (boot_id);
  g_free (self->host_name);
  self->host_name = g_strdup (host_name);
}

/**
 * subagent_approval_request_get_host:
 * @self: a request
 * @out_pid: (out) (optional): the pid of the process waiting for the verdict
 * @out_start_time: (out) (optional): its start time (clock ticks after boot,
 *   field 22 of `/proc/<pid>/stat`)
 * @out_boot_id: (out) (optional) (transfer none): the boot id of its machine
 * @out_host_name: (out) (optional) (transfer none): its machine's host name
 *
 * The host that waits for this request's verdict, as recorded when it was
 * made. Documents written before the host was recorded have none.
 *
 * Returns: %TRUE if the request records its host
 *
 * Since: 0.2
 */
gboolean
subagent_approval_request_get_host (SubagentApprovalRequest  *self,
                                    gint64                   *out_pid,
                                    guint64                  *out_start_time,
                                    const char              **out_boot_id,
                                    const char              **out_host_name)
{
  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self), FALSE);
  if (out_pid)
    *out_pid = self->host_pid;
  if (out_start_time)
    *out_start_time = self->host_start_time;
  if (out_boot_id)
    *out_boot_id = self->host_boot_id;
  if (out_host_name)
    *out_host_name = self->host_name;
  return self->host_pid > 0 && self->host_boot_id != NULL && self->host_name != NULL;
}

/**
 * subagent_approval_request_is_abandoned:
 * @self: a request
 *
 * Whether nobody waits for this request any more: it is pending, its host
 * ran on this machine (same boot id and host name) and that process is
 * gone (its pid no longer runs, or runs another program started at another
 * time). A request of another machine, or without a recorded host, is
 * never abandoned: this process cannot tell.
 *
 * Returns: %TRUE if the request is abandoned
 *
 * Since: 0.2
 */
gboolean
subagent_approval_request_is_abandoned (SubagentApprovalRequest *self)
{
  g_autofree char *boot_id = NULL;
  guint64 start = 0;

  g_return_val_if_fail (SUBAGENT_IS_APPROVAL_REQUEST (self), FALSE);
  if (subagent_approval_request_get_status (self) != SUBAGENT_APPROVAL_STATUS_PENDING ||
      !subagent_approval_request_get_host (self, NULL, NULL, NULL, NULL))
    return FALSE;
  boot_id = _subagent_host_boot_id ();
  if (boot_id == NULL || !g_str_equal (boot_id, self->host_boot_id) ||
      !g_str_equal (g_get_host_name (), self->host_name))
    return FALSE;
  if (!_subagent_host_process_start_time (self->host_pid, &start))
    return TRUE;   /* no such process */
  return start != self->host_start_time;
}
