// SPDX-License-Identifier: GPL-2.0-only
#include "live/stream.h"

#include <cstring>
#include <sstream>

#include <gtest/gtest.h>

#include "decode_test_util.h"
#include "hmbtrace/status_testutil.h"
#include "live/fake_tree_testutil.h"

namespace hmbtrace {
namespace {

std::string Enable(const FakeTrees& t, const std::string& event) {
  return FakeTrees::Read(t.instance() + "/events/hmb/" + event + "/enable");
}

TEST(Stream, EnablesEveryHmbEventAndRestoresEachOnesState) {
  FakeTrees t;
  t.AddTracefs();
  t.AddInstance();  // hmb_record 1, hmb_lost 0, hmb_state 1, hmb_dict 0
  {
    EventEnableGuard guard;
    std::string error;
    ASSERT_TRUE(StatusOk(guard.EnableAll(t.instance()), &error)) << error;
    EXPECT_EQ(Enable(t, "hmb_lost"), "1");
    EXPECT_EQ(Enable(t, "hmb_dict"), "1");
    EXPECT_EQ(Enable(t, "hmb_record"), "1\n");  // left alone: was on
  }
  EXPECT_EQ(Enable(t, "hmb_lost"), "0");
  EXPECT_EQ(Enable(t, "hmb_dict"), "0");
  EXPECT_EQ(Enable(t, "hmb_record")[0], '1');
  EXPECT_EQ(Enable(t, "hmb_state")[0], '1');
}

TEST(Stream, RestoreIsIdempotent) {
  FakeTrees t;
  t.AddTracefs();
  t.AddInstance();
  EventEnableGuard guard;
  std::string error;
  ASSERT_TRUE(StatusOk(guard.EnableAll(t.instance()), &error));
  EXPECT_TRUE(StatusOk(guard.Restore(), &error));
  FakeTrees::Write(t.instance() + "/events/hmb/hmb_lost/enable", "1");
  EXPECT_TRUE(StatusOk(guard.Restore(), &error));  // nothing left to restore
  EXPECT_EQ(Enable(t, "hmb_lost"), "1");
}

TEST(Stream, NoHmbEventsMeansTheModuleIsNotLoaded) {
  FakeTrees t;
  t.AddTracefs();
  std::filesystem::create_directories(t.instance());
  EventEnableGuard guard;
  std::string error;
  EXPECT_FALSE(StatusOk(guard.EnableAll(t.instance()), &error));
  EXPECT_NE(error.find("hmb_trace.ko is not loaded"), std::string::npos) << error;
}

TEST(Stream, SysfsDictionaryDecodesRecordsBeforeAnyHmbDict) {
  const std::vector<uint8_t> dict = test::ProduceDictionary(test::RealisticEvents());
  ASSERT_FALSE(dict.empty());
  FakeTrees t;
  t.AddDevice("0000:00:04.0", std::string(dict.begin(), dict.end()));
  std::vector<DeviceStatus> devs;
  std::string error;
  ASSERT_TRUE(StatusOk(ReadDevices(t.sysfs(), &devs), &error)) << error;
  std::vector<std::vector<uint8_t>> bytes;
  const std::vector<CaptureEvent> seeds = DictionarySeeds(devs, &bytes);
  ASSERT_EQ(seeds.size(), 1u);
  EXPECT_EQ(seeds[0].producer_gen, 3u);
  EXPECT_EQ(seeds[0].build_id[1], 0x11);

  CaptureEvent rec;
  rec.kind = CaptureKind::kRecord;
  rec.cpu = 1;
  rec.core = 1;
  rec.seq = 42;
  rec.event_id = test::kFreeBlocks;
  const uint8_t payload[4] = {7, 0, 0, 0};
  rec.data = payload;
  rec.len = sizeof(payload);

  Reporter unseeded(ReportOptions{});
  EXPECT_NE(unseeded.Line(rec).find("(no dictionary yet)"), std::string::npos);
  Reporter reporter(ReportOptions{});
  EXPECT_TRUE(reporter.Seed(seeds[0]).completed);
  const std::string line = reporter.Line(rec);
  EXPECT_EQ(line.find("(no dictionary yet)"), std::string::npos) << line;
  EXPECT_EQ(line.find("(not in the dictionary)"), std::string::npos) << line;
  EXPECT_NE(line.find("core=1 seq=42"), std::string::npos) << line;
}

TEST(Stream, DeviceWithoutDictionaryIsNotSeeded) {
  FakeTrees t;
  t.AddDevice("0000:00:04.0", "");
  std::vector<DeviceStatus> devs;
  std::string error;
  ASSERT_TRUE(StatusOk(ReadDevices(t.sysfs(), &devs), &error));
  std::vector<std::vector<uint8_t>> bytes;
  EXPECT_TRUE(DictionarySeeds(devs, &bytes).empty());
}

TEST(Stream, SummaryCountsRecordsAndLostPerCore) {
  StreamTally tally;
  CaptureEvent ev;
  ev.kind = CaptureKind::kRecord;
  ev.core = 2;
  ev.cpu = 0;
  for (uint64_t s = 5; s < 8; s++) {
    ev.seq = s;
    tally.Add(ev);
  }
  CaptureEvent lost;
  lost.kind = CaptureKind::kLost;
  lost.core = 2;
  lost.count = 4;
  tally.Add(lost);
  CaptureEvent marker;
  marker.kind = CaptureKind::kMarker;
  marker.missed_events = 2;
  tally.Add(marker);
  const std::string s = tally.Summary(1.0);
  EXPECT_NE(s.find("3 records, 4 lost, 1 markers, 2 events dropped by ftrace"), std::string::npos)
      << s;
  EXPECT_NE(s.find("dev 0 core 2: 3 records (seq 5..7, cpu 0), 4 lost"), std::string::npos) << s;
}

// ---- a live stream on a fake instance: real formats, hand-made pages ----

// events/header_page and ftrace/print of a 6.1 x86-64 kernel.
constexpr const char kHeaderPage[] =
    "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
constexpr const char kPrintFormat[] =
    "name: print\nID: 5\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
    "\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:1;\n\n"
    "print fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n";
constexpr uint16_t kRecordId = 1362;  // tests/data/hmb_record.format
constexpr uint16_t kPrintId = 5;

void AddLiveFormats(const FakeTrees& t) {
  const std::filesystem::path events = std::filesystem::path(t.tracefs()) / "events";
  FakeTrees::Write(events / "header_page", kHeaderPage);
  FakeTrees::Write(events / "ftrace/print/format", kPrintFormat);
  FakeTrees::Write(events / "hmb/enable", "1\n");
  for (const char* e : {"hmb_record", "hmb_lost", "hmb_state", "hmb_dict"}) {
    // tests/data/, real formats of the 6.1 guest, minus comments.
    std::istringstream in(FakeTrees::Read(std::string(HMBTRACE_FORMATS_DIR) + "/" + e + ".format"));
    std::string text, line;
    while (std::getline(in, line))
      if (line.empty() || line[0] != '#')
        text += line + "\n";
    FakeTrees::Write(events / "hmb" / e / "format", text);
  }
}

template <typename T>
void Put(std::vector<uint8_t>& b, size_t off, T v) {
  if (b.size() < off + sizeof(T))
    b.resize(off + sizeof(T));
  std::memcpy(b.data() + off, &v, sizeof(T));
}

// One ring-buffer page as trace_pipe_raw returns it: 8-byte timestamp,
// 8-byte commit (data length), then events, each a 4-byte header
// (type_len = data length / 4, time delta) and the data.
class Page {
 public:
  explicit Page(uint64_t ts) : bytes_(4096, 0) { Put<uint64_t>(bytes_, 0, ts); }
  void Add(uint32_t delta, std::vector<uint8_t> data) {
    data.resize((data.size() + 3) & ~size_t{3});
    ASSERT_LE(data.size(), 112u);
    Put<uint32_t>(bytes_, pos_, static_cast<uint32_t>(data.size() / 4) | (delta << 5));
    std::memcpy(bytes_.data() + pos_ + 4, data.data(), data.size());
    pos_ += 4 + data.size();
  }
  std::string Bytes() {
    Put<uint64_t>(bytes_, 8, pos_ - 16);
    return std::string(bytes_.begin(), bytes_.end());
  }

