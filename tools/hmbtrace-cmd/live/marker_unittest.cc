// SPDX-License-Identifier: GPL-2.0-only
#include "live/marker.h"

#include <gtest/gtest.h>

#include "hmbtrace/status_testutil.h"
#include "live/fake_tree_testutil.h"

namespace hmbtrace {
namespace {

TEST(Marker, WritesOneLineIntoTheInstancesTraceMarker) {
  FakeTrees t;
  t.AddTracefs();
  t.AddInstance();
  std::string error;
  ASSERT_TRUE(StatusOk(WriteMarker(t.tracefs(), {"phase", "2", "start"}), &error)) << error;
  EXPECT_EQ(FakeTrees::Read(t.instance() + "/trace_marker"), "phase 2 start\n");
}

TEST(Marker, EmbeddedNewlinesStayOneLine) {
  EXPECT_EQ(MarkerLine({"a\nb", "c"}), "a b c\n");
}

TEST(Marker, MissingInstanceIsAnErrorWithTheFix) {
  FakeTrees t;
  t.AddTracefs();
  std::string error;
  EXPECT_FALSE(StatusOk(WriteMarker(t.tracefs(), {"x"}), &error));
  EXPECT_NE(error.find("no trace instance " + t.instance()), std::string::npos) << error;
  EXPECT_NE(error.find("insmod hmb_trace.ko"), std::string::npos) << error;
}

TEST(Marker, NoTracefsSaysHowToMountIt) {
  FakeTrees t;
  std::string error;
  EXPECT_FALSE(StatusOk(WriteMarker(t.tracefs(), {"x"}), &error));
  EXPECT_NE(error.find("mount -t tracefs"), std::string::npos) << error;
}

}  // namespace
}  // namespace hmbtrace
