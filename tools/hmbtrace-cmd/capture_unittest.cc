// SPDX-License-Identifier: GPL-2.0-only
#include "capture.h"

#include <gtest/gtest.h>

#include "count_records_testutil.h"
#include "fixture_testutil.h"

namespace hmbtrace {
namespace {

TEST(Capture, DeliversEveryHmbEventOfTheFixtureInHostTimeOrder) {
  std::string error;
  const std::vector<CaptureEvent> events = ReadAll(FixturePath(), &error);
  ASSERT_TRUE(error.empty()) << error;
  uint64_t records = 0, states = 0, dicts = 0, other = 0;
  uint64_t last_ts = 0;
  for (const CaptureEvent& ev : events) {
    EXPECT_GE(ev.ts, last_ts);
    last_ts = ev.ts;
    records += ev.kind == CaptureKind::kRecord;
    states += ev.kind == CaptureKind::kState;
    dicts += ev.kind == CaptureKind::kDict;
    other += ev.kind != CaptureKind::kRecord && ev.kind != CaptureKind::kState &&
             ev.kind != CaptureKind::kDict;
  }
  EXPECT_EQ(records, 1035u);
  EXPECT_EQ(states, 2u);
  EXPECT_EQ(dicts, 8u);
  EXPECT_EQ(other, 0u);
}

TEST(Capture, RecordCountsPerCoreMatchAnIndependentReader) {
  uint64_t independent[8] = {};
  ASSERT_EQ(count_hmb_records_per_core(FixturePath().c_str(), independent, 8), 1035);
  std::string error;
  uint64_t ours[8] = {};
  for (const CaptureEvent& ev : ReadAll(FixturePath(), &error))
    if (ev.kind == CaptureKind::kRecord && ev.core < 8)
      ours[ev.core]++;
  for (int core = 0; core < 4; core++) {
    EXPECT_EQ(ours[core], independent[core]) << "core " << core;
    EXPECT_EQ(ours[core], kFixtureRecordsPerCore[core]) << "core " << core;
  }
}

TEST(Capture, MissingFileIsAnErrorNamingTheFileAndWhy) {
  std::string error;
  EXPECT_FALSE(ReadCapture(
      "/nonexistent/trace.dat", [](const CaptureEvent&) { return true; }, &error));
  EXPECT_EQ(error,
            "/nonexistent/trace.dat: No such file or directory; name the capture with -i FILE "
            "(default trace.dat), or record with `trace-cmd record -B hmb -e hmb`");
}

TEST(Capture, FileThatIsNotATraceIsAClearError) {
  TempFile garbage("garbage.dat", std::vector<uint8_t>(4096, 0x5a));
  std::string error;
  EXPECT_FALSE(ReadCapture(
      garbage.path(), [](const CaptureEvent&) { return true; }, &error));
  EXPECT_EQ(error, garbage.path() +
                       ": not a readable trace-cmd data file (truncated, corrupt, or not made by "
                       "trace-cmd record); copy it again, or record again with `trace-cmd record "
                       "-B hmb -e hmb`");
}

// Cut anywhere, the file gives either a clear error or the events before
// the cut; never a crash (the ASan build runs this too).
TEST(Capture, TruncatedFileGivesAnErrorOrFewerEventsNeverACrash) {
  const std::vector<uint8_t> whole = ReadBytes(FixturePath());
  ASSERT_GT(whole.size(), 90000u);
  bool saw_error = false;
  for (size_t cut :
       {size_t{0}, size_t{10}, size_t{100}, size_t{1000}, size_t{5000}, size_t{20000},
        size_t{40000}, size_t{60000}, size_t{70000}, size_t{90000}, whole.size() - 1}) {
    TempFile cut_file("cut.dat",
                      std::vector<uint8_t>(whole.begin(), whole.begin() + static_cast<long>(cut)));
    std::string error;
    uint64_t records = 0;
    const bool ok = ReadCapture(
        cut_file.path(),
        [&records](const CaptureEvent& ev) {
          records += ev.kind == CaptureKind::kRecord;
          return true;
        },
        &error);
    if (!ok) {
      saw_error = true;
      EXPECT_EQ(error.rfind(cut_file.path() + ": ", 0), 0u) << error;
    }
    EXPECT_LE(records, 1035u) << "cut at " << cut;
  }
  EXPECT_TRUE(saw_error);
}

// Flipped bytes in the event data: counted or skipped, never a crash.
TEST(Capture, CorruptRingBufferPagesNeverCrash) {
  std::vector<uint8_t> bytes = ReadBytes(FixturePath());
  const size_t size = bytes.size();
  uint32_t x = 12345;
  for (size_t i = size - 60000; i < size; i += 97) {
    x = x * 1103515245u + 12345u;
    bytes[i] = static_cast<uint8_t>(x >> 16);
  }
  TempFile bad("corrupt.dat", bytes);
  std::string error;
  uint64_t events = 0;
  ReadCapture(
      bad.path(),
      [&events](const CaptureEvent& ev) {
        events++;
        // Whatever is delivered lies inside its record.
        for (uint8_t b : ev.data)
          (void)b;
        return true;
      },
      &error);
  SUCCEED() << events << " events, error: " << error;
}

TEST(Capture, HostTimeRoundsToTheMicrosecondLikeTraceCmd) {
  EXPECT_EQ(HostTime(7535708500), "7.535709");
  EXPECT_EQ(HostTime(7535708499), "7.535708");
  EXPECT_EQ(HostTime(999999500), "1.000000");
}

TEST(Capture, TextFromTheFileIsPrintedEscapedAndValidUtf8) {
  EXPECT_EQ(Printable("0000:\x8b"
                      "0:02.0"),
            "0000:\\x8b0:02.0");
  EXPECT_EQ(Printable("a\\b\tc\n"), "a\\\\b\\x09c");
  EXPECT_EQ(Printable("marker\n"), "marker");
}

}  // namespace
}  // namespace hmbtrace
