/* worktree-pool.c: on-disk state of the recycling pool.
 *
 * A repository's pool lives in `<root>/.subagent/worktrees/`: worktrees
 * named `pool-<n>` on branches `subagent/pool-<n>`, and `pool.json` saying
 * which of them are ready (clean, reset to a recorded commit) and which are
 * busy (being recycled or taken by a live process). Every read-modify-write
 * of `pool.json` holds an flock on `.pool.lock`; the lock is never held while
 * the repository lock is taken, so the two cannot deadlock. A busy entry
 * whose process died is handed back to the caller as stale for removal.
 *
 * The pool is an optimisation: when its state cannot be read or written the
 * functions log and behave as if the pool were empty or full.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worktree-private.h"

#define POOL_STATE "pool.json"
#define POOL_LOCK ".pool.lock"

void
wt_pool_slot_free (WtPoolSlot *slot)
{
  if (slot == NULL)
    return;
  g_free (slot->name);
  g_free (slot->commit);
  g_free (slot);
}

gboolean
wt_pool_name_is_valid (const char *name)
{
  const char *p;

  if (name == NULL || !g_str_has_prefix (name, WT_POOL_PREFIX))
    return FALSE;
  p = name + strlen (WT_POOL_PREFIX);
  if (*p == '\0' || strlen (p) > 6)
    return FALSE;
  for (; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

typedef struct {
  int fd;
  char *dir;
  JsonArray *entries;
} PoolState;

static void
pool_state_close (PoolState *state)
{
  if (state == NULL)
    return;
  if (state->fd >= 0)
    close (state->fd);
  g_clear_pointer (&state->entries, json_array_unref);
  g_free (state->dir);
  g_free (state);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (PoolState, pool_state_close)

/* Locks the pool and reads its entries; NULL (logged) when the lock cannot
 * be taken. A missing or unreadable state file is an empty pool. */
static PoolState *
pool_state_open (const char *worktrees_dir)
{
  g_autofree char *lock_path = g_build_filename (worktrees_dir, POOL_LOCK, NULL);
  g_autofree char *state_path = g_build_filename (worktrees_dir, POOL_STATE, NULL);
  g_autofree char *state_text = NULL;
  gsize state_length = 0;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(PoolState) state = g_new0 (PoolState, 1);
  JsonNode *root;

  state->dir = g_strdup (worktrees_dir);
  state->fd = open (lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (state->fd < 0)
    {
      g_message ("Worktree pool disabled: could not open %s: %s", lock_path, g_strerror (errno));
      return NULL;
    }
  while (flock (state->fd, LOCK_EX) < 0)
    if (errno != EINTR)
      {
        g_message ("Worktree pool disabled: could not lock %s: %s", lock_path, g_strerror (errno));
        return NULL;
      }
  if (g_file_get_contents (state_path, &state_text, &state_length, NULL) &&
      subagent_json_parser_load_bounded (parser, state_text, (gssize) state_length, NULL) &&
      (root = json_parser_get_root (parser)) != NULL &&
      JSON_NODE_HOLDS_OBJECT (root) &&
      json_object_has_member (json_node_get_object (root), "entries") &&
      JSON_NODE_HOLDS_ARRAY (json_object_get_member (json_node_get_object (root), "entries")))
    state->entries = json_array_ref (json_object_get_array_member (json_node_get_object (root), "entries"));
  else
    state->entries = json_array_new ();
  return g_steal_pointer (&state);
}

static void
pool_state_save (PoolState *state)
{
  g_autofree char *path = g_build_filename (state->dir, POOL_STATE, NULL);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, 1);
  json_builder_set_member_name (builder, "entries");
  json_builder_add_value (builder, json_node_init_array (json_node_alloc (), state->entries));
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, TRUE);
  text = json_generator_to_data (generator, NULL);
  if (!g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, &error))
    g_message ("Could not save the worktree pool state %s: %s", path, error->message);
}

