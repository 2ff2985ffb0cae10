// SPDX-License-Identifier: GPL-2.0-only
#include "retime/retime.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "capture/capture.h"
#include "capture/dictionaries.h"
#include "capture/dictionary_override.h"
#include "dump/dump_file.h"
#include "hmb_events.h"
#include "retime/retime_output_c.h"
#include "retime/trace_page_writer.h"

#include <traceevent/event-parse.h>

namespace hmbtrace {
namespace {

// A temporary file of one CPU's pages, beside the output; removed when done.
class PageFile {
 public:
  PageFile() = default;
  ~PageFile() {
    if (file_)
      std::fclose(file_);
    if (!path_.empty())
      unlink(path_.c_str());
  }
  PageFile(const PageFile&) = delete;
  PageFile& operator=(const PageFile&) = delete;

  Status Create(const std::string& output, size_t index) {
    std::string tmpl = output + ".retime-" + std::to_string(index) + ".XXXXXX";
    const int fd = mkstemp(tmpl.data());
    if (fd < 0)
      return Status::Error(tmpl + ": " + std::strerror(errno) +
                           " (the output's directory must be writable)");
    path_ = tmpl;
    return Adopt(fd, path_);
  }
  // `path` (the output being written) from `at` on; left in place.
  Status OpenAt(const std::string& path, off_t at) {
    const int fd = open(path.c_str(), O_WRONLY);
    if (fd < 0 || lseek(fd, at, SEEK_SET) != at) {
      if (fd >= 0)
        close(fd);
      return Status::Error(path + ": " + std::strerror(errno));
    }
    return Adopt(fd, path);
  }
  bool Write(std::span<const uint8_t> page) {
    return std::fwrite(page.data(), 1, page.size(), file_) == page.size();
  }
  // Flushed and closed; the file stays until destruction.
  bool Close() {
    if (!file_)
      return true;
    const bool ok = std::fflush(file_) == 0 && !std::ferror(file_);
    std::fclose(file_);
    file_ = nullptr;
    return ok;
  }
  const std::string& path() const { return path_; }

 private:
  // Writes go through `fd` (of `path`), buffered: pages leave in large
  // writes, not one system call per page.
  Status Adopt(int fd, const std::string& path) {
    file_ = fdopen(fd, "w");
    if (!file_) {
      close(fd);
      return Status::Error(path + ": " + std::strerror(errno));
    }
    buffer_ = std::make_unique<char[]>(kBufferSize);
    std::setvbuf(file_, buffer_.get(), _IOFBF, kBufferSize);
    return {};
  }

