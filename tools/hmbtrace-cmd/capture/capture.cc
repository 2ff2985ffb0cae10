// SPDX-License-Identifier: GPL-2.0-only
#include "capture/capture.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>

#include "capture/capture_c.h"
#include "capture/dictionary_override.h"
#include "capture/ftrace_events_c.h"
#include "dump/dump_events.h"

namespace hmbtrace {
namespace {

struct CaptureCloser {
  void operator()(hmb_capture* cap) const { hmb_capture_close(cap); }
};
using CapturePtr = std::unique_ptr<hmb_capture, CaptureCloser>;

CaptureKind KindOf(hmb_capture_kind kind) {
  switch (kind) {
    case HMB_CAPTURE_RECORD:
      return CaptureKind::kRecord;
    case HMB_CAPTURE_LOST:
      return CaptureKind::kLost;
    case HMB_CAPTURE_STATE:
      return CaptureKind::kState;
    case HMB_CAPTURE_DICT:
      return CaptureKind::kDict;
    case HMB_CAPTURE_CLOCK:
      return CaptureKind::kClock;
    case HMB_CAPTURE_MARKER:
      return CaptureKind::kMarker;
    case HMB_CAPTURE_MALFORMED:
      break;
  }
  return CaptureKind::kMalformed;
}

// The members of a kRecord that ToCaptureEvent() takes from `c`: the
// others of a record are their defaults.
void UpdateRecord(const hmb_capture_event& c, CaptureEvent* ev) {
  ev->ts = c.ts;
  ev->cpu = c.cpu;
  ev->missed_events = c.missed_events;
  ev->dev = c.dev;
  ev->core = c.core;
  ev->seq = c.seq;
  ev->fw_ts = c.fw_ts;
  ev->event_id = c.event_id;
  ev->len = c.len;
  ev->clock_format = c.clock_format != 0;
  ev->data = c.data ? std::span<const uint8_t>(c.data, c.data_len) : std::span<const uint8_t>();
  ev->retimed = c.retimed != 0;
  ev->retime_flags = c.retime_flags;
  ev->retime_miss = c.retime_miss;
  ev->retime_bound_ns = c.retime_bound_ns;
  ev->drain_ts = c.drain_ts;
}

// One CaptureEvent per walk: a record that follows a record has only its
// own members copied in (the C decoder leaves the other kinds' zero), not
// the whole event. The reference walk copies every event whole.
class EventCopy {
 public:
  explicit EventCopy(const hmb_capture* cap) : fast_(hmb_capture_read_by_pages(cap) != 0) {}

  const CaptureEvent& From(const hmb_capture_event& c) {
    if (c.kind == HMB_CAPTURE_RECORD && last_record_ && fast_) {
      UpdateRecord(c, &ev_);
    } else {
      ev_ = ToCaptureEvent(c);
      last_record_ = c.kind == HMB_CAPTURE_RECORD;
    }
    return ev_;
  }

