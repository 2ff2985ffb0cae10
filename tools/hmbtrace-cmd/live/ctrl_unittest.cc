// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd ctrl: what each operation writes, refusals of bad
// arguments, and the requests sent to a fake area's ctrl/ files.
#include "live/ctrl.h"
#include "hmbtrace/status_testutil.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

namespace hmbtrace {
namespace {

TEST(Ctrl, MaskProducesOnlyTheListedIdsInEveryWord) {
  std::vector<CtrlRequest> r;
  std::string error;
  ASSERT_TRUE(StatusOk(CtrlRequests({"mask", "3", "70"}, 127, &r), &error)) << error;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].file, "event_mask");
  EXPECT_EQ(r[0].value, "0 0x0000000000000008");
  EXPECT_EQ(r[1].value, "64 0x0000000000000040");
}

TEST(Ctrl, OperationsAndTheirFiles) {
  std::vector<CtrlRequest> r;
  std::string error;
  ASSERT_TRUE(StatusOk(CtrlRequests({"stop"}, 255, &r), &error));
  EXPECT_EQ(r[0].file, "tracing");
  EXPECT_EQ(r[0].value, "stop");
  ASSERT_TRUE(StatusOk(CtrlRequests({"ring-mode", "overwrite"}, 255, &r), &error));
  EXPECT_EQ(r[0].file, "ring_mode");
  ASSERT_TRUE(StatusOk(CtrlRequests({"echo", "42", "3"}, 255, &r), &error));
  EXPECT_EQ(r[0].value, "42 3");
  ASSERT_TRUE(StatusOk(CtrlRequests({"unmask-all"}, 255, &r), &error));
  EXPECT_EQ(r.size(), 4u);
}

TEST(Ctrl, BadArgumentsAreRefusedWithTheReason) {
  std::vector<CtrlRequest> r;
  std::string error;
  EXPECT_FALSE(StatusOk(CtrlRequests({"mask", "0"}, 255, &r), &error));
  EXPECT_NE(error.find("not an event id"), std::string::npos) << error;
  EXPECT_FALSE(StatusOk(CtrlRequests({"mask", "300"}, 255, &r), &error));
  EXPECT_FALSE(StatusOk(CtrlRequests({"ring-mode", "fifo"}, 255, &r), &error));
  EXPECT_FALSE(StatusOk(CtrlRequests({"launch"}, 255, &r), &error));
  EXPECT_NE(error.find("not an operation"), std::string::npos) << error;
  EXPECT_FALSE(StatusOk(CtrlRequests({}, 255, &r), &error));
}

TEST(Ctrl, FreezeOperationsWriteTheFreezeFiles) {
  std::vector<CtrlRequest> r;
  std::string error;
  ASSERT_TRUE(StatusOk(CtrlRequests({"freeze-config", "5000", "64"}, 255, &r), &error));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].file, "freeze_config");
  EXPECT_EQ(r[0].value, "5000000 64");  // microseconds to the module's ns
  ASSERT_TRUE(StatusOk(CtrlRequests({"rearm"}, 255, &r), &error));
  EXPECT_EQ(r[0].file, "freeze");
  EXPECT_EQ(r[0].value, "rearm");
  ASSERT_TRUE(StatusOk(CtrlRequests({"freeze-now", "7"}, 255, &r), &error));
  EXPECT_EQ(r[0].value, "now 7");
  EXPECT_FALSE(StatusOk(CtrlRequests({"freeze-config", "1"}, 255, &r), &error));
  EXPECT_FALSE(StatusOk(CtrlRequests({"freeze-config", "1", "4294967296"}, 255, &r), &error));
  EXPECT_NE(error.find("freeze-config"), std::string::npos) << error;
  EXPECT_FALSE(StatusOk(CtrlRequests({"rearm", "now"}, 255, &r), &error));
}

TEST(Ctrl, ErrorsSayWhatToDo) {
  EXPECT_NE(CtrlErrorText(ENODEV).find("ivshmem=AREA+MAILBOX"), std::string::npos);
  EXPECT_NE(CtrlErrorText(ETIMEDOUT).find("ctrl/timeouts"), std::string::npos);
}

TEST(Ctrl, RequestsGoToTheAreasCtrlFiles) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("ctrl-test-" + std::to_string(getpid()));
  fs::create_directories(root / "0000:00:04.0" / "ctrl");
  for (const char* f : {"tracing", "ring_mode", "event_mask", "echo"})
    std::ofstream(root / "0000:00:04.0" / "ctrl" / f) << "unknown\n";
  EXPECT_EQ(RunCtrl(root.string(), "", {"stop"}), 0);
  std::ifstream in(root / "0000:00:04.0" / "ctrl" / "tracing");
  std::string v;
  std::getline(in, v);
  EXPECT_EQ(v, "stop");
  EXPECT_EQ(RunCtrl(root.string(), "", {"nonsense"}), 2);
  fs::remove_all(root);
  EXPECT_EQ(RunCtrl(root.string(), "", {"stop"}), 1) << "no area";
}

}  // namespace
}  // namespace hmbtrace
