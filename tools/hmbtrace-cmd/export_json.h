// SPDX-License-Identifier: GPL-2.0-only
//
// The Chrome JSON trace-event format, for tools that read only that: the
// ExportModel stream written event by event as it comes (flat memory).
//
// Each device group is a process ("hmb dev N (<name>)"), each of its slice
// tracks a thread (named as the track: "core K", "state"), counters "C"
// events named as their track; the trace_marker track is the thread
// "markers" of the process "trace_marker". Slices are "B"/"E" pairs,
// except that a begin with no arguments and no flow followed at once by
// its end (a latency slice: ExportModel writes the two together) is one
// "X" event with its "dur"; instants are "i" (thread scope, the format's
// default, so no "s"). An "E" has no name and an event with no arguments
// no "args" (optional in the format). Timestamps are µs with ns decimals. A flow
// (host command -> firmware fetch) is the event's "bind_id" with
// "flow_out" at its start and "flow_in" at its end (trace-event flow v2).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_JSON_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_JSON_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "export_model.h"
#include "proto_wire.h"

namespace hmbtrace {

class JsonTraceWriter : public ExportSink {
 public:
  // Writes to `out` (not owned; buffered by the caller).
  explicit JsonTraceWriter(std::FILE* out);

  void Track(const ExportTrack& track) override;
  void Event(const ExportEvent& event) override;
  // Named in otherData.clock; ftrace events have no place in this format.
  void Clock(const ExportClock& clock) override { trace_clock_ = clock.trace_clock; }
  bool Finish(std::string* error) override;

 private:
  struct Where {
    int pid = 0;
    int tid = 0;
    bool counter = false;
    std::string name;  // counters: the "C" event's name
    std::string unit;
  };
  void Begin(const char* ph, std::string_view name, int pid, int tid);
  // Writes `e` on `w` as phase `ph`: Begin(), its "ts", then Rest().
  void Write(const char* ph, const ExportEvent& e, const Where& w);
  // The rest of `e`'s JSON object: flows and arguments.
  void Rest(const ExportEvent& e, const Where& w);
  // Writes the begin held back (if any) as a "B".
  void WriteHeld();
  void Put(std::string_view s) { out_buf_.Append(s); }
  void PutString(std::string_view s);
  void PutTs(uint64_t ts_ns);
  template <typename T>
  void PutNumber(T v);
  void Flush();

  std::FILE* out_;
  proto_wire::Buffer out_buf_;  // output not yet written, as text
  std::unordered_map<uint64_t, Where> tracks_;
  std::unordered_map<int, int> next_tid_;  // per pid
  uint64_t last_track_ = 0;                // the last event's track
  const Where* last_where_ = nullptr;
  // A begin with no arguments and no flow, held until the next event says
  // whether it is one "X" with its end.
  bool held_ = false;
  uint64_t held_ts_ = 0;
  uint64_t held_track_ = 0;
  const Where* held_where_ = nullptr;
  std::string held_name_;
  std::string trace_clock_;
  bool first_ = true;
  bool failed_ = false;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_JSON_H_
