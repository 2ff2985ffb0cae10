// SPDX-License-Identifier: GPL-2.0-only
//
// `hmbtrace-cmd dump save`: collecting the crash dumps hmb_trace.ko hands
// to devcoredump. Each pending dump is /sys/class/devcoredump/devcdN/data
// (root only); writing anything to it dismisses it (the kernel also drops
// it after 5 minutes); failing_device links to the device it is of. A
// devcoredump is ours if its data starts with the dump magic; those of
// other drivers are left alone: neither copied nor dismissed.
//
// A dump is written to DIR/hmb-<name>-<UTC time>-<gen>.hmbdump through a
// temporary file renamed into place, so that a reader never sees half a
// dump, and only then dismissed.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DEVCOREDUMP_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DEVCOREDUMP_H_

#include <string>
#include <vector>

#include "hmbtrace/status.h"

namespace hmbtrace {

inline constexpr char kDefaultDevcoredumpDir[] = "/sys/class/devcoredump";
// Overrides the sysfs directory (for tests).
inline constexpr char kDevcoredumpDirEnv[] = "HMBTRACE_DEVCOREDUMP_DIR";

// $HMBTRACE_DEVCOREDUMP_DIR, else kDefaultDevcoredumpDir.
std::string DevcoredumpDir();

struct SaveOptions {
  std::string sysfs_dir;  // DevcoredumpDir()
  std::string dir = ".";  // where dumps are written
  bool keep = false;      // do not dismiss a saved devcoredump
};

struct SavedDump {
  std::string devcd;   // "devcd3"
  std::string device;  // what failing_device links to ("0000:00:04.0"), or ""
  std::string path;    // the file written
  std::string line;    // one line for the user
};

// The file name of a dump: hmb-<name>-<UTC time>-<gen>.hmbdump, the name
// reduced to [A-Za-z0-9_.-] ("area" if empty).
std::string DumpFileName(const std::string& area_name, uint64_t taken_real_ns, uint32_t gen);

// One look at the pending devcoredumps: saves (and dismisses) ours,
// appending to `saved`. An error stops at the first dump that could not
// be saved (it is not dismissed); the message says the fix ("run as
// root", no devcoredump support).
Status SaveDevcoredumps(const SaveOptions& options, std::vector<SavedDump>* saved);

// The subcommand: once, or with `wait` every second until SIGINT/SIGTERM,
// a line per dump saved. Exit code 0, 1 on an error.
int RunDumpSave(const SaveOptions& options, bool wait);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DEVCOREDUMP_H_
