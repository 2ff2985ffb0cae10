// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd export: a capture as a trace for Perfetto, in its native
// protobuf format (export_proto.h) or Chrome JSON (export_json.h); what
// both show is export_model.h. One pass over the capture after the
// dictionary pass, written as it goes to OUT.tmp, renamed to OUT at the end.
// With the host's nvme events or other ftrace events in the capture, a
// pass over every buffer for those, and one for the command join.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_H_

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "capture/dictionaries.h"
#include "export/export_model.h"
#include "hmbtrace/status.h"

namespace hmbtrace {

enum class ExportFormat { kProto, kJson };

// "proto" / "json"; "" or "auto": from the output's extension (.json is
// JSON, anything else the protobuf). std::nullopt for anything else.
std::optional<ExportFormat> ChooseExportFormat(std::string_view format, std::string_view output);

struct ExportOptions {
  std::string input = "trace.dat";
  std::string output = "trace.pftrace";
  std::string format = "auto";
  bool compress = false;  // proto: zlib-compressed packets
  bool zstd = false;      // proto: zstd-compressed packets (Perfetto v58+)
  bool quiet = false;     // no summary line
};

int RunExport(const ExportOptions& options);

// What an export wrote, for the summary line and the tests.
struct ExportSummary {
  ExportCounts counts;
  ExportClock clock;
  uint64_t ftrace_malformed = 0;  // other ftrace events skipped
  uint64_t ftrace_fields_cut = 0;
  // Protobuf: trace_marker lines left out of the bundles (not atrace);
  // events of a CPU Perfetto refuses (ProtoTraceWriter::kMaxCpus).
  uint64_t prints_not_atrace = 0;
  uint64_t ftrace_dropped = 0;
  // Why firmware times are not converted (ClockSet::ClockProblem()), or "".
  std::string clock_problem;
};

// The summary lines of an export into OUTPUT, to `out`.
void PrintExportSummary(std::FILE* out,
                        const std::string& output,
                        bool proto,
                        const ExportSummary& summary);

// Every pass of an export of `input` into `sink`, which the caller then
// finishes: its other ftrace events and trace clock; with the host's nvme
// events, the command join; the hmb events (export_model.h), after the
// capture's dictionaries, which it collects into `dicts` (empty at first).
Status ExportCapture(const std::string& input,
                     DictionaryStore* dicts,
                     ExportSink* sink,
                     ExportSummary* summary,
                     const ReadOptions& read_options = {});

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_H_