 private:
  CaptureEvent ev_;
  bool last_record_ = false;
  const bool fast_;
};

struct Walk {
  const CaptureCallback* fn;
  const CaptureFile::Tick* tick;
  EventCopy copy;
};

int OnEvent(const hmb_capture_event* c, void* data) {
  Walk* walk = static_cast<Walk*>(data);
  return (*walk->fn)(walk->copy.From(*c)) ? 0 : 1;
}

struct RawWalk {
  const RawCallback* fn;
  EventCopy copy;
};

int OnRaw(const hmb_capture_raw* r, const hmb_capture_event* c, void* data) {
  RawWalk* walk = static_cast<RawWalk*>(data);
  RawRecord rec;
  rec.buffer = r->buffer;
  rec.cpu = r->cpu;
  rec.ts = r->ts;
  rec.data = std::span<const uint8_t>(static_cast<const uint8_t*>(r->data), r->size);
  rec.missed_events = r->missed_events;
  if (!c)
    return (*walk->fn)(rec, nullptr) ? 0 : 1;
  return (*walk->fn)(rec, &walk->copy.From(*c)) ? 0 : 1;
}

void OnTick(uint64_t walked, void* data) {
  const Walk* walk = static_cast<const Walk*>(data);
  (*walk->tick)(walked);
}

}  // namespace

CaptureEvent ToCaptureEvent(const hmb_capture_event& cref) {
  const hmb_capture_event* c = &cref;
  CaptureEvent ev;
  ev.kind = KindOf(c->kind);
  ev.ts = c->ts;
  ev.cpu = c->cpu;
  ev.missed_events = c->missed_events;
  ev.dev = c->dev;
  ev.core = c->core;
  ev.seq = c->seq;
  ev.fw_ts = c->fw_ts;
  ev.event_id = c->event_id;
  ev.len = c->len;
  ev.count = c->count;
  ev.at_seq = c->at_seq;
  ev.reason = c->reason;
  ev.clock_hz = c->clock_hz;
  ev.producer_gen = c->producer_gen;
  ev.nr_cores = c->nr_cores;
  ev.state = c->state;
  std::copy(std::begin(c->build_id), std::end(c->build_id), ev.build_id.begin());
  ev.name = std::string_view(c->name, strnlen(c->name, sizeof(c->name)));
  ev.total_len = c->total_len;
  ev.offset = c->offset;
  ev.clock = c->clock;
  ev.clock_flags = c->clock_flags;
  ev.clock_id = c->clock_id;
  ev.clock_format = c->clock_format != 0;
  if (c->data)
    ev.data = std::span<const uint8_t>(c->data, c->data_len);
  if (c->malformed_event)
    ev.malformed_event = c->malformed_event;
  if (c->malformed_reason)
    ev.malformed_reason = c->malformed_reason;
  ev.retimed = c->retimed != 0;
  ev.retime_flags = c->retime_flags;
  ev.retime_miss = c->retime_miss;
  ev.retime_bound_ns = c->retime_bound_ns;
  ev.drain_ts = c->drain_ts;
  return ev;
}

FwTime RecordFwTime(const ClockSet& clocks, uint32_t gen, const CaptureEvent& ev) {
  if (ev.retimed)
    return RetimedFwTime(ev.ts, ev.retime_flags, ev.retime_miss, ev.retime_bound_ns);
  return clocks.Convert(ev.dev, gen, ev.fw_ts);
}

std::string_view LostReasonName(uint8_t reason) {
  static constexpr std::string_view kNames[] = {HMB_ABI_NAMES(HMB_LOST_REASON_LIST)};
  static_assert(std::size(kNames) == kLostReasonCount);
  return reason < kLostReasonCount ? kNames[reason] : "unknown";
}

std::string_view StateName(uint8_t state) {
  static constexpr std::string_view kNames[] = {HMB_ABI_NAMES(HMB_TRACE_EV_STATE_LIST)};
  return state < std::size(kNames) ? kNames[state] : "unknown";
}

// One of the two: a trace.dat, or a crash dump (dump/dump_events.h).
struct CaptureFile::Handle {
  CapturePtr cap;
  std::unique_ptr<DumpCapture> dump;
};

namespace {

Status NotOnDump(const std::string& path, std::string_view what) {
  return Status::Error(path + ": a crash dump, not a trace-cmd capture: " + std::string(what) +
                       " works on captures only (report, stat and export read a dump)");
}

}  // namespace

CaptureFile::CaptureFile() = default;
CaptureFile::~CaptureFile() = default;

Status CaptureFile::Open(const std::string& path) {
  path_ = path;
  handle_.reset();
  if (IsDumpFile(path)) {
    Result<Dump> dump = ReadDumpFile(path);
    if (!dump.ok())
      return dump.status();
    handle_ = std::make_unique<Handle>();
    handle_->dump = std::make_unique<DumpCapture>(std::move(dump.value()));
    return {};
  }
  char err[256] = "";
  errno = 0;
  CapturePtr cap(hmb_capture_open(path.c_str(), err, sizeof(err)));
  if (!cap) {
    std::string message = path + ": " + err;
    if (errno == ENOENT)
      message +=
          "; name the capture with -i FILE (default trace.dat), or " + std::string(kRecordHint);
    return Status::Error(std::move(message));
  }
  if (!hmb_capture_has_hmb_events(cap.get()))
    return Status::Error(path + ": no hmb events in the file's event formats; " +
                         std::string(kRecordHint));
  handle_ = std::make_unique<Handle>();
  handle_->cap = std::move(cap);
  return {};
}

bool CaptureFile::is_dump() const {
  return handle_ && handle_->dump;
}

Status CaptureFile::Read(const CaptureCallback& fn, CaptureFilter filter, const Tick& tick) {
  if (!handle_)
    return Status::Error(path_ + ": not open");
  if (const DictionaryOverride* o = GetDictionaryOverride()) {
    DictionaryMerger merger(*o);
    const CaptureCallback merged = [&](const CaptureEvent& ev) { return merger.Filter(ev, fn); };
    Status s = ReadPass(merged, filter, tick);
    if (!merger.error().empty())
      return Status::Error(merger.error());
    return s;
  }
  return ReadPass(fn, filter, tick);
}

Status CaptureFile::ReadPass(const CaptureCallback& fn, CaptureFilter filter, const Tick& tick) {
  if (handle_->dump)
    return handle_->dump->Read(fn, filter == CaptureFilter::kMetadata, tick, kTickEvents, &scan_);
  hmb_capture* cap = handle_->cap.get();
  hmb_capture_set_metadata_only(cap, filter == CaptureFilter::kMetadata);
  Walk walk{&fn, &tick, EventCopy(cap)};
  hmb_capture_set_tick(cap, tick ? OnTick : nullptr, kTickEvents);
  return Iterate(&walk);
}

Status CaptureFile::Iterate(void* walk) {
  char err[256] = "";
  const int rc = hmb_capture_iterate(handle_->cap.get(), OnEvent, walk, err, sizeof(err));
  hmb_capture_scan scan;
  hmb_capture_get_scan(handle_->cap.get(), &scan);
  scan_ = CaptureScan{scan.events, scan.first_ts, scan.last_ts};
  if (rc != 0)
    return Status::Error(path_ + ": " + err);
  return {};
}

Status CaptureFile::ReadRaw(const RawCallback& fn) {
  if (!handle_)
    return Status::Error(path_ + ": not open");
  if (handle_->dump)
    return NotOnDump(path_, "reading its ftrace records as they are in the file");
  hmb_capture* cap = handle_->cap.get();
  hmb_capture_set_metadata_only(cap, 0);
  hmb_capture_set_tick(cap, nullptr, kTickEvents);
  hmb_capture_set_raw(cap, OnRaw);
  RawWalk walk{&fn, EventCopy(cap)};
  Status status = Iterate(&walk);
  hmb_capture_set_raw(cap, nullptr);
  return status;
}

std::vector<CaptureBuffer> CaptureFile::buffers() const {
  std::vector<CaptureBuffer> out;
  if (!handle_ || handle_->dump)
    return out;  // a dump has no ftrace buffers
  const hmb_capture* cap = handle_->cap.get();
  for (int i = 0; i < hmb_capture_nr_buffers(cap); i++)
    out.push_back(CaptureBuffer{hmb_capture_buffer_name(cap, i), hmb_capture_buffer_cpus(cap, i)});
  return out;
}

const struct hmb_event_set* CaptureFile::events() const {
  // A dump has no event formats: its events are made, not decoded.
  return handle_ && handle_->cap ? hmb_capture_events(handle_->cap.get()) : nullptr;
}

Result<hmb_tracecmd_file*> CaptureFile::TracecmdFile() {
  if (!handle_)
    return Status::Error(path_ + ": not open");
  if (handle_->dump)
    return NotOnDump(path_, "reading its ftrace buffers");
  char err[256] = "";
  hmb_tracecmd_file* f = hmb_capture_tracecmd_file(handle_->cap.get(), err, sizeof(err));
  if (!f)
    return Status::Error(path_ + ": " + err);
  return f;
}

const hmb_capture* CaptureFile::capture() const {
  return handle_ ? handle_->cap.get() : nullptr;
}

std::string CaptureFile::DumpClock() const {
  return handle_ && handle_->dump ? handle_->dump->trace_clock() : std::string();
}

Status ReadCapture(const std::string& path, const CaptureCallback& fn, CaptureFilter filter) {
  CaptureFile file;
  if (Status s = file.Open(path); !s.ok())
    return s;
  return file.Read(fn, filter);
}

std::string Printable(std::string_view text) {
  if (!text.empty() && text.back() == '\n')
    text.remove_suffix(1);
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<uint8_t>(ch);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

void AppendDecimal(std::string* out, uint64_t v) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, static_cast<size_t>(end - buf));
}

