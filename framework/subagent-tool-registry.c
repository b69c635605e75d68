/* subagent-tool-registry.c: placeholder until its concept lands. */
#include "config.h"

#include "subagent.h"
