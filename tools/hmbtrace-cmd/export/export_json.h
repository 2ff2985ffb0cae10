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
//
// What Perfetto's JSON importer does decides two more rules
// (src/trace_processor/importers/json/json_trace_parser.cc,
// sorter/trace_sorter.h):
//   - it reads flows only on "B", "X" and "b"/"e"/"n": an instant with a
//     flow (a host command with no completion) is an "X" of "dur" 0,
//     which Perfetto imports as the same zero-length slice an "i" is;
//   - once a file has an "X", its sorter puts every "E" before all other
//     events of the same timestamp, so an "E" at its own "B"'s time would
//     close nothing and leave the slice unfinished. A slice of no length
//     is therefore one "X" of "dur" 0 too: its "B", written as it came,
//     stays in the output buffer until its end and is rewritten there as
//     an "X" with the begin's arguments and those of the end it does not
//     have. Past kHoldBytes of output kept back, the "B"s still open are
//     cut out of it and wait on their own (flat memory): each is written
//     just before its "E", or as the "X", where the end comes. That moves
//     only the "B" in the file, which changes nothing for a reader: its
//     thread (a lane of one span: export_model.h) has no event between a
//     begin and its end, and Perfetto sorts events by time.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_JSON_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_JSON_H_

#include <cstdint>
#include <cstddef>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "export/export_model.h"
#include "export/json_text.h"

namespace hmbtrace {

class JsonTraceWriter : public ExportSink {
 public:
  // Writes to `out` (not owned; buffered by the caller).
  explicit JsonTraceWriter(std::FILE* out);

  void Track(const ExportTrack& track) override;
  void Event(const ExportEvent& event) override;
  // Named in otherData.clock; ftrace events have no place in this format.
  void Clock(const ExportClock& clock) override { trace_clock_ = clock.trace_clock; }
  Status Finish() override;

  // Output kept back at most behind a "B" that may turn out to be of no
  // length (flat memory whatever the capture).
  static constexpr size_t kHoldBytes = 1u << 22;
  // "B"s cut out of the output to wait for their end (tests).
  uint64_t begins_moved() const { return begins_moved_; }

 private:
  static constexpr size_t kNotHeld = SIZE_MAX;
  // Output is given out in pieces of about this size (what decides when
  // a "B" is cut out: Flush()).
  static constexpr size_t kFlushAt = 1u << 18;
  struct Where {
    int pid = 0;
    int tid = 0;
    bool counter = false;
    std::string name;  // counters: the "C" event's name
    std::string unit;
    // What follows the name in each of its events:
    // ,"pid":P,"tid":T,"ts":
    json_text::ShortText head;
    size_t open_at = 0;  // its index in open_b_ while b_at != kNotHeld
    // The "B" open on this thread, still in out_buf_ (kNotHeld: none, or
    // written out): where it starts, where its "ts" value ends, its end,
    // its time, whether it has "args".
    size_t b_at = kNotHeld;
    size_t b_ts_end = 0;
    size_t b_end = 0;
    uint64_t b_ts = 0;
    bool b_args = false;
    bool b_open = false;  // a "B" written and its "E" not yet
    // A "B" cut out of out_buf_ (its text without the leading ",\n"), and
    // where its "ts" value ends in it.
    std::string b_text;
    size_t b_text_ts_end = 0;
  };
  // A metadata ("M") event's start, up to its "tid" value.
  void BeginMeta(std::string_view name, int pid, int tid);
  // An event's start at `p` (room: HeadRoom()), up to its "ts" value:
  // phase `ph`, `name` (id `name_id`: export_model.h, 0 for none; empty:
  // no name) and the pid and tid of `w`.
  char* Head(char* p, char ph, std::string_view name, uint32_t name_id, const Where& w);
  static constexpr size_t HeadRoom(size_t name_size) {
    return 20 + json_text::StringRoom(name_size) + json_text::ShortText::kText +
           json_text::kNumberRoom;
  }
  // Writes `e` on `w` as phase `ph`: Head(), its "ts", then Rest().
  void Write(char ph, const ExportEvent& e, const Where& w);
  // The rest of `e`'s JSON object: flows and arguments.
  void Rest(const ExportEvent& e, const Where& w);
  // Writes the begin held back (if any) as a "B".
  void WriteHeld();
  // Writes `e`, a begin, as a "B" that stays in out_buf_ until its end.
  void WriteBegin(const ExportEvent& e, Where& w);
  // The "B" of `w` and `end`, at its time, rewritten in place as one "X"
  // of no length; false if that "B" is no longer in out_buf_.
  bool MergeZeroLength(const ExportEvent& end, Where& w);
  // `b`, the text of a "B" whose "ts" value ends at `ts_end`, and `end`:
  // the text of one "X" of no length.
  std::string ZeroLengthX(std::string_view b, size_t ts_end, bool b_args, const ExportEvent& end);
  // Cuts every "B" still in out_buf_ out of it, to wait in its Where, and
  // writes the rest out: out_buf_ is empty after.
  void CutOutBegins();
  // Writes the "B" cut out of `w` (if any) here.
  void PutCutBegin(Where& w);
  // The arguments of `args` as "name":value pairs (no braces) at `p`
  // (room: ArgsRoom()), those named in `skip_in` (text of an "args"
  // object) left out: returns the end.
  char* Args(char* p, const std::vector<ExportArg>& args, bool first,
             std::string_view skip_in = {});
  static size_t ArgsRoom(const std::vector<ExportArg>& args);
  // `text` with id `id` (export_model.h; 0: none) as a JSON string at `p`
  // (room for StringRoom(text.size())), escaped once per id: returns the
  // end.
  char* Quoted(char* p, uint32_t id, std::string_view text) {
    if (id < quoted_short_.size() && quoted_short_[id].size) [[likely]]
      return quoted_short_[id].Put(p);
    return QuotedFirst(p, id, text);
  }
  [[gnu::noinline]] char* QuotedFirst(char* p, uint32_t id, std::string_view text);
  void Put(std::string_view s) { out_buf_.Append(s); }
  void PutString(std::string_view s);
  // Gives out_buf_ out, up to the first "B" kept back (all with `all`):
  // it is written once kWriteAt is given out, or with `all`.
  void Flush(bool all = false);
  // Stops keeping the "B" of `w` back.
  void Release(Where& w);

  std::FILE* out_;
  json_text::TextBuffer out_buf_;  // output not yet written, as text
  std::unordered_map<uint64_t, Where> tracks_;
  std::vector<Where*> open_b_;  // the Wheres with a "B" in out_buf_
  std::unordered_map<int, int> next_tid_;  // per pid
  uint64_t last_track_ = 0;                // the last event's track
  Where* last_where_ = nullptr;
  // A begin with no arguments and no flow, held until the next event says
  // whether it is one "X" with its end.
  bool held_ = false;
  uint64_t held_ts_ = 0;
  uint64_t held_track_ = 0;
  Where* held_where_ = nullptr;
  std::string held_name_;
  uint32_t held_name_id_ = 0;
  std::string trace_clock_;
  // Quoted(): the short ones (most) as blocks to copy, the others as text.
  std::vector<json_text::ShortText> quoted_short_;
  ByExportId<std::string> quoted_;
  bool first_ = true;
  bool failed_ = false;
  // Event() flushes past this size of out_buf_ (kFlushAt at first).
  size_t flush_at_ = kFlushAt;
  // The front of out_buf_ given out but not yet written (Flush()).
  size_t done_ = 0;
  uint64_t begins_moved_ = 0;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_JSON_H_
