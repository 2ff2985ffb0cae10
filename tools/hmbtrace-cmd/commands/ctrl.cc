// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd ctrl: live/ctrl.h.
#include <memory>
#include <string>
#include <vector>

#include "commands/command.h"
#include "live/ctrl.h"

namespace hmbtrace {

void AddCtrlCommand(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> args;
    std::string device;
    std::string sysfs_dir;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "ctrl",
      "Ask the SSD firmware, over the module's control channel: start, stop, mask EVENT_ID..., "
      "unmask-all, ring-mode overwrite|stop, echo COOKIE [CORE], freeze-config THRESHOLD_US N, "
      "freeze-now [DETAIL], rearm");
  cmd->add_option("operation", o->args, "The operation and its arguments")
      ->required()
      ->type_name("OPERATION [ARG...]");
  cmd->add_option("--device", o->device, "The area, when there is more than one")
      ->type_name("NAME");
  AddSysfsOption(cmd, &o->sysfs_dir);
  cmd->callback([o, &exit_code] { exit_code = RunCtrl(o->sysfs_dir, o->device, o->args); });
}

}  // namespace hmbtrace
