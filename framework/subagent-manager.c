/* subagent-manager.c: placeholder until its concept lands. */
#include "config.h"

#include "subagent.h"
