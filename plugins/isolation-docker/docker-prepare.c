/* docker-prepare.c: the provider's prepare(): the workspace, the owner
 * record, the container (warm from the pool, or made while the tree is
 * copied, its bind mount probed), the tree copied in when not bound, and
 * the context (docker-isolation.c's top comment tells the whole of it).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "docker-isolation-private.h"

static const char * const excluded_names[] = { ".subagent", ".git", NULL };

/* How long an image, once seen on an engine, is trusted to be there
 * without asking again (a create that fails asks again anyway), and a
 * failed bind probe is trusted to fail again. */
#define CACHE_TTL_USEC (300 * G_USEC_PER_SEC)

/* ---- prepare ------------------------------------------------------------ */

/* "address\nSUFFIX": keys of the per-engine caches. */
static char *
engine_key (Plan       *plan,
            const char *suffix)
{
  return g_strdup_printf ("%s\n%s", docker_engine_get_address (plan->engine), suffix);
}

static gboolean
cache_fresh (SubagentDockerIsolation *self,
             GHashTable              *table,
             const char              *key)
{
  gpointer seen = NULL;
  gboolean fresh;

  g_mutex_lock (&self->lock);
  fresh = g_hash_table_lookup_extended (table, key, NULL, &seen) &&
          g_get_monotonic_time () - (gint64) GPOINTER_TO_SIZE (seen) < CACHE_TTL_USEC;
  g_mutex_unlock (&self->lock);
  return fresh;
}

static void
cache_set (SubagentDockerIsolation *self,
           GHashTable              *table,
           const char              *key,
           gboolean                 present)
{
  g_mutex_lock (&self->lock);
  if (present)
    g_hash_table_insert (table, g_strdup (key), GSIZE_TO_POINTER ((gsize) g_get_monotonic_time ()));
  else
    g_hash_table_remove (table, key);
  g_mutex_unlock (&self->lock);
}

/* Checks the image once per engine and TTL: a round trip every prepare
 * would otherwise pay. */
static gboolean
check_image_cached (SubagentDockerIsolation  *self,
                    Plan                     *plan,
                    GCancellable             *cancellable,
                    GError                  **error)
{
  g_autofree char *key = engine_key (plan, plan->image);

  if (cache_fresh (self, self->images, key))
    return TRUE;
  if (!docker_container_check_image (plan->engine, plan->image, cancellable, error))
    return FALSE;
  cache_set (self, self->images, key, TRUE);
  return TRUE;
}

JsonObject *
docker_owner_extra (DockerEngine *engine)
{
  JsonObject *extra = json_object_new ();

  /* reclaim (subagentctl prune) reaches the same engine through its API
   * (`api`, `host`); `binary` and `global_args` keep older readers working. */
  json_object_set_boolean_member (extra, "api", TRUE);
  json_object_set_string_member (extra, "binary", "docker");
  json_object_set_array_member (extra, "global_args", json_array_new ());
  json_object_set_string_member (extra, "host", docker_engine_get_address (engine));
  return extra;
}

/* @pool_slot: the key a warm container was made under (its label and,
 * until taken, its marker), which reclaim then accepts too. */
static gboolean
save_owner (Plan        *plan,
            const char  *pool_slot,
            GError     **error)
{
  g_autoptr(JsonObject) extra = docker_owner_extra (plan->engine);
  g_autoptr(GError) local_error = NULL;

  if (plan->base != NULL)
    json_object_set_string_member (extra, "workspace", plan->base);
  if (pool_slot != NULL)
    json_object_set_string_member (extra, "pool_slot", pool_slot);
  if (!subagent_owner_record_save (plan->parent, plan->key, DOCKER_OWNER_KIND, plan->name,
                                   plan->parent_run_id, extra, &local_error))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Cannot record who owns container %s: %s", plan->name, local_error->message);
      return FALSE;
    }
  return TRUE;
}

typedef struct {
  Plan *plan;
  GCancellable *cancellable;
  gboolean bind;            /* in: try a bind mount; out: it worked */
  const char *probe_name;   /* bind: the nonce file in the tree */
  const char *nonce;
  char *container_id;
  char *bind_refusal;       /* why the engine cannot bind the tree */
  char *ulimit_refusal;     /* why the engine would not set ulimits */
  GError *error;
} StartJob;

