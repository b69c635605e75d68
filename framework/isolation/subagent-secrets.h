/* subagent-secrets.h: what must not reach a child: the approval key, and
 * files that usually hold secrets.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <glib-object.h>

G_BEGIN_DECLS

/**
 * SUBAGENT_APPROVAL_HMAC_KEY_ENV:
 *
 * The environment variable that may hold the approval HMAC key.
 */
#define SUBAGENT_APPROVAL_HMAC_KEY_ENV "SUBAGENT_APPROVAL_HMAC_KEY"

SUBAGENT_AVAILABLE_IN_0_2
const char * const *subagent_secret_exclude_defaults   (void);
SUBAGENT_AVAILABLE_IN_0_2
gboolean            subagent_secret_path_is_excluded   (const char * const *patterns,
                                                        const char         *relative_path);

/**
 * SubagentExcludeSet:
 *
 * Exclusion patterns (see subagent_secret_path_is_excluded()) compiled
 * once, for walkers that test every directory entry: matching a name
 * allocates nothing. Reference counted; immutable, so threads may share
 * one.
 *
 * Since: 0.2
 */
typedef struct _SubagentExcludeSet SubagentExcludeSet;

#define SUBAGENT_TYPE_EXCLUDE_SET (subagent_exclude_set_get_type ())
SUBAGENT_AVAILABLE_IN_0_2
GType               subagent_exclude_set_get_type      (void) G_GNUC_CONST;
SUBAGENT_AVAILABLE_IN_0_2
SubagentExcludeSet *subagent_exclude_set_new           (const char * const *patterns);
SUBAGENT_AVAILABLE_IN_0_2
SubagentExcludeSet *subagent_exclude_set_ref           (SubagentExcludeSet *self);
SUBAGENT_AVAILABLE_IN_0_2
void                subagent_exclude_set_unref         (SubagentExcludeSet *self);
SUBAGENT_AVAILABLE_IN_0_2
gboolean            subagent_exclude_set_is_empty      (const SubagentExcludeSet *self);
SUBAGENT_AVAILABLE_IN_0_2
gboolean            subagent_exclude_set_match_name    (const SubagentExcludeSet *self,
                                                        const char               *name,
                                                        int                       is_dir);
SUBAGENT_AVAILABLE_IN_0_2
gboolean            subagent_exclude_set_match_path    (const SubagentExcludeSet *self,
                                                        const char               *relative_path);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SubagentExcludeSet, subagent_exclude_set_unref)

SUBAGENT_AVAILABLE_IN_0_2
GBytes             *subagent_approval_key_from_environment (void);
SUBAGENT_AVAILABLE_IN_0_2
GBytes             *subagent_approval_key_from_file    (const char          *path,
                                                        GError             **error);
SUBAGENT_AVAILABLE_IN_0_2
void                subagent_secrets_protect_process   (void);

G_END_DECLS
