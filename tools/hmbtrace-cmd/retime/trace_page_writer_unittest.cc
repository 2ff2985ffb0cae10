// SPDX-License-Identifier: GPL-2.0-only
#include "retime/trace_page_writer.h"

#include <gtest/gtest.h>

#include <vector>

#include "retime/kbuffer_testutil.h"

namespace hmbtrace {
namespace {

struct Event {
  uint64_t ts;
  std::vector<uint8_t> data;
};

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; i++)
    b[i] = static_cast<uint8_t>(seed + i);
  return b;
}

struct Written {
  std::vector<std::vector<uint8_t>> pages;
};

// Every event of every page, as kbuffer reads them; the lost counts of the pages.
std::vector<Event> ReadBack(Written& w, const TracePageFormat& f, std::vector<int64_t>* missed) {
  std::vector<Event> out;
  for (auto& page : w.pages) {
    EXPECT_EQ(page.size(), f.page_size);
    kbuffer_test_event ev[512];
    int64_t m = 0;
    const int n = kbuffer_test_read_page(page.data(), f.long_size, f.big_endian, ev, 512, &m);
    EXPECT_GE(n, 0);
    if (missed)
      missed->push_back(m);
    for (int i = 0; i < n; i++)
      out.push_back({ev[i].ts, std::vector<uint8_t>(ev[i].data, ev[i].data + ev[i].size)});
  }
  return out;
}

TracePageWriter Writer(const TracePageFormat& f, Written* w) {
  return TracePageWriter(f, [w](std::span<const uint8_t> page) {
    w->pages.emplace_back(page.begin(), page.end());
    return true;
  });
}

TEST(TracePageWriter, KbufferReadsEveryEventWithItsTimeAndData) {
  const TracePageFormat f;
  Written w;
  TracePageWriter writer = Writer(f, &w);
  // Small events (type_len 1..28), one of 112 bytes (the largest small
  // one) and larger ones (a length word), and a zero delta.
  const std::vector<Event> in = {{1000, Bytes(40, 1)},   {1000, Bytes(4, 2)},
                                 {1500, Bytes(112, 3)},  {2000, Bytes(116, 4)},
                                 {2001, Bytes(1000, 5)}, {90000, Bytes(56, 6)}};
  for (const Event& e : in)
    ASSERT_TRUE(writer.Add(e.ts, e.data, {}, 0));
  ASSERT_TRUE(writer.Flush());
  EXPECT_EQ(writer.pages(), 1u);
  const std::vector<Event> out = ReadBack(w, f, nullptr);
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); i++) {
    EXPECT_EQ(out[i].ts, in[i].ts) << i;
    EXPECT_EQ(out[i].data, in[i].data) << i;
  }
}

TEST(TracePageWriter, TailFollowsTheDataInOneEvent) {
  const TracePageFormat f;
  Written w;
  TracePageWriter writer = Writer(f, &w);
  const std::vector<uint8_t> data = Bytes(40, 1), tail = Bytes(16, 200);
  ASSERT_TRUE(writer.Add(5, data, tail, 0));
  ASSERT_TRUE(writer.Flush());
  const std::vector<Event> out = ReadBack(w, f, nullptr);
  ASSERT_EQ(out.size(), 1u);
  std::vector<uint8_t> both = data;
  both.insert(both.end(), tail.begin(), tail.end());
  EXPECT_EQ(out[0].data, both);
}

TEST(TracePageWriter, LargeDeltasUseATimeExtend) {
  const TracePageFormat f;
  Written w;
  TracePageWriter writer = Writer(f, &w);
  // 2^27 - 1 fits in an event header; 2^27 and 5 s do not.
  const std::vector<uint64_t> ts = {100,           100 + (1u << 27) - 1, 100 + (2ull << 27) - 1,
                                    5000000000ull, 5000000000ull + 3,    3600000000000ull};
  for (uint64_t t : ts)
    ASSERT_TRUE(writer.Add(t, Bytes(8, 1), {}, 0));
  ASSERT_TRUE(writer.Flush());
  const std::vector<Event> out = ReadBack(w, f, nullptr);
  ASSERT_EQ(out.size(), ts.size());
  for (size_t i = 0; i < ts.size(); i++)
    EXPECT_EQ(out[i].ts, ts[i]) << i;
}

