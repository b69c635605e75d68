/* approval-routing-support.h: fixtures of the approval routing tests.
 *
 * The child is tests/fixtures/children/ask-approval.sh, run as definition
 * "asker" over an interactive stdin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "test-support.h"

G_BEGIN_DECLS

/* A temp workspace root. */
typedef struct {
  char *root;
} Fixture;

void ars_fixture_setup    (Fixture       *f,
                           gconstpointer  data);
void ars_fixture_teardown (Fixture       *f,
                           gconstpointer  data);

/* The SPEC arguments of ask-approval.sh, NULL-terminated. */
#define ARS_SPECS(...) ((const char * const[]) { __VA_ARGS__, NULL })

/* Writes definition "asker": reads @answers answers after sending @specs. */
void                ars_write_asker        (const char             *root,
                                            guint                   answers,
                                            const char * const     *specs);
/* A manager on @root (writing @config_yaml first, if given) whose command
 * children keep stdin open for verdicts. */
SubagentManager    *ars_new_manager        (const char             *root,
                                            const char             *config_yaml,
                                            SubagentPermissionMode  mode);
SubagentRunOptions *ars_asker_options      (const char             *isolation);
/* Callback of subagent_manager_run_async(): user_data is a SubagentRunResult **. */
void                ars_on_run_done        (GObject                *source,
                                            GAsyncResult           *result,
                                            gpointer                user_data);
/* Iterates the default main context until *result is set. */
void                ars_wait_for_result    (SubagentRunResult     **result);
/* The child's "got: {...}" lines, parsed, in the order it read them. */
GPtrArray          *ars_answers_of         (SubagentRunResult      *result);
void                ars_assert_answer      (JsonObject             *answer,
                                            const char             *id,
                                            gboolean                approved,
                                            const char             *reason_part);
/* Runs the asker to its end and returns its one answer. */
JsonObject         *ars_run_for_one_answer (SubagentManager        *manager,
                                            const char             *isolation);
gboolean            ars_approvals_dir_exists (const char           *root);

G_END_DECLS
