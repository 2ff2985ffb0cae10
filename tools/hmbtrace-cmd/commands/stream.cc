// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd stream: live/stream.h.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands/command.h"
#include "live/stream.h"

namespace hmbtrace {

void AddStreamCommand(CLI::App& app, int& exit_code) {
  struct Options {
    StreamOptions stream;
    std::vector<uint16_t> cores;
    std::vector<std::string> events;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "stream",
      "Enable the hmb events of the live instance and print its records as they come, decoded "
      "as report does, per CPU in order; restores the events' state on exit");
  cmd->add_option("--duration", o->stream.duration,
                  "Stop after S seconds (0: at SIGINT or SIGTERM)")
      ->capture_default_str()
      ->type_name("S");
  AddFilterOptions(cmd, &o->cores, &o->events);
  cmd->add_flag("--raw", o->stream.report.raw, "Add the payload in hex to decoded records");
  AddTracefsOption(cmd, &o->stream.tracefs_dir);
  AddSysfsOption(cmd, &o->stream.sysfs_dir);
  cmd->callback([o, &exit_code] {
    if (!(o->stream.duration >= 0)) {
      std::fprintf(stderr, "hmbtrace-cmd stream: --duration must be 0 or more seconds\n");
      exit_code = 2;
      return;
    }
    o->stream.report.cores.insert(o->cores.begin(), o->cores.end());
    o->stream.report.events.insert(o->events.begin(), o->events.end());
    exit_code = RunStream(o->stream);
  });
}

}  // namespace hmbtrace