static gboolean
says_bind_source_missing (const GError *error)
{
  return error != NULL && (strstr (error->message, "bind source path does not exist") != NULL ||
                           strstr (error->message, "no such file or directory") != NULL);
}

/* Creates and starts the container; with job->bind, probes the mount and
 * removes the container again when the engine does not see the tree. */
static gpointer
start_in_thread (gpointer data)
{
  StartJob *job = data;
  Plan *plan = job->plan;
  DockerSpec spec;
  g_autoptr(GError) local_error = NULL;

retry:
  docker_plan_fill_spec (plan, &spec, job->bind);
  if (job->ulimit_refusal != NULL)
    spec.nofile = spec.nproc = 0;
  job->container_id = docker_container_create (plan->engine, &spec, job->cancellable, &local_error);
  if (job->container_id == NULL)
    {
      if (job->bind && says_bind_source_missing (local_error))
        {
          job->bind = FALSE;
          job->bind_refusal = g_strdup (local_error->message);
          return NULL;
        }
      job->error = g_steal_pointer (&local_error);
      return NULL;
    }
  if (!docker_container_start (plan->engine, job->container_id, job->cancellable, &local_error))
    {
      /* Ulimits only where the engine may set them (a rootless or
       * confined engine may not raise one): without them, and say so. */
      if (job->ulimit_refusal == NULL && (spec.nofile > 0 || spec.nproc > 0) &&
          strstr (local_error->message, "rlimit") != NULL)
        {
          job->ulimit_refusal = g_strdup (local_error->message);
          g_clear_error (&local_error);
          g_clear_pointer (&job->container_id, g_free);
          if (!docker_container_remove (plan->engine, plan->name, &job->error))
            return NULL;
          goto retry;
        }
      job->error = g_steal_pointer (&local_error);
      return NULL;
    }
  if (job->bind && job->probe_name != NULL &&
      !docker_container_probe (plan->engine, job->container_id, job->probe_name, job->nonce, job->cancellable,
                               &local_error))
    {
      if (local_error != NULL)
        {
          job->error = g_steal_pointer (&local_error);
          return NULL;
        }
      job->bind = FALSE;
      job->bind_refusal = g_strdup_printf ("the probe file %s written into %s is not in the container's %s",
                                           job->probe_name, plan->tree, DOCKER_WORKDIR);
      if (!docker_container_remove (plan->engine, plan->name, &job->error))
        return NULL;
      g_clear_pointer (&job->container_id, g_free);
    }
  return NULL;
}

/* Undoes a half-made workspace: container, directory, record, worktree. */
static void
undo_prepare (Plan                     *plan,
              gboolean                  container_started,
              SubagentIsolationContext *worktree)
{
  g_autoptr(GError) error = NULL;
  gboolean complete = TRUE;

  if (container_started && !docker_container_remove (plan->engine, plan->name, &error))
    {
      g_message ("Could not remove container %s of a failed prepare: %s", plan->name, error->message);
      g_clear_error (&error);
      complete = FALSE;
    }
  if (plan->base != NULL && !docker_workspace_remove (plan->base, plan->key, &error))
    {
      g_message ("Could not remove workspace %s of a failed prepare: %s", plan->base, error->message);
      complete = FALSE;
    }
  /* What could not go keeps its record, so prune retries it; a worktree
   * still mounted in a container stays for prune too. */
  if (complete)
    subagent_owner_record_remove (plan->parent, plan->key);
  if (complete && worktree != NULL)
    {
      g_clear_error (&error);
      if (!docker_workspace_take_back (plan->tree, &error))
        g_message ("Could not take worktree %s back: %s", plan->tree, error->message);
      subagent_isolation_context_cleanup (worktree);
    }
}

/* The bind caches' key: the engine, the directory trees are made in and
 * its device. */
static char *
bind_cache_key (Plan       *plan,
                const char *trees_dir)
{
  g_autofree char *suffix = NULL;
  struct stat st;

  suffix = g_strdup_printf ("%s\n%ju", trees_dir, stat (trees_dir, &st) == 0 ? (uintmax_t) st.st_dev : 0);
  return engine_key (plan, suffix);
}

/* A warm container for this prepare's exact options, if the pool has one
 * and the transfer mode is already known (a bind trusted by a passed
 * probe, or copy); NULL: the plain path. *out_signature is set whenever
 * the mode is known. */
