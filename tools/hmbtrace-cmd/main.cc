// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd: the command-line tool for NVMe SSD firmware traces carried
// by the "hmb" ftrace instance. This file only parses the command line;
// each subcommand lives in its own file.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cmd_capture.h"
#include "ctrl.h"
#include "export.h"
#include "instance.h"
#include "marker.h"
#include "record.h"
#include "report.h"
#include "retime.h"
#include "stat.h"
#include "status.h"
#include "stream.h"

#ifndef HMBTRACE_VERSION
#define HMBTRACE_VERSION "unknown"
#endif

namespace hmbtrace {
namespace {

int Main(int argc, char** argv) {
  CLI::App app{
      "hmbtrace-cmd: NVMe SSD firmware traces from the \"hmb\" trace instance: read captures "
      "made with `trace-cmd record -B hmb -e hmb`, or the live instance.",
      "hmbtrace-cmd"};
  app.set_version_flag("--version", HMBTRACE_VERSION);
  app.require_subcommand(1);
  app.get_formatter()->column_width(30);

  std::string input = "trace.dat";
  auto add_input = [&input](CLI::App* cmd) {
    cmd->add_option("-i,--input", input, "The trace-cmd data file to read")
        ->capture_default_str()
        ->type_name("FILE");
  };

  ReportOptions report;
  std::vector<uint16_t> cores;
  std::vector<std::string> events;
  CLI::App* report_cmd = app.add_subcommand(
      "report",
      "One line per firmware event in time order, decoded with the dictionary the capture "
      "carries, at its firmware time converted to the host clock; losses, state changes and "
      "trace_marker lines in the same timeline");
  add_input(report_cmd);
  report_cmd->add_option("--core", cores, "Only records and losses of firmware core N; repeatable")
      ->type_name("N");
  report_cmd
      ->add_option("--event", events,
                   "Only events named NAME (a dictionary name, or lost, state, dict, clock, "
                   "marker); repeatable")
      ->type_name("NAME");
  report_cmd->add_flag("--raw", report.raw, "Add the payload in hex to decoded records");
  std::string report_cmd_id;
  report_cmd
      ->add_option("--cmd", report_cmd_id,
                   "Instead: the story of each host NVMe command with this qid and cid (setup, "
                   "the firmware's fetch, NAND work and completion at converted time, the host "
                   "completion, the latency split)")
      ->type_name("QID:CID");
  report_cmd
      ->add_option("--reorder-margin", report.reorder_margin_ms,
                   "Hold lines until the capture is MS past them, so that records drained up to "
                   "MS after they happened are placed at their converted time")
      ->capture_default_str()
      ->type_name("MS");

  bool json = false;
  CLI::App* stat_cmd = app.add_subcommand(
      "stat",
      "Per device and firmware core: records, sequence range, losses by reason checked against "
      "the sequence numbers, per-event counts and latencies");
  add_input(stat_cmd);
  stat_cmd->add_flag("--json", json, "Print JSON instead of text");
  bool no_commands = false;
  stat_cmd->add_flag("--no-commands", no_commands,
                     "Leave out the NVMe command join (host commands joined to their firmware "
                     "records, latency split per opcode)");
  std::string commands_json;
  stat_cmd
      ->add_option("--commands-json", commands_json,
                   "Also write every host command with its join (or why not), and every "
                   "firmware command record not joined, as JSON to FILE")
      ->type_name("FILE");

  ExportOptions export_opts;
  std::string perfetto;
  CLI::App* export_cmd = app.add_subcommand(
      "export",
      "Convert the capture for Perfetto (ui.perfetto.dev): its native protobuf trace (firmware "
      "cores, host NVMe queues with flows to the firmware work, the other ftrace events), or "
      "Chrome JSON trace events");
  add_input(export_cmd);
  export_cmd->add_option("-o,--output", export_opts.output, "Write the trace here")
      ->capture_default_str()
      ->type_name("OUT");
  export_cmd
      ->add_option("--format", export_opts.format,
                   "proto (Perfetto's protobuf), json (Chrome JSON), or auto: json if OUT ends "
                   "in .json, else proto")
      ->capture_default_str()
      ->type_name("FORMAT");
  export_cmd
      ->add_option("--perfetto", perfetto, "Old spelling of --output OUT (format from OUT's name)")
      ->type_name("OUT");
  export_cmd->add_flag("--compress", export_opts.compress,
                       "Protobuf only: write the packets zlib-compressed (2-3x smaller; "
                       "Perfetto reads them, protoc --decode does not)");
  export_cmd->add_flag("-q,--quiet", export_opts.quiet,
                       "Print no summary line, and no progress line while reading");

  std::string sysfs_dir(kDefaultSysfsDir);
  std::string tracefs_dir(kDefaultTracefsDir);
  auto add_tracefs = [&tracefs_dir](CLI::App* cmd) {
    cmd->add_option("--tracefs", tracefs_dir, "Where tracefs is mounted")
        ->capture_default_str()
        ->type_name("DIR");
  };
  auto add_sysfs = [&sysfs_dir](CLI::App* cmd) {
    cmd->add_option("--sysfs", sysfs_dir, "The module's status directory (sysfs class)")
        ->capture_default_str()
        ->type_name("DIR");
  };

  StatusOptions status;
  CLI::App* status_cmd = app.add_subcommand(
      "status",
      "The live state: per device the module's status (state, per-core delivered and lost, "
      "errors, dictionary) and the hmb instance (tracing_on, enabled events, buffer size, "
      "per-CPU ftrace counters); read-only");
  status_cmd->add_flag("--json", status.json, "Print JSON instead of text");
  add_sysfs(status_cmd);
  add_tracefs(status_cmd);

  std::vector<std::string> marker_words;
  CLI::App* marker_cmd = app.add_subcommand(
      "marker",
      "Write one line to the hmb instance's trace_marker, into the timeline of the firmware "
      "records");
  marker_cmd->add_option("text", marker_words, "The line (words are joined by spaces)")
      ->required()
      ->type_name("TEXT...");
  add_tracefs(marker_cmd);

  std::vector<std::string> ctrl_args;
  std::string ctrl_device;
  CLI::App* ctrl_cmd = app.add_subcommand(
      "ctrl",
      "Ask the SSD firmware, over the module's control channel: start, stop, mask EVENT_ID..., "
      "unmask-all, ring-mode overwrite|stop, echo COOKIE [CORE]");
  ctrl_cmd->add_option("operation", ctrl_args, "The operation and its arguments")
      ->required()
      ->type_name("OPERATION [ARG...]");
  ctrl_cmd->add_option("--device", ctrl_device, "The area, when there is more than one")
      ->type_name("NAME");
  add_sysfs(ctrl_cmd);

  StreamOptions stream;
  std::vector<uint16_t> stream_cores;
  std::vector<std::string> stream_events;
  CLI::App* stream_cmd = app.add_subcommand(
      "stream",
      "Enable the hmb events of the live instance and print its records as they come, decoded "
      "as report does, per CPU in order; restores the events' state on exit");
  stream_cmd
      ->add_option("--duration", stream.duration, "Stop after S seconds (0: at SIGINT or SIGTERM)")
      ->capture_default_str()
      ->type_name("S");
  stream_cmd
      ->add_option("--core", stream_cores, "Only records and losses of firmware core N; repeatable")
      ->type_name("N");
  stream_cmd
      ->add_option("--event", stream_events,
                   "Only events named NAME (a dictionary name, or lost, state, dict, clock, "
                   "marker); repeatable")
      ->type_name("NAME");
  stream_cmd->add_flag("--raw", stream.report.raw, "Add the payload in hex to decoded records");
  add_tracefs(stream_cmd);
  add_sysfs(stream_cmd);

  RecordOptions record;
  CLI::App* record_cmd = app.add_subcommand(
      "record",
      "Check the module, tracefs, the instance and trace-cmd, run `trace-cmd record -B hmb -e "
      "hmb` around COMMAND or for --duration, then summarize the capture");
  record_cmd->add_option("-o,--output", record.output, "The trace-cmd data file to write")
      ->capture_default_str()
      ->type_name("FILE");
  record_cmd
      ->add_option("--duration", record.duration,
                   "Record for S seconds (trace-cmd traces `sleep S`); 0: until COMMAND ends, "
                   "or SIGINT")
      ->capture_default_str()
      ->type_name("S");
  record_cmd
      ->add_option("--trace-cmd", record.trace_cmd,
                   "The trace-cmd program (default: trace-cmd from PATH)")
      ->type_name("PATH");
  bool record_no_nvme = false;
  record_cmd->add_flag("--no-nvme", record_no_nvme,
                       "Do not also record the host's nvme:nvme_setup_cmd and "
                       "nvme:nvme_complete_rq (top instance; recorded by default when the nvme "
                       "driver is loaded, for the command join of stat and report --cmd)");
  add_sysfs(record_cmd);
  add_tracefs(record_cmd);
  bool record_no_retime = false;
  record_cmd->add_flag("--no-retime", record_no_retime,
                       "Write trace-cmd's capture as it is, firmware records at their drain "
                       "time, instead of the retimed one (see hmbtrace-cmd retime)");
  record_cmd->add_option("command", record.command, "The command to trace, after --")
      ->type_name("COMMAND...");

  RetimeOptions retime;
  CLI::App* retime_cmd = app.add_subcommand(
      "retime",
      "Write a copy of a capture in which every firmware record has its converted firmware "
      "time as its ftrace timestamp, for trace-cmd report and KernelShark");
  retime_cmd->add_option("-i,--input", retime.input, "The trace-cmd data file to read")
      ->capture_default_str()
      ->type_name("FILE");
  retime_cmd->add_option("-o,--output", retime.output, "The retimed trace-cmd data file to write")
      ->required()
      ->type_name("FILE");
  retime_cmd
      ->add_option("--file-version", retime.file_version,
                   "The trace-cmd file version to write, 6 or 7 (default: the input's)")
      ->check(CLI::IsMember({6, 7}))
      ->type_name("N");
  retime_cmd
      ->add_option("--reorder-margin", retime.reorder_margin_ms,
                   "How long after its firmware time a record may be drained and still be "
                   "placed there, in ms (as report's)")
      ->capture_default_str()
      ->type_name("MS");
  retime_cmd->add_flag("-q,--quiet", retime.quiet, "No summary on stderr");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (report_cmd->parsed()) {
    if (report.reorder_margin_ms > 3600000) {
      std::fprintf(stderr, "hmbtrace-cmd report: --reorder-margin must be at most 3600000 ms\n");
      return 2;
    }
    if (!report_cmd_id.empty())
      return RunCommandStory(input, report_cmd_id);
    report.cores.insert(cores.begin(), cores.end());
    report.events.insert(events.begin(), events.end());
    return RunReport(input, report);
  }
  if (stat_cmd->parsed()) {
    if (!commands_json.empty())
      if (int rc = WriteCommandListJson(input, commands_json); rc != 0)
        return rc;
    return RunStat(input, json, !no_commands);
  }
  if (export_cmd->parsed()) {
    export_opts.input = input;
    if (!perfetto.empty())
      export_opts.output = perfetto;
    return RunExport(export_opts);
  }
  if (status_cmd->parsed()) {
    status.sysfs_dir = sysfs_dir;
    status.tracefs_dir = tracefs_dir;
    return RunStatus(status);
  }
  if (marker_cmd->parsed())
    return RunMarker(tracefs_dir, marker_words);
  if (ctrl_cmd->parsed())
    return RunCtrl(sysfs_dir, ctrl_device, ctrl_args);
  if (stream_cmd->parsed()) {
    if (!(stream.duration >= 0)) {
      std::fprintf(stderr, "hmbtrace-cmd stream: --duration must be 0 or more seconds\n");
      return 2;
    }
    stream.report.cores.insert(stream_cores.begin(), stream_cores.end());
    stream.report.events.insert(stream_events.begin(), stream_events.end());
    stream.sysfs_dir = sysfs_dir;
    stream.tracefs_dir = tracefs_dir;
    return RunStream(stream);
  }
  if (record_cmd->parsed()) {
    if (!(record.duration >= 0)) {
      std::fprintf(stderr, "hmbtrace-cmd record: --duration must be 0 or more seconds\n");
      return 2;
    }
    if (record.duration > 0 && !record.command.empty()) {
      std::fprintf(stderr, "hmbtrace-cmd record: give --duration or a COMMAND, not both\n");
      return 2;
    }
    record.sysfs_dir = sysfs_dir;
    record.tracefs_dir = tracefs_dir;
    record.nvme = !record_no_nvme;
    record.retime = !record_no_retime;
    return RunRecord(record);
  }
  if (retime_cmd->parsed()) {
    if (retime.reorder_margin_ms > 3600000) {
      std::fprintf(stderr, "hmbtrace-cmd retime: --reorder-margin must be at most 3600000 ms\n");
      return 2;
    }
    return RunRetime(retime);
  }
  return 2;
}

}  // namespace
}  // namespace hmbtrace

int main(int argc, char** argv) {
  try {
    return hmbtrace::Main(argc, argv);
  } catch (const std::exception& e) {
    // Only allocation failure or a library bug gets here.
    std::fprintf(stderr, "hmbtrace-cmd: %s\n", e.what());
    return 1;
  }
}
