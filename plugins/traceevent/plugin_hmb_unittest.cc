// SPDX-License-Identifier: GPL-2.0-only
//
// plugin_hmb.so as trace-cmd uses it: a tep_handle that knows the hmb
// events by the format texts of the real 6.1 guest kernel (tests/data/), the
// plugin loaded from its .so by name, and raw event records laid out per
// those formats. Each test checks the text a user sees in trace-cmd report.

#include <dlfcn.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "decode_test_util.h"
#include "hmb_events.h"  // the retime mark

namespace hmbtrace {
namespace {

using Bytes = std::vector<uint8_t>;

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The format file without its leading "#" comment lines (SPDX, origin).
std::string ReadFormat(const std::string& event) {
  std::ifstream in(std::string(Env("HMB_TESTDATA")) + "/" + event + ".format");
  std::string line, text;
  bool header = true;
  while (std::getline(in, line)) {
    if (header && line.rfind('#', 0) == 0)
      continue;
    header = false;
    text += line + "\n";
  }
  return text;
}

// The plugin .so, opened once; loader/unloader run once per tep_handle,
// as libtraceevent does for each handle it loads plugins into.
struct PluginSo {
  PluginSo() {
    handle = dlopen(Env("HMB_PLUGIN"), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      error = dlerror();
      return;
    }
    loader = reinterpret_cast<tep_plugin_load_func>(dlsym(handle, TEP_PLUGIN_LOADER_NAME));
    unloader = reinterpret_cast<tep_plugin_unload_func>(dlsym(handle, TEP_PLUGIN_UNLOADER_NAME));
  }
  ~PluginSo() {
    if (handle)
      dlclose(handle);
  }
  void* handle = nullptr;
  std::string error;
  tep_plugin_load_func loader = nullptr;
  tep_plugin_unload_func unloader = nullptr;
};

PluginSo& Plugin() {
  static PluginSo so;
  return so;
}

const Bytes kBuildIdA(20, 0xaa);
const Bytes kBuildIdB(20, 0xbb);

class PluginHmbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(Plugin().handle, nullptr) << "dlopen " << Env("HMB_PLUGIN") << ": " << Plugin().error;
    ASSERT_NE(Plugin().loader, nullptr) << "tep_plugin_loader not exported";
    ASSERT_NE(Plugin().unloader, nullptr) << "tep_plugin_unloader not exported";
    tep_ = tep_alloc();
    ASSERT_NE(tep_, nullptr);
    tep_set_file_bigendian(tep_, TEP_LITTLE_ENDIAN);
    tep_set_local_bigendian(tep_, TEP_LITTLE_ENDIAN);
    tep_set_long_size(tep_, 8);
    // trace-cmd loads plugins before it parses the event formats.
    ASSERT_EQ(Plugin().loader(tep_), 0);
    loaded_ = true;
    std::vector<const char*> names = {"hmb_record", "hmb_lost", "hmb_state", "hmb_dict"};
    if (WithClockEvent())
      names.push_back("hmb_clock");
    for (const char* name : names) {
      const std::string text = ReadFormat(name);
      ASSERT_FALSE(text.empty()) << "no testdata for " << name;
      ASSERT_EQ(tep_parse_event(tep_, text.data(), text.size(), "hmb"), TEP_ERRNO__SUCCESS) << name;
      events_[name] = tep_find_event_by_name(tep_, "hmb", name);
      ASSERT_NE(events_[name], nullptr) << name;
    }
  }

  // A trace of a module that publishes clock fits has the hmb_clock format.
  virtual bool WithClockEvent() const { return false; }

  void TearDown() override {
    if (loaded_)
      Plugin().unloader(tep_);
    if (tep_)
      tep_free(tep_);
  }

