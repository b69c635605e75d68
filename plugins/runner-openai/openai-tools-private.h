/* openai-tools-private.h: what the built-in workspace tools' files share
 * (openai-tools.c: arguments, Read, Write, Edit, Bash, the registry;
 * openai-tools-fs.c: the tool environment, paths, reads and writes;
 * openai-tools-walk.c: Glob, Grep, LS). Not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <sys/types.h>

#include "openai-private.h"

G_BEGIN_DECLS

struct _OpenaiToolEnv
{
  SubagentIsolationContext *isolation;
  char *root;
  int root_fd;
  GStrv write_scope;   /* normalized relative paths; empty: anywhere */
  GStrv environ;       /* Bash's environment: the host's minus hidden variables */
  OpenaiWatchdog *watchdog;
};

/* ---- paths, reads and writes (openai-tools-fs.c) ------------------------- */
/* A tool's path argument as a path relative to the child root. */
char     *openai_tools_workspace_path (OpenaiToolEnv  *env,
                                       const char     *path,
                                       GError        **error);
/* Whether @rel may be written: not in .git, inside the write_scope. */
gboolean  openai_tools_check_writable (OpenaiToolEnv  *env,
                                       const char     *rel,
                                       GError        **error);
/* openat2() of @rel beneath the child root; -1 with @error set. */
int       openai_tools_open_beneath   (OpenaiToolEnv  *env,
                                       const char     *rel,
                                       int             flags,
                                       mode_t          mode,
                                       gboolean        no_symlinks,
                                       GError        **error);
/* The regular file open at @fd, at most @max bytes. */
GBytes   *openai_tools_read_fd_all    (int             fd,
                                       const char     *rel,
                                       gsize           max,
                                       GError        **error);
GBytes   *openai_tools_read_file      (OpenaiToolEnv  *env,
                                       const char     *rel,
                                       GError        **error);
/* Replaces @rel with @data through a temporary file and a rename. */
gboolean  openai_tools_write_file     (OpenaiToolEnv  *env,
                                       const char     *rel,
                                       const char     *data,
                                       gsize           len,
                                       GError        **error);

/* ---- arguments and results (openai-tools.c) ------------------------------ */
gboolean  openai_tools_arg_string     (JsonObject     *args,
                                       const char     *key,
                                       gboolean        required,
                                       const char    **out,
                                       GError        **error);
gboolean  openai_tools_arg_int        (JsonObject     *args,
                                       const char     *key,
                                       gint64          min,
                                       gint64          max,
                                       gint64         *out,
                                       GError        **error);
gboolean  openai_tools_arg_bool       (JsonObject     *args,
                                       const char     *key);
/* A string node holding @text (taken). */
JsonNode *openai_tools_text_result    (char           *text);

/* ---- Glob, Grep, LS (openai-tools-walk.c) -------------------------------- */
JsonNode *openai_tool_glob (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data,
                            GError **error);
JsonNode *openai_tool_grep (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data,
                            GError **error);
JsonNode *openai_tool_ls   (SubagentTool *tool, JsonObject *args, GCancellable *cancellable, gpointer user_data,
                            GError **error);

G_END_DECLS
