// SPDX-License-Identifier: GPL-2.0-only
#include "retime/trace_page_writer.h"

#include <algorithm>
#include <cstring>

namespace hmbtrace {
namespace {

// ring_buffer.c: RINGBUF_TYPE_*, TS_SHIFT, RB_MAX_SMALL_DATA.
constexpr uint32_t kTypeDataMax = 28;
constexpr uint32_t kTypeTimeExtend = 30;
constexpr int kTsShift = 27;
constexpr uint64_t kTsDeltaMax = (1ull << kTsShift) - 1;
constexpr uint32_t kSmallDataMax = kTypeDataMax * 4;
constexpr uint64_t kMissingEvents = 1ull << 31;  // in commit
constexpr uint64_t kMissingStored = 1ull << 30;

}  // namespace

TracePageWriter::TracePageWriter(TracePageFormat format, PageSink out)
    : format_(format), out_(std::move(out)), page_(format.page_size) {}

uint32_t TracePageWriter::max_event_size() const {
  // A length word and a time extend, and room for a lost count.
  return format_.page_size - header_size() - 4 - 8 - static_cast<uint32_t>(format_.long_size);
}

void TracePageWriter::PutNumber(size_t at, uint64_t v, int size) {
  for (int i = 0; i < size; i++) {
    const int shift = format_.big_endian ? 8 * (size - 1 - i) : 8 * i;
    page_[at + static_cast<size_t>(i)] = static_cast<uint8_t>(v >> shift);
  }
}

void TracePageWriter::PutU32(uint32_t v) {
  PutNumber(used_, v, 4);
  used_ += 4;
}

uint32_t TracePageWriter::TypeLen(uint32_t type_len, uint32_t delta) const {
  // The bit-field struct ring_buffer_event { u32 type_len:5, time_delta:27; }
  // as the file's compiler laid it out.
  return format_.big_endian ? (type_len << kTsShift) | delta : (delta << 5) | type_len;
}

void TracePageWriter::StartPage(uint64_t ts, uint64_t missed) {
  // The header's commit word is set by Flush, as the zeros after the
  // events: the events themselves cover the rest.
  used_ = header_size();
  last_ts_ = ts;
  missed_ = missed;
  open_ = true;
  PutNumber(0, ts, 8);
}

bool TracePageWriter::Flush() {
  if (failed_)
    return false;
  if (!open_)
    return true;
  uint64_t commit = used_ - header_size();
  std::fill(page_.begin() + used_, page_.end(), 0);
  if (missed_) {
    commit |= kMissingEvents | kMissingStored;
    PutNumber(used_, missed_, format_.long_size);
  }
  PutNumber(8, commit, format_.long_size);
  open_ = false;
  pages_++;
  if (!out_(page_)) {
    failed_ = true;
    return false;
  }
  return true;
}

bool TracePageWriter::Add(uint64_t ts,
                          std::span<const uint8_t> data,
                          std::span<const uint8_t> tail,
                          uint64_t missed) {
  if (failed_)
    return false;
  const uint32_t size = static_cast<uint32_t>(data.size() + tail.size());
  if (data.size() % 4 || tail.size() % 4 || data.size() + tail.size() > max_event_size())
    return false;
  if (any_ && ts < last_ts_) {
    ts = last_ts_;
    clamped_++;
  }
  any_ = true;
  const uint32_t words = size == 0 || size > kSmallDataMax ? 4 + 4 : 4;
  const uint64_t delta = open_ ? ts - last_ts_ : 0;
  const uint32_t extend = delta > kTsDeltaMax ? 8 : 0;
  // The page keeps room for a lost count, written when the page ends.
  const uint32_t room = format_.page_size - static_cast<uint32_t>(format_.long_size);
  if (!open_ || missed || used_ + extend + words + size > room) {
    if (!Flush())
      return false;
    StartPage(ts, missed);
  }
  const uint64_t d = ts - last_ts_;
  if (d > kTsDeltaMax) {
    PutU32(TypeLen(kTypeTimeExtend, static_cast<uint32_t>(d & kTsDeltaMax)));
    PutU32(static_cast<uint32_t>(d >> kTsShift));
    last_ts_ = ts;
  }
  const uint32_t delta27 = static_cast<uint32_t>(ts - last_ts_);
  if (words == 4) {
    PutU32(TypeLen(size / 4, delta27));
  } else {
    PutU32(TypeLen(0, delta27));
    PutU32(size + 4);  // kbuffer-parse.c: the length word counts itself
  }
  std::memcpy(page_.data() + used_, data.data(), data.size());
  used_ += static_cast<uint32_t>(data.size());
  if (!tail.empty())
    std::memcpy(page_.data() + used_, tail.data(), tail.size());
  used_ += static_cast<uint32_t>(tail.size());
  last_ts_ = ts;
  events_++;
  return true;
}

}  // namespace hmbtrace