  // One raw event: fixed fields per the format, then the dynamic arrays
  // in the order given, each addressed by its __data_loc word.
  Bytes Build(const char* name,
              const std::map<std::string, uint64_t>& ints,
              const std::map<std::string, Bytes>& arrays = {}) {
    tep_event* ev = events_.at(name);
    size_t fixed = 0;
    for (tep_format_field* f = ev->format.fields; f; f = f->next)
      fixed = std::max<size_t>(fixed, f->offset + f->size);
    Bytes data(fixed, 0);
    Put(data, 0, 2, static_cast<uint64_t>(ev->id));  // common_type
    for (const auto& [field, value] : ints) {
      tep_format_field* f = tep_find_field(ev, field.c_str());
      EXPECT_NE(f, nullptr) << name << "." << field;
      if (f)
        Put(data, f->offset, f->size, value);
    }
    for (const auto& [field, bytes] : arrays) {
      tep_format_field* f = tep_find_field(ev, field.c_str());
      EXPECT_NE(f, nullptr) << name << "." << field;
      if (!f)
        continue;
      if (f->flags & TEP_FIELD_IS_DYNAMIC) {
        Put(data, f->offset, 4, (bytes.size() << 16) | data.size());
        data.insert(data.end(), bytes.begin(), bytes.end());
      } else {
        EXPECT_EQ(bytes.size(), static_cast<size_t>(f->size));
        std::memcpy(data.data() + f->offset, bytes.data(), std::min<size_t>(bytes.size(), f->size));
      }
    }
    return data;
  }

  static void Put(Bytes& data, size_t off, size_t size, uint64_t v) {
    for (size_t i = 0; i < size && off + i < data.size(); i++)
      data[off + i] = static_cast<uint8_t>(v >> (8 * i));
  }

  // The INFO column of trace-cmd report for one raw event.
  std::string Print(const Bytes& data, uint64_t ts = 0) {
    // Exactly sized, so that ASan sees any read past the record.
    std::vector<uint8_t>* copy = new std::vector<uint8_t>(data);
    tep_record rec{};
    rec.ts = ts;
    rec.data = copy->data();
    rec.size = static_cast<int>(copy->size());
    rec.record_size = rec.size;
    trace_seq s;
    trace_seq_init(&s);
    tep_print_event(tep_, &s, &rec, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&s);
    std::string out(s.buffer, s.len);
    trace_seq_destroy(&s);
    delete copy;
    return out;
  }

  Bytes Record(uint16_t dev, uint16_t core, uint64_t seq, uint16_t id, const Bytes& payload) {
    return Build("hmb_record",
                 {{"seq", seq},
                  {"fw_ts", 1000 + seq},
                  {"dev", dev},
                  {"core", core},
                  {"event_id", id},
                  {"len", payload.size()}},
                 {{"payload", payload}});
  }

  Bytes RecordAt(uint16_t dev,
                 uint16_t core,
                 uint64_t seq,
                 uint64_t fw_ts,
                 uint16_t id,
                 const Bytes& payload) {
    return Build("hmb_record",
                 {{"seq", seq},
                  {"fw_ts", fw_ts},
                  {"dev", dev},
                  {"core", core},
                  {"event_id", id},
                  {"len", payload.size()}},
                 {{"payload", payload}});
  }

  Bytes State(uint16_t dev, uint8_t state, uint32_t gen, const Bytes& build_id) {
    Bytes name(32, 0);
    std::memcpy(name.data(), "0000:00:02.0", 12);
    return Build("hmb_state",
                 {{"clock_hz", 1000000000},
                  {"producer_gen", gen},
                  {"dev", dev},
                  {"nr_cores", 4},
                  {"state", state}},
                 {{"build_id", build_id}, {"name", name}});
  }

  Bytes Chunk(uint16_t dev,
              uint32_t gen,
              uint32_t total_len,
              uint32_t off,
              const Bytes& chunk,
              const Bytes& build_id = kBuildIdA) {
    return Build("hmb_dict",
                 {{"producer_gen", gen}, {"total_len", total_len}, {"offset", off}, {"dev", dev}},
                 {{"build_id", build_id}, {"chunk", chunk}});
  }

