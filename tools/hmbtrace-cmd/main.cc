// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd: the command-line tool for NVMe SSD firmware traces carried
// by the "hmb" ftrace instance. This file only parses the command line;
// each subcommand lives in its own file.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "export_perfetto.h"
#include "report.h"
#include "stat.h"

#ifndef HMBTRACE_VERSION
#define HMBTRACE_VERSION "unknown"
#endif

namespace hmbtrace {
namespace {

int Main(int argc, char** argv) {
  CLI::App app{
      "hmbtrace-cmd: read NVMe SSD firmware traces captured from the \"hmb\" trace instance "
      "with `trace-cmd record -B hmb -e hmb`.",
      "hmbtrace-cmd"};
  app.set_version_flag("--version", HMBTRACE_VERSION);
  app.require_subcommand(1);
  app.get_formatter()->column_width(30);

  std::string input = "trace.dat";

  ReportOptions report;
  std::vector<uint16_t> cores;
  std::vector<std::string> events;
  CLI::App* report_cmd = app.add_subcommand(
      "report",
      "One line per firmware event in time order, decoded with the dictionary the capture "
      "carries; losses, state changes and trace_marker lines in the same timeline");
  report_cmd->add_option("-i,--input", input, "The trace-cmd data file to read")
      ->capture_default_str()
      ->type_name("FILE");
  report_cmd->add_option("--core", cores, "Only records and losses of firmware core N; repeatable")
      ->type_name("N");
  report_cmd
      ->add_option("--event", events,
                   "Only events named NAME (a dictionary name, or lost, state, dict, marker); "
                   "repeatable")
      ->type_name("NAME");
  report_cmd->add_flag("--raw", report.raw, "Add the payload in hex to decoded records");

  bool json = false;
  CLI::App* stat_cmd = app.add_subcommand(
      "stat",
      "Per device and firmware core: records, sequence range, losses by reason checked against "
      "the sequence numbers, per-event counts and latencies");
  stat_cmd->add_option("-i,--input", input, "The trace-cmd data file to read")
      ->capture_default_str()
      ->type_name("FILE");
  stat_cmd->add_flag("--json", json, "Print JSON instead of text");

  std::string perfetto;
  CLI::App* export_cmd = app.add_subcommand(
      "export", "Convert the capture for a trace viewer: Chrome/Perfetto JSON trace events");
  export_cmd->add_option("-i,--input", input, "The trace-cmd data file to read")
      ->capture_default_str()
      ->type_name("FILE");
  export_cmd
      ->add_option("--perfetto", perfetto,
                   "Write the JSON trace-event format here (open it in ui.perfetto.dev)")
      ->required()
      ->type_name("OUT.json");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }

  if (report_cmd->parsed()) {
    report.cores.insert(cores.begin(), cores.end());
    report.events.insert(events.begin(), events.end());
    return RunReport(input, report);
  }
  if (stat_cmd->parsed())
    return RunStat(input, json);
  if (export_cmd->parsed())
    return RunExportPerfetto(input, perfetto);
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
