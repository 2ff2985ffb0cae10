// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd marker: live/marker.h.
#include <memory>
#include <string>
#include <vector>

#include "commands/command.h"
#include "live/marker.h"

namespace hmbtrace {

void AddMarkerCommand(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> words;
    std::string tracefs_dir;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "marker",
      "Write one line to the hmb instance's trace_marker, into the timeline of the firmware "
      "records");
  cmd->add_option("text", o->words, "The line (words are joined by spaces)")
      ->required()
      ->type_name("TEXT...");
  AddTracefsOption(cmd, &o->tracefs_dir);
  cmd->callback([o, &exit_code] { exit_code = RunMarker(o->tracefs_dir, o->words); });
}

}  // namespace hmbtrace
