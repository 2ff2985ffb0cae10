// SPDX-License-Identifier: GPL-2.0-only
#include "capture/progress.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

namespace hmbtrace {
namespace {

std::string Contents(FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    s.append(buf, n);
  return s;
}

TEST(Progress, LineSaysThePassTheShareAndTheTime) {
  EXPECT_EQ(Progress::Line("run.dat", 2, 2, 1234, 2742, 3.21),
            "reading run.dat: pass 2/2, 45% (1234 of 2742 events), 3.2 s");
  EXPECT_EQ(Progress::Line("run.dat", 1, 2, 99, 0, 0.04), "reading run.dat: pass 1/2, 99 events, 0.0 s");
  EXPECT_EQ(Progress::Line("x", 2, 2, 5, 4, 1), "reading x: pass 2/2, 100% (5 of 4 events), 1.0 s");
}

TEST(Progress, QuietForAShortReadDrawnAfterASecondAndErasedWhenDone) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p("run.dat", /*enabled=*/true, f);
    for (int i = 0; i < 10000; i++)
      p.Tick(1, 2, 0);
    EXPECT_FALSE(p.drawn());
    EXPECT_EQ(Contents(f), "");  // under a second: nothing
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    for (int i = 0; i < 8192; i++)
      p.Tick(2, 2, 20000);
    EXPECT_TRUE(p.drawn());
    const std::string drawn = Contents(f);
    EXPECT_EQ(drawn.rfind("\rreading run.dat: pass 2/2, ", 0), 0u) << drawn;
    EXPECT_NE(drawn.find("(4096 of 20000 events)"), std::string::npos) << drawn;
  }
  const std::string all = Contents(f);
  EXPECT_EQ(all.substr(all.size() - 4), "\r\x1b[K");  // the destructor erased the line
  std::fclose(f);
}

TEST(Progress, DisabledWritesNothing) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p("run.dat", /*enabled=*/false, f);
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    for (int i = 0; i < 100000; i++)
      p.Tick(2, 2, 100000);
  }
  EXPECT_EQ(Contents(f), "");
  std::fclose(f);
}

TEST(Progress, OffWhenStderrIsNotATerminal) {
  if (isatty(STDERR_FILENO))
    GTEST_SKIP() << "stderr is a terminal here";
  Progress p("run.dat", /*streams_stdout=*/false);
  EXPECT_FALSE(p.enabled());
}

}  // namespace
}  // namespace hmbtrace
