// SPDX-License-Identifier: GPL-2.0-only
// The page reader on hand-built pages: every kind of event header, the
// missed-events marks, both long sizes and byte orders, and every kind of
// malformed page (ftrace_page_c.h). Pages are copied into buffers of their
// exact size, so that a read past one is caught by ASan (build-asan).
#include "capture/ftrace_page_c.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

namespace hmbtrace {
namespace {

// Builds a page as the kernel writes one.
class PageBuilder {
 public:
  explicit PageBuilder(unsigned long_size = 8, bool big_endian = false)
      : long_size_(long_size), big_endian_(big_endian) {
    Put(0, 8);           // timestamp
    Put(0, long_size_);  // commit
  }
  PageBuilder& Timestamp(uint64_t ts) {
    Store(0, ts, 8);
    return *this;
  }
  // A header word, then `extra` (raw u32 words).
  PageBuilder& Header(uint32_t type_len, uint32_t delta) {
    Put(big_endian_ ? (type_len << 27) | delta : (delta << 5) | type_len, 4);
    return *this;
  }
  PageBuilder& Word(uint32_t w) {
    Put(w, 4);
    return *this;
  }
  // A data event of type_len n (n * 4 bytes of `fill`).
  PageBuilder& Small(uint32_t delta, uint32_t n, uint8_t fill) {
    Header(n, delta);
    bytes_.insert(bytes_.end(), n * 4, fill);
    return *this;
  }
  // A type_len 0 event of `len` data bytes (padded to 4).
  PageBuilder& Large(uint32_t delta, uint32_t len, uint8_t fill) {
    Header(0, delta).Word(len + 4);
    bytes_.insert(bytes_.end(), (len + 3) & ~3u, fill);
    return *this;
  }
  PageBuilder& Extend(uint32_t delta, uint32_t high) { return Header(30, delta).Word(high); }
  PageBuilder& Absolute(uint32_t low, uint32_t high) { return Header(31, low).Word(high); }
  // A discarded event: `len` bytes after its header, its length word included.
  PageBuilder& Padding(uint32_t delta, uint32_t len) {
    Header(29, delta).Word(len);
    bytes_.insert(bytes_.end(), len - 4, 0xee);
    return *this;
  }
  // Sets commit to the data written so far, with flags; a stored count after it.
  PageBuilder& Commit(uint32_t flags = 0, uint64_t missed = 0) {
    Store(8, (bytes_.size() - 8 - long_size_) | flags, long_size_);
    if (flags & FTRACE_PAGE_MISSED_STORED)
      Put(missed, long_size_);
    return *this;
  }
  PageBuilder& RawCommit(uint64_t commit) {
    Store(8, commit, long_size_);
    return *this;
  }
  PageBuilder& Pad(size_t to) {
    if (bytes_.size() < to)
      bytes_.resize(to, 0);
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  ftrace_page_format format() const { return {long_size_, big_endian_ ? 1 : 0}; }

 private:
  void Store(size_t at, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++)
      bytes_[at + (big_endian_ ? n - 1 - i : i)] = static_cast<uint8_t>(v >> (8 * i));
  }
  void Put(uint64_t v, unsigned n) {
    bytes_.resize(bytes_.size() + n);
    Store(bytes_.size() - n, v, n);
  }
  unsigned long_size_;
  bool big_endian_;
  std::vector<uint8_t> bytes_;
};

struct Parsed {
  std::vector<ftrace_page_event> events;
  int end = 0;  // what the last ftrace_page_next() (or begin) returned
  ftrace_page_status status = FTRACE_PAGE_OK;
  uint32_t error_offset = 0;
};

// Parses a copy of the first `len` bytes of the page, in a buffer of exactly that size.
Parsed Parse(const PageBuilder& b, size_t len = SIZE_MAX) {
  const std::vector<uint8_t>& bytes = b.bytes();
  len = std::min(len, bytes.size());
  std::unique_ptr<uint8_t[]> copy(new uint8_t[len ? len : 1]);
  if (len)
    std::memcpy(copy.get(), bytes.data(), len);
  const ftrace_page_format format = b.format();
  Parsed out;
  ftrace_page_reader r;
  if (ftrace_page_begin(&r, &format, copy.get(), len) == 0) {
    ftrace_page_event ev;
    while ((out.end = ftrace_page_next(&r, &ev)) == 1) {
      // Offsets instead of pointers into the copy, which goes away.
      ev.data = reinterpret_cast<const uint8_t*>(ev.data - copy.get());
      out.events.push_back(ev);
    }
  } else {
    out.end = -1;
  }
  out.status = r.status;
  out.error_offset = r.error_offset;
  // Once malformed, it stays so.
  if (out.end < 0) {
    ftrace_page_event ev;
    EXPECT_EQ(ftrace_page_next(&r, &ev), -1);
  }
  return out;
}

uintptr_t DataAt(const ftrace_page_event& ev) {
  return reinterpret_cast<uintptr_t>(ev.data);
}

TEST(FtracePage, EmptyPageHasNoEvents) {
  PageBuilder b;
  b.Timestamp(1000).Commit().Pad(4096);
  const Parsed p = Parse(b);
  EXPECT_EQ(p.end, 0);
  EXPECT_TRUE(p.events.empty());
}

TEST(FtracePage, SmallEventsAddTheirDeltas) {
  PageBuilder b;
  b.Timestamp(1000).Small(0, 2, 0xa1).Small(7, 1, 0xa2).Small(100, 28, 0xa3).Commit().Pad(4096);
  const Parsed p = Parse(b);
  ASSERT_EQ(p.end, 0);
  ASSERT_EQ(p.events.size(), 3u);
  EXPECT_EQ(p.events[0].ts, 1000u);
  EXPECT_EQ(p.events[0].size, 8u);
  EXPECT_EQ(p.events[0].offset, 16u);
  EXPECT_EQ(DataAt(p.events[0]), 20u);
  EXPECT_EQ(p.events[1].ts, 1007u);
  EXPECT_EQ(p.events[1].size, 4u);
  EXPECT_EQ(p.events[1].offset, 28u);
  EXPECT_EQ(p.events[2].ts, 1107u);
  EXPECT_EQ(p.events[2].size, 112u);
  EXPECT_EQ(b.bytes()[DataAt(p.events[2])], 0xa3);
}

TEST(FtracePage, LargeEventLengthIsRoundedUp) {
  PageBuilder b;
  b.Timestamp(5).Large(3, 10, 0xb1).Large(0, 200, 0xb2).Small(1, 1, 0xb3).Commit().Pad(4096);
  const Parsed p = Parse(b);
  ASSERT_EQ(p.end, 0);
  ASSERT_EQ(p.events.size(), 3u);
  EXPECT_EQ(p.events[0].ts, 8u);
  EXPECT_EQ(p.events[0].size, 12u);
  EXPECT_EQ(DataAt(p.events[0]), 24u);  // after the header and the length word
  EXPECT_EQ(p.events[1].size, 200u);
  EXPECT_EQ(p.events[2].offset, 16u + 8 + 12 + 8 + 200);
  EXPECT_EQ(p.events[2].ts, 9u);
}

TEST(FtracePage, TimeExtendAddsItsHighBits) {
  PageBuilder b;
  b.Timestamp(1000).Small(1, 1, 0).Extend(5, 3).Small(2, 1, 0).Commit().Pad(4096);
  const Parsed p = Parse(b);
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[0].ts, 1001u);
  EXPECT_EQ(p.events[1].ts, 1001u + (3ull << 27) + 5 + 2);
}

TEST(FtracePage, AbsoluteTimeStampReplacesTheLowBits) {
  PageBuilder b;
  const uint64_t page_ts = (0x18ull << 56) | 12345;
  b.Timestamp(page_ts).Small(1, 1, 0).Absolute(77, 2).Small(3, 1, 0).Commit().Pad(4096);
  const Parsed p = Parse(b);
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[0].ts, page_ts + 1);
  EXPECT_EQ(p.events[1].ts, (0x18ull << 56) + (2ull << 27) + 77 + 3);
}

