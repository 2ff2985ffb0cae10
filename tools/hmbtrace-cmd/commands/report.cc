// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd report: report/report.h; --cmd: join/nvme_capture.h.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands/command.h"
#include "join/nvme_capture.h"
#include "report/report.h"

namespace hmbtrace {

void AddReportCommand(CLI::App& app, int& exit_code) {
  struct Options {
    std::string input;
    ReportOptions report;
    std::vector<uint16_t> cores;
    std::vector<std::string> events;
    std::string command_id;  // QID:CID
    std::string dictionary;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "One line per firmware event in time order, decoded with the dictionary the capture "
      "carries, at its firmware time converted to the host clock; losses, state changes and "
      "trace_marker lines in the same timeline");
  AddInputOption(cmd, &o->input);
  AddDictionaryOption(cmd, &o->dictionary);
  AddFilterOptions(cmd, &o->cores, &o->events);
  cmd->add_flag("--raw", o->report.raw, "Add the payload in hex to decoded records");
  cmd->add_option("--cmd", o->command_id,
                  "Instead: the story of each host NVMe command with this qid and cid (setup, "
                  "the firmware's fetch, NAND work and completion at converted time, the host "
                  "completion, the latency split); of a crash dump, the command in flight: its "
                  "fetch, what its core did after, where it stopped")
      ->type_name("QID:CID");
  cmd->add_option("--reorder-margin", o->report.reorder_margin_ms,
                  "Hold lines until the capture is MS past them, so that records drained up to "
                  "MS after they happened are placed at their converted time")
      ->capture_default_str()
      ->type_name("MS");
  cmd->callback([o, &exit_code] {
    if (!UseDictionaryOption(o->dictionary, "report", exit_code))
      return;
    if (o->report.reorder_margin_ms > 3600000) {
      std::fprintf(stderr, "hmbtrace-cmd report: --reorder-margin must be at most 3600000 ms\n");
      exit_code = 2;
      return;
    }
    if (!o->command_id.empty()) {
      exit_code = RunCommandStory(o->input, o->command_id);
      return;
    }
    o->report.cores.insert(o->cores.begin(), o->cores.end());
    o->report.events.insert(o->events.begin(), o->events.end());
    exit_code = RunReport(o->input, o->report);
  });
}

}  // namespace hmbtrace