  // Feeds `dict` as hmb_dict chunks of `step` bytes; returns the lines.
  std::vector<std::string> FeedDictionary(uint16_t dev,
                                          uint32_t gen,
                                          const Bytes& dict,
                                          size_t step,
                                          const Bytes& build_id = kBuildIdA) {
    std::vector<std::string> lines;
    for (size_t off = 0; off < dict.size(); off += step) {
      const size_t n = std::min(step, dict.size() - off);
      lines.push_back(
          Print(Chunk(dev, gen, static_cast<uint32_t>(dict.size()), static_cast<uint32_t>(off),
                      Bytes(dict.begin() + off, dict.begin() + off + n), build_id)));
    }
    return lines;
  }

  tep_handle* tep_ = nullptr;
  bool loaded_ = false;
  std::map<std::string, tep_event*> events_;
};

// nvme_cmd_begin of RealisticEvents(): qid=1 cid=42 read fua nsid=1
// slba=0x1000 nlb=8.
Bytes CmdBeginPayload() {
  Bytes p(28, 0);
  p[0] = 1;
  p[2] = 42;
  p[4] = 0x02;
  p[5] = 0x01;
  p[8] = 1;
  p[17] = 0x10;
  p[24] = 8;
  return p;
}

const Bytes kFreeBlocksPayload = {0x10, 0x27, 0, 0};  // free=10000

TEST(PluginHmbSoTest, ExportsOnlyTheLoaderAndUnloader) {
  ASSERT_NE(Plugin().handle, nullptr) << Plugin().error;
  EXPECT_NE(dlsym(Plugin().handle, "tep_plugin_loader"), nullptr);
  EXPECT_NE(dlsym(Plugin().handle, "tep_plugin_unloader"), nullptr);
  // The decode library inside stays private to the plugin.
  EXPECT_EQ(dlsym(Plugin().handle, "hmb_dict_parse"), nullptr);
}

