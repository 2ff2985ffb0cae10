// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd dump info|save: dump/dump_info.h, dump/devcoredump.h.
#include <memory>
#include <string>

#include "commands/command.h"
#include "dump/devcoredump.h"
#include "dump/dump_info.h"

namespace hmbtrace {
namespace {

void AddDumpInfo(CLI::App* dump, int& exit_code) {
  auto file = std::make_shared<std::string>();
  CLI::App* cmd = dump->add_subcommand(
      "info",
      "What a crash dump holds: its header, and per core the sequence numbers it accounts for "
      "(records, skipped, lost by reason) and whether they add up");
  cmd->add_option("file", *file, "The crash dump (.hmbdump)")->required()->type_name("FILE");
  cmd->callback([file, &exit_code] { exit_code = RunDumpInfo(*file); });
}

void AddDumpSave(CLI::App* dump, int& exit_code) {
  struct Options {
    SaveOptions save;
    bool wait = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = dump->add_subcommand(
      "save",
      "Copy every pending devcoredump of an HMB trace area to DIR as "
      "hmb-NAME-TIME-GEN.hmbdump and dismiss it; other drivers' devcoredumps are left alone");
  cmd->add_option("--dir", o->save.dir, "The directory to write the dumps to")
      ->capture_default_str()
      ->type_name("DIR");
  cmd->add_flag("--wait", o->wait,
                "Keep watching (every second) and save each dump as it comes, until SIGINT or "
                "SIGTERM");
  cmd->add_flag("--keep", o->save.keep, "Do not dismiss the devcoredumps saved");
  cmd->callback([o, &exit_code] {
    o->save.sysfs_dir = DevcoredumpDir();
    exit_code = RunDumpSave(o->save, o->wait);
  });
}

}  // namespace

void AddDumpCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "dump",
      "Crash dumps of an HMB trace area, taken by hmb_trace.ko when the controller is reset "
      "or removed: save them from devcoredump, say what one holds (report, stat and export "
      "read one as a capture)");
  cmd->require_subcommand(1);
  AddDumpInfo(cmd, exit_code);
  AddDumpSave(cmd, exit_code);
}

}  // namespace hmbtrace
