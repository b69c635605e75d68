/* subagent-yaml.c: placeholder. */
#include "config.h"
