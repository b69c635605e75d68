/* bench/command-floor.h: the floor of a command child (command-floor.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <glib.h>

double command_floor_run (const char *program,
                          const char *workspace,
                          guint       n,
                          guint       parallel,
                          guint       extra_host_us,
                          gboolean   *confined);