void AppendHostTime(std::string* out, uint64_t ts_ns) {
  // Rounded to the microsecond, as trace-cmd report prints it.
  const uint64_t us = ts_ns / 1000u + (ts_ns % 1000u >= 500u ? 1u : 0u);
  AppendDecimal(out, us / 1000000u);
  char frac[7];
  uint64_t f = us % 1000000u;
  for (int i = 5; i >= 0; i--) {
    frac[1 + i] = static_cast<char>('0' + f % 10);
    f /= 10;
  }
  frac[0] = '.';
  out->append(frac, sizeof(frac));
}

std::string HostTime(uint64_t ts_ns) {
  std::string out;
  AppendHostTime(&out, ts_ns);
  return out;
}

Status ReadCaptureClocks(const std::string& path, CaptureClocks* out) {
  if (IsDumpFile(path)) {
    // No ftrace buffers: its times are on the clock its fit converts to.
    Result<Dump> dump = ReadDumpFile(path);
    if (!dump.ok())
      return dump.status();
    out->hmb = out->top = DumpTraceClock(dump.value());
    return Status();
  }
  struct hmb_ftrace_info info;
  char err[256] = "";
  if (hmb_ftrace_read(path.c_str(), nullptr, nullptr, &info, err, sizeof(err)) < 0)
    return Status::Error(path + ": " + err);
  out->top = info.top_clock;
  out->hmb = info.hmb_clock[0] ? info.hmb_clock : info.top_clock;
  return Status();
}

