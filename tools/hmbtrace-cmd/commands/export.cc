// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd export: export/export.h.
#include <memory>
#include <string>

#include "commands/command.h"
#include "export/export.h"

namespace hmbtrace {

void AddExportCommand(CLI::App& app, int& exit_code) {
  struct Options {
    ExportOptions exp;
    std::string perfetto;  // the old spelling of --output
    std::string dictionary;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Convert the capture for Perfetto (ui.perfetto.dev): its native protobuf trace (firmware "
      "cores, host NVMe queues with flows to the firmware work, the other ftrace events), or "
      "Chrome JSON trace events");
  AddInputOption(cmd, &o->exp.input);
  AddDictionaryOption(cmd, &o->dictionary);
  cmd->add_option("-o,--output", o->exp.output, "Write the trace here")
      ->capture_default_str()
      ->type_name("OUT");
  cmd->add_option("--format", o->exp.format,
                  "proto (Perfetto's protobuf), json (Chrome JSON), or auto: json if OUT ends "
                  "in .json, else proto")
      ->capture_default_str()
      ->type_name("FORMAT");
  cmd->add_option("--perfetto", o->perfetto,
                  "Old spelling of --output OUT (format from OUT's name)")
      ->type_name("OUT");
  cmd->add_flag("--compress", o->exp.compress,
                "Protobuf only: write the packets zlib-compressed (2-3x smaller; "
                "Perfetto reads them, protoc --decode does not)");
  cmd->add_flag("--zstd", o->exp.zstd,
                "Protobuf only: write the packets zstd-compressed (about 8x smaller, "
                "and faster than --compress; Perfetto v58 or later reads them)");
  cmd->add_flag("-q,--quiet", o->exp.quiet,
                "Print no summary line, and no progress line while reading");
  cmd->callback([o, &exit_code] {
    if (!UseDictionaryOption(o->dictionary, "export", exit_code))
      return;
    if (!o->perfetto.empty())
      o->exp.output = o->perfetto;
    exit_code = RunExport(o->exp);
  });
}

}  // namespace hmbtrace
