// SPDX-License-Identifier: GPL-2.0-only
#include "export/export.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "capture/dictionaries.h"
#include "capture/capture.h"
#include "capture/ftrace_events_c.h"
#include "dump/dump_file.h"
#include "export/export_join.h"
#include "export/export_json.h"
#include "export/export_model.h"
#include "export/export_proto.h"
#include "export/write_behind.h"

namespace hmbtrace {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Large writes: the trace goes out in 1 MiB pieces.
constexpr size_t kWriteBuffer = 1u << 20;

struct FtracePass {
  ExportModel* model = nullptr;
  const hmb_ftrace_info* info = nullptr;
  bool clock_set = false;
  ExportClock clock;
  uint64_t nvme_setups = 0;
  ExportFtraceEvent ev;  // reused
};

void SetClock(FtracePass* pass, uint64_t ts) {
  ExportClock clock;
  // The firmware's timeline is the hmb instance's clock; a capture of
  // `trace-cmd record -e hmb` without -B has the events in the top buffer.
  clock.trace_clock = pass->info->hmb_clock[0] ? pass->info->hmb_clock : pass->info->top_clock;
  if (pass->info->top_clock != clock.trace_clock)
    clock.top_clock = pass->info->top_clock;
  clock.ts = ts;
  pass->model->SetClock(clock);
  pass->clock = clock;
  pass->clock_set = true;
}

int OnFtraceEvent(const hmb_ftrace_event* c, void* data) {
  FtracePass* pass = static_cast<FtracePass*>(data);
  if (!pass->clock_set)
    SetClock(pass, c->ts);
  ExportFtraceEvent& ev = pass->ev;
  ev.ts = c->ts;
  ev.cpu = c->cpu < 0 ? 0 : static_cast<uint32_t>(c->cpu);
  ev.pid = c->pid < 0 ? 0 : static_cast<uint32_t>(c->pid);
  ev.system = c->system;
  ev.name = c->name;
  ev.print = c->is_print;
  ev.ip = c->ip;
  ev.buf = c->is_print ? std::string_view(c->buf, c->buf_len) : std::string_view();
  ev.fields.clear();
  for (size_t i = 0; i < c->nr_fields; i++) {
    const hmb_ftrace_field& f = c->fields[i];
    ExportFtraceField out;
    out.name = f.name;
    out.kind = f.kind == HMB_FTRACE_STR   ? ExportFtraceField::Kind::kString
               : f.kind == HMB_FTRACE_INT ? ExportFtraceField::Kind::kInt
                                          : ExportFtraceField::Kind::kUint;
    out.u = f.u;
    out.i = f.i;
    if (f.kind == HMB_FTRACE_STR)
      out.s = std::string_view(f.str, f.str_len);
    ev.fields.push_back(out);
  }
  if (ev.system == "nvme" && ev.name == "nvme_setup_cmd")
    pass->nvme_setups++;
  pass->model->AddFtrace(ev);
  return 0;
}

// The message of a capture CaptureFile::Open() refused, as export gave it
// when its first pass opened the file itself: that pass's error if it
// has one, then Open()'s (without the -i hint export never gave).
Status RefusedCapture(const std::string& input, Status open) {
  hmb_ftrace_info info{};
  char err[256] = "";
  const auto ignore = [](const hmb_ftrace_event*, void*) { return 0; };
  if (hmb_ftrace_read(input.c_str(), ignore, nullptr, &info, err, sizeof(err)) < 0)
    return Status::Error(input + ": " + err);
  return open;
}

}  // namespace