static DockerPoolSlot *
take_from_pool (SubagentDockerIsolation  *self,
                Plan                     *plan,
                GCancellable             *cancellable,
                char                    **out_signature)
{
  g_autofree char *key = bind_cache_key (plan, plan->dir);
  DockerPoolSlot *slot;
  DockerSpec spec;
  gboolean bind;

  *out_signature = NULL;
  if (plan->transfer != TRANSFER_COPY && cache_fresh (self, self->bind_ok, key))
    bind = TRUE;
  else if (plan->transfer == TRANSFER_COPY ||
           (plan->transfer == TRANSFER_AUTO && cache_fresh (self, self->no_bind, key)))
    bind = FALSE;
  else
    return NULL;   /* a probe first, on the plain path */
  docker_plan_fill_spec (plan, &spec, bind);
  *out_signature = docker_pools_signature (plan->engine, &spec, plan->parent, plan->dir);
  slot = docker_pools_take (self->pools, *out_signature);
  /* Someone may have removed or stopped it meanwhile. */
  if (slot != NULL && !docker_container_is_running (plan->engine, slot->id, cancellable, NULL))
    {
      g_debug ("Pooled container %s is not running any more: removing it", slot->name);
      docker_pools_discard (self->pools, plan->engine, plan->parent, slot);
      slot = NULL;
    }
  return slot;
}

/* Makes a taken warm container this session's: its own owner record
 * (naming the slot, whose label the container carries) replaces the
 * slot's, and the workspace marker gets the session's key. */
static gboolean
adopt_slot (Plan            *plan,
            DockerPoolSlot  *slot,
            GError         **error)
{
  g_autoptr(GError) local_error = NULL;

  g_free (plan->name);
  plan->name = g_strdup (slot->name);
  g_free (plan->base);
  plan->base = g_strdup (slot->base);
  g_free (plan->tree);
  plan->tree = g_strdup (slot->tree);
  if (!save_owner (plan, slot->slot, error))
    return FALSE;
  subagent_owner_record_remove (plan->parent, slot->slot);
  if (!subagent_owner_marker_write (plan->base, DOCKER_MARKER, plan->key, plan->parent, &local_error))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not write the workspace marker: %s", local_error->message);
      return FALSE;
    }
  return TRUE;
}

static char *
new_nonce (void)
{
  return g_strdup_printf ("%08x%08x%08x%08x", g_random_int (), g_random_int (), g_random_int (), g_random_int ());
}

