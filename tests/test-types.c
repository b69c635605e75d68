/* test-types.c: permission modes and status names.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "test-support.h"

static void
test_permission_mode_parse (void)
{
  SubagentPermissionMode mode;

  g_assert_true (subagent_permission_mode_from_string ("read-only", &mode));
  g_assert_cmpint (mode, ==, SUBAGENT_PERMISSION_MODE_READ_ONLY);
  g_assert_true (subagent_permission_mode_from_string ("Workspace_Write", &mode));
  g_assert_cmpint (mode, ==, SUBAGENT_PERMISSION_MODE_WORKSPACE_WRITE);
  g_assert_true (subagent_permission_mode_from_string (NULL, &mode));
  g_assert_cmpint (mode, ==, SUBAGENT_PERMISSION_MODE_INHERIT);
  g_assert_false (subagent_permission_mode_from_string ("root", &mode));
  g_assert_cmpstr (subagent_permission_mode_to_string (SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS), ==, "danger-full-access");
}

static void
test_permission_mode_child_never_looser (void)
{
  for (int p = SUBAGENT_PERMISSION_MODE_READ_ONLY; p <= SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS; p++)
    for (int c = SUBAGENT_PERMISSION_MODE_INHERIT; c <= SUBAGENT_PERMISSION_MODE_DANGER_FULL_ACCESS; c++)
      {
        SubagentPermissionMode eff = subagent_permission_mode_clamp (p, c);
        g_assert_cmpint (eff, <=, p);
        g_assert_cmpint (eff, !=, SUBAGENT_PERMISSION_MODE_INHERIT);
      }
}

static void
test_approval_status_names (void)
{
  SubagentApprovalStatus s;

  for (int i = SUBAGENT_APPROVAL_STATUS_PENDING; i <= SUBAGENT_APPROVAL_STATUS_CANCELLED; i++)
    {
      g_assert_true (subagent_approval_status_from_string (subagent_approval_status_to_string (i), &s));
      g_assert_cmpint (s, ==, i);
    }
  g_assert_false (subagent_approval_status_from_string ("maybe", &s));
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/types/permission-mode/parse", test_permission_mode_parse);
  g_test_add_func ("/types/permission-mode/child-never-looser", test_permission_mode_child_never_looser);
  g_test_add_func ("/types/approval-status/names", test_approval_status_names);
  return g_test_run ();
}
