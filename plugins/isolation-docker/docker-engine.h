/* docker-engine.h: a client of the Docker Engine API (HTTP/1.1 over a unix
 * socket, TCP or TCP+TLS), shared by the plugin and its exec helper. Only
 * GIO and json-glib: the helper does not load libsubagent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

/* From <subagent.h>; the exec helper, which does not load the library,
 * compiles its matcher in (subagent-exclude-set.c). */
typedef struct _SubagentExcludeSet SubagentExcludeSet;

G_BEGIN_DECLS

/* Errors of this file; the plugin maps them onto SUBAGENT_ISOLATION_ERROR. */
#define DOCKER_ENGINE_ERROR (docker_engine_error_quark ())
GQuark docker_engine_error_quark (void);

typedef enum {
  DOCKER_ENGINE_ERROR_ADDRESS,       /* a host, context or TLS setting is wrong */
  DOCKER_ENGINE_ERROR_UNREACHABLE,   /* connect, TLS or protocol failure */
  DOCKER_ENGINE_ERROR_TOO_OLD,       /* the engine's API is older than we need */
  DOCKER_ENGINE_ERROR_NOT_FOUND,     /* HTTP 404 */
  DOCKER_ENGINE_ERROR_CONFLICT,      /* HTTP 409 */
  DOCKER_ENGINE_ERROR_FAILED,        /* any other refusal */
} DockerEngineError;

/* The API versions we speak: the oldest with everything we use, and the
 * newest we were tested with (an engine newer than that is asked for it). */
#define DOCKER_API_MIN "1.30"
#define DOCKER_API_MAX "1.41"

typedef struct _DockerEngine DockerEngine;

DockerEngine *docker_engine_new            (const char  *host,
                                            const char  *context,
                                            GError     **error);
DockerEngine *docker_engine_new_from_argv  (const char * const *args,
                                            GError     **error);
DockerEngine *docker_engine_new_from_data  (GVariant    *backend_data);
void          docker_engine_free           (DockerEngine *engine);
void          docker_engine_add_to_data    (DockerEngine    *engine,
                                            GVariantBuilder *builder);
GPtrArray    *docker_engine_to_argv        (DockerEngine *engine);
const char   *docker_engine_get_address    (DockerEngine *engine);
const char   *docker_engine_get_origin     (DockerEngine *engine);
const char   *docker_engine_get_api_version (DockerEngine *engine);
gboolean      docker_engine_is_podman      (DockerEngine *engine);
gboolean      docker_engine_is_local       (DockerEngine *engine);
char         *docker_engine_describe       (DockerEngine *engine);

gboolean      docker_engine_negotiate      (DockerEngine  *engine,
                                            GCancellable  *cancellable,
                                            GError       **error);
char         *docker_engine_server_version (DockerEngine  *engine,
                                            GCancellable  *cancellable,
                                            GError       **error);

/* One request with a JSON body (or none) and a JSON answer (or none). A
 * status >= 400 is an error whose message is the engine's. */
gboolean      docker_engine_call           (DockerEngine  *engine,
                                            const char    *method,
                                            const char    *path,
                                            JsonNode      *body,
                                            guint         *out_status,
                                            JsonNode     **out_json,
                                            GCancellable  *cancellable,
                                            GError       **error);

/* ---- lower level: one connection per request ---------------------------- */

typedef struct _DockerResponse DockerResponse;

/* Writes the body of a streamed (chunked) request. */
typedef gboolean (*DockerBodyWriter) (GOutputStream  *out,
                                      gpointer        user_data,
                                      GCancellable   *cancellable,
                                      GError        **error);

DockerResponse *docker_engine_request      (DockerEngine      *engine,
                                            const char        *method,
                                            const char        *path,
                                            const char        *content_type,
                                            GBytes            *body,
                                            DockerBodyWriter   writer,
                                            gpointer           writer_data,
                                            gboolean           upgrade,
                                            GCancellable      *cancellable,
                                            GError           **error);
guint           docker_response_get_status (DockerResponse *response);
const char     *docker_response_get_header (DockerResponse *response,
                                            const char     *name);
gssize          docker_response_read       (DockerResponse *response,
                                            void           *buffer,
                                            gsize           size,
                                            GCancellable   *cancellable,
                                            GError        **error);
gboolean        docker_response_read_fully (DockerResponse *response,
                                            void           *buffer,
                                            gsize           size,
                                            gsize          *out_read,
                                            GCancellable   *cancellable,
                                            GError        **error);