SubagentIsolationContext *
docker_prepare (SubagentIsolationProvider  *provider,
                SubagentIsolationRequest   *request,
                GCancellable               *cancellable,
                GError                    **error)
{
  SubagentDockerIsolation *self = SUBAGENT_DOCKER_ISOLATION (provider);
  g_auto (Plan) plan = { 0 };
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *container_id = NULL;
  g_autofree char *nonce = NULL;
  g_autofree char *probe_name = NULL;
  g_autofree char *probe_path = NULL;
  g_autofree char *no_bind_key = NULL;
  g_autofree char *described = NULL;
  g_autoptr(SubagentIsolationContext) worktree = NULL;
  g_autoptr(DockerPoolSlot) slot = NULL;
  g_autofree char *pool_signature = NULL;
  SubagentCopyStrategy copy_used = SUBAGENT_COPY_STRATEGY_COPY;
  static const char * const worktree_keep[] = { ".git", NULL };
  gboolean started = FALSE;
  gboolean world_writable = FALSE;
  gboolean copied = TRUE;
  gboolean bind_trusted, tried_bind;
  gboolean given = FALSE;   /* the tree was handed to the container's user */
  StartJob job = { 0 };
  GThread *thread = NULL;
  GVariantBuilder data;
  gint64 copy_start, copy_usec = 0, transfer_usec = 0;
  const char *copy_in_method = NULL;   /* copy mode: "exec" or "archive" */
  DockerSpec spec;
  SubagentExcludeSet *secrets = subagent_isolation_request_get_exclude_set (request);

  if (!docker_plan_read (self, request, &plan, error))
    return NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  /* Nothing exists yet: a dead engine or a missing image leaves nothing. */
  if (!docker_engine_negotiate (plan.engine, cancellable, error))
    {
      docker_error_to_isolation (error, SUBAGENT_ISOLATION_ERROR_UNAVAILABLE);
      return NULL;
    }
  if (!check_image_cached (self, &plan, cancellable, error))
    return NULL;
  described = docker_engine_describe (plan.engine);

  if (!plan.worktree && plan.pool_size > 0)
    slot = take_from_pool (self, &plan, cancellable, &pool_signature);
  if (slot != NULL)
    {
      /* A warm container: nothing ran in it; only the workspace is filled. */
      started = TRUE;
      if (!adopt_slot (&plan, slot, &local_error))
        goto failed;
      copy_start = g_get_monotonic_time ();
      if (!subagent_tree_copy_excluding (plan.parent, plan.tree, SUBAGENT_COPY_STRATEGY_AUTO, excluded_names,
                                         secrets, &copy_used, cancellable, &local_error))
        goto failed;
      copy_usec = g_get_monotonic_time () - copy_start;
      if (slot->bind)
        {
          if (!docker_workspace_give_to_user (plan.tree, plan.user, &world_writable, &local_error))
            goto failed;
          given = TRUE;
        }
      container_id = g_strdup (slot->id);
      job.bind = slot->bind;
      job.ulimit_refusal = g_steal_pointer (&slot->ulimit_refusal);
      goto container_ready;
    }

  if (plan.worktree)
    {
      worktree = docker_worktree_prepare (request, cancellable, error);
      if (worktree == NULL)
        return NULL;
      plan.tree = g_strdup (subagent_isolation_context_get_child_root (worktree));
      if (!save_owner (&plan, NULL, &local_error))
        goto failed;
    }
  else
    {
      if (!docker_workspace_create (plan.base, plan.key, plan.parent, error))
        return NULL;
      if (!save_owner (&plan, NULL, &local_error))
        {
          (void) subagent_tree_remove (plan.base, NULL, NULL);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      if (mkdir (plan.tree, 0700) != 0)
        {
          int saved = errno;
          g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                       "Could not create %s: %s", plan.tree, g_strerror (saved));
          goto failed;
        }
    }

  /* Bind only where a probe proves the engine sees the tree. What a probe
   * found holds for the directory the trees are made in (its device
   * included) on that engine for a while: an engine that failed it lately
   * goes straight to copy, one that passed it binds without asking again
   * (a create the engine refuses for a missing source still falls back). */
  {
    g_autofree char *tree_parent = g_path_get_dirname (plan.tree);
    g_autofree char *trees_dir = plan.worktree ? g_strdup (tree_parent) : g_path_get_dirname (tree_parent);

    no_bind_key = bind_cache_key (&plan, trees_dir);
  }
  job.plan = &plan;
  job.cancellable = cancellable;
  job.bind = plan.transfer == TRANSFER_BIND ||
             (plan.transfer == TRANSFER_AUTO && !cache_fresh (self, self->no_bind, no_bind_key));
  bind_trusted = job.bind && cache_fresh (self, self->bind_ok, no_bind_key);
  tried_bind = job.bind;
  if (job.bind && !bind_trusted)
    {
      nonce = new_nonce ();
      probe_name = g_strconcat (DOCKER_PROBE_PREFIX, nonce, NULL);
      probe_path = g_build_filename (plan.tree, probe_name, NULL);
      job.probe_name = probe_name;
      job.nonce = nonce;
      if (!g_file_set_contents (probe_path, nonce, -1, &local_error))
        goto failed;
    }

  started = TRUE;   /* even a failed or cancelled create may have made it */
  if (!plan.worktree)
    {
      /* The container starts while the tree is copied; nothing runs in it
       * before both are done. */
      thread = g_thread_try_new ("subagent-docker-start", start_in_thread, &job, NULL);
      copy_start = g_get_monotonic_time ();
      copied = subagent_tree_copy_excluding (plan.parent, plan.tree, SUBAGENT_COPY_STRATEGY_AUTO, excluded_names,
                                             secrets, &copy_used, cancellable, &local_error);
      copy_usec = g_get_monotonic_time () - copy_start;
      /* A bind known to work: the tree goes to the container's user while
       * the container still starts. */
      if (copied && bind_trusted)
        {
          copied = docker_workspace_give_to_user (plan.tree, plan.user, &world_writable, &local_error);
          given = copied;
        }
    }
  if (thread != NULL)
    g_thread_join (thread);
  else
    start_in_thread (&job);
  if (probe_path != NULL)
    (void) g_unlink (probe_path);
  container_id = g_steal_pointer (&job.container_id);
  if (!copied)
    {
      g_clear_error (&job.error);
      goto failed;
    }
  if (job.error != NULL)
    {
      local_error = g_steal_pointer (&job.error);
      goto start_failed;
    }

  if (tried_bind && !job.bind)
    {
      /* The engine works somewhere that does not hold this directory. */
      if (plan.transfer == TRANSFER_BIND)
        {
          g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                       "%s cannot see the host directory %s (%s): it runs on another machine or in another "
                       "mount namespace, and the child would work in an empty directory; set "
                       "docker.transfer to copy (or auto, the default)", described, plan.tree, job.bind_refusal);
          g_free (job.bind_refusal);
          goto failed;
        }
      g_debug ("%s cannot bind %s (%s): copying the workspace", described, plan.tree, job.bind_refusal);
      g_clear_pointer (&job.bind_refusal, g_free);
      cache_set (self, self->no_bind, no_bind_key, TRUE);
      cache_set (self, self->bind_ok, no_bind_key, FALSE);
      world_writable = FALSE;
      if (given && !docker_workspace_take_back (plan.tree, &local_error))
        goto failed;
      given = FALSE;
      job.bind = FALSE;
      start_in_thread (&job);
      container_id = g_steal_pointer (&job.container_id);
      if (job.error != NULL)
        {
          local_error = g_steal_pointer (&job.error);
          goto start_failed;
        }
    }
  else if (probe_name != NULL)
    {
      cache_set (self, self->no_bind, no_bind_key, FALSE);
      cache_set (self, self->bind_ok, no_bind_key, TRUE);
    }

