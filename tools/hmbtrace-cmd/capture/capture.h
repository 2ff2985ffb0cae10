// SPDX-License-Identifier: GPL-2.0-only
//
// Reading a trace.dat made by `trace-cmd record -B hmb -e hmb`: the hmb
// events of every buffer, and trace_marker lines, in host time order.
// Each subcommand is a consumer of this one stream. A crash dump of an
// area (include/hmb_trace_dump_abi.h) reads as the same stream, made from
// its sections (dump/dump_events.h).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_CAPTURE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_CAPTURE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "clock_set.h"
#include "format.h"
#include "hmb_clock_fit.h"
#include "hmb_trace_events_abi.h"
#include "hmbtrace/status.h"

struct hmb_capture_event;  // capture_c.h
struct hmb_event_set;      // hmb_events.h
struct hmb_tracecmd_file;  // tracecmd_walk_c.h
struct hmb_capture;        // capture_c.h

namespace hmbtrace {

enum class CaptureKind { kRecord, kLost, kState, kDict, kClock, kMarker, kMalformed };

// hmb_lost.reason and hmb_state.state: hmb_trace_events_abi.h.
inline constexpr uint8_t kLostReasonCount = HMB_LOST_NR;
std::string_view LostReasonName(uint8_t reason);  // "overwritten", ...
inline constexpr uint8_t kStateReset = HMB_TRACE_EV_RESET;
std::string_view StateName(uint8_t state);  // "attached", ...

// One event of the capture. Which members are set depends on kind, as in
// capture_c.h; `data` and the string views are valid during the callback.
struct CaptureEvent {
  CaptureKind kind = CaptureKind::kRecord;
  uint64_t ts = 0;  // host ftrace time, ns
  int cpu = 0;
  uint64_t missed_events = 0;  // ftrace dropped this many before it, this CPU
  uint16_t dev = 0;
  uint16_t core = 0;
  uint64_t seq = 0;
  uint64_t fw_ts = 0;
  uint16_t event_id = 0;
  uint16_t len = 0;
  uint64_t count = 0;
  uint64_t at_seq = 0;
  uint8_t reason = 0;
  uint64_t clock_hz = 0;
  uint32_t producer_gen = 0;
  uint16_t nr_cores = 0;
  uint8_t state = 0;
  std::array<uint8_t, 20> build_id{};
  std::string_view name;  // hmb_state
  uint32_t total_len = 0;
  uint32_t offset = 0;
  struct hmb_clock_fit clock {};  // hmb_clock
  uint8_t clock_flags = 0;        // hmb_clock: bit 0 stale
  uint8_t clock_id = HMB_TRACE_CLOCK_LOCAL;  // hmb_clock: the host trace clock of the fit
  // The capture's formats define hmb_clock (every kind): records can be
  // converted to host time, and say so when they are not.
  bool clock_format = false;
  std::span<const uint8_t> data;  // payload, dictionary chunk, marker text
  std::string_view malformed_event;
  std::string_view malformed_reason;
  // kRecord of a retimed capture (hmbtrace-cmd retime; decode/hmb_events.h):
  // `ts` is its converted time already (or its drain time, not converted).
  bool retimed = false;
  uint8_t retime_flags = 0;
  uint8_t retime_miss = 0;
  uint32_t retime_bound_ns = 0;
  uint64_t drain_ts = 0;  // retimed: the ftrace time it was drained at
};

// A record's firmware time on the host clock, the one rule of every reader:
// converted by `clocks` with the fit of its dev and generation `gen`
// (decode/clock_set.h), or, in a retimed capture, its timestamp as the
// retime pass converted it (never converted twice).
FwTime RecordFwTime(const ClockSet& clocks, uint32_t gen, const CaptureEvent& ev);

// A copy of the C decoder's event; its spans point into `c`.
CaptureEvent ToCaptureEvent(const hmb_capture_event& c);

// Return false from the callback to stop early.
using CaptureCallback = std::function<bool(const CaptureEvent&)>;

// One record of any buffer of a capture, as it is in the file, for a reader
// that copies it (hmbtrace-cmd retime). `data` is valid during the callback.
struct RawRecord {
  int buffer = 0;  // 0: the top buffer, i + 1: instance i (CaptureFile::buffers())
  int cpu = 0;     // in its buffer
  uint64_t ts = 0;
  std::span<const uint8_t> data;  // a multiple of 4 bytes
  uint64_t missed_events = 0;
};
// `ev`: the record's hmb or trace_marker event, decoded; nullptr for others.
using RawCallback = std::function<bool(const RawRecord&, const CaptureEvent* ev)>;

// A buffer of a capture: the top one (name "") or an instance.
struct CaptureBuffer {
  std::string name;
  int cpus = 0;
};

enum class CaptureFilter {
  kAll,
  kMetadata,  // hmb_state and hmb_dict only: the dictionary pass
};

// What a pass walked past: the events a kAll pass delivers (counted in a
// kMetadata pass too, without decoding them) and the host time of the
// first and the last.
struct CaptureScan {
  uint64_t events = 0;
  uint64_t first_ts = 0;
  uint64_t last_ts = 0;
};

// A capture opened once and read in as many passes as needed: each pass
// starts from the first event again. Opening is the costly part of a short
// read (libtracecmd parses the file's kallsyms and event formats).
class CaptureFile {
 public:
  // Called every kTickEvents events walked (delivered or not), with the
  // number walked so far in this pass: for progress.
  static constexpr uint64_t kTickEvents = 4096;
  using Tick = std::function<void(uint64_t walked)>;

