/* fuzz-definition.c: the definition reader (YAML, JSON, Markdown front
 * matter). The first byte picks the format; the rest is the file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>

#include <subagent.h>

#include "fuzz-support.h"

int LLVMFuzzerTestOneInput (const guint8 *data, size_t size);

int
LLVMFuzzerTestOneInput (const guint8 *data,
                        size_t        size)
{
  static const char * const files[] = {
    ".subagent/agents/fuzz.yaml", ".subagent/agents/fuzz.json", ".subagent/agents/fuzz.md",
  };
  g_autoptr(SubagentCatalog) catalog = NULL;
  g_autofree char *agents = NULL;
  guint format;

  if (size < 1)
    return 0;
  format = data[0] % G_N_ELEMENTS (files);
  agents = g_build_filename (fuzz_init_root (), ".subagent", "agents", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *path = g_build_filename (fuzz_init_root (), files[i], NULL);

      g_unlink (path);
    }
  fuzz_write (files[format], data + 1, size - 1);
  catalog = subagent_catalog_new_for_root (fuzz_init_root (), NULL);
  if (catalog != NULL)
    {
      g_autoptr(GPtrArray) defs = subagent_catalog_list (catalog);

      for (guint i = 0; i < defs->len; i++)
        {
          g_autoptr(JsonObject) json = subagent_def_to_json (defs->pdata[i]);
          g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), json);
          g_autofree char *text = json_to_string (node, FALSE);
          g_autoptr(JsonParser) parser = json_parser_new ();

          /* What the host writes of a definition it read must be JSON. */
          if (!json_parser_load_from_data (parser, text, -1, NULL))
            abort ();
        }
    }
  return 0;
}
