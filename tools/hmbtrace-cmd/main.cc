// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd: the command-line tool for NVMe SSD firmware traces carried
// by the "hmb" ftrace instance. This file is the table of subcommands; each
// registers its own options and callback in commands/NAME.cc (command.h),
// as trace-cmd's trace-cmd.c lists its commands. To add one: README.md.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "commands/command.h"

#ifndef HMBTRACE_VERSION
#define HMBTRACE_VERSION "unknown"
#endif

// The subcommands, in the order --help lists them. X(Foo) is
// AddFooCommand(CLI::App&, int& exit_code), defined in commands/foo.cc.
#define HMBTRACE_COMMANDS(X) \
  X(Report)                  \
  X(Stat)                    \
  X(Export)                  \
  X(Status)                  \
  X(Marker)                  \
  X(Ctrl)                    \
  X(Stream)                  \
  X(Record)                  \
  X(Retime)                  \
  X(Dump)                    \
  X(Dict)

namespace hmbtrace {

#define HMBTRACE_DECLARE_COMMAND(name) void Add##name##Command(CLI::App& app, int& exit_code);
HMBTRACE_COMMANDS(HMBTRACE_DECLARE_COMMAND)
#undef HMBTRACE_DECLARE_COMMAND

namespace {

int Main(int argc, char** argv) {
  CLI::App app{
      "hmbtrace-cmd: NVMe SSD firmware traces from the \"hmb\" trace instance: read captures "
      "made with `trace-cmd record -B hmb -e hmb`, or the live instance.",
      "hmbtrace-cmd"};
  app.set_version_flag("--version", HMBTRACE_VERSION);
  app.require_subcommand(1);
  app.get_formatter()->column_width(30);

  // Set by the callback of the subcommand given (it runs inside parse()).
  int exit_code = 2;
#define HMBTRACE_ADD_COMMAND(name) Add##name##Command(app, exit_code);
  HMBTRACE_COMMANDS(HMBTRACE_ADD_COMMAND)
#undef HMBTRACE_ADD_COMMAND

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
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
