// SPDX-License-Identifier: GPL-2.0-only
#include "live/status.h"

#include <gtest/gtest.h>

#include <map>

#include "hmbtrace/status_testutil.h"
#include "live/fake_tree_testutil.h"

namespace hmbtrace {
namespace {

// Status of the fake trees only: never the machine's /sys.
StatusOptions OptionsFor(const FakeTrees& t) {
  StatusOptions o;
  o.sysfs_dir = t.sysfs();
  o.tracefs_dir = t.tracefs();
  return o;
}

TEST(Status, ReadsEveryCoreAndReasonOfAFakeDevice) {
  FakeTrees t;
  t.AddDevice("0000:00:04.0");
  std::vector<DeviceStatus> devs;
  std::string error;
  ASSERT_TRUE(StatusOk(ReadDevices(t.sysfs(), &devs), &error)) << error;
  ASSERT_EQ(devs.size(), 1u);
  const DeviceStatus& d = devs[0];
  EXPECT_EQ(d.name, "0000:00:04.0");
  EXPECT_EQ(d.state, "attached");
  EXPECT_EQ(d.Value("producer_gen"), 3u);
  EXPECT_EQ(d.dictionary_bytes, 4u);
  ASSERT_EQ(d.cores.size(), 4u);
  EXPECT_EQ(d.cores[3].delivered, 400u);
  EXPECT_EQ(d.cores[3].cpu, 1u);
  EXPECT_EQ(d.cores[1].lost_total(), 5u);
  ASSERT_EQ(d.cores[0].lost.size(), 4u);
  EXPECT_EQ(d.cores[0].lost[0].first, "overwritten");  // hmb_lost's reason order
  EXPECT_EQ(d.cores[0].lost[3].first, "reset");
  EXPECT_EQ(d.errors.at("bad_record"), 7u);
  EXPECT_TRUE(d.problems.empty());
}

TEST(Status, TextShowsDevicePerCoreLossesErrorsAndInstance) {
  FakeTrees t;
  t.AddDevice("0000:00:04.0");
  t.AddTracefs();
  t.AddInstance();
  std::vector<DeviceStatus> devs;
  std::string error;
  ASSERT_TRUE(StatusOk(ReadDevices(t.sysfs(), &devs), &error));
  const std::string text = StatusText(devs, ReadInstance(t.tracefs()));
  EXPECT_NE(text.find("device 0000:00:04.0 (dev 0): attached, producer_gen 3, 4 cores"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("total: 1000 delivered, 8 lost"), std::string::npos) << text;
  EXPECT_NE(text.find("errors: bad_record 7"), std::string::npos) << text;
  EXPECT_NE(text.find("tracing_on 1, buffer_size_kb 16384"), std::string::npos) << text;
  EXPECT_NE(text.find("hmb_dict off, hmb_lost off, hmb_record on, hmb_state on"), std::string::npos)
      << text;
}

TEST(Status, NotStartedAndGarbageAreToldApart) {
  FakeTrees t;
  t.AddDevice("0000:00:04.0");
  t.AddDevice("0000:00:05.0");
  const std::filesystem::path sys(t.sysfs());
  FakeTrees::Write(sys / "0000:00:04.0" / "state", "detached\n");  // an all-zero area
  FakeTrees::Write(sys / "0000:00:05.0" / "state", "broken\n");    // 0xff or random bytes
  FakeTrees::Write(sys / "0000:00:05.0" / "broken_reason", "bad_magic\n");
  t.AddTracefs();
  t.AddInstance();
  std::vector<DeviceStatus> devs;
  std::string error;
  ASSERT_TRUE(StatusOk(ReadDevices(t.sysfs(), &devs), &error));
  ASSERT_EQ(devs.size(), 2u);
  EXPECT_EQ(devs[1].broken_reason, "bad_magic");
  const std::string text = StatusText(devs, ReadInstance(t.tracefs()));
  EXPECT_NE(text.find("(dev 0): detached (not started: no trace area written yet)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(dev 0): broken (bad_magic: garbage: no trace area magic)"),
            std::string::npos)
      << text;
  const nlohmann::json j = StatusJson(devs, ReadInstance(t.tracefs()));
  EXPECT_EQ(j["devices"][0]["broken_reason"], "none");
  EXPECT_EQ(j["devices"][1]["state"], "broken");
  EXPECT_EQ(j["devices"][1]["broken_reason"], "bad_magic");
}

TEST(Status, DrainingControlChannelAndClockFitAreShown) {
  FakeTrees t;
  t.AddDevice("0000:00:04.0");
  t.AddDevice("0000:00:05.0");
  const std::filesystem::path a = std::filesystem::path(t.sysfs()) / "0000:00:04.0";
  const std::filesystem::path b = std::filesystem::path(t.sysfs()) / "0000:00:05.0";
  for (const auto& [f, v] :
       std::map<std::string, std::string>{{"consuming", "0"}, {"consume", "traced"},
                                          {"poll_interval_us", "200"},
                                          {"ctrl/available", "1"}, {"ctrl/requests", "812"},
                                          {"ctrl/timeouts", "2"}, {"ctrl/failed", "0"},
                                          {"ctrl/tracing", "started"},
                                          {"ctrl/ring_mode", "unknown"},
                                          {"ctrl/event_mask", "unknown"},
                                          {"clock/have_fit", "1"}, {"clock/err_ns", "41234"},
                                          {"clock/rtt_min_ns", "61000"}, {"clock/samples", "16"},
                                          {"clock/stale", "1"}, {"clock/bursts", "203"},
                                          {"clock/failed_bursts", "3"}})
    FakeTrees::Write(a / f, v + "\n");
  FakeTrees::Write(b / "consuming", "1\n");
  FakeTrees::Write(b / "consume", "always\n");
  FakeTrees::Write(b / "ctrl" / "available", "0\n");
  t.AddTracefs();
  t.AddInstance();
  std::vector<DeviceStatus> devs;
  std::string error;
  ASSERT_TRUE(StatusOk(ReadDevices(t.sysfs(), &devs), &error));
  const std::string text = StatusText(devs, ReadInstance(t.tracefs()));
  EXPECT_NE(text.find("draining: no: the firmware ring keeps its newest records"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("draining: yes (consume mode always)"), std::string::npos) << text;
  EXPECT_NE(text.find("requests 812, timeouts 2, refused 0; acknowledged: tracing started"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("clock fit: +-41.2 us at its samples, round trip >= 61.0 us, 16 samples, "
                      "STALE"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("control channel: not available"), std::string::npos) << text;
  const nlohmann::json j = StatusJson(devs, ReadInstance(t.tracefs()));
  EXPECT_EQ(j["devices"][0]["clock/err_ns"], 41234);
  EXPECT_EQ(j["devices"][0]["ctrl/tracing"], "started");
  EXPECT_EQ(j["devices"][1]["consume"], "always");
}

TEST(Status, JsonHasPerCoreDeliveredLostAndCpuStats) {
  FakeTrees t;
  t.AddDevice("0000:00:04.0");
  t.AddTracefs();
  t.AddInstance();
  std::vector<DeviceStatus> devs;
  std::string error;
  ASSERT_TRUE(StatusOk(ReadDevices(t.sysfs(), &devs), &error));
  const nlohmann::json j = StatusJson(devs, ReadInstance(t.tracefs()));
  const auto& d = j["devices"][0];
  EXPECT_EQ(d["name"], "0000:00:04.0");
  EXPECT_EQ(d["index"], 0);
  EXPECT_EQ(d["cores"][2]["delivered"], 300);
  EXPECT_EQ(d["cores"][2]["lost"]["torn"], 1);
  EXPECT_EQ(d["cores"][3]["lost"]["total"], 2);
  EXPECT_EQ(d["errors"]["bad_record"], 7);
  EXPECT_EQ(d["dictionary_bytes"], 4);
  const auto& i = j["instance"];
  EXPECT_EQ(i["exists"], true);
  EXPECT_EQ(i["tracing_on"], true);
  EXPECT_EQ(i["events"]["hmb_record"], true);
  EXPECT_EQ(i["events"]["hmb_lost"], false);
  EXPECT_EQ(i["cpus"][1]["dropped_events"], 1);
  EXPECT_EQ(i["cpus"][0]["entries"], 10);
}

TEST(Status, NotLoadedSaysHowToLoadTheModule) {
  FakeTrees t;
  t.AddTracefs();
  std::vector<DeviceStatus> devs;
  std::string error;
  EXPECT_FALSE(StatusOk(ReadDevices(t.sysfs(), &devs), &error));
  EXPECT_NE(error.find("hmb_trace.ko is not loaded (modprobe hmb_trace / insmod hmb_trace.ko)"),
            std::string::npos)
      << error;
  StatusOptions o = OptionsFor(t);
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunStatus(o), 1);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("insmod hmb_trace.ko"), std::string::npos);
}

TEST(Status, MissingInstanceIsReportedAndFails) {
  FakeTrees t;
  t.AddDevice("0000:00:04.0");
  t.AddTracefs();
  const InstanceStatus inst = ReadInstance(t.tracefs());
  EXPECT_TRUE(inst.tracefs_mounted);
  EXPECT_FALSE(inst.exists);
  StatusOptions o = OptionsFor(t);
  o.json = true;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunStatus(o), 1);
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(nlohmann::json::parse(out)["instance"]["exists"], false);
  EXPECT_NE(err.find("no trace instance " + t.instance()), std::string::npos) << err;
}

TEST(Status, NoTracefsSaysHowToMountIt) {
  FakeTrees t;
  t.AddDevice("0000:00:04.0");
  StatusOptions o = OptionsFor(t);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunStatus(o), 1);
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("tracefs is not mounted"), std::string::npos) << out;
  EXPECT_NE(err.find("mount -t tracefs nodev " + t.tracefs()), std::string::npos) << err;
}

TEST(Status, LoadedWithoutAreasSaysSo) {
  FakeTrees t;
  std::filesystem::create_directories(t.sysfs());
  t.AddTracefs();
  t.AddInstance();
  StatusOptions o = OptionsFor(t);
  testing::internal::CaptureStdout();
  EXPECT_EQ(RunStatus(o), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("no devices"), std::string::npos);
}

TEST(Status, GarbledFilesAreWarningsNotCrashes) {
  FakeTrees t;
  t.AddDevice("0000:00:04.0");
  FakeTrees::Write(std::filesystem::path(t.sysfs()) / "0000:00:04.0/delivered", "1 x 3\n");
  FakeTrees::Write(std::filesystem::path(t.sysfs()) / "0000:00:04.0/producer_gen", "-1\n");
  std::vector<DeviceStatus> devs;
  std::string error;
  ASSERT_TRUE(StatusOk(ReadDevices(t.sysfs(), &devs), &error));
  EXPECT_TRUE(devs[0].cores.empty());
  EXPECT_FALSE(devs[0].Value("producer_gen"));
  EXPECT_EQ(devs[0].problems.size(), 2u);
  EXPECT_NE(StatusText(devs, ReadInstance(t.tracefs())).find("warning: delivered unreadable"),
            std::string::npos);
}

}  // namespace
}  // namespace hmbtrace