TEST(FtracePage, PaddingIsSkippedAndItsDeltaKept) {
  PageBuilder b;
  b.Timestamp(10).Small(1, 1, 0).Padding(4, 20).Small(2, 1, 0xc1).Commit().Pad(4096);
  const Parsed p = Parse(b);
  ASSERT_EQ(p.end, 0);
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[1].ts, 17u);
  EXPECT_EQ(p.events[1].offset, 16u + 8 + 4 + 20);
  EXPECT_EQ(b.bytes()[DataAt(p.events[1])], 0xc1);
}

TEST(FtracePage, StoredMissedCountGoesWithTheFirstEventOnly) {
  PageBuilder b;
  b.Small(0, 1, 0)
      .Small(0, 1, 0)
      .Commit(FTRACE_PAGE_MISSED_EVENTS | FTRACE_PAGE_MISSED_STORED, 42)
      .Pad(4096);
  const Parsed p = Parse(b);
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[0].missed_events, 42);
  EXPECT_EQ(p.events[1].missed_events, 0);
}

TEST(FtracePage, UnstoredMissedCountIsMinusOne) {
  PageBuilder b;
  b.Small(0, 1, 0).Commit(FTRACE_PAGE_MISSED_EVENTS).Pad(4096);
  const Parsed p = Parse(b);
  ASSERT_EQ(p.events.size(), 1u);
  EXPECT_EQ(p.events[0].missed_events, -1);
}

