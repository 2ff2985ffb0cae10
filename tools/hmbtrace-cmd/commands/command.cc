// SPDX-License-Identifier: GPL-2.0-only
#include "commands/command.h"

#include "live/instance.h"

namespace hmbtrace {

void AddInputOption(CLI::App* cmd, std::string* input) {
  *input = "trace.dat";
  cmd->add_option("-i,--input", *input, "The trace-cmd data file to read")
      ->capture_default_str()
      ->type_name("FILE");
}

void AddTracefsOption(CLI::App* cmd, std::string* tracefs_dir) {
  *tracefs_dir = kDefaultTracefsDir;
  cmd->add_option("--tracefs", *tracefs_dir, "Where tracefs is mounted")
      ->capture_default_str()
      ->type_name("DIR");
}

void AddSysfsOption(CLI::App* cmd, std::string* sysfs_dir) {
  *sysfs_dir = kDefaultSysfsDir;
  cmd->add_option("--sysfs", *sysfs_dir, "The module's status directory (sysfs class)")
      ->capture_default_str()
      ->type_name("DIR");
}

void AddFilterOptions(CLI::App* cmd,
                      std::vector<uint16_t>* cores,
                      std::vector<std::string>* events) {
  cmd->add_option("--core", *cores, "Only records and losses of firmware core N; repeatable")
      ->type_name("N");
  cmd->add_option("--event", *events,
                  "Only events named NAME (a dictionary name, or lost, state, dict, clock, "
                  "marker, inflight: a crash dump's commands in flight); repeatable")
      ->type_name("NAME");
}

}  // namespace hmbtrace