Status ReadCaptureClocks(CaptureFile& file, CaptureClocks* out) {
  if (file.is_dump()) {
    out->hmb = out->top = file.DumpClock();
    return Status();
  }
  const hmb_capture* cap = file.capture();
  if (!cap)
    return Status::Error(file.path() + ": not open");
  char top[sizeof(hmb_ftrace_info::top_clock)], hmb[sizeof(hmb_ftrace_info::hmb_clock)];
  hmb_capture_clocks(cap, top, sizeof(top), hmb, sizeof(hmb));
  out->top = top;
  out->hmb = hmb[0] ? hmb : top;
  return Status();
}

bool SetCaptureClock(ClockSet* clocks, const std::string& trace_clock, std::string_view cmd,
                     const std::string& path) {
  const std::string problem = clocks->SetTraceClock(trace_clock);
  if (problem.empty())
    return true;
  std::fprintf(stderr, "hmbtrace-cmd %.*s: %s: %s\n", static_cast<int>(cmd.size()), cmd.data(),
               path.c_str(), problem.c_str());
  return false;
}

bool ReportClockProblem(const ClockSet& clocks, std::string_view cmd, const std::string& path) {
  // The unfitted clock was said when it was set.
  if (!TraceClockId(clocks.trace_clock()))
    return false;
  const std::string problem = clocks.ClockProblem();
  if (problem.empty())
    return true;
  std::fprintf(stderr, "hmbtrace-cmd %.*s: %s: %s\n", static_cast<int>(cmd.size()), cmd.data(),
               path.c_str(), problem.c_str());
  return false;
}

}  // namespace hmbtrace