GBytes         *docker_response_read_all   (DockerResponse *response,
                                            gsize           limit,
                                            GCancellable   *cancellable,
                                            GError        **error);
gboolean        docker_response_check      (DockerResponse *response,
                                            DockerEngine   *engine,
                                            const char     *what,
                                            GCancellable   *cancellable,
                                            GError        **error);
GOutputStream  *docker_response_get_output (DockerResponse *response);
gboolean        docker_response_close_write (DockerResponse *response,
                                             GError        **error);
void            docker_response_free       (DockerResponse *response);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (DockerEngine, docker_engine_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (DockerResponse, docker_response_free)

/* ---- docker-exec.c: one process run in a container ------------------------ */

typedef struct {
  gboolean known;      /* the engine said how it ended */
  gint64 exit_code;
  gint64 pid;          /* 0: it never started */
} DockerExecEnd;

JsonNode       *docker_exec_config     (const char * const *argv,
                                        const char      *user,
                                        const char      *workdir,
                                        const char * const *env,
                                        gboolean         attach_stdin);
DockerResponse *docker_exec_open       (DockerEngine    *engine,
                                        const char      *container,
                                        JsonNode        *config,
                                        char           **out_exec_id,
                                        GCancellable    *cancellable,
                                        GError         **error);
DockerExecEnd   docker_exec_wait       (DockerEngine    *engine,
                                        const char      *exec_id);
gboolean        docker_exec_read_frame (DockerResponse  *stream,
                                        guint8           head[8],
                                        gsize           *out_got,
                                        gboolean        *out_framed,
                                        guint32         *out_size,
                                        GCancellable    *cancellable,
                                        GError         **error);

/* ---- docker-tar*.c: the workspace as a tar stream ------------------------- */

typedef struct {
  guint64 entries;          /* headers written, pax records not counted */
  gboolean special_modes;   /* an entry is setuid, setgid or sticky */
} DockerTarStats;

/* Writes the tree at @root as a tar stream (entries `./…`, owned by
 * @uid:@gid, top-level names in @exclude left out; with @repeat_dirs each
 * directory's entry comes again after its contents). */
gboolean docker_tar_write_tree (const char          *root,
                                const char * const  *exclude,
                                const SubagentExcludeSet *secrets,
                                guint                uid,
                                guint                gid,
                                GOutputStream       *out,
                                gboolean             repeat_dirs,
                                DockerTarStats      *out_stats,
                                GCancellable        *cancellable,
                                GError             **error);

/* Reads a tar stream of one directory (entries `NAME/…`, as GET archive
 * gives them) into @root: creates and replaces what it holds, then removes
 * what it does not (top-level names in @keep excepted). What @secrets
 * matches is neither written nor removed: the parent's secrets stay, a
 * child's own never come back. Runs of zeros are
 * written as holes; a file over @max_file_size bytes is an error. */
typedef gssize (*DockerTarRead) (gpointer       source,
                                 void          *buffer,
                                 gsize          size,
                                 GCancellable  *cancellable,
                                 GError       **error);

gboolean docker_tar_apply      (DockerTarRead        read,
                                gpointer             source,
                                const char          *root,
                                const char * const  *keep,
                                const SubagentExcludeSet *secrets,
                                guint64              max_file_size,
                                GCancellable        *cancellable,
                                GError             **error);

gboolean docker_tar_put        (DockerEngine        *engine,
                                const char          *container,
                                const char          *root,
                                const char * const  *exclude,
                                const SubagentExcludeSet *secrets,
                                guint                uid,
                                guint                gid,
                                GCancellable        *cancellable,
                                GError             **error);
gboolean docker_tar_fetch      (DockerEngine        *engine,
                                const char          *container,
                                const char          *root,
                                const char * const  *keep,
                                const SubagentExcludeSet *secrets,
                                guint64              max_file_size,
                                GCancellable        *cancellable,
                                GError             **error);

/* ---- docker-copy-in.c: the workspace into the container -------------------- */

gboolean docker_copy_in        (DockerEngine        *engine,
                                const char          *container,
                                const char          *user,
                                const char          *root,
                                const char * const  *exclude,
                                const SubagentExcludeSet *secrets,
                                guint                uid,
                                guint                gid,
                                gboolean             use_exec,
                                const char         **out_method,
                                gboolean            *out_image_refused,
                                GCancellable        *cancellable,
                                GError             **error);

G_END_DECLS
