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

#include <glib.h>

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
SUBAGENT_AVAILABLE_IN_0_2
GBytes             *subagent_approval_key_from_environment (void);
SUBAGENT_AVAILABLE_IN_0_2
GBytes             *subagent_approval_key_from_file    (const char          *path,
                                                        GError             **error);
SUBAGENT_AVAILABLE_IN_0_2
void                subagent_secrets_protect_process   (void);

G_END_DECLS