// kbuffer_missed_events(): only an event at the page's first byte carries them.
TEST(FtracePage, MissedCountBehindATimeExtendIsNotReported) {
  PageBuilder b;
  b.Extend(0, 1)
      .Small(0, 1, 0)
      .Commit(FTRACE_PAGE_MISSED_EVENTS | FTRACE_PAGE_MISSED_STORED, 9)
      .Pad(4096);
  const Parsed p = Parse(b);
  ASSERT_EQ(p.events.size(), 1u);
  EXPECT_EQ(p.events[0].missed_events, 0);
}

TEST(FtracePage, FourByteLongPutsDataAtTwelve) {
  PageBuilder b(4);
  b.Timestamp(3)
      .Small(1, 1, 0xd1)
      .Commit(FTRACE_PAGE_MISSED_EVENTS | FTRACE_PAGE_MISSED_STORED, 5)
      .Pad(4096);
  const Parsed p = Parse(b);
  ASSERT_EQ(p.events.size(), 1u);
  EXPECT_EQ(p.events[0].offset, 12u);
  EXPECT_EQ(DataAt(p.events[0]), 16u);
  EXPECT_EQ(p.events[0].missed_events, 5);
}

TEST(FtracePage, BigEndianPage) {
  PageBuilder b(8, true);
  b.Timestamp(0x0102030405060708ull)
      .Small(9, 2, 0xe1)
      .Extend(1, 1)
      .Large(2, 6, 0xe2)
      .Commit(FTRACE_PAGE_MISSED_EVENTS | FTRACE_PAGE_MISSED_STORED, 3)
      .Pad(4096);
  const Parsed p = Parse(b);
  ASSERT_EQ(p.end, 0);
  ASSERT_EQ(p.events.size(), 2u);
  EXPECT_EQ(p.events[0].ts, 0x0102030405060708ull + 9);
  EXPECT_EQ(p.events[0].size, 8u);
  EXPECT_EQ(p.events[0].missed_events, 3);
  EXPECT_EQ(p.events[1].ts, 0x0102030405060708ull + 9 + (1ull << 27) + 1 + 2);
  EXPECT_EQ(p.events[1].size, 8u);
}

TEST(FtracePage, PageShorterThanItsHeader) {
  PageBuilder b;
  b.Commit();
  const Parsed p = Parse(b, 15);
  EXPECT_EQ(p.status, FTRACE_PAGE_SHORT_HEADER);
}

TEST(FtracePage, UnknownLongSize) {
  PageBuilder b(3);
  const Parsed p = Parse(b);
  EXPECT_EQ(p.status, FTRACE_PAGE_BAD_FORMAT);
}

TEST(FtracePage, CommitPastThePageEnd) {
  PageBuilder b;
  b.Small(0, 1, 0).RawCommit(4096).Pad(4096);
  const Parsed p = Parse(b);
  EXPECT_EQ(p.status, FTRACE_PAGE_COMMIT_PAST_END);
  EXPECT_EQ(p.error_offset, 8u);
  EXPECT_TRUE(p.events.empty());
}

TEST(FtracePage, MissedCountPastThePageEnd) {
  PageBuilder b;
  b.Small(0, 1, 0).Commit(FTRACE_PAGE_MISSED_EVENTS | FTRACE_PAGE_MISSED_STORED, 1);
  const Parsed p = Parse(b, b.bytes().size() - 1);
  EXPECT_EQ(p.status, FTRACE_PAGE_MISSED_PAST_END);
  EXPECT_EQ(p.error_offset, 24u);
}