Status ExportCapture(const std::string& input,
                     DictionaryStore* dicts,
                     ExportSink* sink,
                     ExportSummary* summary,
                     const ReadOptions& read_options) {
  // One open for every pass below (each libtracecmd open reads the
  // file's kallsyms again).
  CaptureFile file;
  if (Status s = file.Open(input); !s.ok())
    return IsDumpFile(input) ? s : RefusedCapture(input, std::move(s));
  ExportModel model(dicts, sink);
  // The capture's other ftrace events, straight to the sink, and its
  // trace clock (one pass over the buffers that hold such events).
  hmb_ftrace_info info{};
  FtracePass pass;
  pass.model = &model;
  pass.info = &info;
  char err[256] = "";
  if (file.is_dump()) {
    // A crash dump has no other ftrace events; its clock is the one its
    // times are converted to.
    CaptureClocks clocks;
    if (Status s = ReadCaptureClocks(file, &clocks); !s.ok())
      return s;
    std::snprintf(info.hmb_clock, sizeof(info.hmb_clock), "%s", clocks.hmb.c_str());
    std::snprintf(info.top_clock, sizeof(info.top_clock), "%s", clocks.top.c_str());
  } else {
    Result<hmb_tracecmd_file*> f = file.TracecmdFile();
    if (!f.ok())
      return f.status();
    if (hmb_ftrace_read_file(f.value(), OnFtraceEvent, &pass, &info, err, sizeof(err)) < 0)
      return Status::Error(input + ": " + err);
  }
  if (!pass.clock_set)
    SetClock(&pass, 0);
  summary->clock = pass.clock;
  summary->ftrace_malformed = info.malformed;
  summary->ftrace_fields_cut = info.fields_cut;
  // The host commands joined with the firmware records: the join needs
  // the whole capture first (a pass of its own; export_join.h).
  ExportJoin join;
  if (pass.nvme_setups) {
    if (Status s = ReadExportJoin(file, &join); !s.ok())
      return s;
    model.SetJoin(&join);
  }
  // The dictionaries first, then the hmb events (two passes).
  if (Status s = ReadCaptureWithDictionaries(
          file, dicts,
          [&model](const CaptureEvent& ev) {
            model.Add(ev);
            return true;
          },
          read_options);
      !s.ok())
    return s;
  if (model.counts().hmb_events == 0)
    return Status::Error(input + ": no hmb events; " + std::string(kRecordHint));
  model.Finish();
  summary->counts = model.counts();
  summary->clock_problem = model.clock_problem();
  return {};
}

std::optional<ExportFormat> ChooseExportFormat(std::string_view format, std::string_view output) {
  if (format == "proto")
    return ExportFormat::kProto;
  if (format == "json")
    return ExportFormat::kJson;
  if (!format.empty() && format != "auto")
    return std::nullopt;
  return output.ends_with(".json") ? ExportFormat::kJson : ExportFormat::kProto;
}

void PrintExportSummary(std::FILE* out,
                        const std::string& output,
                        bool proto,
                        const ExportSummary& summary) {
  const ExportCounts& c = summary.counts;
  std::fprintf(
      out,
      "%s: %llu records (%llu slices), %llu losses of %llu records, %llu resets, %llu "
      "trace_marker lines; open it at https://ui.perfetto.dev\n",
      output.c_str(), static_cast<unsigned long long>(c.records),
      static_cast<unsigned long long>(c.slices), static_cast<unsigned long long>(c.lost_events),
      static_cast<unsigned long long>(c.lost_records), static_cast<unsigned long long>(c.resets),
      static_cast<unsigned long long>(c.markers));
  if (c.evicted || c.too_many_spans)
    std::fprintf(out,
                 "%s: %zu spans of a core open at once: %llu ended unfinished (no end seen), %llu "
                 "latency slices shown as instants\n",
                 output.c_str(), kMaxLanes, static_cast<unsigned long long>(c.evicted),
                 static_cast<unsigned long long>(c.too_many_spans));
  if (c.malformed)
    std::fprintf(out, "%s: %llu malformed hmb events skipped (see hmbtrace-cmd report)\n",
                 output.c_str(), static_cast<unsigned long long>(c.malformed));
  if (c.host_commands)
    std::fprintf(
        out,
        "%s: %llu host nvme commands (%llu without a completion in the capture), %llu flows "
        "to the firmware fetch that served them\n",
        output.c_str(), static_cast<unsigned long long>(c.host_commands),
        static_cast<unsigned long long>(c.host_incomplete),
        static_cast<unsigned long long>(c.flows));
  const uint64_t not_atrace = summary.prints_not_atrace;
  const uint64_t dropped = summary.ftrace_dropped;
  std::fprintf(out,
               "%s: %llu other ftrace events (markers, nvme, ...)%s; timestamps on trace clock "
               "\"%s\"%s\n",
               output.c_str(),
               static_cast<unsigned long long>(c.ftrace_events - not_atrace - dropped),
               proto ? " in ftrace event bundles" : " not in JSON (no place for them)",
               summary.clock.trace_clock.c_str(),
               summary.clock.boottime() ? " (BOOTTIME)" : ": they line up within this file only");
  if (dropped)
    std::fprintf(out,
                 "%s: %llu other ftrace events of CPU %u or above left out: Perfetto refuses "
                 "their bundles as corrupt\n",
                 output.c_str(), static_cast<unsigned long long>(dropped),
                 ProtoTraceWriter::kMaxCpus);
  if (not_atrace)
    std::fprintf(out,
                 "%s: %llu trace_marker lines not in atrace form (\"B|pid|name\", ...) only on "
                 "the trace_marker track: Perfetto reads every ftrace print as atrace\n",
                 output.c_str(), static_cast<unsigned long long>(not_atrace));
  if (!summary.clock_problem.empty())
    std::fprintf(out, "%s: %s\n", output.c_str(), summary.clock_problem.c_str());
  if (!summary.clock.top_clock.empty())
    std::fprintf(out,
                 "%s: the top buffer (nvme, sched, markers) was on trace clock \"%s\": its "
                 "events line up with the firmware's only if that is the same clock\n",
                 output.c_str(), summary.clock.top_clock.c_str());
  if (summary.ftrace_malformed || summary.ftrace_fields_cut)
    std::fprintf(out, "%s: %llu other ftrace events malformed (skipped), %llu fields cut\n",
                 output.c_str(), static_cast<unsigned long long>(summary.ftrace_malformed),
                 static_cast<unsigned long long>(summary.ftrace_fields_cut));
}

