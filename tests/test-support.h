/* test-support.h: fixtures shared by the GTest programs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

/* A fresh directory under the test's temp dir; removed by sat_rm_rf(). */
char     *sat_make_temp_dir     (const char *prefix);
void      sat_rm_rf             (const char *path);
void      sat_write_file        (const char *dir,
                                 const char *relative_path,
                                 const char *contents);
char     *sat_read_file         (const char *dir,
                                 const char *relative_path);
/* Runs argv (NULL-terminated) in cwd, asserts exit 0 unless allow_failure,
 * returns stdout (transfer full); *status gets the wait status if non-NULL. */
char     *sat_run               (const char  *cwd,
                                 gboolean     allow_failure,
                                 int         *exit_status,
                                 const char  *first_arg,
                                 ...) G_GNUC_NULL_TERMINATED;
/* git init + one commit holding the given files (relative path, contents pairs, NULL-terminated). */
char     *sat_make_git_repo     (const char *first_path,
                                 ...) G_GNUC_NULL_TERMINATED;
/* Path of the built subagentctl (from $SUBAGENTCTL). */
const char *sat_subagentctl     (void);
/* Runs subagentctl with the given arguments (NULL-terminated) in @root;
 * stdout and stderr into *out and *err; returns its exit status. */
int       sat_run_ctl           (const char  *root,
                                 char       **out,
                                 char       **err,
                                 ...) G_GNUC_NULL_TERMINATED;
/* Iterates the default main context until *flag becomes TRUE. */
void      sat_wait_for_flag     (gboolean *flag);

G_END_DECLS
