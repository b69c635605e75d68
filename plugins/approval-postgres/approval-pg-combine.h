/* approval-pg-combine.h: group commit for approval-postgres.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Calls made at once from several threads are carried out together: the
 * first caller leads and hands every call queued meanwhile to one
 * ApgCombineFunc, so they share a statement and a commit (one WAL flush)
 * instead of each paying its own. A lone caller runs at once. */
typedef struct _ApgCombiner ApgCombiner;

/* The head of a queued call; the caller's own struct starts with it. */
typedef struct {
  gboolean done;           /* guarded by the combiner */
} ApgCombinedCall;

/* Carries out @calls (ApgCombinedCall*, in arrival order, all of one
 * group), storing each one's outcome in its own struct. */
typedef void (*ApgCombineFunc) (GPtrArray *calls,
                                gpointer   user_data);
/* Whether two calls may share a statement. */
typedef gboolean (*ApgSameGroupFunc) (const ApgCombinedCall *a,
                                      const ApgCombinedCall *b);

ApgCombiner *apg_combiner_new  (ApgCombineFunc   func,
                                ApgSameGroupFunc same_group,
                                gpointer         user_data);
void         apg_combiner_free (ApgCombiner     *self);
/* Returns once @call has been carried out, by this thread or another. */
void         apg_combiner_run  (ApgCombiner     *self,
                                ApgCombinedCall *call);

G_END_DECLS
