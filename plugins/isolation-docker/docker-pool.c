/* docker-pool.c: warm containers (option `container_pool`).
 *
 * On the local engine, the engine's own create + start is most of a
 * child's prepare (docs/performance.md, Docker). With a pool, that work is
 * done before a child asks: containers made exactly as a prepare would make
 * them (same image, user, network, limits, ulimits, hardening, transfer
 * mode) wait, started, for the next prepare with the same options, which
 * takes one and only fills its workspace. A worker thread refills the pool
 * in the background after every take. The work is moved off the critical
 * path, not saved: the host and the engine still pay it.
 *
 * A pooled container is never handed out twice: taken, it belongs to that
 * child, and cleanup destroys it as any other (it never comes back). Its
 * workspace directory, `<workspace_dir>/pool-<hex>/` with `tree/`, is made
 * before the container, so a bind mount's source exists at create time;
 * prepare copies the parent into that (still empty) tree.
 *
 * Ownership: every pooled container has an owner record of its own in the
 * parent's root (session key = its slot key `pool-<hex>`: this process's
 * pid, start time and boot id, as every record), the labels
 * io.subagent.session=<slot key> and io.subagent.pool=true, and a workspace
 * marker of the slot key. `subagentctl prune` therefore removes the pool of
 * a host that died like any other leftover. A take writes the child's own
 * record (extra.pool_slot = the slot key, which reclaim accepts as the
 * container's label) before dropping the slot's, then rewrites the marker
 * for the child's key. docker_pools_free() (the provider's finalize) stops
 * the worker and removes every idle container, its workspace and record.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "docker-private.h"

/* Different option sets pooled at once; more fall back to the plain path. */
#define POOLS_MAX 4

typedef struct {
  char *signature;
  guint size;
  gboolean broken;          /* the last fill failed: no more until a prepare wants it again */
  GPtrArray *ready;         /* DockerPoolSlot* */
  guint filling;
  /* What its containers are made from (owned copies). */
  GStrv engine_argv;
  char *image, *user, *network, *parent, *dir, *parent_run_id;
  DockerSpec spec;          /* strings point into the above */
} Pool;

struct _DockerPools {
  GMutex lock;
  GCond changed;
  GPtrArray *pools;         /* Pool* */
  GThreadPool *worker;
  gboolean closing;
};

void
docker_pool_slot_free (DockerPoolSlot *slot)
{
  if (slot == NULL)
    return;
  g_free (slot->slot);
  g_free (slot->name);
  g_free (slot->id);
  g_free (slot->base);
  g_free (slot->tree);
  g_free (slot->ulimit_refusal);
  g_free (slot);
}

static void
pool_free (Pool *pool)
{
  g_free (pool->signature);
  g_ptr_array_unref (pool->ready);
  g_strfreev (pool->engine_argv);
  g_free (pool->image);
  g_free (pool->user);
  g_free (pool->network);
  g_free (pool->parent);
  g_free (pool->dir);
  g_free (pool->parent_run_id);
  g_free (pool);
}

/**
 * docker_pools_signature:
 * @engine: the engine
 * @spec: the container a prepare would make (name, key and bind source
 *   aside: only whether it binds counts)
 * @parent: the parent root (the owner records go there)
 * @dir: the resolved workspace_dir
 *
 * Returns: (transfer full): what a pooled container must match exactly
 */
char *
docker_pools_signature (DockerEngine     *engine,
                        const DockerSpec *spec,
                        const char       *parent,
                        const char       *dir)
{
  return g_strdup_printf ("%s\n%s\n%s\n%s\n%.9g\n%" G_GINT64_FORMAT "\n%" G_GINT64_FORMAT "\n%" G_GINT64_FORMAT
                          "\n%" G_GINT64_FORMAT "\n%s\n%s\n%s",
                          docker_engine_get_address (engine), spec->image, spec->user, spec->network, spec->cpus,
                          spec->memory_bytes, spec->pids_limit, spec->nofile, spec->nproc,
                          spec->bind_source != NULL ? "bind" : "copy", parent, dir);
}

