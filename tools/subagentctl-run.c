/* placeholder until the command lands */
#include "subagentctl.h"

int
sactl_cmd_run (int argc, char **argv)
{
  return sactl_fail_message ("run: not implemented yet");
}