static JsonObject *
entry_at (PoolState *state,
          guint      i)
{
  JsonNode *node = json_array_get_element (state->entries, i);
  return JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static const char *
entry_name (JsonObject *entry)
{
  const char *name = entry != NULL ? json_object_get_string_member_with_default (entry, "name", NULL) : NULL;
  return wt_pool_name_is_valid (name) ? name : NULL;
}

static void
entry_mark_busy (JsonObject *entry)
{
  guint64 start_time = 0;

  subagent_owner_get_process_start_time (getpid (), &start_time, NULL);
  json_object_set_string_member (entry, "state", "busy");
  json_object_set_int_member (entry, "pid", getpid ());
  json_object_set_int_member (entry, "start-time", (gint64) start_time);
}

static gboolean
entry_is_stale (JsonObject *entry)
{
  return g_strcmp0 (json_object_get_string_member_with_default (entry, "state", ""), "busy") == 0 &&
         !wt_process_is_alive (json_object_get_int_member_with_default (entry, "pid", 0),
                               (guint64) json_object_get_int_member_with_default (entry, "start-time", 0));
}

static gboolean
is_real_dir (const char *dir,
             const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  struct stat st;

  return lstat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

/* Drops malformed entries and hands busy entries of dead processes to the
 * caller (marked busy by us) so it removes what they left. */
static void
sweep (PoolState *state,
       GPtrArray *stale)
{
  for (guint i = json_array_get_length (state->entries); i-- > 0;)
    {
      JsonObject *entry = entry_at (state, i);
      const char *name = entry_name (entry);

      if (name == NULL)
        json_array_remove_element (state->entries, i);
      else if (entry_is_stale (entry))
        {
          g_ptr_array_add (stale, g_strdup (name));
          entry_mark_busy (entry);
        }
    }
}

/* Takes a ready worktree, marking it busy; NULL when none is ready. Names
 * of entries whose process died are added to @stale for the caller to
 * remove (and then wt_pool_forget()). */
WtPoolSlot *
wt_pool_take_ready (const char *worktrees_dir,
                    GPtrArray  *stale)
{
  g_autoptr(PoolState) state = pool_state_open (worktrees_dir);
  WtPoolSlot *slot = NULL;

  if (state == NULL)
    return NULL;
  sweep (state, stale);
  for (guint i = json_array_get_length (state->entries); i-- > 0;)
    {
      JsonObject *entry = entry_at (state, i);
      const char *name = entry_name (entry);

      if (g_strcmp0 (json_object_get_string_member_with_default (entry, "state", ""), "ready") != 0)
        continue;
      if (!is_real_dir (worktrees_dir, name))
        {
          /* Removed behind our back (`subagentctl worktrees prune`). */
          json_array_remove_element (state->entries, i);
          continue;
        }
      if (slot == NULL)
        {
          slot = g_new0 (WtPoolSlot, 1);
          slot->name = g_strdup (name);
          slot->commit = g_strdup (json_object_get_string_member_with_default (entry, "commit", ""));
          entry_mark_busy (entry);
        }
    }
  pool_state_save (state);
  return slot;
}

/* Reserves a free pool name (busy, ours) when the pool holds fewer than
 * @pool_size entries; NULL when full. A name is free when no entry, no
 * directory and no admin dir in @common_dir uses it. @stale as above. */
char *
wt_pool_reserve (const char *worktrees_dir,
                 const char *common_dir,
                 guint       pool_size,
                 GPtrArray  *stale)
{
  g_autoptr(PoolState) state = pool_state_open (worktrees_dir);
  g_autofree char *admin_root = g_build_filename (common_dir, "worktrees", NULL);
  g_autoptr(JsonObject) entry = NULL;
  char *name = NULL;

  if (state == NULL)
    return NULL;
  sweep (state, stale);
  if (json_array_get_length (state->entries) >= pool_size)
    {
      pool_state_save (state);
      return NULL;
    }
  for (guint n = 0; name == NULL; n++)
    {
      g_autofree char *candidate = g_strdup_printf (WT_POOL_PREFIX "%u", n);
      g_autofree char *dir_path = g_build_filename (worktrees_dir, candidate, NULL);
      g_autofree char *admin_path = g_build_filename (admin_root, candidate, NULL);
      gboolean used = g_file_test (dir_path, G_FILE_TEST_EXISTS) ||
                      g_file_test (admin_path, G_FILE_TEST_EXISTS);

      for (guint i = 0; !used && i < json_array_get_length (state->entries); i++)
        used = g_strcmp0 (entry_name (entry_at (state, i)), candidate) == 0;
      if (!used)
        name = g_steal_pointer (&candidate);
    }
  entry = json_object_new ();
  json_object_set_string_member (entry, "name", name);
  entry_mark_busy (entry);
  json_array_add_object_element (state->entries, json_object_ref (entry));
  pool_state_save (state);
  return name;
}

void
wt_pool_mark_ready (const char *worktrees_dir,
                    const char *name,
                    const char *commit)
{
  g_autoptr(PoolState) state = pool_state_open (worktrees_dir);

  if (state == NULL)
    return;
  for (guint i = 0; i < json_array_get_length (state->entries); i++)
    {
      JsonObject *entry = entry_at (state, i);

      if (g_strcmp0 (entry_name (entry), name) != 0)
        continue;
      json_object_set_string_member (entry, "state", "ready");
      json_object_set_string_member (entry, "commit", commit);
      json_object_remove_member (entry, "pid");
      json_object_remove_member (entry, "start-time");
      break;
    }
  pool_state_save (state);
}

void
wt_pool_forget (const char *worktrees_dir,
                const char *name)
{
  g_autoptr(PoolState) state = pool_state_open (worktrees_dir);

  if (state == NULL)
    return;
  for (guint i = json_array_get_length (state->entries); i-- > 0;)
    if (g_strcmp0 (entry_name (entry_at (state, i)), name) == 0)
      json_array_remove_element (state->entries, i);
  pool_state_save (state);
}