TEST(TracePageWriter, FullPagesContinueOnTheNext) {
  const TracePageFormat f;
  Written w;
  TracePageWriter writer = Writer(f, &w);
  std::vector<Event> in;
  for (uint64_t i = 0; i < 1000; i++)
    in.push_back({1000000 + i * 977, Bytes(4 * (1 + i % 40), static_cast<uint8_t>(i))});
  for (const Event& e : in)
    ASSERT_TRUE(writer.Add(e.ts, e.data, {}, 0));
  ASSERT_TRUE(writer.Flush());
  EXPECT_GT(writer.pages(), 10u);
  const std::vector<Event> out = ReadBack(w, f, nullptr);
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); i++) {
    ASSERT_EQ(out[i].ts, in[i].ts) << i;
    ASSERT_EQ(out[i].data, in[i].data) << i;
  }
}

TEST(TracePageWriter, MissedEventsStartAPageThatCountsThem) {
  const TracePageFormat f;
  Written w;
  TracePageWriter writer = Writer(f, &w);
  ASSERT_TRUE(writer.Add(10, Bytes(8, 1), {}, 0));
  ASSERT_TRUE(writer.Add(20, Bytes(8, 2), {}, 7));
  ASSERT_TRUE(writer.Add(30, Bytes(8, 3), {}, 0));
  ASSERT_TRUE(writer.Flush());
  std::vector<int64_t> missed;
  const std::vector<Event> out = ReadBack(w, f, &missed);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(missed, (std::vector<int64_t>{0, 7}));
  EXPECT_EQ(out[1].ts, 20u);
}

TEST(TracePageWriter, AnEarlierTimeIsWrittenAtThePreviousAndCounted) {
  const TracePageFormat f;
  Written w;
  TracePageWriter writer = Writer(f, &w);
  ASSERT_TRUE(writer.Add(100, Bytes(8, 1), {}, 0));
  ASSERT_TRUE(writer.Add(50, Bytes(8, 2), {}, 0));
  ASSERT_TRUE(writer.Flush());
  EXPECT_EQ(writer.clamped(), 1u);
  const std::vector<Event> out = ReadBack(w, f, nullptr);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].ts, 100u);
}

TEST(TracePageWriter, BigEndianWithFourByteLongs) {
  TracePageFormat f;
  f.big_endian = true;
  f.long_size = 4;
  Written w;
  TracePageWriter writer = Writer(f, &w);
  const std::vector<Event> in = {{7, Bytes(12, 1)}, {7 + (3ull << 27), Bytes(200, 2)}};
  for (const Event& e : in)
    ASSERT_TRUE(writer.Add(e.ts, e.data, {}, e.ts == 7 ? 0 : 2));
  ASSERT_TRUE(writer.Flush());
  std::vector<int64_t> missed;
  const std::vector<Event> out = ReadBack(w, f, &missed);
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); i++) {
    EXPECT_EQ(out[i].ts, in[i].ts);
    EXPECT_EQ(out[i].data, in[i].data);
  }
  EXPECT_EQ(missed, (std::vector<int64_t>{0, 2}));
}

TEST(TracePageWriter, RefusesWhatDoesNotFit) {
  const TracePageFormat f;
  Written w;
  TracePageWriter writer = Writer(f, &w);
  EXPECT_FALSE(writer.Add(1, Bytes(f.page_size, 1), {}, 0));
  EXPECT_FALSE(writer.Add(1, Bytes(6, 1), {}, 0));  // not a multiple of 4
  EXPECT_TRUE(writer.Add(1, Bytes(writer.max_event_size(), 1), {}, 0));
  ASSERT_TRUE(writer.Flush());
  EXPECT_EQ(ReadBack(w, f, nullptr).size(), 1u);
}

}  // namespace
}  // namespace hmbtrace