static void
discard_slot (DockerEngine   *engine,
              const char     *parent,
              DockerPoolSlot *slot)
{
  g_autoptr(GError) error = NULL;
  gboolean complete = TRUE;

  if (engine != NULL && !docker_container_remove (engine, slot->id ? slot->id : slot->name, &error))
    {
      g_message ("Could not remove pooled container %s: %s; `subagentctl prune` will retry", slot->name,
                 error->message);
      g_clear_error (&error);
      complete = FALSE;
    }
  if (!docker_workspace_remove (slot->base, slot->slot, &error))
    {
      g_message ("Could not remove pooled workspace %s: %s", slot->base, error->message);
      complete = FALSE;
    }
  if (complete)
    subagent_owner_record_remove (parent, slot->slot);
}

/* Makes one container of @pool: workspace, owner record, create, start.
 * Runs on the worker thread, without the lock (the pool's template is
 * never changed once made). */
static DockerPoolSlot *
make_slot (Pool     *pool,
           GError  **error)
{
  g_autoptr(DockerEngine) engine = docker_engine_new_from_argv ((const char * const *) pool->engine_argv, error);
  g_autoptr(JsonObject) extra = NULL;
  DockerPoolSlot *slot;
  DockerSpec spec = pool->spec;
  gboolean made = FALSE;

  if (engine == NULL)
    return NULL;
  slot = g_new0 (DockerPoolSlot, 1);
  slot->slot = g_strdup_printf (DOCKER_POOL_PREFIX "%08x%08x", g_random_int (), g_random_int ());
  slot->name = g_strconcat ("subagent-", slot->slot, NULL);
  slot->base = g_build_filename (pool->dir, slot->slot, NULL);
  slot->tree = g_build_filename (slot->base, DOCKER_TREE, NULL);
  slot->bind = pool->spec.bind_source != NULL;

  if (!docker_workspace_create (slot->base, slot->slot, pool->parent, error))
    {
      docker_pool_slot_free (slot);
      return NULL;
    }
  extra = docker_owner_extra (engine);
  json_object_set_string_member (extra, "workspace", slot->base);
  json_object_set_boolean_member (extra, "pool", TRUE);
  if (!subagent_owner_record_save (pool->parent, slot->slot, DOCKER_OWNER_KIND, slot->name, pool->parent_run_id,
                                   extra, error))
    {
      (void) subagent_tree_remove (slot->base, NULL, NULL);
      docker_pool_slot_free (slot);
      return NULL;
    }
  if (mkdir (slot->tree, 0700) != 0)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not create %s: %s", slot->tree, g_strerror (saved));
      goto failed;
    }

  spec.name = slot->name;
  spec.key = slot->slot;
  spec.bind_source = slot->bind ? slot->tree : NULL;
  spec.pool = TRUE;
retry:
  made = TRUE;
  slot->id = docker_container_create (engine, &spec, NULL, error);
  if (slot->id == NULL)
    goto failed;
  if (!docker_container_start (engine, slot->id, NULL, error))
    {
      /* As a plain prepare: without ulimits where the engine refuses them. */
      if (slot->ulimit_refusal == NULL && (spec.nofile > 0 || spec.nproc > 0) && error != NULL &&
          strstr ((*error)->message, "rlimit") != NULL)
        {
          slot->ulimit_refusal = g_strdup ((*error)->message);
          g_clear_error (error);
          if (!docker_container_remove (engine, slot->name, error))
            goto failed;
          g_clear_pointer (&slot->id, g_free);
          spec.nofile = spec.nproc = 0;
          goto retry;
        }
      goto failed;
    }
  return slot;

failed:
  discard_slot (made ? engine : NULL, pool->parent, slot);
  docker_pool_slot_free (slot);
  return NULL;
}

static Pool *
pool_needing_work (DockerPools *pools)
{
  for (guint i = 0; i < pools->pools->len; i++)
    {
      Pool *pool = g_ptr_array_index (pools->pools, i);

      if (!pool->broken && pool->ready->len + pool->filling < pool->size)
        return pool;
    }
  return NULL;
}

