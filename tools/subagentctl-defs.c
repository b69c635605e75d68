/* placeholder until the command lands */
#include "subagentctl.h"

int
sactl_cmd_defs (int argc, char **argv)
{
  return sactl_fail_message ("defs: not implemented yet");
}
