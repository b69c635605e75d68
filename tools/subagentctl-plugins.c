/* placeholder until the command lands */
#include "subagentctl.h"

int
sactl_cmd_plugins (int argc, char **argv)
{
  return sactl_fail_message ("plugins: not implemented yet");
}
