// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd stat: stat/stat.h; its command join section: join/nvme_capture.h;
// --html: stat/html_report.h.
#include <memory>
#include <string>

#include "commands/command.h"
#include "join/nvme_capture.h"
#include "stat/stat.h"

namespace hmbtrace {

void AddStatCommand(CLI::App& app, int& exit_code) {
  struct Options {
    std::string input;
    bool json = false;
    bool no_commands = false;
    std::string commands_json;
    std::string html;
    std::string dictionary;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "stat",
      "Per device and firmware core: records, sequence range, losses by reason checked against "
      "the sequence numbers, per-event counts and latencies");
  AddInputOption(cmd, &o->input);
  AddDictionaryOption(cmd, &o->dictionary);
  cmd->add_flag("--json", o->json, "Print JSON instead of text");
  cmd->add_flag("--no-commands", o->no_commands,
                "Leave out the NVMe command join (host commands joined to their firmware "
                "records, latency split per opcode)");
  cmd->add_option("--commands-json", o->commands_json,
                  "Also write every host command with its join (or why not), and every "
                  "firmware command record not joined, as JSON to FILE")
      ->type_name("FILE");
  cmd->add_option("--html", o->html,
                  "Also write a self-contained HTML report to FILE: summary, latency histograms, "
                  "the NVMe split per opcode, activity per core, the slowest commands")
      ->type_name("FILE");
  cmd->callback([o, &exit_code] {
    if (!UseDictionaryOption(o->dictionary, "stat", exit_code))
      return;
    if (!o->commands_json.empty()) {
      exit_code = WriteCommandListJson(o->input, o->commands_json);
      if (exit_code != 0)
        return;
    }
    exit_code = RunStat(o->input, o->json, !o->no_commands, o->html);
  });
}

}  // namespace hmbtrace
