/* docker-plan.c: a prepare's plan, read from the request's options (and
 * the provider's configuration), checked, and the container spec made of it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>

#include "docker-isolation-private.h"

#define DEFAULT_USER "65534:65534"
#define DEFAULT_NETWORK "none"
#define DEFAULT_PIDS_LIMIT 512
#define DEFAULT_NOFILE 4096

/* ---- options ------------------------------------------------------------ */

static gboolean
word_is_valid (const char *text,
               const char *extra_chars)
{
  if (text == NULL || *text == '\0' || *text == '-' || strlen (text) > 255)
    return FALSE;
  for (const char *p = text; *p; p++)
    if (!g_ascii_isalnum (*p) && strchr (extra_chars, *p) == NULL)
      return FALSE;
  return TRUE;
}

/* Digits and an optional unit (b, k, m, g), as docker's --memory takes. */
static gboolean
memory_limit_is_valid (const char *text)
{
  const char *p = text;
  gboolean nonzero = FALSE;

  if (text == NULL || !g_ascii_isdigit (*p))
    return FALSE;
  for (; g_ascii_isdigit (*p); p++)
    nonzero |= *p != '0';
  if (*p != '\0' && strchr ("bkmgBKMG", *p) != NULL)
    p++;
  return nonzero && *p == '\0' && p - text <= 20;
}

/* A string option; a present value of another type is an error, not a
 * silent default. */
static gboolean
option_string (SubagentIsolationRequest  *request,
               const char                *key,
               const char                *default_value,
               const char               **out,
               GError                   **error)
{
  JsonObject *options = subagent_isolation_request_get_options (request);
  JsonNode *node = options ? json_object_get_member (options, key) : NULL;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      *out = default_value;
      return TRUE;
    }
  if (json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Docker option %s must be a string (quote it in config.yaml)", key);
      return FALSE;
    }
  *out = json_node_get_string (node);
  return TRUE;
}

static gboolean
path_is_within (const char *path,
                const char *dir)
{
  gsize len = strlen (dir);

  return g_str_equal (path, dir) || g_str_equal (dir, "/") ||
         (strncmp (path, dir, len) == 0 && path[len] == '/');
}

static char *
resolve_dir (const char *path)
{
  char *real = realpath (path, NULL);
  char *result = NULL;

  if (real != NULL && g_file_test (real, G_FILE_TEST_IS_DIR))
    result = g_strdup (real);
  free (real);
  return result;
}

/* ---- options ------------------------------------------------------------- */

/* An integer option, as a number or a string of digits. */
static gboolean
option_int (SubagentIsolationRequest  *request,
            const char                *key,
            gint64                     default_value,
            gint64                    *out,
            GError                   **error)
{
  JsonObject *options = subagent_isolation_request_get_options (request);
  JsonNode *node = options ? json_object_get_member (options, key) : NULL;
  guint64 value = 0;

  *out = default_value;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (json_node_get_value_type (node) == G_TYPE_INT64 && json_node_get_int (node) >= 0)
    {
      *out = json_node_get_int (node);
      return TRUE;
    }
  if (json_node_get_value_type (node) == G_TYPE_STRING &&
      g_ascii_string_to_unsigned (json_node_get_string (node), 10, 0, G_MAXINT64, &value, NULL))
    {
      *out = (gint64) value;
      return TRUE;
    }
  g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
               "Docker option %s must be a whole number of 0 or more", key);
  return FALSE;
}

/* "512m" → bytes (units b, k, m, g as docker takes them). */
static gint64
size_to_bytes (const char *text)
{
  char *end = NULL;
  guint64 value = g_ascii_strtoull (text, &end, 10);

  switch (g_ascii_tolower (*end))
    {
    case 'k': return (gint64) value << 10;
    case 'm': return (gint64) value << 20;
    case 'g': return (gint64) value << 30;
    default: return (gint64) value;
    }
}

void
docker_plan_clear (Plan *plan)
{
  g_free (plan->parent);
  g_free (plan->dir);
  g_free (plan->base);
  g_free (plan->tree);
  g_free (plan->name);
  g_clear_pointer (&plan->engine, docker_engine_free);
}

