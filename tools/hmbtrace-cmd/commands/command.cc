// SPDX-License-Identifier: GPL-2.0-only
#include "commands/command.h"

#include <cstdio>

#include "capture/dictionary_override.h"
#include "live/instance.h"

namespace hmbtrace {

void AddInputOption(CLI::App* cmd, std::string* input) {
  *input = "trace.dat";
  cmd->add_option("-i,--input", *input, "The trace-cmd data file to read")
      ->capture_default_str()
      ->type_name("FILE");
}

void AddDictionaryOption(CLI::App* cmd, std::string* path) {
  cmd->add_option("--dictionary", *path,
                  "A dictionary file of the firmware (hmbtrace-cmd dict), for the events its "
                  "trace does not describe; refused if its build id is not the trace's")
      ->type_name("FILE");
}

bool UseDictionaryOption(const std::string& path, const char* command, int& exit_code) {
  if (path.empty()) return true;
  if (Status s = SetDictionaryOverride(path); !s.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd %s: %s\n", command, s.message().c_str());
    exit_code = 1;
    return false;
  }
  return true;
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
