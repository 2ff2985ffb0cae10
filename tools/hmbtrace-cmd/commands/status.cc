// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd status: live/status.h.
#include <memory>

#include "commands/command.h"
#include "live/status.h"

namespace hmbtrace {

void AddStatusCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<StatusOptions>();
  CLI::App* cmd = app.add_subcommand(
      "status",
      "The live state: per device the module's status (state, per-core delivered and lost, "
      "errors, dictionary) and the hmb instance (tracing_on, enabled events, buffer size, "
      "per-CPU ftrace counters); read-only");
  cmd->add_flag("--json", o->json, "Print JSON instead of text");
  AddSysfsOption(cmd, &o->sysfs_dir);
  AddTracefsOption(cmd, &o->tracefs_dir);
  cmd->callback([o, &exit_code] { exit_code = RunStatus(*o); });
}

}  // namespace hmbtrace
