// SPDX-License-Identifier: GPL-2.0-only
//
// The Chrome JSON trace-event format, for tools that read only that: the
// ExportModel stream written event by event as it comes (flat memory).
//
// Each device group is a process ("hmb dev N (<name>)"), each of its slice
// tracks a thread (named as the track: "core K", "state"), counters "C"
// events named as their track; the trace_marker track is the thread
// "markers" of the process "trace_marker". Slices are "B"/"E" pairs,
// instants "i" (thread scope). Timestamps are µs with ns decimals. A flow
// (host command -> firmware fetch) is the event's "bind_id" with
// "flow_out" at its start and "flow_in" at its end (trace-event flow v2).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_JSON_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_JSON_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "export_model.h"

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
  void Put(std::string_view s) { out_buf_.append(s); }
  void PutString(std::string_view s);
  void PutTs(uint64_t ts_ns);
  template <typename T>
  void PutNumber(T v);
  void Flush();

  std::FILE* out_;
  std::string out_buf_;
  std::unordered_map<uint64_t, Where> tracks_;
  std::unordered_map<int, int> next_tid_;  // per pid
  uint64_t last_track_ = 0;                // the last event's track
  const Where* last_where_ = nullptr;
  std::string trace_clock_;
  bool first_ = true;
  bool failed_ = false;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_JSON_H_