/* The worker: fills every pool up to its size, one container at a time
 * (the engine and a 2-core host gain nothing from more at once). */
static void
fill_worker (gpointer data,
             gpointer user_data)
{
  DockerPools *pools = user_data;
  Pool *pool;

  g_mutex_lock (&pools->lock);
  while (!pools->closing && (pool = pool_needing_work (pools)) != NULL)
    {
      g_autoptr(GError) error = NULL;
      DockerPoolSlot *slot;

      pool->filling++;
      g_mutex_unlock (&pools->lock);
      slot = make_slot (pool, &error);
      g_mutex_lock (&pools->lock);
      pool->filling--;
      if (slot == NULL)
        {
          g_message ("Could not make a pooled container from image “%s”: %s; the pool waits for the next prepare",
                     pool->image, error->message);
          pool->broken = TRUE;
        }
      else if (pools->closing)
        {
          g_autoptr(DockerEngine) engine = docker_engine_new_from_argv ((const char * const *) pool->engine_argv,
                                                                        NULL);
          g_mutex_unlock (&pools->lock);
          discard_slot (engine, pool->parent, slot);
          docker_pool_slot_free (slot);
          g_mutex_lock (&pools->lock);
        }
      else
        g_ptr_array_add (pool->ready, slot);
      g_cond_broadcast (&pools->changed);
    }
  g_mutex_unlock (&pools->lock);
}

DockerPools *
docker_pools_new (void)
{
  DockerPools *pools = g_new0 (DockerPools, 1);

  g_mutex_init (&pools->lock);
  g_cond_init (&pools->changed);
  pools->pools = g_ptr_array_new_with_free_func ((GDestroyNotify) pool_free);
  return pools;
}

/**
 * docker_pools_free:
 * @pools: (transfer full): the pools
 *
 * Stops the worker (a container it is making is finished and removed) and
 * removes every idle container with its workspace and owner record.
 */
void
docker_pools_free (DockerPools *pools)
{
  if (pools == NULL)
    return;
  g_mutex_lock (&pools->lock);
  pools->closing = TRUE;
  g_mutex_unlock (&pools->lock);
  if (pools->worker != NULL)
    g_thread_pool_free (pools->worker, TRUE, TRUE);
  for (guint i = 0; i < pools->pools->len; i++)
    {
      Pool *pool = g_ptr_array_index (pools->pools, i);
      g_autoptr(DockerEngine) engine = docker_engine_new_from_argv ((const char * const *) pool->engine_argv, NULL);

      for (guint j = 0; j < pool->ready->len; j++)
        {
          discard_slot (engine, pool->parent, g_ptr_array_index (pool->ready, j));
          docker_pool_slot_free (g_ptr_array_index (pool->ready, j));
        }
      g_ptr_array_set_size (pool->ready, 0);
    }
  g_ptr_array_unref (pools->pools);
  g_cond_clear (&pools->changed);
  g_mutex_clear (&pools->lock);
  g_free (pools);
}

static Pool *
find_pool (DockerPools *pools,
           const char  *signature)
{
  for (guint i = 0; i < pools->pools->len; i++)
    {
      Pool *pool = g_ptr_array_index (pools->pools, i);
      if (g_str_equal (pool->signature, signature))
        return pool;
    }
  return NULL;
}

/* Under the lock. */
static void
kick_worker (DockerPools *pools)
{
  if (pools->worker == NULL)
    pools->worker = g_thread_pool_new (fill_worker, pools, 1, FALSE, NULL);
  if (pools->worker != NULL)
    (void) g_thread_pool_push (pools->worker, GINT_TO_POINTER (1), NULL);
}

/**
 * docker_pools_take:
 * @pools: the pools
 * @signature: from docker_pools_signature()
 *
 * Returns: (transfer full) (nullable): an idle started container made for
 *   @signature, now the caller's alone (a refill is queued), or %NULL
 */