container_ready:
  if (job.bind)
    {
      if ((!given && !docker_workspace_give_to_user (plan.tree, plan.user, &world_writable, &local_error)) ||
          (plan.worktree && !world_writable && !docker_worktree_keep_ownership (plan.tree, &local_error)))
        goto failed;
    }
  else
    {
      gint64 start = g_get_monotonic_time ();
      g_autofree char *tar_key = engine_key (&plan, plan.image);
      gboolean image_refused = FALSE;

      docker_plan_fill_spec (&plan, &spec, FALSE);
      if (!docker_copy_in (plan.engine, container_id, plan.user, plan.tree, plan.worktree ? worktree_keep : NULL,
                           secrets, spec.numeric_user ? spec.uid : 0, spec.numeric_user ? spec.gid : 0,
                           plan.copy_in_exec && !cache_fresh (self, self->no_tar, tar_key), &copy_in_method,
                           &image_refused, cancellable, &local_error))
        {
          if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            {
              g_autoptr(GError) put_error = g_steal_pointer (&local_error);
              g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                           "Could not copy the workspace %s into container %s: %s", plan.tree, plan.name,
                           put_error->message);
            }
          goto failed;
        }
      /* An image that cannot run the exec goes straight to the archive
       * for a while. */
      if (image_refused)
        cache_set (self, self->no_tar, tar_key, TRUE);
      transfer_usec = g_get_monotonic_time () - start;
    }

  if (worktree != NULL)
    for (const char * const *w = subagent_isolation_context_get_warnings (worktree); *w != NULL; w++)
      g_ptr_array_add (warnings, g_strdup (*w));
  if (job.ulimit_refusal != NULL)
    g_ptr_array_add (warnings, g_strdup_printf ("The engine would not set the nofile/nproc ulimits (%s); the "
                                                "container runs with the engine's defaults", job.ulimit_refusal));
  if (world_writable)
    g_ptr_array_add (warnings, g_strdup_printf ("The workspace %s is writable for everyone on the host: "
                                                "user “%s” could not be given it by id", plan.tree, plan.user));
  g_ptr_array_add (warnings, NULL);

  g_variant_builder_init (&data, G_VARIANT_TYPE_VARDICT);
  docker_engine_add_to_data (plan.engine, &data);
  g_variant_builder_add (&data, "{sv}", "container-name", g_variant_new_string (plan.name));
  g_variant_builder_add (&data, "{sv}", "image", g_variant_new_string (plan.image));
  g_variant_builder_add (&data, "{sv}", "user", g_variant_new_string (plan.user));
  g_variant_builder_add (&data, "{sv}", "network", g_variant_new_string (plan.network));
  g_variant_builder_add (&data, "{sv}", "transfer", g_variant_new_string (job.bind ? "bind" : "copy"));
  if (copy_in_method != NULL)
    g_variant_builder_add (&data, "{sv}", "copy-in", g_variant_new_string (copy_in_method));
  g_variant_builder_add (&data, "{sv}", "transfer-max-file", g_variant_new_uint64 ((guint64) plan.max_file));
  g_variant_builder_add (&data, "{sv}", "transfer-usec", g_variant_new_int64 (transfer_usec));
  g_variant_builder_add (&data, "{sv}", "pooled", g_variant_new_boolean (slot != NULL));
  /* Left out of the workspace: copy-back keeps them, the review skips them. */
  g_variant_builder_add (&data, "{sv}", "exclude",
                         g_variant_new_strv (subagent_isolation_request_get_exclude (request), -1));
  g_variant_builder_add (&data, "{sv}", "workspace", g_variant_new_string (worktree ? "worktree" : "snapshot"));
  if (worktree != NULL)
    docker_worktree_add_to_data (worktree, &data);
  else
    {
      g_variant_builder_add (&data, "{sv}", "workspace-base", g_variant_new_string (plan.base));
      g_variant_builder_add (&data, "{sv}", "copy-strategy",
                             g_variant_new_string (subagent_copy_strategy_to_string (copy_used)));
      g_variant_builder_add (&data, "{sv}", "workspace-copy-usec", g_variant_new_int64 (copy_usec));
    }
  g_free (job.ulimit_refusal);
  /* Keep (or start) warm containers for the next prepare like this one;
   * made in the background, never on this one's path. */
  if (!plan.worktree && plan.pool_size > 0)
    {
      g_free (pool_signature);
      docker_plan_fill_spec (&plan, &spec, job.bind);
      pool_signature = docker_pools_signature (plan.engine, &spec, plan.parent, plan.dir);
      docker_pools_want (self->pools, pool_signature, (guint) plan.pool_size, plan.engine, &spec, plan.parent,
                         plan.dir);
    }
  g_debug ("Container %s (%s) of %s ready on %s, workspace %s (%s)", plan.name, container_id, plan.parent,
           described, plan.tree, job.bind ? "bind" : "copy");

  return g_object_new (SUBAGENT_TYPE_ISOLATION_CONTEXT,
                       "provider", provider,
                       "parent-root", plan.parent,
                       "child-root", plan.tree,
                       "isolation", DOCKER_BACKEND,
                       "session-key", plan.key,
                       "container-path", plan.tree,
                       "container-id", container_id,
                       "worktree-path", worktree ? plan.tree : NULL,
                       "branch", worktree ? subagent_isolation_context_get_branch (worktree) : NULL,
                       "cpu-quota", plan.cpus,
                       "memory-limit", plan.memory,
                       "warnings", (char **) warnings->pdata,
                       "backend-data", g_variant_builder_end (&data),
                       NULL);

start_failed:
  /* Maybe the image went away since it was last seen: say so if so. */
  {
    g_autofree char *key = engine_key (&plan, plan.image);
    cache_set (self, self->images, key, FALSE);
  }
  if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_autoptr(GError) image_error = NULL;

      if (!docker_container_check_image (plan.engine, plan.image, cancellable, &image_error))
        {
          g_clear_error (&local_error);
          local_error = g_steal_pointer (&image_error);
        }
      else if (local_error->domain == DOCKER_ENGINE_ERROR && local_error->code != DOCKER_ENGINE_ERROR_UNREACHABLE)
        {
          g_autoptr(GError) create_error = g_steal_pointer (&local_error);
          g_set_error (&local_error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                       "Could not start a container from image “%s”: %s", plan.image, create_error->message);
        }
    }
failed:
  g_free (job.ulimit_refusal);
  undo_prepare (&plan, started, worktree);
  docker_error_to_isolation (&local_error, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED);
  if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      local_error->domain == SUBAGENT_ISOLATION_ERROR)
    g_propagate_error (error, g_steal_pointer (&local_error));
  else
    g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                 "Could not make the container workspace of %s: %s; nothing was left behind",
                 plan.parent, local_error->message);
  return NULL;
}
