// SPDX-License-Identifier: GPL-2.0-only
//
// Writing ftrace ring-buffer pages ("sub-buffers") as a trace-cmd data file
// carries them, for a capture whose events get new timestamps
// (hmbtrace-cmd retime). libtracecmd writes a file's headers, options and
// buffers, but takes each CPU's data as ready pages; this is the one part
// written by our code.
//
// The format is the one the capture declares in its header_page and
// header_event (Linux 6.1; trace-cmd.dat(5), the kernel's ring_buffer.c,
// libtraceevent's kbuffer-parse.c reads it):
//
//   page:   u64 timestamp | commit (long: 4 or 8 bytes) | events ... | [lost]
//           commit = bytes of events, | 1<<31 if ftrace dropped events
//           before the page's first, | 1<<30 if their count is stored, as
//           a long, right after the events.
//   event:  u32 header: type_len (5 bits) and time_delta (27 bits): type_len
//           in the low bits on a little-endian file, the high bits on a
//           big-endian one. type_len 1..28: data of 4 * type_len bytes
//           follows; 0: a u32 length (data + 4) then the data; 29 padding;
//           30 time extend: the delta is time_delta + (next u32 << 27);
//           31 absolute time stamp (not needed here: see below).
//
// The delta of an event is from the previous event of its page, or from
// the page's timestamp for the first. Events must come in timestamp order;
// a delta of 2^27 ns (134 ms) or more is written as a time extend before
// the event. The readers' order never needs an absolute time stamp, so
// none is written.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_RETIME_TRACE_PAGE_WRITER_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_RETIME_TRACE_PAGE_WRITER_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace hmbtrace {

struct TracePageFormat {
  uint32_t page_size = 4096;
  int long_size = 8;  // of the commit word and the lost count: 4 or 8
  bool big_endian = false;
};

class TracePageWriter {
 public:
  // Each full page goes to `out` (page_size bytes); false from it stops
  // the writer (Add and Flush then return false).
  using PageSink = std::function<bool(std::span<const uint8_t> page)>;

  TracePageWriter(TracePageFormat format, PageSink out);

  // The room for one event's data on a page.
  uint32_t max_event_size() const;

  // One event: `data` then `tail` (each a multiple of 4 bytes), at `ts`
  // (not before the previous event's; an earlier one is written at the
  // previous time and counted in clamped()), with `missed` events dropped
  // by ftrace before it. False if the sink failed or the event is larger
  // than max_event_size().
  bool Add(uint64_t ts,
           std::span<const uint8_t> data,
           std::span<const uint8_t> tail,
           uint64_t missed);
  // Writes the page in progress, if any.
  bool Flush();

  uint64_t pages() const { return pages_; }
  uint64_t events() const { return events_; }
  uint64_t clamped() const { return clamped_; }

 private:
  uint32_t header_size() const { return 8 + static_cast<uint32_t>(format_.long_size); }
  void StartPage(uint64_t ts, uint64_t missed);
  void PutU32(uint32_t v);
  void PutNumber(size_t at, uint64_t v, int size);
  uint32_t TypeLen(uint32_t type_len, uint32_t delta) const;

  TracePageFormat format_;
  PageSink out_;
  std::vector<uint8_t> page_;
  bool open_ = false;
  bool failed_ = false;
  uint32_t used_ = 0;  // bytes of the page written, header included
  uint64_t last_ts_ = 0;
  uint64_t missed_ = 0;
  bool any_ = false;
  uint64_t pages_ = 0;
  uint64_t events_ = 0;
  uint64_t clamped_ = 0;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_RETIME_TRACE_PAGE_WRITER_H_