  CaptureFile();
  ~CaptureFile();
  CaptureFile(const CaptureFile&) = delete;
  CaptureFile& operator=(const CaptureFile&) = delete;

  // On failure, a message that names the file, the reason and, where
  // there is one, the fix. A file with no hmb event formats at all is an
  // error too. A file that starts with the dump magic ("HMBTDUMP") is
  // read as a crash dump: Read() works on it; ReadRaw() is an error,
  // buffers() empty and events() nullptr (it has no ftrace records).
  Status Open(const std::string& path);
  // The open file is a crash dump.
  bool is_dump() const;
  // One pass: the events in host time order.
  Status Read(const CaptureCallback& fn,
              CaptureFilter filter = CaptureFilter::kAll,
              const Tick& tick = nullptr);
  // One pass over every record of every buffer, in host time order.
  Status ReadRaw(const RawCallback& fn);
  // The buffers of the open capture (index: RawRecord::buffer).
  std::vector<CaptureBuffer> buffers() const;
  // The decoder of its hmb events (decode/hmb_events.h), while open.
  const struct hmb_event_set* events() const;
  // The open trace.dat's libtracecmd handles, every instance open
  // (tracecmd_walk_c.h), for another reader of this one open (the join's
  // host events, the trace clocks): its walks start from the first event,
  // and so does the next pass. An error for a crash dump (no ftrace
  // buffers) or a file that changed since it was opened.
  Result<struct hmb_tracecmd_file*> TracecmdFile();
  // The crash dump's trace clock (DumpTraceClock()), "" for a trace.dat.
  std::string DumpClock() const;
  // The open trace.dat (capture_c.h), nullptr for a crash dump.
  const struct hmb_capture* capture() const;
  // Of the last pass.
  const CaptureScan& scan() const { return scan_; }
  const std::string& path() const { return path_; }

 private:
  // Read() without the --dictionary filter (capture/dictionary_override.h).
  Status ReadPass(const CaptureCallback& fn, CaptureFilter filter, const Tick& tick);
  // One hmb_capture_iterate() with `walk` as its data; sets scan_.
  Status Iterate(void* walk);

  struct Handle;
  std::unique_ptr<Handle> handle_;
  std::string path_;
  CaptureScan scan_;
};

// Opens `path`, delivers its events in host time order and closes it
// (CaptureFile::Open and Read).
Status ReadCapture(const std::string& path,
                   const CaptureCallback& fn,
                   CaptureFilter filter = CaptureFilter::kAll);

// The trace clocks of a capture, as trace.dat names them ("" where it does
// not): `hmb` of the buffer that carries the hmb events (the "hmb"
// instance; the top buffer without one), `top` of the top buffer (the
// host's nvme events, trace_marker). Of a crash dump, both are the clock
// its times are converted to (DumpTraceClock()).
struct CaptureClocks {
  std::string hmb;
  std::string top;
};
Status ReadCaptureClocks(const std::string& path, CaptureClocks* out);
// The same of a capture already open.
Status ReadCaptureClocks(CaptureFile& file, CaptureClocks* out);

// Tells `clocks` the trace clock it converts to (ClockSet::SetTraceClock);
// a problem goes to stderr as "hmbtrace-cmd CMD: PATH: ...". Returns false
// if the module fits no time to that clock.
bool SetCaptureClock(ClockSet* clocks, const std::string& trace_clock, std::string_view cmd,
                     const std::string& path);
// After a read: ClockSet::ClockProblem() to stderr, once, in the same form.
// Returns false if there was one.
bool ReportClockProblem(const ClockSet& clocks, std::string_view cmd, const std::string& path);

// Text from the file made safe for a terminal and for JSON (valid UTF-8):
// bytes outside printable ASCII as \xNN, a backslash doubled; one
// trailing newline (trace_marker lines have one) dropped.
std::string Printable(std::string_view text);

// Hex(): lower-case hex of bytes, from the decode library (format.h).

// Host time as trace-cmd report prints it: seconds, rounded to 6 decimals.
std::string HostTime(uint64_t ts_ns);
void AppendHostTime(std::string* out, uint64_t ts_ns);
// Decimal digits of `v` appended (std::to_string without the string).
void AppendDecimal(std::string* out, uint64_t v);

// The usual fix, for messages.
inline constexpr std::string_view kRecordHint = "record with `trace-cmd record -B hmb -e hmb`";

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_CAPTURE_H_
