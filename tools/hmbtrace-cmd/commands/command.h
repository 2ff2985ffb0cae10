// SPDX-License-Identifier: GPL-2.0-only
//
// The subcommands of hmbtrace-cmd, one file each in this folder, as
// trace-cmd has tracecmd/trace-record.c, trace-report.c, ... Each file
// defines one registration function,
//
//   void AddFooCommand(CLI::App& app, int& exit_code);
//
// which adds the subcommand to `app` with its options, and a callback that
// checks what CLI11 cannot (ranges, combinations: exit code 2 with a
// message), runs the subcommand and leaves its exit code in `exit_code`.
// The options live in the callback (a shared_ptr it holds), so they last
// as long as `app`. main.cc lists the functions in the order --help shows
// the subcommands (README.md: how to add one).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_COMMANDS_COMMAND_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_COMMANDS_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace hmbtrace {

// The options several subcommands share, spelled and described once.
// -i,--input FILE: the trace-cmd data file to read (default trace.dat).
void AddInputOption(CLI::App* cmd, std::string* input);
// --tracefs DIR, default kDefaultTracefsDir.
void AddTracefsOption(CLI::App* cmd, std::string* tracefs_dir);
// --sysfs DIR, default kDefaultSysfsDir.
void AddSysfsOption(CLI::App* cmd, std::string* sysfs_dir);
// --core N and --event NAME (repeatable), the filters of report and stream.
void AddFilterOptions(CLI::App* cmd,
                      std::vector<uint16_t>* cores,
                      std::vector<std::string>* events);

// --dictionary FILE (report, stat, export): `hmbtrace-cmd dict`'s file.
void AddDictionaryOption(CLI::App* cmd, std::string* path);
// Sets it for the reads to come (capture/dictionary_override.h) if given;
// false, with a message naming `command` and exit_code 1, if it cannot.
bool UseDictionaryOption(const std::string& path, const char* command, int& exit_code);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_COMMANDS_COMMAND_H_