TEST(FtracePage, HeaderCutByCommit) {
  PageBuilder b;
  b.Small(0, 1, 0xf1).Word(0x1).RawCommit(8 + 2).Pad(4096);
  const Parsed p = Parse(b);
  EXPECT_EQ(p.status, FTRACE_PAGE_HEADER_PAST_COMMIT);
  EXPECT_EQ(p.error_offset, 24u);
  EXPECT_EQ(p.events.size(), 1u);  // the events before it stand
}

TEST(FtracePage, LengthWordCutByCommit) {
  PageBuilder b;
  b.Header(0, 0).Word(40).RawCommit(4).Pad(4096);
  EXPECT_EQ(Parse(b).status, FTRACE_PAGE_HEADER_PAST_COMMIT);
  PageBuilder e;
  e.Extend(0, 1).RawCommit(6).Pad(4096);
  EXPECT_EQ(Parse(e).status, FTRACE_PAGE_HEADER_PAST_COMMIT);
}

TEST(FtracePage, LengthBelowItsOwnSize) {
  for (uint32_t len : {0u, 3u}) {
    PageBuilder b;
    b.Header(0, 0).Word(len).Word(0).Commit().Pad(4096);
    const Parsed p = Parse(b);
    EXPECT_EQ(p.status, FTRACE_PAGE_BAD_LENGTH) << len;
    EXPECT_EQ(p.error_offset, 20u);
  }
}

TEST(FtracePage, DataPastCommit) {
  PageBuilder small;
  small.Small(0, 4, 0).RawCommit(12).Pad(4096);
  EXPECT_EQ(Parse(small).status, FTRACE_PAGE_DATA_PAST_COMMIT);
  PageBuilder large;
  large.Header(0, 0).Word(0xfffffff0u).Word(0).Commit().Pad(4096);
  EXPECT_EQ(Parse(large).status, FTRACE_PAGE_DATA_PAST_COMMIT);
  PageBuilder largest;
  largest.Header(0, 0).Word(0xffffffffu).Word(0).Commit().Pad(4096);
  EXPECT_EQ(Parse(largest).status, FTRACE_PAGE_DATA_PAST_COMMIT);
  PageBuilder padding;
  padding.Header(29, 1).Word(100).Commit().Pad(4096);
  EXPECT_EQ(Parse(padding).status, FTRACE_PAGE_DATA_PAST_COMMIT);
}

TEST(FtracePage, DataEventOfNoBytes) {
  PageBuilder b;
  b.Header(0, 0).Word(4).Commit().Pad(4096);
  EXPECT_EQ(Parse(b).status, FTRACE_PAGE_EMPTY_DATA);
}

// A page cut anywhere (the end of a truncated file) never reads past its bytes.
TEST(FtracePage, EveryCutOfAPageIsReadInBounds) {
  PageBuilder b;
  b.Timestamp(1)
      .Small(1, 3, 1)
      .Extend(1, 1)
      .Large(1, 33, 2)
      .Padding(1, 8)
      .Absolute(1, 1)
      .Small(1, 1, 3)
      .Commit(FTRACE_PAGE_MISSED_EVENTS | FTRACE_PAGE_MISSED_STORED, 7);
  const size_t full = b.bytes().size();
  const Parsed whole = Parse(b);
  ASSERT_EQ(whole.end, 0);
  ASSERT_EQ(whole.events.size(), 3u);
  for (size_t len = 0; len < full; len++) {
    const Parsed p = Parse(b, len);
    // Cut inside the header, the data or the count: commit reaches past the cut.
    EXPECT_EQ(p.end, -1) << len;
    EXPECT_NE(p.status, FTRACE_PAGE_OK) << len;
  }
}

TEST(FtracePage, StatusNames) {
  for (int s = 0; s < FTRACE_PAGE_NR_STATUS; s++)
    EXPECT_STRNE(ftrace_page_status_name(static_cast<ftrace_page_status>(s)), "unknown") << s;
  EXPECT_STREQ(ftrace_page_status_name(FTRACE_PAGE_NR_STATUS), "unknown");
}

}  // namespace
}  // namespace hmbtrace