TEST_F(PluginHmbTest, RecordBeforeAnyDictionaryPrintsIdAndHexLikeTheKernel) {
  EXPECT_EQ(Print(Record(0, 1, 7, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=0 core=1 seq=7 fw_ts=1007 event_id=3 len=4 "
            "payload=10 27 00 00");
}

TEST_F(PluginHmbTest, ChunkedDictionaryThenRecordsPrintDecodedFields) {
  const Bytes dict = test::ProduceDictionary(test::RealisticEvents());
  ASSERT_GT(dict.size(), 200u);
  const auto lines = FeedDictionary(0, 1, dict, 100);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "dev=0 producer_gen=1 build_id=" + std::string(40, 'a') +
                          " total_len=" + std::to_string(dict.size()) + " offset=0 len=100");
  for (size_t i = 0; i + 1 < lines.size(); i++)
    EXPECT_EQ(lines[i].find('['), std::string::npos) << lines[i];
  EXPECT_NE(lines.back().find("[dictionary complete: 5 events]"), std::string::npos)
      << lines.back();

  EXPECT_EQ(Print(Record(0, 2, 42, test::kCmdBegin, CmdBeginPayload())),
            "dev=0 core=2 seq=42 fw_ts=1042 nvme_cmd_begin: qid=1 cid=42 "
            "op=read flags=fua nsid=1 slba=0x1000 nlb=8");
  EXPECT_EQ(Print(Record(0, 0, 3, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=0 core=0 seq=3 fw_ts=1003 gc_free_blocks: free=10000");
  // An id the dictionary lacks: the decoder's own hex rendering, and
  // where its event may be (a firmware's printf sites kept in a file).
  EXPECT_EQ(Print(Record(0, 0, 4, 77, {0xde, 0xad})),
            "dev=0 core=0 seq=4 fw_ts=1004 unknown event 77 len=2 "
            "data=dead [not in the trace's dictionary: printf sites kept in a file? "
            "-O hmb:dictionary=FILE]");
  // Another dev has no dictionary yet.
  EXPECT_EQ(Print(Record(1, 0, 5, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=1 core=0 seq=5 fw_ts=1005 event_id=3 len=4 "
            "payload=10 27 00 00");
}

TEST_F(PluginHmbTest, ChunksFromTwoCpusInAnyOrderCompleteOnce) {
  const Bytes dict = test::ProduceDictionary(test::RealisticEvents());
  const uint32_t total = static_cast<uint32_t>(dict.size());
  const uint32_t half = total / 2;
  const Bytes first(dict.begin(), dict.begin() + half);
  const Bytes second(dict.begin() + half, dict.end());
  // CPU 1's second half, CPU 0's first half twice: complete at the third.
  EXPECT_EQ(Print(Chunk(0, 1, total, half, second)).find('['), std::string::npos);
  EXPECT_EQ(Print(Chunk(0, 1, total, half, second)).find('['), std::string::npos);
  EXPECT_NE(Print(Chunk(0, 1, total, 0, first)).find("[dictionary complete: 5 events]"),
            std::string::npos);
  // The periodic re-emission of a known dictionary says nothing more.
  EXPECT_EQ(Print(Chunk(0, 1, total, 0, first)).find('['), std::string::npos);
  EXPECT_EQ(Print(Chunk(0, 1, total, half, second)).find('['), std::string::npos);
  EXPECT_NE(Print(Record(0, 0, 1, test::kFreeBlocks, kFreeBlocksPayload))
                .find("gc_free_blocks: free=10000"),
            std::string::npos);
}

TEST_F(PluginHmbTest, ResetSwitchesToTheNewGenerationsDictionary) {
  const Bytes gen1 = test::ProduceDictionary(test::RealisticEvents());
  const Bytes gen2 = test::ProduceDictionary(test::RealisticEvents().first(3));
  Print(State(0, 0, 1, kBuildIdA));
  FeedDictionary(0, 1, gen1, 512);
  EXPECT_NE(Print(Record(0, 0, 1, test::kLog, {2, 'h', 'i'})).find("fw_log:"), std::string::npos);

  // Another CPU's late copy of generation 1 does not disturb generation 2.
  EXPECT_EQ(Print(Chunk(0, 2, static_cast<uint32_t>(gen2.size()), 0,
                        Bytes(gen2.begin(), gen2.begin() + 100)))
                .find('['),
            std::string::npos);
  EXPECT_EQ(Print(Chunk(0, 1, static_cast<uint32_t>(gen1.size()), 0,
                        Bytes(gen1.begin(), gen1.begin() + 100)))
                .find('['),
            std::string::npos);
  EXPECT_EQ(Print(State(0, 1, 2, kBuildIdA)),
            "dev=0 name=0000:00:02.0 state=reset producer_gen=2 build_id=" + std::string(40, 'a') +
                " nr_cores=4 clock_hz=1000000000");
  // Generation 2's dictionary is not complete: hex, not gen 1's names.
  EXPECT_EQ(Print(Record(0, 0, 0, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=0 core=0 seq=0 fw_ts=1000 event_id=3 len=4 "
            "payload=10 27 00 00");
  const auto lines = FeedDictionary(0, 2, gen2, 512);
  EXPECT_NE(lines.back().find("[dictionary complete: 3 events]"), std::string::npos)
      << lines.back();
  EXPECT_EQ(Print(Record(0, 0, 1, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=0 core=0 seq=1 fw_ts=1001 gc_free_blocks: free=10000");
  EXPECT_NE(Print(Record(0, 0, 2, test::kLog, {2, 'h', 'i'})).find("unknown event 4"),
            std::string::npos);
}

TEST_F(PluginHmbTest, BuildIdMismatchBetweenStateAndDictionaryIsReported) {
  const Bytes dict = test::ProduceDictionary(test::RealisticEvents());
  Print(State(0, 0, 1, kBuildIdA));
  const auto lines = FeedDictionary(0, 1, dict, 4096, kBuildIdB);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("build_id mismatch: hmb_state of dev 0 producer_gen 1 has " +
                          std::string(40, 'a') + "]"),
            std::string::npos)
      << lines[0];
  // And from the other side, when the state comes after the dictionary.
  EXPECT_NE(Print(State(0, 0, 1, kBuildIdA))
                .find("[build_id mismatch: dictionary of dev 0 producer_gen 1 has " +
                      std::string(40, 'b') + "]"),
            std::string::npos);
}

TEST_F(PluginHmbTest, HostileChunksAreReportedAndIgnored) {
  const Bytes dict = test::ProduceDictionary(test::RealisticEvents());
  const uint32_t total = static_cast<uint32_t>(dict.size());
  EXPECT_NE(Print(Chunk(0, 1, total, total + 1, {1, 2, 3}))
                .find("(3 bytes, total_len " + std::to_string(total) +
                      "): runs past total_len, dropped]"),
            std::string::npos);
  EXPECT_NE(Print(Chunk(0, 1, 0xfffffff0u, 0xffffffffu, {1, 2, 3}))
                .find("total_len 4294967280): total_len out of range, dropped]"),
            std::string::npos);
  EXPECT_NE(Print(Chunk(0, 1, 0, 0, {})).find("total_len 0): total_len out of range"),
            std::string::npos);
  // A chunk whose __data_loc points past the end of the record.
  Bytes bad = Chunk(0, 1, total, 0, {1, 2, 3, 4});
  tep_format_field* f = tep_find_field(events_.at("hmb_dict"), "chunk");
  ASSERT_NE(f, nullptr);
  Put(bad, f->offset, 4, (0xffffu << 16) | (bad.size() - 4));
  EXPECT_EQ(Print(bad), "[hmb: malformed hmb_dict, " + std::to_string(bad.size()) +
                            " bytes: chunk outside the record]");
  // A record cut short before its fixed fields end.
  Bytes cut = Record(0, 0, 1, test::kFreeBlocks, kFreeBlocksPayload);
  cut.resize(20);
  EXPECT_EQ(Print(cut),
            "[hmb: malformed hmb_record, 20 bytes: field fw_ts missing or out of the record]");

  // None of it disturbed the real dictionary.
  const auto lines = FeedDictionary(0, 1, dict, 256);
  EXPECT_NE(lines.back().find("[dictionary complete: 5 events]"), std::string::npos);
}

TEST_F(PluginHmbTest, MemoryHeldForACraftedTraceIsBounded) {
  // Partial 1 MiB dictionaries on many devs: eight are kept, then refused.
  const uint32_t mib = 1u << 20;
  for (uint16_t dev = 0; dev < 8; dev++)
    EXPECT_EQ(Print(Chunk(dev, 1, mib, 0, {1})).find('['), std::string::npos) << dev;
  EXPECT_NE(Print(Chunk(8, 1, mib, 0, {1}))
                .find(": over 8388608 bytes of dictionaries in progress, dropped]"),
            std::string::npos);
  for (uint16_t dev = 9; dev < 256; dev++)
    Print(Chunk(dev, 1, 16, 0, {1}));
  EXPECT_NE(Print(Chunk(300, 1, 16, 0, {1})).find(": more than 256 devs, dropped]"),
            std::string::npos);
  // A restart of dev 0's assembly frees its share for a real dictionary.
  const auto lines = FeedDictionary(0, 2, test::ProduceDictionary(test::RealisticEvents()), 4096);
  EXPECT_NE(lines.back().find("[dictionary complete: 5 events; restarting dictionary: had 1 of "
                              "1048576 bytes of producer_gen 1]"),
            std::string::npos)
      << lines.back();
}

TEST_F(PluginHmbTest, InvalidDictionaryIsReportedAndRecordsStayHex) {
  Bytes dict = test::ProduceDictionary(test::RealisticEvents());
  test::Put16(dict, sizeof(hmb_trace_dict_header), 0);  // event #0 id = 0
  const auto lines = FeedDictionary(0, 1, dict, 4096);
  EXPECT_NE(lines.back().find(
                "[dev 0 producer_gen 1: dictionary rejected: event #0 (id 0): id 0 is reserved]"),
            std::string::npos)
      << lines.back();
  EXPECT_NE(Print(Record(0, 0, 1, test::kFreeBlocks, kFreeBlocksPayload))
                .find("event_id=3 len=4 payload=10 27 00 00"),
            std::string::npos);
}

TEST_F(PluginHmbTest, HexOptionAppendsTheRawPayload) {
  FeedDictionary(0, 1, test::ProduceDictionary(test::RealisticEvents()), 4096);
  ASSERT_EQ(tep_plugin_add_option("hmb:hex", "1"), 0);
  const std::string with = Print(Record(0, 0, 1, test::kFreeBlocks, kFreeBlocksPayload));
  ASSERT_EQ(tep_plugin_add_option("hmb:hex", "0"), 0);
  EXPECT_EQ(with,
            "dev=0 core=0 seq=1 fw_ts=1001 gc_free_blocks: free=10000 "
            "payload=10270000");
  EXPECT_EQ(Print(Record(0, 0, 2, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=0 core=0 seq=2 fw_ts=1002 gc_free_blocks: free=10000");
}

// A trace whose formats include hmb_clock: records print their firmware
// time converted to the trace clock.
class PluginHmbClockTest : public PluginHmbTest {
 protected:
  bool WithClockEvent() const override { return true; }

  // `mult`: host ns per tick times 2^32 (1 ns by default); fw tick 1 s is
  // host `host_ref`; samples over fw [0.5 s, 1.5 s], 2 us, 1 ppm doubt.
  Bytes Clock(uint16_t dev,
              uint32_t gen,
              uint64_t host_ref,
              uint8_t flags = 0,
              uint64_t mult = 1ull << 32) {
    return Build("hmb_clock", {{"tick_ref", 1000000000},
                               {"host_ref", host_ref},
                               {"mult", mult},
                               {"slope_err", 4295},
                               {"tick_first", 500000000},
                               {"tick_last", 1500000000},
                               {"half_gap", 50000000},
                               {"err_ns", 2000},
                               {"rtt_min_ns", 3000},
                               {"samples", 11},
                               {"producer_gen", gen},
                               {"dev", dev},
                               {"flags", flags}});
  }
};

TEST_F(PluginHmbClockTest, ARecordBeforeAnyClockFitSaysItHasNoConvertedTime) {
  FeedDictionary(0, 1, test::ProduceDictionary(test::RealisticEvents()), 4096);
  EXPECT_EQ(Print(RecordAt(0, 0, 3, 1200000000, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=0 core=0 seq=3 fw_ts=1200000000 gc_free_blocks: free=10000 "
            "fw_time=? (no clock fit)");
  // Before the dictionary too: after the kernel's rendering.
  EXPECT_EQ(Print(RecordAt(1, 0, 3, 1200000000, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=1 core=0 seq=3 fw_ts=1200000000 event_id=3 len=4 payload=10 27 00 00 "
            "fw_time=? (no clock fit)");
}

TEST_F(PluginHmbClockTest, ClockLineIsReadableAndRecordsShowConvertedTimeAndBound) {
  Print(State(0, 0, 1, kBuildIdA));
  FeedDictionary(0, 1, test::ProduceDictionary(test::RealisticEvents()), 4096);
  // The firmware clock runs 20 ppm fast against the 1 GHz hmb_state states.
  EXPECT_EQ(Print(Clock(0, 1, 5000000000u, 0, 4294881399u)),
            "dev=0 producer_gen=1 offset=4.000020000 ns_per_tick=0.999980001 rate=+20.000ppm "
            "bound=3us slope_err=1.000ppm samples=11 window=1.000s rtt_min=3us");
  EXPECT_EQ(Print(Clock(0, 1, 5000000000u)),
            "dev=0 producer_gen=1 offset=4.000000000 ns_per_tick=1.000000000 rate=+0.000ppm "
            "bound=3us slope_err=1.000ppm samples=11 window=1.000s rtt_min=3us");
  EXPECT_EQ(Print(RecordAt(0, 2, 42, 1200000000, test::kCmdBegin, CmdBeginPayload())),
            "dev=0 core=2 seq=42 fw_ts=1200000000 nvme_cmd_begin: qid=1 cid=42 op=read "
            "flags=fua nsid=1 slba=0x1000 nlb=8 fw_time=5.200000000 ±3us");
  // Farther from the fit's samples, a wider bound.
  EXPECT_EQ(Print(RecordAt(0, 2, 43, 2500000000, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=0 core=2 seq=43 fw_ts=2500000000 gc_free_blocks: free=10000 "
            "fw_time=6.500000000 ±4us");
}

TEST_F(PluginHmbClockTest, AStaleFitIsUsedAndMarked) {
  Print(State(0, 0, 1, kBuildIdA));
  FeedDictionary(0, 1, test::ProduceDictionary(test::RealisticEvents()), 4096);
  const std::string line = Print(Clock(0, 1, 5000000000u, 1));
  EXPECT_EQ(line.substr(line.size() - 6), " stale") << line;
  EXPECT_EQ(Print(RecordAt(0, 0, 1, 1200000000, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=0 core=0 seq=1 fw_ts=1200000000 gc_free_blocks: free=10000 "
            "fw_time=5.200000000 ±3us (stale fit)");
}

TEST_F(PluginHmbClockTest, AResetSwitchesToTheNewGenerationsFit) {
  Print(State(0, 0, 1, kBuildIdA));
  FeedDictionary(0, 1, test::ProduceDictionary(test::RealisticEvents()), 4096);
  Print(Clock(0, 1, 5000000000u));
  EXPECT_NE(Print(RecordAt(0, 0, 9, 1200000000, test::kFreeBlocks, kFreeBlocksPayload))
                .find("fw_time=5.200000000 "),
            std::string::npos);
  // The firmware restarts: its clock too. Generation 1's fit must not
  // convert generation 2's records.
  Print(State(0, 1, 2, kBuildIdA));
  FeedDictionary(0, 2, test::ProduceDictionary(test::RealisticEvents()), 4096);
  EXPECT_EQ(Print(RecordAt(0, 0, 0, 1200000000, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=0 core=0 seq=0 fw_ts=1200000000 gc_free_blocks: free=10000 "
            "fw_time=? (no clock fit of producer_gen 2)");
  Print(Clock(0, 2, 9000000000u));
  EXPECT_EQ(Print(RecordAt(0, 0, 1, 1200000000, test::kFreeBlocks, kFreeBlocksPayload)),
            "dev=0 core=0 seq=1 fw_ts=1200000000 gc_free_blocks: free=10000 "
            "fw_time=9.200000000 ±3us");
}

TEST_F(PluginHmbClockTest, HostileAndMalformedClockEventsAreReported) {
  Print(State(0, 0, 1, kBuildIdA));
  Print(Clock(0, 1, 5000000000u));
  EXPECT_EQ(Print(Clock(0, 1, 5000000000u, 0, 0)),
            "dev=0 producer_gen=1 tick_ref=1000000000 host_ref=5000000000 mult=0 samples=11 "
            "[dev 0 producer_gen 1: clock fit refused: mult 0 out of range]");
  Bytes cut = Clock(0, 1, 1);
  cut.resize(70);
  EXPECT_EQ(Print(cut),
            "[hmb: malformed hmb_clock, 70 bytes: field rtt_min_ns missing or out of the record]");
  // The good fit still converts.
  EXPECT_NE(Print(RecordAt(0, 0, 1, 1200000000, test::kFreeBlocks, kFreeBlocksPayload))
                .find("fw_time=5.200000000 "),
            std::string::npos);
}

TEST_F(PluginHmbClockTest, FwTimeOptionTurnsTheConvertedTimeOff) {
  Print(State(0, 0, 1, kBuildIdA));
  FeedDictionary(0, 1, test::ProduceDictionary(test::RealisticEvents()), 4096);
  Print(Clock(0, 1, 5000000000u));
  ASSERT_EQ(tep_plugin_add_option("hmb:fw_time", "0"), 0);
  const std::string off =
      Print(RecordAt(0, 0, 1, 1200000000, test::kFreeBlocks, kFreeBlocksPayload));
  ASSERT_EQ(tep_plugin_add_option("hmb:fw_time", "1"), 0);
  EXPECT_EQ(off, "dev=0 core=0 seq=1 fw_ts=1200000000 gc_free_blocks: free=10000");
  // With hex: the time comes before the payload.
  ASSERT_EQ(tep_plugin_add_option("hmb:hex", "1"), 0);
  const std::string hex =
      Print(RecordAt(0, 0, 2, 1200000000, test::kFreeBlocks, kFreeBlocksPayload));
  ASSERT_EQ(tep_plugin_add_option("hmb:hex", "0"), 0);
  EXPECT_EQ(hex,
            "dev=0 core=0 seq=2 fw_ts=1200000000 gc_free_blocks: free=10000 "
            "fw_time=5.200000000 ±3us payload=10270000");
}

TEST_F(PluginHmbTest, LostEventKeepsTheKernelsPrint) {
  EXPECT_EQ(Print(Build("hmb_lost",
                        {{"count", 5}, {"at_seq", 9}, {"dev", 0}, {"core", 1}, {"reason", 1}})),
            "dev=0 core=1 count=5 reason=torn at_seq=9");
}

// A record of a capture retimed by hmbtrace-cmd retime: padded to 4 bytes
// and followed by the mark of decode/hmb_events.h.
Bytes Retimed(Bytes record, uint64_t drain_ts, uint32_t bound_ns, uint8_t flags, uint8_t miss) {
  record.resize((record.size() + 3) & ~size_t{3}, 0);
  for (int i = 0; i < 8; i++)
    record.push_back(static_cast<uint8_t>(drain_ts >> (8 * i)));
  for (int i = 0; i < 4; i++)
    record.push_back(static_cast<uint8_t>(bound_ns >> (8 * i)));
  record.push_back(flags);
  record.push_back(miss);
  record.push_back(HMB_RETIME_MAGIC & 0xff);
  record.push_back(HMB_RETIME_MAGIC >> 8);
  return record;
}

TEST_F(PluginHmbClockTest, ARetimedRecordIsNotConvertedAgainAndSaysItsDrainDelay) {
  Print(State(0, 0, 1, kBuildIdA));
  FeedDictionary(0, 1, test::ProduceDictionary(test::RealisticEvents()), 4096);
  Print(Clock(0, 1, 5000000000u));
  const Bytes rec = RecordAt(0, 2, 42, 1200000000, test::kFreeBlocks, kFreeBlocksPayload);
  // Its timestamp is its converted time: the fit here would say 5.2 s.
  EXPECT_EQ(Print(Retimed(rec, 5200800000u, 3000, HMB_RETIME_CONVERTED, 0), 5200000000u),
            "dev=0 core=2 seq=42 fw_ts=1200000000 gc_free_blocks: free=10000 "
            "retimed \u00b13us drain=+800us");
  EXPECT_EQ(Print(Retimed(rec, 5200800000u, 3000, HMB_RETIME_CONVERTED | HMB_RETIME_STALE, 0),
                  5200000000u),
            "dev=0 core=2 seq=42 fw_ts=1200000000 gc_free_blocks: free=10000 "
            "retimed \u00b13us drain=+800us (stale fit)");
  // Not converted by the retime (no fit then): at its drain time, said so.
  EXPECT_EQ(Print(Retimed(rec, 5300000000u, 0, 0, 2), 5300000000u),
            "dev=0 core=2 seq=42 fw_ts=1200000000 gc_free_blocks: free=10000 "
            "fw_time=? (no clock fit), at its drain time");
  // A mark with another magic is no mark: the record converts as before.
  Bytes other = Retimed(rec, 5200800000u, 3000, HMB_RETIME_CONVERTED, 0);
  other.back() ^= 0xff;
  EXPECT_NE(Print(other, 5200800000u).find("fw_time=5.200000000 \u00b13us"), std::string::npos);
}

}  // namespace
}  // namespace hmbtrace
