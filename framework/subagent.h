/* subagent.h: the one header of libsubagent.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#define SUBAGENT_INSIDE

#include "subagent-version.h"

#include "subagent-error.h"
#include "subagent-types.h"
#include "subagent-enum-types.h"
#include "subagent-def.h"
#include "subagent-diagnostic.h"
#include "subagent-catalog.h"
#include "subagent-tool.h"
#include "subagent-tool-registry.h"
#include "subagent-isolation-request.h"
#include "subagent-isolation-context.h"
#include "subagent-isolation-provider.h"
#include "subagent-tree-copier.h"
#include "subagent-owner.h"
#include "subagent-review.h"
#include "subagent-plugin.h"
#include "subagent-plugin-option.h"
#include "subagent-configurable.h"
#include "subagent-plugin-info.h"
#include "subagent-plugin-registry.h"
#include "subagent-lineage.h"
#include "subagent-approval-json.h"
#include "subagent-approval-request.h"
#include "subagent-approval-sink.h"
#include "subagent-approval-queue.h"
#include "subagent-approval-policy.h"
#include "subagent-approval-handler.h"
#include "subagent-run-context.h"
#include "subagent-runner.h"
#include "subagent-command-runner.h"
#include "subagent-session.h"
#include "subagent-session-log.h"
#include "subagent-run-result.h"
#include "subagent-audit-log.h"
#include "subagent-config.h"
#include "subagent-run-options.h"
#include "subagent-manager.h"
#include "subagent-events.h"
#include "subagent-batch-item.h"
#include "subagent-shutdown-report.h"
#include "subagent-supervisor.h"
#include "subagent-team.h"
#include "subagent-team-result.h"
#include "subagent-delegation-tools.h"

#undef SUBAGENT_INSIDE
