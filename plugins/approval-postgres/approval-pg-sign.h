/* approval-pg-sign.h: HMAC of the approval-postgres rows.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

/* A hex HMAC-SHA256 is this long. */
#define APG_SIGNATURE_HEX_LEN 64

/* The canonical JSON of @request: what a row's signature covers. */
char     *apg_request_canonical (SubagentApprovalRequest *request);

/* Lower-case hex HMAC-SHA256 of @canonical (a request's canonical JSON)
 * under @key. */
char     *apg_sign              (GBytes     *key,
                                 const char *canonical);

/* Whether @signature (hex, as stored) is the HMAC of @canonical under
 * @key; compared in constant time. */
gboolean  apg_verify            (GBytes     *key,
                                 const char *canonical,
                                 const char *signature);

G_END_DECLS
