// SPDX-License-Identifier: GPL-2.0-only
//
// A crash dump read as a capture: the CaptureEvents a trace.dat of the
// same area would give, so that report, stat and export read a dump
// unchanged (CaptureFile opens either).
//
// The order is a capture's: the area's hmb_state (attached), its
// dictionary (one kDict chunk, the whole DICT), the CLOCK fits of the
// dump's generation (hmb_clock, one per host trace clock), the dump's
// problems (kMalformed, event "dump"), then the records and losses of
// every core merged in firmware time order (each core's own order kept;
// a loss just before the record that follows it).
//
// Time. A dump has no ftrace timestamps: every event is on CPU 0 and a
// record's `ts` is its firmware time converted with the dump's fit of the
// chosen host trace clock (DumpTraceClock()). Records are not marked
// retimed: a reader converts fw_ts with the same fit, delivered before
// them (RecordFwTime), and gets the same time, so there is one conversion
// rule and a record the fit cannot convert reads "fw_time=?" as in a
// capture. An event with no converted time of its own (a loss, such a
// record, the metadata) takes that of the event before it (the first
// converted one for those before any; the dump's time on that clock when
// nothing converts), so that `ts` never goes back.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_EVENTS_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_EVENTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture.h"
#include "dump/dump_file.h"

namespace hmbtrace {

// The host trace clock a dump's times are on: "local" (ftrace's default,
// the clock of a capture made without -C) if the dump has a usable fit of
// its generation to it, else the first such clock in the order of
// HMB_TRACE_CLOCK_LIST; "local" if it has none.
std::string DumpTraceClock(const Dump& dump);

// When the host submitted `cmd` on trace clock `clock_id` (enum
// hmb_trace_clock_id): the dump's time on that clock minus how long before
// the dump it was submitted (on CLOCK_MONOTONIC, as INFLIGHT says); none if
// the dump or the command has no such time.
std::optional<uint64_t> DumpSubmitTime(const Dump& dump, const DumpCmd& cmd, uint32_t clock_id);

// The dump's commands in flight as report lines (report's timeline): at
// their submit time on the dump's trace clock (DumpTraceClock()), those
// without one at the dump's time, in time order. The text is
// "dev=D INFLIGHT qid=Q cid=C <opcode> nsid=N slba=S nlb=L host submit,
// not completed at the dump" (cid in decimal, as report --cmd takes it);
// none without HMB_DUMP_FL_INFLIGHT.
struct DumpInflightLine {
  uint64_t at = 0;
  std::string text;
};
std::vector<DumpInflightLine> DumpInflightLines(const Dump& dump);

class DumpCapture {
 public:
  explicit DumpCapture(Dump dump);
  const Dump& dump() const { return dump_; }
  const std::string& trace_clock() const { return trace_clock_; }
  // One pass, as CaptureFile::Read; `metadata_only`: hmb_state and the
  // dictionary only, the rest counted in `scan`.
  Status Read(const CaptureCallback& fn,
              bool metadata_only,
              const std::function<void(uint64_t)>& tick,
              uint64_t tick_every,
              CaptureScan* scan) const;

 private:
  enum class Kind : uint8_t { kState, kDict, kClock, kProblem, kRecord, kLost };
  struct Item {
    Kind kind;
    size_t index;  // into the dump's clocks, problems, records or lost
    uint64_t ts;
  };
  void Order();
  CaptureEvent Event(const Item& item) const;

  Dump dump_;
  std::string trace_clock_;
  std::vector<Item> items_;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_EVENTS_H_