DockerPoolSlot *
docker_pools_take (DockerPools *pools,
                   const char  *signature)
{
  DockerPoolSlot *slot = NULL;
  Pool *pool;

  g_mutex_lock (&pools->lock);
  pool = find_pool (pools, signature);
  if (pool != NULL && pool->ready->len > 0)
    {
      /* The oldest first: each waited the same way. */
      slot = g_ptr_array_steal_index (pool->ready, 0);
      kick_worker (pools);
    }
  g_mutex_unlock (&pools->lock);
  return slot;
}

/**
 * docker_pools_want:
 * @pools: the pools
 * @signature: from docker_pools_signature() of @spec
 * @size: how many idle containers to keep (1 to %DOCKER_POOL_MAX)
 * @engine: the engine
 * @spec: the container a prepare made (name, key and bind source aside)
 * @parent: the parent root
 * @dir: the resolved workspace_dir
 *
 * Makes sure a pool for @signature exists with @size and is being filled
 * (again, after a failed fill). Beyond %POOLS_MAX option sets, nothing.
 */
void
docker_pools_want (DockerPools      *pools,
                   const char       *signature,
                   guint             size,
                   DockerEngine     *engine,
                   const DockerSpec *spec,
                   const char       *parent,
                   const char       *dir)
{
  Pool *pool;

  g_mutex_lock (&pools->lock);
  if (pools->closing)
    goto out;
  pool = find_pool (pools, signature);
  if (pool == NULL)
    {
      g_autoptr(GPtrArray) argv = NULL;

      if (pools->pools->len >= POOLS_MAX)
        goto out;
      argv = docker_engine_to_argv (engine);
      g_ptr_array_add (argv, NULL);
      pool = g_new0 (Pool, 1);
      pool->signature = g_strdup (signature);
      pool->ready = g_ptr_array_new ();
      pool->engine_argv = g_strdupv ((char **) argv->pdata);
      pool->image = g_strdup (spec->image);
      pool->user = g_strdup (spec->user);
      pool->network = g_strdup (spec->network);
      pool->parent = g_strdup (parent);
      pool->dir = g_strdup (dir);
      pool->parent_run_id = g_strdup (spec->parent_run_id);
      pool->spec = *spec;
      pool->spec.image = pool->image;
      pool->spec.user = pool->user;
      pool->spec.network = pool->network;
      pool->spec.parent_run_id = pool->parent_run_id;
      pool->spec.name = pool->spec.key = NULL;
      /* Only whether it binds: each slot binds its own tree. */
      pool->spec.bind_source = spec->bind_source != NULL ? "" : NULL;
      pool->spec.bind_git_read_only = FALSE;
      g_ptr_array_add (pools->pools, pool);
    }
  pool->size = MIN (size, DOCKER_POOL_MAX);
  pool->broken = FALSE;
  if (pool->ready->len + pool->filling < pool->size)
    kick_worker (pools);
out:
  g_mutex_unlock (&pools->lock);
}

/**
 * docker_pools_discard:
 * @pools: the pools
 * @engine: the engine the slot is on
 * @parent: the parent root its record is in
 * @slot: (transfer full): a slot taken but not used
 *
 * Removes its container, workspace and record (a slot found dead).
 */
void
docker_pools_discard (DockerPools    *pools,
                      DockerEngine   *engine,
                      const char     *parent,
                      DockerPoolSlot *slot)
{
  discard_slot (engine, parent, slot);
  docker_pool_slot_free (slot);
}

/**
 * docker_pools_counts:
 * @pools: the pools
 * @out_ready: (out): idle containers over all pools
 * @out_filling: (out): containers being made, plus those still missing
 *   from pools that are not broken
 */
void
docker_pools_counts (DockerPools *pools,
                     guint       *out_ready,
                     guint       *out_filling)
{
  guint ready = 0, filling = 0;

  g_mutex_lock (&pools->lock);
  for (guint i = 0; i < pools->pools->len; i++)
    {
      Pool *pool = g_ptr_array_index (pools->pools, i);

      ready += pool->ready->len;
      filling += pool->filling;
      if (!pool->broken && pool->ready->len + pool->filling < pool->size)
        filling += pool->size - pool->ready->len - pool->filling;
    }
  g_mutex_unlock (&pools->lock);
  *out_ready = ready;
  *out_filling = filling;
}