 private:
  std::vector<uint8_t> bytes_;
  size_t pos_ = 16;
};

std::vector<uint8_t> RecordEvent(uint16_t core,
                                 uint64_t seq,
                                 uint16_t event_id,
                                 const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> d(36 + payload.size(), 0);
  Put<uint16_t>(d, 0, kRecordId);
  Put<uint64_t>(d, 8, seq);
  Put<uint64_t>(d, 16, 1000 + seq);
  Put<uint16_t>(d, 24, 0);
  Put<uint16_t>(d, 26, core);
  Put<uint16_t>(d, 28, event_id);
  Put<uint16_t>(d, 30, static_cast<uint16_t>(payload.size()));
  Put<uint32_t>(d, 32, static_cast<uint32_t>(payload.size() << 16 | 36));
  for (size_t k = 0; k < payload.size(); k++)
    d[36 + k] = payload[k];
  return d;
}

std::vector<uint8_t> MarkerEvent(const std::string& text) {
  std::vector<uint8_t> d(16 + text.size() + 1, 0);
  Put<uint16_t>(d, 0, kPrintId);
  for (size_t k = 0; k < text.size(); k++)
    d[16 + k] = static_cast<uint8_t>(text[k]);
  return d;
}

TEST(Stream, LiveInstanceLinesAreDecodedPerCpuInOrderAndEventsRestored) {
  const std::vector<uint8_t> dict = test::ProduceDictionary(test::RealisticEvents());
  FakeTrees t;
  t.AddDevice("0000:00:04.0", std::string(dict.begin(), dict.end()));
  t.AddTracefs();
  t.AddInstance();
  AddLiveFormats(t);
  const std::vector<uint8_t> payload = {7, 0, 0, 0};
  Page cpu0(5'000'000'000);
  cpu0.Add(10, RecordEvent(0, 0, test::kFreeBlocks, payload));
  cpu0.Add(10, RecordEvent(0, 1, test::kFreeBlocks, payload));
  cpu0.Add(10, MarkerEvent("HELLO live\n"));
  cpu0.Add(10, RecordEvent(2, 0, test::kFreeBlocks, payload));
  Page cpu1(5'000'000'100);
  cpu1.Add(0, RecordEvent(1, 0, test::kFreeBlocks, payload));
  FakeTrees::Write(t.instance() + "/per_cpu/cpu0/trace_pipe_raw", cpu0.Bytes());
  FakeTrees::Write(t.instance() + "/per_cpu/cpu1/trace_pipe_raw", cpu1.Bytes());

  StreamOptions o;
  o.duration = 0.1;
  o.sysfs_dir = t.sysfs();
  o.tracefs_dir = t.tracefs();
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunStream(o), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();

  const size_t a = out.find("[000] dev=0 core=0 seq=0 ");
  const size_t b = out.find("[000] dev=0 core=0 seq=1 ");
  const size_t m = out.find("[000] MARKER HELLO live\n");
  const size_t c = out.find("[000] dev=0 core=2 seq=0 ");
  const size_t d = out.find("[001] dev=0 core=1 seq=0 ");
  ASSERT_NE(a, std::string::npos) << out;
  ASSERT_NE(b, std::string::npos) << out;
  ASSERT_NE(m, std::string::npos) << out;
  ASSERT_NE(c, std::string::npos) << out;
  ASSERT_NE(d, std::string::npos) << out;
  EXPECT_TRUE(a < b && b < m && m < c) << out;  // one CPU's buffer in order
  EXPECT_EQ(out.find("(no dictionary yet)"), std::string::npos) << out;
  EXPECT_NE(out.find("5.000000 [000]"), std::string::npos) << out;  // page time + deltas
  EXPECT_NE(err.find("4 records, 0 lost, 1 markers"), std::string::npos) << err;
  EXPECT_NE(err.find("dev 0 core 1: 1 records (seq 0..0, cpu 1), 0 lost"), std::string::npos)
      << err;
  EXPECT_EQ(Enable(t, "hmb_lost"), "0");  // off before: put back
  EXPECT_EQ(Enable(t, "hmb_dict"), "0");
}

TEST(Stream, MissingInstanceIsAnErrorAndTouchesNothing) {
  FakeTrees t;
  t.AddDevice("0000:00:04.0");
  t.AddTracefs();
  StreamOptions o;
  o.duration = 0.1;
  o.sysfs_dir = t.sysfs();
  o.tracefs_dir = t.tracefs();
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunStream(o), 1);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("no trace instance"), std::string::npos);
}

TEST(Stream, ModuleNotLoadedIsAnErrorWithTheFix) {
  FakeTrees t;
  t.AddTracefs();
  t.AddInstance();
  StreamOptions o;
  o.sysfs_dir = t.sysfs();
  o.tracefs_dir = t.tracefs();
  testing::internal::CaptureStderr();
  EXPECT_EQ(RunStream(o), 1);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("insmod hmb_trace.ko"), std::string::npos);
}

}  // namespace
}  // namespace hmbtrace