gboolean
docker_plan_read (SubagentDockerIsolation   *self,
                  SubagentIsolationRequest  *request,
                  Plan                      *plan,
                  GError                   **error)
{
  const char *parent_option = subagent_isolation_request_get_parent_root (request);
  const char *binary, *host, *context, *workspace, *dir_option, *transfer, *copy_in;
  g_autofree char *default_host = NULL;
  g_autofree char *default_context = NULL;
  g_autofree char *default_transfer = NULL;
  g_autofree char *default_dir = NULL;
  g_autoptr(GError) local_error = NULL;

  g_mutex_lock (&self->lock);
  default_host = g_strdup (self->host);
  default_context = g_strdup (self->context);
  default_transfer = g_strdup (self->transfer ? self->transfer : "auto");
  g_mutex_unlock (&self->lock);

  plan->key = subagent_isolation_request_get_session_key (request);
  plan->parent_run_id = subagent_isolation_request_get_parent_run_id (request);
  plan->memory = subagent_isolation_request_get_memory_limit (request);
  plan->cpus = subagent_isolation_request_get_cpu_quota (request);
  if (plan->memory != NULL && *plan->memory == '\0')
    plan->memory = NULL;

  if (!subagent_isolation_session_key_is_valid (plan->key))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Invalid session key “%s”: use 1 to 128 of [A-Za-z0-9_-]", plan->key ? plan->key : "");
      return FALSE;
    }
  if (!option_string (request, "image", NULL, &plan->image, error) ||
      !option_string (request, "binary", NULL, &binary, error) ||
      !option_string (request, "host", default_host, &host, error) ||
      !option_string (request, "context", default_context, &context, error) ||
      !option_string (request, "network", DEFAULT_NETWORK, &plan->network, error) ||
      !option_string (request, "user", DEFAULT_USER, &plan->user, error) ||
      !option_string (request, "workspace", "snapshot", &workspace, error) ||
      !option_string (request, "workspace_dir", NULL, &dir_option, error) ||
      !option_string (request, "transfer", default_transfer, &transfer, error) ||
      !option_string (request, "copy_in", "auto", &copy_in, error) ||
      !option_int (request, "pids_limit", DEFAULT_PIDS_LIMIT, &plan->pids_limit, error) ||
      !option_int (request, "nofile", DEFAULT_NOFILE, &plan->nofile, error) ||
      !option_int (request, "nproc", 0, &plan->nproc, error) ||
      !option_int (request, "transfer_max_file", (gint64) DOCKER_DEFAULT_MAX_FILE, &plan->max_file, error) ||
      !option_int (request, "container_pool", 0, &plan->pool_size, error))
    return FALSE;
  if (plan->pool_size > DOCKER_POOL_MAX)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Docker option container_pool %" G_GINT64_FORMAT " is out of range: use 0 to %d",
                   plan->pool_size, DOCKER_POOL_MAX);
      return FALSE;
    }

  if (plan->memory != NULL && !memory_limit_is_valid (plan->memory))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Invalid memory limit “%s”: use a positive number of bytes with an optional unit "
                   "b, k, m or g (e.g. 512m, 2g)", plan->memory);
      return FALSE;
    }
  if (!isfinite (plan->cpus) || plan->cpus < 0.0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Invalid CPU quota %g: use a positive number of cores (e.g. 0.5)", plan->cpus);
      return FALSE;
    }
  if (plan->image == NULL || *plan->image == '\0')
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Docker isolation needs an image: set docker.image in .subagent/config.yaml "
                   "(or the run's image option)");
      return FALSE;
    }
  if (!word_is_valid (plan->image, "._-/:@"))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Invalid image reference “%s”", plan->image);
      return FALSE;
    }
  if (!word_is_valid (plan->network, "._-:"))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Invalid network “%s”: use none (the default), bridge, host or a network name", plan->network);
      return FALSE;
    }
  if (!word_is_valid (plan->user, "._-:"))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Invalid user “%s”: use uid[:gid] or a user name of the image", plan->user);
      return FALSE;
    }
  if (binary != NULL && *binary != '\0')
    {
      g_auto(GStrv) argv = NULL;
      if (!g_shell_parse_argv (binary, NULL, &argv, &local_error))
        {
          g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                       "Option binary “%s” is not a command line: %s (it is ignored: the engine is reached "
                       "through its API; set host instead)", binary, local_error->message);
          return FALSE;
        }
    }
  plan->worktree = g_ascii_strcasecmp (workspace, "worktree") == 0;
  if (!plan->worktree && g_ascii_strcasecmp (workspace, "snapshot") != 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Unknown docker workspace “%s”: use snapshot (the default) or worktree", workspace);
      return FALSE;
    }
  if (g_ascii_strcasecmp (transfer, "auto") == 0)
    plan->transfer = TRANSFER_AUTO;
  else if (g_ascii_strcasecmp (transfer, "bind") == 0)
    plan->transfer = TRANSFER_BIND;
  else if (g_ascii_strcasecmp (transfer, "copy") == 0)
    plan->transfer = TRANSFER_COPY;
  else
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Unknown docker transfer “%s”: use auto (the default), bind or copy", transfer);
      return FALSE;
    }
  plan->copy_in_exec = g_ascii_strcasecmp (copy_in, "auto") == 0;
  if (!plan->copy_in_exec && g_ascii_strcasecmp (copy_in, "archive") != 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Unknown docker copy_in “%s”: use auto (the default) or archive", copy_in);
      return FALSE;
    }
  if (plan->max_file <= 0)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Docker option transfer_max_file must be a positive number of bytes");
      return FALSE;
    }
  if (host != NULL && *host != '\0' && (strchr (host, ' ') != NULL || *host == '-'))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Option host “%s” is not an engine address; use e.g. unix:///run/docker.sock", host);
      return FALSE;
    }

  plan->engine = docker_engine_new (host, context, error);
  if (plan->engine == NULL)
    {
      docker_error_to_isolation (error, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION);
      return FALSE;
    }

  if (parent_option == NULL || (plan->parent = resolve_dir (parent_option)) == NULL)
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Cannot give a container a copy of %s: it is not an existing directory",
                   parent_option ? parent_option : "(no parent root)");
      return FALSE;
    }
  plan->name = g_strconcat ("subagent-", plan->key, NULL);
  if (plan->worktree)
    return TRUE;   /* the worktree backend decides where the tree goes */
  if (dir_option == NULL)
    dir_option = default_dir = g_build_filename (g_get_user_cache_dir (), "subagent", "docker", NULL);
  if (!g_path_is_absolute (dir_option))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Docker option workspace_dir “%s” must be an absolute path", dir_option);
      return FALSE;
    }
  if (g_mkdir_with_parents (dir_option, 0700) != 0 || (plan->dir = resolve_dir (dir_option)) == NULL)
    {
      int saved = errno;
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_PREPARE_FAILED,
                   "Could not create the container workspace directory %s: %s; set option workspace_dir",
                   dir_option, g_strerror (saved));
      return FALSE;
    }
  if (path_is_within (plan->dir, plan->parent))
    {
      g_set_error (error, SUBAGENT_ISOLATION_ERROR, SUBAGENT_ISOLATION_ERROR_INVALID_OPTION,
                   "Workspace directory %s is inside the parent %s: the copy would copy itself; "
                   "set option workspace_dir to a directory outside it", plan->dir, plan->parent);
      return FALSE;
    }

  /* Each workspace in a block group of its own: made right after another
   * was removed, its files would otherwise be created among the removed
   * one's recently freed inodes, slowly (ext4). */
  subagent_tree_spread_subdirectories (plan->dir);
  plan->base = g_build_filename (plan->dir, plan->key, NULL);
  plan->tree = g_build_filename (plan->base, DOCKER_TREE, NULL);
  return TRUE;
}

void
docker_plan_fill_spec (Plan       *plan,
                       DockerSpec *spec,
                       gboolean    bind)
{
  memset (spec, 0, sizeof *spec);
  spec->name = plan->name;
  spec->key = plan->key;
  spec->parent_run_id = plan->parent_run_id;
  spec->image = plan->image;
  spec->user = plan->user;
  spec->network = plan->network;
  spec->cpus = plan->cpus;
  spec->memory_bytes = plan->memory ? size_to_bytes (plan->memory) : 0;
  spec->pids_limit = plan->pids_limit;
  spec->nofile = plan->nofile;
  spec->nproc = plan->nproc;
  spec->numeric_user = docker_workspace_parse_user (plan->user, &spec->uid, &spec->gid);
  spec->bind_source = bind ? plan->tree : NULL;
  spec->bind_git_read_only = bind && plan->worktree;
}
