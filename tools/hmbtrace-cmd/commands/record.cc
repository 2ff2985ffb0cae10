// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd record: live/record.h.
#include <cstdio>
#include <memory>

#include "clock_set.h"
#include "commands/command.h"
#include "live/record.h"

namespace hmbtrace {

void AddRecordCommand(CLI::App& app, int& exit_code) {
  struct Options {
    RecordOptions record;
    bool no_nvme = false;
    bool no_retime = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "record",
      "Check the module, tracefs, the instance and trace-cmd, run `trace-cmd record -B hmb -e "
      "hmb` around COMMAND or for --duration, then summarize the capture");
  cmd->add_option("-o,--output", o->record.output, "The trace-cmd data file to write")
      ->capture_default_str()
      ->type_name("FILE");
  cmd->add_option("--duration", o->record.duration,
                  "Record for S seconds (trace-cmd traces `sleep S`); 0: until COMMAND ends, "
                  "or SIGINT")
      ->capture_default_str()
      ->type_name("S");
  cmd->add_option("--trace-cmd", o->record.trace_cmd,
                  "The trace-cmd program (default: trace-cmd from PATH)")
      ->type_name("PATH");
  cmd->add_flag("--no-nvme", o->no_nvme,
                "Do not also record the host's nvme:nvme_setup_cmd and "
                "nvme:nvme_complete_rq (top instance; recorded by default when the nvme "
                "driver is loaded, for the command join of stat and report --cmd)");
  AddSysfsOption(cmd, &o->record.sysfs_dir);
  AddTracefsOption(cmd, &o->record.tracefs_dir);
  cmd->add_flag("--no-retime", o->no_retime,
                "Write trace-cmd's capture as it is, firmware records at their drain "
                "time, instead of the retimed one (see hmbtrace-cmd retime)");
  cmd->add_option("--clock", o->record.clock,
                  "The trace clock of both buffers (trace-cmd record -C): one hmb_trace fits "
                  "firmware time to: local, global, mono, mono_raw, boot, tai or perf "
                  "(default: the top buffer on local, the hmb instance on its own)")
      ->type_name("CLOCK");
  cmd->add_option("command", o->record.command, "The command to trace, after --")
      ->type_name("COMMAND...");
  cmd->callback([o, &exit_code] {
    if (!(o->record.duration >= 0)) {
      std::fprintf(stderr, "hmbtrace-cmd record: --duration must be 0 or more seconds\n");
      exit_code = 2;
      return;
    }
    if (o->record.duration > 0 && !o->record.command.empty()) {
      std::fprintf(stderr, "hmbtrace-cmd record: give --duration or a COMMAND, not both\n");
      exit_code = 2;
      return;
    }
    if (!o->record.clock.empty() && !TraceClockId(o->record.clock)) {
      std::fprintf(stderr,
                   "hmbtrace-cmd record: --clock %s: hmb_trace fits firmware time to local, "
                   "global, mono, mono_raw, boot, tai and perf only\n",
                   o->record.clock.c_str());
      exit_code = 2;
      return;
    }
    o->record.nvme = !o->no_nvme;
    o->record.retime = !o->no_retime;
    exit_code = RunRecord(o->record);
  });
}

}  // namespace hmbtrace
