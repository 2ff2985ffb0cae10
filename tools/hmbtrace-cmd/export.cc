// SPDX-License-Identifier: GPL-2.0-only
#include "export.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "dictionaries.h"
#include "export_json.h"
#include "export_model.h"
#include "export_proto.h"

namespace hmbtrace {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Large writes: the trace goes out in 1 MiB pieces.
constexpr size_t kWriteBuffer = 1u << 20;

}  // namespace

std::optional<ExportFormat> ChooseExportFormat(std::string_view format, std::string_view output) {
  if (format == "proto")
    return ExportFormat::kProto;
  if (format == "json")
    return ExportFormat::kJson;
  if (!format.empty() && format != "auto")
    return std::nullopt;
  return output.ends_with(".json") ? ExportFormat::kJson : ExportFormat::kProto;
}

int RunExport(const ExportOptions& options) {
  const auto format = ChooseExportFormat(options.format, options.output);
  if (!format) {
    std::fprintf(stderr, "hmbtrace-cmd export: --format must be proto, json or auto, not \"%s\"\n",
                 options.format.c_str());
    return 2;
  }
  if (options.compress && *format != ExportFormat::kProto) {
    std::fprintf(stderr, "hmbtrace-cmd export: --compress is for the protobuf format only\n");
    return 2;
  }
  std::string error;
  DictionaryStore dicts;  // filled by the first pass of the read below
  // Written beside the target, then renamed: no half-written file on failure.
  const std::string tmp = options.output + ".tmp";
  std::vector<char> buffer(kWriteBuffer);  // outlives the FILE that uses it
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(tmp.c_str(), "wb"));
  if (!file) {
    std::fprintf(stderr, "hmbtrace-cmd export: %s: %s\n", tmp.c_str(), std::strerror(errno));
    return 1;
  }
  std::setvbuf(file.get(), buffer.data(), _IOFBF, buffer.size());
  std::unique_ptr<ExportSink> sink;
  if (*format == ExportFormat::kProto)
    sink = std::make_unique<ProtoTraceWriter>(file.get(), options.compress);
  else
    sink = std::make_unique<JsonTraceWriter>(file.get());
  ExportModel model(&dicts, sink.get());
  ReadOptions read_options;
  read_options.quiet = options.quiet;
  const bool read = ReadCaptureWithDictionaries(
      options.input, &dicts,
      [&model](const CaptureEvent& ev) {
        model.Add(ev);
        return true;
      },
      &error, read_options);
  bool ok = read;
  if (ok && model.counts().hmb_events == 0) {
    error = options.input + ": no hmb events; " + std::string(kRecordHint);
    ok = false;
  }
  if (ok) {
    model.Finish();
    ok = sink->Finish(&error);
    if (!ok)
      error = tmp + ": " + error;
  }
  if (ok) {
    const bool closed = std::fclose(file.release()) == 0;
    if (!closed || std::rename(tmp.c_str(), options.output.c_str()) != 0) {
      error = options.output + ": " + std::strerror(errno);
      ok = false;
    }
  }
  if (!ok) {
    file.reset();
    std::remove(tmp.c_str());
    std::fprintf(stderr, "hmbtrace-cmd export: %s\n", error.c_str());
    return 1;
  }
  if (!options.quiet) {
    const ExportCounts& c = model.counts();
    std::printf(
        "%s: %llu records (%llu slices), %llu losses of %llu records, %llu resets, %llu "
        "trace_marker lines; open it at https://ui.perfetto.dev\n",
        options.output.c_str(), static_cast<unsigned long long>(c.records),
        static_cast<unsigned long long>(c.slices), static_cast<unsigned long long>(c.lost_events),
        static_cast<unsigned long long>(c.lost_records), static_cast<unsigned long long>(c.resets),
        static_cast<unsigned long long>(c.markers));
    if (c.evicted || c.too_many_spans)
      std::printf(
          "%s: %zu spans of a core open at once: %llu ended unfinished (no end seen), %llu "
          "latency slices shown as instants\n",
          options.output.c_str(), kMaxLanes, static_cast<unsigned long long>(c.evicted),
          static_cast<unsigned long long>(c.too_many_spans));
    if (c.malformed)
      std::printf("%s: %llu malformed hmb events skipped (see hmbtrace-cmd report)\n",
                  options.output.c_str(), static_cast<unsigned long long>(c.malformed));
  }
  return 0;
}

}  // namespace hmbtrace
