// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd dict: dict/dict.h.
#include <memory>

#include "commands/command.h"
#include "dict/dict.h"

namespace hmbtrace {

void AddDictCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<DictOptions>();
  CLI::App* cmd = app.add_subcommand(
      "dict",
      "Build the dictionary of a firmware's tokenized printf sites (HMB_TRACE_PRINTF) from its "
      "ELF file, with its build id: for --dictionary, or (--raw) for the firmware to embed");
  cmd->add_option("firmware", o->elf, "The firmware's ELF file (not stripped of .hmb_trace_printf)")
      ->required()
      ->type_name("FIRMWARE.elf");
  cmd->add_option("-o,--output", o->output, "The dictionary file to write")
      ->required()
      ->type_name("FILE");
  cmd->add_flag("--raw", o->raw,
                "Write the ABI's dictionary bytes alone (no build id), for the firmware to embed");
  cmd->add_flag("-q,--quiet", o->quiet, "No summary on stderr");
  cmd->callback([o, &exit_code] { exit_code = RunDict(*o); });
}

}  // namespace hmbtrace
