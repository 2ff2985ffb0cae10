// SPDX-License-Identifier: GPL-2.0-only
// A capture cut short inside its CPU data: a clear error, never
// libtracecmd's crash (trace_dat_layout_c.h).
#include "capture/trace_dat_layout_c.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "capture/capture.h"
#include "capture/fixture_testutil.h"
#include "hmbtrace/status_testutil.h"

namespace hmbtrace {
namespace {

std::string Check(const std::string& path) {
  char err[512] = "";
  return hmb_trace_dat_check_cpu_data(path.c_str(), err, sizeof(err)) ? err : "ok";
}

TEST(TraceDatLayout, WholeCapturesHaveAllTheirCpuData) {
  for (const std::string& path : {FixturePath(), MarkersFixturePath(), CmdJoinFixturePath(),
                                   CmdJoinBootFixturePath(), CmdJoinInstanceFixturePath(),
                                   ClockFixturePath()})
    EXPECT_EQ(Check(path), "ok") << path;
  EXPECT_EQ(Check("/nonexistent/trace.dat"), "ok");  // libtracecmd says why
}

TEST(TraceDatLayout, ACaptureCutInItsCpuDataSaysWhereAndIsNeverACrash) {
  // cmd-join-small.dat: two CPUs of the top buffer at 24576 and 28672 (4
  // KiB each), the instance "hmb"'s from 32768 on. libtracecmd 3.1
  // crashed on every cut from 22784 to 32767.
  const std::vector<uint8_t> bytes = ReadBytes(CmdJoinFixturePath());
  ASSERT_EQ(bytes.size(), 53248u);
  {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + 26624);
    TempFile file("cut.dat", cut);
    EXPECT_EQ(Check(file.path()),
              "the file is cut short: the data of CPU 0 of the top buffer ends at byte 28672, "
              "but the file has 26624 bytes (copied before trace-cmd finished writing it?); "
              "copy it again, or record again");
    std::string error;
    EXPECT_FALSE(StatusOk(ReadCapture(file.path(), [](const CaptureEvent&) { return true; }),
                          &error));
    EXPECT_EQ(error, file.path() + ": " + Check(file.path()));
  }
  {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + 40000);
    TempFile file("cut.dat", cut);
    EXPECT_NE(Check(file.path()).find("of instance \"hmb\" ends at byte"), std::string::npos)
        << Check(file.path());
  }
  // Every cut from the first CPU's data on: this check's error (or, cut
  // after the last CPU's data, the events there are), never a crash. (A
  // cut in the headers is libtracecmd's to refuse, which leaks then:
  // TruncatedFileGivesAnErrorOrFewerEventsNeverACrash.)
  size_t cut_short = 0;
  for (size_t n = 24576; n < bytes.size(); n += 256) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
    TempFile file("cut.dat", cut);
    std::string error;
    const bool ok =
        StatusOk(ReadCapture(file.path(), [](const CaptureEvent&) { return true; }), &error);
    const std::string check = Check(file.path());
    if (check != "ok") {
      EXPECT_FALSE(ok) << n;
      EXPECT_EQ(error, file.path() + ": " + check) << n;
      cut_short++;
    }
  }
  EXPECT_GT(cut_short, 50u);
}

TEST(TraceDatLayout, AFileOfAnotherVersionIsLeftToLibtracecmd) {
  // Version 7 (sections, its CPU data compressed), and a "version 7" cut
  // in its CPU data, which this does not read.
  EXPECT_EQ(Check(HMBTRACE_V7_FIXTURE), "ok");
  std::vector<uint8_t> bytes = ReadBytes(CmdJoinFixturePath());
  bytes.resize(26624);
  bytes[10] = '7';
  TempFile file("v7.dat", bytes);
  EXPECT_EQ(Check(file.path()), "ok");
}

}  // namespace
}  // namespace hmbtrace