  static constexpr size_t kBufferSize = 1 << 20;
  std::string path_;
  FILE* file_ = nullptr;
  std::unique_ptr<char[]> buffer_;
};

// The output begun before the walk (retime_output_begin), removed unless
// finished.
struct OutputAbort {
  void operator()(retime_output* o) const { retime_output_abort(o); }
};
using BegunOutput = std::unique_ptr<retime_output, OutputAbort>;

// The first CPU of the input, in the output's order (every buffer's, the
// top buffer first), with CPU data: its pages can go straight to their
// place in the output, every CPU before it being empty (a CPU's records
// stay on it). {-1, -1} if none or not known.
std::pair<int, int> FirstCpuWithData(CaptureFile& file, const std::vector<CaptureBuffer>& buffers) {
  Result<hmb_tracecmd_file*> f = file.TracecmdFile();
  std::vector<int> cpus;
  for (const CaptureBuffer& b : buffers)
    cpus.push_back(b.cpus);
  int buffer = -1, cpu = -1;
  if (!f.ok() || retime_input_first_cpu_with_data(
                     f.value(), cpus.data(), static_cast<int>(cpus.size()), &buffer, &cpu) != 0)
    return {-1, -1};
  return {buffer, cpu};
}

// `size` bytes of `from` at `at` to the start of `to`.
bool CopyOut(const std::string& from, off_t at, off_t size, const std::string& to) {
  const int in = open(from.c_str(), O_RDONLY);
  const int out = open(to.c_str(), O_WRONLY | O_TRUNC);
  bool ok = in >= 0 && out >= 0 && retime_copy_range(in, at, out, 0, size) == 0;
  if (in >= 0)
    close(in);
  if (out >= 0)
    ok = close(out) == 0 && ok;
  return ok;
}

// An event waiting in the timeline (its body): how it goes on its page.
//   u64 missed | u32 data length | data | [the retime mark]
constexpr size_t kBodyHeader = 12;

void AppendBody(std::string* body,
                const RawRecord& rec,
                const uint8_t* mark /* HMB_RETIME_MARK_LEN bytes, or null */) {
  char head[kBodyHeader];
  const uint32_t len = static_cast<uint32_t>(rec.data.size());
  std::memcpy(head, &rec.missed_events, 8);
  std::memcpy(head + 8, &len, 4);
  body->reserve(kBodyHeader + len + (mark ? HMB_RETIME_MARK_LEN : 0));
  body->append(head, sizeof(head));
  body->append(reinterpret_cast<const char*>(rec.data.data()), len);
  if (mark)
    body->append(reinterpret_cast<const char*>(mark), HMB_RETIME_MARK_LEN);
}

// As hmb_trace.ko cuts a dictionary into hmb_dict events.
constexpr size_t kDictChunkLen = 1024;

// hmb_dict events carrying `dict` in chunks, made from `original`, an
// hmb_dict event of the same dev and generation (format `format`): its
// other fields kept, total_len, offset and chunk rewritten. Empty if the
// format or the event is not as the module writes them.
std::vector<std::vector<uint8_t>> DictEvents(tep_event* format,
                                             std::span<const uint8_t> original,
                                             std::span<const uint8_t> dict) {
  tep_format_field* total = tep_find_field(format, "total_len");
  tep_format_field* offset = tep_find_field(format, "offset");
  tep_format_field* chunk = tep_find_field(format, "chunk");
  if (!total || !offset || !chunk || total->size != 4 || offset->size != 4 ||
      !(chunk->flags & TEP_FIELD_IS_DYNAMIC) || chunk->size != 4 ||
      static_cast<size_t>(chunk->offset) + 4 > original.size())
    return {};
  uint32_t loc;
  std::memcpy(&loc, original.data() + chunk->offset, 4);
  const size_t fixed = loc & 0xffff;
  if (fixed < static_cast<size_t>(chunk->offset) + 4 || fixed > original.size() ||
      static_cast<size_t>(total->offset) + 4 > fixed || static_cast<size_t>(offset->offset) + 4 > fixed)
    return {};
  std::vector<std::vector<uint8_t>> out;
  for (size_t at = 0; at < dict.size(); at += kDictChunkLen) {
    const size_t n = std::min(kDictChunkLen, dict.size() - at);
    std::vector<uint8_t> ev(original.begin(), original.begin() + static_cast<ptrdiff_t>(fixed));
    ev.insert(ev.end(), dict.begin() + static_cast<ptrdiff_t>(at),
              dict.begin() + static_cast<ptrdiff_t>(at + n));
    ev.resize((ev.size() + 3) & ~size_t{3}, 0);
    const uint32_t t = static_cast<uint32_t>(dict.size()), o = static_cast<uint32_t>(at);
    const uint32_t l = static_cast<uint32_t>(n << 16 | fixed);
    std::memcpy(ev.data() + total->offset, &t, 4);
    std::memcpy(ev.data() + offset->offset, &o, 4);
    std::memcpy(ev.data() + chunk->offset, &l, 4);
    out.push_back(std::move(ev));
  }
  return out;
}

// Where a record goes and what its mark says: the conversion of every
// reader (capture.h's RecordFwTime, for a capture not retimed yet).
struct Placed {
  uint64_t at = 0;
  FwTime time;
};

}  // namespace

Status Retime(const RetimeOptions& options, RetimeSummary* summary) {
  *summary = RetimeSummary{};
  if (options.output.empty()) {
    return Status::Error("no output file: give -o FILE");
  }
  if (options.output == options.input) {
    return Status::Error(options.output + ": the output must not be the input");
  }
  if (IsDumpFile(options.input))
    return Status::Error(options.input +
                         ": a crash dump, not a trace-cmd capture: retime works on captures "
                         "only; report, stat and export read a dump, its records at their "
                         "converted time already");
  CaptureFile file;
  if (Status s = file.Open(options.input); !s.ok())
    return s;
  const hmb_event_set* set = file.events();
  if (!set || !set->clock || !set->record) {
    summary->no_clock_fits = true;
    return Status::Error(
        options.input +
        ": the capture has no hmb_clock events in its formats (a module before clock "
        "fits): there is no firmware time to retime to");
  }
  // The hmb events' clock: the one retimed records are placed on.
  ClockSet clocks;
  CaptureClocks trace_clocks;
  if (Status s = ReadCaptureClocks(options.input, &trace_clocks); !s.ok())
    return s;
  if (std::string problem = clocks.SetTraceClock(trace_clocks.hmb); !problem.empty()) {
    summary->no_clock_fits = true;
    summary->clock_problem = problem;
    return Status::Error(options.input + ": " + problem);
  }
  summary->file_version = options.file_version;
  if (!summary->file_version) {
    // The input's, from the handle open (reading the headers again would
    // read its kallsyms again: 5 MB in the benchmark capture).
    Result<hmb_tracecmd_file*> f = file.TracecmdFile();
    summary->file_version = f.ok() ? retime_input_file_version_open(f.value())
                                   : retime_input_file_version(options.input.c_str());
  }
  if (summary->file_version != 6 && summary->file_version != 7) {
    return Status::Error(options.input + ": file version " + std::to_string(summary->file_version) +
                         " cannot be written; give --file-version 6 or 7");
  }

  // The first pass: every dictionary and the generations (dictionaries.h);
  // with --dictionary, each generation's merged with the file (a capture
  // of another build is refused here), to be written in the output.
  DictionaryStore dicts;
  const bool with_file = GetDictionaryOverride() != nullptr;
  std::map<std::pair<uint16_t, uint32_t>, std::vector<uint8_t>> merged;
  if (Status s = file.Read(
          [&](const CaptureEvent& ev) {
            dicts.Add(ev);
            if (with_file && ev.kind == CaptureKind::kDict && ev.offset == 0 &&
                ev.data.size() == ev.total_len)
              merged[{ev.dev, ev.producer_gen}].assign(ev.data.begin(), ev.data.end());
            return true;
          },
          CaptureFilter::kMetadata);
      !s.ok())
    return s;
  dicts.RestartStream();

  // The page format the capture declares (header_page / header_event).
  TracePageFormat format;
  format.page_size = static_cast<uint32_t>(getpagesize());
  format.long_size = tep_get_header_page_size(set->tep);
  format.big_endian = tep_is_file_bigendian(set->tep);
  if (format.long_size != 4 && format.long_size != 8) {
    return Status::Error(options.input + ": header_page's commit field has " +
                         std::to_string(format.long_size) + " bytes; only 4 or 8 are known");
  }
  if (tep_get_header_timestamp_size(set->tep) != 8) {
    return Status::Error(options.input + ": header_page's timestamp is not 8 bytes");
  }
  if (const int ps = tep_get_sub_buffer_size(set->tep); ps > 0)
    format.page_size = static_cast<uint32_t>(ps);

  const std::vector<CaptureBuffer> buffers = file.buffers();
  std::vector<int> first_cpu;  // of each buffer, in the combined numbering
  size_t nr_cpus = 0;
  for (const CaptureBuffer& b : buffers) {
    first_cpu.push_back(static_cast<int>(nr_cpus));
    nr_cpus += static_cast<size_t>(std::max(b.cpus, 0));
  }
  std::vector<std::unique_ptr<PageFile>> files;
  std::vector<std::unique_ptr<TracePageWriter>> writers;
  for (size_t i = 0; i < nr_cpus; i++) {
    files.push_back(std::make_unique<PageFile>());
    if (Status s = files.back()->Create(options.output, i); !s.ok())
      return s;
  }

  // The output: written under a temporary name, renamed when complete. Its
  // first CPU with data (in the benchmark capture, half of the pages)
  // goes straight to its place in a version 6 output, not through a file
  // of pages copied in afterwards.
  const std::string partial = options.output + ".retime-partial";
  std::vector<std::vector<char*>> cpu_files(buffers.size());
  std::vector<retime_output_buffer> out(buffers.size());
  for (size_t b = 0; b < buffers.size(); b++) {
    for (int c = 0; c < buffers[b].cpus; c++)
      cpu_files[b].push_back(
          const_cast<char*>(files[static_cast<size_t>(first_cpu[b] + c)]->path().c_str()));
    out[b] = retime_output_buffer{buffers[b].name.c_str(), buffers[b].cpus, cpu_files[b].data()};
  }
  BegunOutput begun;
  size_t direct = nr_cpus;  // none
  PageFile direct_file;
  off_t direct_at = 0;
  if (const auto [b, c] = FirstCpuWithData(file, buffers); b >= 0) {
    begun.reset(retime_output_begin(options.input.c_str(), partial.c_str(), options.file_version,
                                    out.data(), static_cast<int>(out.size()), b, c));
    if (begun) {
      direct_at = static_cast<off_t>(retime_output_direct_offset(begun.get()));
      if (direct_file.OpenAt(partial, direct_at).ok())
        direct = static_cast<size_t>(first_cpu[static_cast<size_t>(b)] + c);
      else
        begun.reset();
    }
  }
  for (size_t i = 0; i < nr_cpus; i++) {
    PageFile* f = i == direct ? &direct_file : files[i].get();
    writers.push_back(std::make_unique<TracePageWriter>(
        format, [f](std::span<const uint8_t> page) { return f->Write(page); }));
  }

  Timeline timeline(options.reorder_margin_ms * 1000000u);
  // Each CPU's buffer is written apart and readers merge them: a record is
  // late only behind what its own CPU has written.
  timeline.SetLatePerCpu(true);
  bool write_ok = true;
  const Timeline::Sink sink = [&](uint64_t at, int cpu, std::string& body) {
    const auto* p = reinterpret_cast<const uint8_t*>(body.data());
    uint64_t missed;
    uint32_t len;
    std::memcpy(&missed, p, 8);
    std::memcpy(&len, p + 8, 4);
    const std::span<const uint8_t> data(p + kBodyHeader, len);
    const std::span<const uint8_t> mark(p + kBodyHeader + len, body.size() - kBodyHeader - len);
    summary->events++;
    if (!writers[static_cast<size_t>(cpu)]->Add(at, data, mark, missed))
      write_ok = false;
  };

  std::string already;
  const Status read = file.ReadRaw([&](const RawRecord& rec, const CaptureEvent* ev) {
    if (rec.buffer < 0 || static_cast<size_t>(rec.buffer) >= buffers.size() || rec.cpu < 0 ||
        rec.cpu >= buffers[static_cast<size_t>(rec.buffer)].cpus)
      return true;  // libtracecmd gave a CPU its buffer does not have
    TimelineLine line;
    line.ts = rec.ts;
    line.at = rec.ts;
    line.cpu = first_cpu[static_cast<size_t>(rec.buffer)] + rec.cpu;
    const uint8_t* mark = nullptr;
    uint8_t mark_bytes[HMB_RETIME_MARK_LEN];
    if (ev) {
      line.dev = ev->dev;
      switch (ev->kind) {
        case CaptureKind::kRecord: {
          if (ev->retimed) {
            already = options.input + " is a retimed capture already (hmbtrace-cmd retime)";
            return false;
          }
          summary->records++;
          const FwTime t = RecordFwTime(clocks, dicts.GenerationFor(ev->dev, ev->cpu), *ev);
          hmb_retime_mark m{};
          m.drain_ts = rec.ts;
          m.bound_ns = static_cast<uint32_t>(std::min<uint64_t>(t.bound_ns, UINT32_MAX));
          m.flags = static_cast<uint8_t>((t.converted() ? HMB_RETIME_CONVERTED : 0) |
                                         (t.stale ? HMB_RETIME_STALE : 0));
          m.miss = static_cast<uint8_t>(t.miss);
          if (t.converted()) {
            summary->converted++;
            if (t.host_ns < rec.ts)
              summary->drain_max_ns = std::max(summary->drain_max_ns, rec.ts - t.host_ns);
          } else {
            summary->not_converted++;
            summary->by_miss[static_cast<size_t>(t.miss)]++;
            if (summary->unconverted.size() < RetimeSummary::kMaxListed)
              summary->unconverted.push_back({ev->dev, ev->core, ev->seq, rec.ts, t.miss});
          }
          if (rec.data.size() + HMB_RETIME_MARK_LEN <= writers[0]->max_event_size()) {
            hmb_retime_mark_encode(set, &m, mark_bytes);
            mark = mark_bytes;
          } else {
            summary->too_large++;
          }
          line.kind = TimelineLine::Kind::kRecord;
          line.at = t.converted() ? t.host_ns : rec.ts;
          line.core = ev->core;
          break;
        }
        case CaptureKind::kLost:
          summary->lost++;
          line.kind = TimelineLine::Kind::kBeforeCore;
          line.core = ev->core;
          break;
        case CaptureKind::kState:
          summary->metadata++;
          dicts.FollowState(*ev);
          clocks.AddState(ev->dev, ev->producer_gen, ev->clock_hz);
          line.kind = TimelineLine::Kind::kBeforeDevCpu;
          break;
        case CaptureKind::kDict:
          if (auto m = merged.find({ev->dev, ev->producer_gen}); m != merged.end()) {
            // The file's dictionary goes where the first chunk was.
            if (ev->offset != 0)
              return true;
            auto events = DictEvents(set->dict, rec.data, m->second);
            if (!events.empty()) {
              for (const auto& data : events) {
                RawRecord chunk = rec;
                if (&data != &events.front()) chunk.missed_events = 0;
                chunk.data = data;
                TimelineLine copy = line;
                copy.kind = TimelineLine::Kind::kBeforeDevCpu;
                AppendBody(&copy.body, chunk, nullptr);
                summary->metadata++;
                timeline.Add(std::move(copy));
                timeline.Release(sink);
              }
              return write_ok;
            }
          }
          summary->metadata++;
          line.kind = TimelineLine::Kind::kBeforeDevCpu;
          break;
        case CaptureKind::kClock:
          summary->metadata++;
          clocks.Add(ClockFit{ev->dev, ev->producer_gen, ev->clock_flags, ev->clock, ev->clock_id});
          line.kind = TimelineLine::Kind::kBeforeDevCpu;
          break;
        case CaptureKind::kMarker:
        case CaptureKind::kMalformed:
          break;
      }
    }
    AppendBody(&line.body, rec, mark);
    timeline.Add(std::move(line));
    timeline.Release(sink);
    return write_ok;
  });
  if (!already.empty())
    return Status::Error(already + "; retime the original capture");
  if (!read.ok())
    return read;
  if (std::string problem = clocks.ClockProblem(); !problem.empty()) {
    // Every record would stay at its drain time: not a retimed capture.
    summary->no_clock_fits = true;
    summary->clock_problem = problem;
    return Status::Error(options.input + ": " + problem);
  }
  timeline.Finish(sink);
  summary->late = timeline.late();
  summary->late_max_ns = timeline.late_max_ns();
  for (auto& w : writers)
    write_ok = w->Flush() && write_ok;
  for (auto& f : files)
    write_ok = f->Close() && write_ok;
  write_ok = direct_file.Close() && write_ok;
  if (!write_ok) {
    return Status::Error(options.output + ": writing the pages failed (" + std::strerror(errno) +
                         "; is the disk full?)");
  }

  char err[256] = "";
  bool written = false;
  if (begun) {
    const off_t direct_size =
        static_cast<off_t>(writers[direct]->pages()) * static_cast<off_t>(format.page_size);
    bool before_empty = true;
    for (size_t i = 0; i < direct; i++)
      before_empty = before_empty && writers[i]->pages() == 0;
    if (!before_empty) {
      // Not as the input said: its pages to its own file, and the output
      // written as without.
      if (!CopyOut(partial, direct_at, direct_size, files[direct]->path()))
        return Status::Error(options.output + ": writing the pages failed (" +
                             std::strerror(errno) + "; is the disk full?)");
      begun.reset();
    } else if (retime_output_finish(begun.release(), out.data(), static_cast<int>(out.size()),
                                    direct_size, err, sizeof(err)) != 0) {
      return Status::Error(options.output + ": " + err);
    } else {
      written = true;
    }
  }
  if (!written &&
      retime_output_write(options.input.c_str(), partial.c_str(), options.file_version, out.data(),
                          static_cast<int>(out.size()), err, sizeof(err)) != 0) {
    return Status::Error(options.output + ": " + err);
  }
  if (std::rename(partial.c_str(), options.output.c_str()) != 0) {
    Status s = Status::Error(options.output + ": " + std::strerror(errno));
    unlink(partial.c_str());
    return s;
  }
  return {};
}

std::string RetimeSummaryText(const RetimeOptions& options, const RetimeSummary& s) {
  std::string out = "hmbtrace-cmd retime: " + options.output + " (file version " +
                    std::to_string(s.file_version) + "): " + std::to_string(s.records) +
                    " hmb_record, " + std::to_string(s.converted) +
                    " at their firmware time (drained up to " + BoundText(s.drain_max_ns) +
                    " later), " + std::to_string(s.not_converted) + " at their drain time; " +
                    std::to_string(s.lost) + " hmb_lost and " + std::to_string(s.metadata) +
                    " hmb_state/hmb_dict/hmb_clock placed before their records; " +
                    std::to_string(s.events) + " events in all\n";
  if (s.not_converted) {
    out += "hmbtrace-cmd retime: not converted:";
    for (size_t m = 0; m < s.by_miss.size(); m++)
      if (s.by_miss[m])
        out += " " + std::to_string(s.by_miss[m]) + " " +
               std::string(ClockMissName(static_cast<ClockMiss>(m))) + ";";
    out.back() = '\n';
    for (const UnconvertedRecord& r : s.unconverted)
      out += "  " + HostTime(r.drain_ts) + " dev=" + std::to_string(r.dev) +
             " core=" + std::to_string(r.core) + " seq=" + std::to_string(r.seq) + ": " +
             std::string(ClockMissName(r.miss)) + "\n";
    if (s.not_converted > s.unconverted.size())
      out += "  ... and " + std::to_string(s.not_converted - s.unconverted.size()) + " more\n";
  }
  if (s.late)
    out += "hmbtrace-cmd retime: " + std::to_string(s.late) +
           " records were drained more than the " + std::to_string(options.reorder_margin_ms) +
           " ms reorder margin after their converted time, behind events their CPU already "
           "had: placed up to " +
           BoundText(s.late_max_ns) + " late; raise --reorder-margin\n";
  if (s.too_large)
    out += "hmbtrace-cmd retime: " + std::to_string(s.too_large) +
           " records too large for a page with their retime mark: written without it\n";
  return out;
}

int RunRetime(const RetimeOptions& options) {
  RetimeSummary summary;
  if (Status s = Retime(options, &summary); !s.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd retime: %s\n", s.message().c_str());
    return 1;
  }
  if (!options.quiet)
    std::fputs(RetimeSummaryText(options, summary).c_str(), stderr);
  return 0;
}

}  // namespace hmbtrace