int RunExport(const ExportOptions& options) {
  const auto format = ChooseExportFormat(options.format, options.output);
  if (!format) {
    std::fprintf(stderr, "hmbtrace-cmd export: --format must be proto, json or auto, not \"%s\"\n",
                 options.format.c_str());
    return 2;
  }
  if ((options.compress || options.zstd) && *format != ExportFormat::kProto) {
    std::fprintf(stderr,
                 "hmbtrace-cmd export: --compress and --zstd are for the protobuf format only\n");
    return 2;
  }
  if (options.zstd && !ProtoTraceWriter::HasZstd()) {
    std::fprintf(stderr, "hmbtrace-cmd export: --zstd: this build has no zstd (libzstd-dev)\n");
    return 2;
  }
  DictionaryStore dicts;  // filled by the first pass of the read below
  // Written beside the target, then renamed: no half-written file on failure.
  const std::string tmp = options.output + ".tmp";
  std::vector<char> buffer(kWriteBuffer);  // outlives the FILE that uses it
  std::unique_ptr<std::FILE, FileCloser> file(OpenWriteBehind(tmp));
  if (!file) {
    std::fprintf(stderr, "hmbtrace-cmd export: %s: %s\n", tmp.c_str(), std::strerror(errno));
    return 1;
  }
  std::setvbuf(file.get(), buffer.data(), _IOFBF, buffer.size());
  std::unique_ptr<ExportSink> sink;
  const ProtoTraceWriter* proto_writer = nullptr;
  if (*format == ExportFormat::kProto) {
    auto writer = std::make_unique<ProtoTraceWriter>(
        file.get(), options.compress || options.zstd,
        options.zstd ? ProtoTraceWriter::Codec::kZstd : ProtoTraceWriter::Codec::kZlib);
    proto_writer = writer.get();
    sink = std::move(writer);
  } else {
    sink = std::make_unique<JsonTraceWriter>(file.get());
  }
  ExportSummary summary;
  ReadOptions read_options;
  read_options.quiet = options.quiet;
  Status result = ExportCapture(options.input, &dicts, sink.get(), &summary, read_options);
  if (result.ok()) {
    result = sink->Finish();
    if (!result.ok())
      result = Status::Error(tmp + ": " + result.message());
  }
  if (result.ok()) {
    const bool closed = std::fclose(file.release()) == 0;
    if (!closed || std::rename(tmp.c_str(), options.output.c_str()) != 0)
      result = Status::Error(options.output + ": " + std::strerror(errno));
  }
  if (!result.ok()) {
    file.reset();
    std::remove(tmp.c_str());
    std::fprintf(stderr, "hmbtrace-cmd export: %s\n", result.message().c_str());
    return 1;
  }
  if (!options.quiet) {
    summary.prints_not_atrace = proto_writer ? proto_writer->prints_not_atrace() : 0;
    summary.ftrace_dropped = proto_writer ? proto_writer->ftrace_dropped() : 0;
    PrintExportSummary(stdout, options.output, *format == ExportFormat::kProto, summary);
  }
  return 0;
}

}  // namespace hmbtrace
