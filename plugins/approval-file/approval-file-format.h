/* approval-file-format.h: the on-disk document of the approval-file plugin.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <subagent.h>

G_BEGIN_DECLS

#define AFS_FORMAT_VERSION 1

/* A hex HMAC-SHA256 is this long. */
#define AFS_SIGNATURE_HEX_LEN 64

/* Lower-case hex HMAC-SHA256 of @data under @key. */
char       *afs_hmac_hex           (GBytes     *key,
                                    const char *data,
                                    gsize       length);

/* The canonical JSON of @request as it is now (not kept). */
char       *afs_request_canonical  (SubagentApprovalRequest *request);

/* The compact JSON (or with @canonical, the canonical JSON) of @request,
 * computed once and kept on the object: only for requests that never change
 * again, such as the sink's cached ones. */
const char *afs_request_text       (SubagentApprovalRequest *request,
                                    gboolean                 canonical);

/* Serializes @requests (SubagentApprovalRequest, which must never change
 * afterwards: see afs_request_text()) as the file of @run_id, signed when
 * @key is non-NULL. */
GBytes     *afs_document_serialize (const char *run_id,
                                    GPtrArray  *requests,
                                    GBytes     *key);

/* Parses and verifies a file's contents. Returns the requests (element type
 * SubagentApprovalRequest) or NULL with SUBAGENT_APPROVAL_ERROR_INTEGRITY
 * when the text does not parse, the signature is missing/wrong while @key is
 * set, the document belongs to another run, or a request fails its digest.
 * @previous (nullable: the requests of the last version read or written,
 * which must never change) lets unchanged requests be reused rather than
 * parsed and verified again; the result is the same either way. */
GPtrArray  *afs_document_parse     (const char *run_id,
                                    const char *data,
                                    gsize       length,
                                    GBytes     *key,
                                    GPtrArray  *previous,
                                    GError    **error);

G_END_DECLS
