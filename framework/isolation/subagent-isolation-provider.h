/* subagent-isolation-provider.h: the interface isolation backends implement.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#if !defined(SUBAGENT_INSIDE) && !defined(SUBAGENT_COMPILATION)
#error "Only <subagent.h> can be included directly."
#endif

#include "subagent-version.h"

#include <gio/gio.h>

#include <json-glib/json-glib.h>

#include "subagent-isolation-context.h"
#include "subagent-isolation-request.h"

G_BEGIN_DECLS

#define SUBAGENT_TYPE_ISOLATION_PROVIDER (subagent_isolation_provider_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (SubagentIsolationProvider, subagent_isolation_provider, SUBAGENT, ISOLATION_PROVIDER, GObject)

/**
 * SubagentIsolationProviderInterface:
 * @is_available: whether the backend can work here; sets an error saying why not
 * @prepare: creates the workspace (blocking; called from a worker thread by the async default)
 * @prepare_async: starts preparing; the default runs @prepare in a #GTask thread
 * @prepare_finish: finishes @prepare_async
 * @cleanup: removes what @prepare made; must never fail, be safe to call twice, and log what it could not remove
 * @spawnv: starts a process inside the isolation; the default runs it on the host with cwd = child root
 * @reclaim: removes the workspace an owner record names, whose owner is dead,
 *   after checking it is verifiably that record's; sets *reason to a line for
 *   people when it skips, fails or finds the resource already gone. The
 *   default skips: "this backend leaves nothing behind". The caller removes
 *   the record after %SUBAGENT_RECLAIM_REMOVED.
 *
 * The virtual methods of #SubagentIsolationProvider.
 */
struct _SubagentIsolationProviderInterface
{
  GTypeInterface g_iface;

  gboolean                   (*is_available)   (SubagentIsolationProvider  *self,
                                                GError                    **error);
  SubagentIsolationContext  *(*prepare)        (SubagentIsolationProvider  *self,
                                                SubagentIsolationRequest   *request,
                                                GCancellable               *cancellable,
                                                GError                    **error);
  void                       (*prepare_async)  (SubagentIsolationProvider  *self,
                                                SubagentIsolationRequest   *request,
                                                GCancellable               *cancellable,
                                                GAsyncReadyCallback         callback,
                                                gpointer                    user_data);
  SubagentIsolationContext  *(*prepare_finish) (SubagentIsolationProvider  *self,
                                                GAsyncResult               *result,
                                                GError                    **error);
  void                       (*cleanup)        (SubagentIsolationProvider  *self,
                                                SubagentIsolationContext   *context);
  GSubprocess               *(*spawnv)         (SubagentIsolationProvider  *self,
                                                SubagentIsolationContext   *context,
                                                const char * const         *argv,
                                                const char * const         *envp,
                                                GSubprocessFlags            flags,
                                                GError                    **error);
  SubagentReclaimOutcome     (*reclaim)        (SubagentIsolationProvider  *self,
                                                const char                 *root,
                                                JsonObject                 *record,
                                                SubagentReclaimFlags        flags,
                                                char                      **reason);

  /*< private >*/
  gpointer padding[7];
};

SUBAGENT_AVAILABLE_IN_ALL
gboolean                  subagent_isolation_provider_is_available   (SubagentIsolationProvider  *self,
                                                                      GError                    **error);
SUBAGENT_AVAILABLE_IN_ALL
SubagentIsolationContext *subagent_isolation_provider_prepare        (SubagentIsolationProvider  *self,
                                                                      SubagentIsolationRequest   *request,
                                                                      GCancellable               *cancellable,
                                                                      GError                    **error);
SUBAGENT_AVAILABLE_IN_ALL
void                      subagent_isolation_provider_prepare_async  (SubagentIsolationProvider  *self,
                                                                      SubagentIsolationRequest   *request,
                                                                      GCancellable               *cancellable,
                                                                      GAsyncReadyCallback         callback,
                                                                      gpointer                    user_data);
SUBAGENT_AVAILABLE_IN_ALL
SubagentIsolationContext *subagent_isolation_provider_prepare_finish (SubagentIsolationProvider  *self,
                                                                      GAsyncResult               *result,
                                                                      GError                    **error);
SUBAGENT_AVAILABLE_IN_0_2
SubagentReclaimOutcome    subagent_isolation_provider_reclaim        (SubagentIsolationProvider  *self,
                                                                      const char                 *root,
                                                                      JsonObject                 *record,
                                                                      SubagentReclaimFlags        flags,
                                                                      char                      **reason);

/* The built-in `shared` backend: the child works in the parent's root. */
#define SUBAGENT_TYPE_SHARED_ISOLATION (subagent_shared_isolation_get_type ())
SUBAGENT_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SubagentSharedIsolation, subagent_shared_isolation, SUBAGENT, SHARED_ISOLATION, GObject)

SUBAGENT_AVAILABLE_IN_ALL
SubagentIsolationProvider *subagent_shared_isolation_new (void);

/* The built-in mode names; every other one is a plugin's (`Provides=`). */
/**
 * SUBAGENT_ISOLATION_SHARED:
 *
 * The built-in backend: the child works in the parent's root.
 */
#define SUBAGENT_ISOLATION_SHARED "shared"
/**
 * SUBAGENT_ISOLATION_AUTO:
 *
 * The built-in choice: the backend `config.yaml` (`auto_isolation`) or the
 * installed descriptors (`Auto=`) name for a git work tree, or for anywhere else.
 */
#define SUBAGENT_ISOLATION_AUTO "auto"
/**
 * SUBAGENT_ISOLATION_CONTAINER_ALIAS:
 *
 * The deprecated alias `container`; the backend it stands for is the one
 * whose descriptor lists it in `Aliases=`.
 */
#define SUBAGENT_ISOLATION_CONTAINER_ALIAS "container"

SUBAGENT_AVAILABLE_IN_ALL
const char *subagent_isolation_normalize (const char *value,
                                          gboolean   *is_deprecated_alias);
SUBAGENT_AVAILABLE_IN_0_2
void        subagent_isolation_warn_deprecated_alias (const char *value,
                                                      const char *replacement);
SUBAGENT_AVAILABLE_IN_0_2
gboolean    subagent_isolation_is_git_work_tree (const char *parent_root);
SUBAGENT_AVAILABLE_IN_ALL
char       *subagent_isolation_new_session_key (const char *parent_run_id,
                                                const char *def_name);
SUBAGENT_AVAILABLE_IN_ALL
gboolean    subagent_isolation_session_key_is_valid (const char *session_key);

G_END_DECLS
