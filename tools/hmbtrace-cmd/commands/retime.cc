// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd retime: retime/retime.h.
#include <cstdio>
#include <memory>

#include "commands/command.h"
#include "retime/retime.h"

namespace hmbtrace {

void AddRetimeCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RetimeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "retime",
      "Write a copy of a capture in which every firmware record has its converted firmware "
      "time as its ftrace timestamp, for trace-cmd report and KernelShark");
  AddInputOption(cmd, &o->input);
  cmd->add_option("-o,--output", o->output, "The retimed trace-cmd data file to write")
      ->required()
      ->type_name("FILE");
  cmd->add_option("--file-version", o->file_version,
                  "The trace-cmd file version to write, 6 or 7 (default: the input's)")
      ->check(CLI::IsMember({6, 7}))
      ->type_name("N");
  cmd->add_option("--reorder-margin", o->reorder_margin_ms,
                  "How long after its firmware time a record may be drained and still be "
                  "placed there, in ms (as report's)")
      ->capture_default_str()
      ->type_name("MS");
  AddDictionaryOption(cmd, &o->dictionary);
  cmd->add_flag("-q,--quiet", o->quiet, "No summary on stderr");
  cmd->callback([o, &exit_code] {
    if (o->reorder_margin_ms > 3600000) {
      std::fprintf(stderr, "hmbtrace-cmd retime: --reorder-margin must be at most 3600000 ms\n");
      exit_code = 2;
      return;
    }
    if (!UseDictionaryOption(o->dictionary, "retime", exit_code)) return;
    exit_code = RunRetime(*o);
  });
}

}  // namespace hmbtrace
