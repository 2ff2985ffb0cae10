// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd record: a checked way to make a capture. libtracecmd has no
// public write API, so trace-cmd stays the trace.dat writer: this checks
// what a capture needs (the module, tracefs, the hmb instance, trace-cmd),
// runs `trace-cmd record -B hmb -e hmb -o FILE [COMMAND...]` (the `-e hmb`
// after `-B hmb` matters: without it trace-cmd records none of the
// instance's events), forwards SIGINT/SIGTERM to it so that Ctrl-C ends the
// recording cleanly, then reads the capture back and summarizes it.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_RECORD_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_RECORD_H_

#include <optional>
#include <string>
#include <vector>

#include "hmbtrace/status.h"
#include "stat/stat.h"

namespace hmbtrace {

struct RecordOptions {
  std::string output = "trace.dat";
  double duration = 0;    // seconds of `sleep`; 0: COMMAND, or until SIGINT
  std::string trace_cmd;  // empty: "trace-cmd" from PATH
  std::string sysfs_dir;
  std::string tracefs_dir;
  std::vector<std::string> command;  // traced by trace-cmd; empty: none
  // Also the host's nvme:nvme_setup_cmd and nvme:nvme_complete_rq (top
  // instance), for the command join; RunRecord drops them when the nvme
  // driver is not loaded.
  bool nvme = true;
  // Rewrite the capture with firmware records at their converted time
  // (hmbtrace-cmd retime): trace-cmd records into a temporary file beside
  // `output`, which is removed once the retimed `output` is written.
  bool retime = true;
  // The trace clock of both buffers (trace-cmd record -C, for the top
  // buffer and after -B hmb); empty: the top buffer on "local", the hmb
  // instance on its own (ftrace's default "local").
  std::string clock;
};

// Where `name` is: itself if it contains a '/', else the first executable
// regular file of that name in the ':'-separated `path` (an empty entry is
// the current directory, as execvp does).
std::optional<std::string> FindProgram(const std::string& name, const std::string& path);

// Everything a capture needs, in the order a user fixes them: the module
// (sysfs), tracefs, the hmb instance, trace-cmd. On success the path of
// trace-cmd; on failure the message with the fix.
Result<std::string> CheckRecordPreconditions(const RecordOptions& options,
                                             const std::string& path_env);

// The argv that runs trace-cmd (argv[0] = trace_cmd): `trace-cmd record -B
// hmb -e hmb -o FILE` (with options.nvme the nvme events first, for the top
// instance) then COMMAND, or `sleep S` for a duration.
std::vector<std::string> TraceCmdArgv(const std::string& trace_cmd, const RecordOptions& options);

// The short summary printed after a recording: records per device and
// core, lost by reason, and how to decode the file.
std::string RecordSummary(const std::string& file, const StatCollector& stat);

// The file trace-cmd writes: `output`, or with retime the temporary file
// the retimed `output` is made from.
std::string TraceCmdOutput(const RecordOptions& options);

// The subcommand: returns the exit code (1 if a precondition is missing,
// trace-cmd failed, retiming failed, or the capture holds no hmb events).
int RunRecord(const RecordOptions& options);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_RECORD_H_
