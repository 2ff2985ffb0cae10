// SPDX-License-Identifier: GPL-2.0-only
#include "export/export_proto.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <zlib.h>
#ifdef HMBTRACE_HAVE_ZSTD
#include <zstd.h>
#endif

#include "capture/count_records_testutil.h"
#include "capture/fixture_testutil.h"
#include "capture/nvme_host_c.h"
#include "causes/causes_events.h"
#include "causes/command_paths.h"
#include "causes/die_model.h"
#include "decode_test_util.h"
#include "dump/dump_writer_testutil.h"
#include "export/export.h"
#include "export/perfetto_fields.h"
#include "export/perfetto_trace.pb.h"
#include "hmbtrace/status_testutil.h"
#include "join/nvme_capture.h"
#include "stat/stat.h"

namespace hmbtrace {
namespace {

namespace pp = perfetto::protos;

// The bytes a ProtoTraceWriter writes, in memory.
class MemoryFile {
 public:
  MemoryFile() : f_(open_memstream(&data_, &size_)) {}
  ~MemoryFile() {
    if (f_)
      std::fclose(f_);
    std::free(data_);
  }
  std::FILE* get() { return f_; }
  std::string Close() {
    std::fclose(f_);
    f_ = nullptr;
    return std::string(data_, size_);
  }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
  std::FILE* f_;
};

// Rewrites every packet's timestamp as trace_processor reads it: on the
// packet's clock (its timestamp_clock_id, else its sequence's
// TracePacketDefaults, else BOOTTIME); a sequence-scoped clock declared
// incremental in a ClockSnapshot counts deltas from the previous packet
// on it (from the snapshot's value for the first), and the snapshot's
// BOOTTIME value maps it to BOOTTIME. Afterwards timestamp() is absolute
// BOOTTIME ns and timestamp_clock_id is cleared.
std::vector<std::string> ResolveTimestamps(pp::Trace* trace) {
  constexpr uint32_t kBoottime = pp::BUILTIN_CLOCK_BOOTTIME;
  struct SequenceClock {
    bool incremental = false;
    int64_t last = 0;    // its own value: the last packet's (incremental)
    int64_t offset = 0;  // BOOTTIME - its value, at the snapshot
  };
  struct Sequence {
    uint32_t default_clock = 0;
    std::map<uint32_t, SequenceClock> clocks;
  };
  std::map<uint32_t, Sequence> sequences;
  std::vector<std::string> problems;
  for (pp::TracePacket& p : *trace->mutable_packet()) {
    Sequence& seq = sequences[p.trusted_packet_sequence_id()];
    if (p.sequence_flags() & pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED)
      seq.default_clock = 0;
    if (p.has_trace_packet_defaults())
      seq.default_clock = p.trace_packet_defaults().timestamp_clock_id();
    if (p.has_clock_snapshot()) {
      std::optional<int64_t> boottime;
      for (const auto& c : p.clock_snapshot().clocks())
        if (c.clock_id() == kBoottime)
          boottime = static_cast<int64_t>(c.timestamp());
      for (const auto& c : p.clock_snapshot().clocks()) {
        if (c.clock_id() < 64 || c.clock_id() >= 128)
          continue;
        if (!boottime) {
          problems.push_back("a sequence clock snapshot without BOOTTIME");
          continue;
        }
        const int64_t v = static_cast<int64_t>(c.timestamp());
        seq.clocks[c.clock_id()] = {c.is_incremental(), v, *boottime - v};
      }
      continue;  // trace_processor reads nothing else of a snapshot packet
    }
    if (!p.has_timestamp())
      continue;
    const uint32_t clock = p.has_timestamp_clock_id() ? p.timestamp_clock_id()
                           : seq.default_clock        ? seq.default_clock
                                                      : kBoottime;
    int64_t ts = static_cast<int64_t>(p.timestamp());
    if (clock != kBoottime) {
      auto it = seq.clocks.find(clock);
      if (it == seq.clocks.end()) {
        problems.push_back("timestamp on clock " + std::to_string(clock) + " before its snapshot");
        continue;
      }
      SequenceClock& c = it->second;
      if (c.incremental) {
        c.last += ts;
        ts = c.last;
      }
      ts += c.offset;
    }
    p.set_timestamp(static_cast<uint64_t>(ts));
    p.clear_timestamp_clock_id();
  }
  return problems;
}

pp::Trace ParseRaw(const std::string& bytes) {
  pp::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  return trace;
}

// The packets of a --compress export, inflated: a Trace's bytes again.
std::string Inflate(const std::string& bytes) {
  std::string inflated;
  const pp::Trace trace = ParseRaw(bytes);
  for (const pp::TracePacket& p : trace.packet()) {
    EXPECT_TRUE(p.has_compressed_packets());
    const std::string& z = p.compressed_packets();
    std::string out(kCompressPiece * 2, '\0');
    uLongf len = out.size();
    EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &len,
                         reinterpret_cast<const Bytef*>(z.data()), z.size()),
              Z_OK);
    inflated.append(out.data(), len);
  }
  return inflated;
}

// Parsed, with absolute timestamps.
pp::Trace Parse(const std::string& bytes) {
  pp::Trace trace = ParseRaw(bytes);
  const std::vector<std::string> problems = ResolveTimestamps(&trace);
  EXPECT_TRUE(problems.empty()) << problems.front();
  return trace;
}

// Every pass, as `hmbtrace-cmd export` runs them (ExportCapture()): the
// file's bytes.
std::string ExportBytes(const std::string& path, bool compress, ExportSummary* summary) {
  DictionaryStore dicts;  // ExportCapture() collects the dictionaries into it
  std::string error;
  MemoryFile file;
  ProtoTraceWriter writer(file.get(), compress);
  EXPECT_TRUE(StatusOk(ExportCapture(path, &dicts, &writer, summary), &error)) << error;
  EXPECT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  return file.Close();
}

pp::Trace ExportFixture(const std::string& path,
                        ExportCounts* counts = nullptr,
                        bool compress = false,
                        std::string* raw = nullptr) {
  ExportSummary summary;
  const std::string bytes = ExportBytes(path, compress, &summary);
  if (counts)
    *counts = summary.counts;
  if (raw)
    *raw = bytes;
  return Parse(bytes);
}

// The trace's tables, resolved as trace_processor would.
struct Decoded {
  std::map<uint64_t, pp::TrackDescriptor> tracks;
  std::map<uint64_t, std::string> names, arg_names, arg_values;
  std::vector<std::string> problems;
};

Decoded Decode(const pp::Trace& trace) {
  Decoded d;
  bool first = true;
  for (const pp::TracePacket& p : trace.packet()) {
    if (p.trusted_packet_sequence_id() != kExportSequenceId)
      d.problems.push_back("packet without the sequence id");
    if (first && !(p.sequence_flags() & pp::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED))
      d.problems.push_back("the first packet does not clear the incremental state");
    first = false;
    if (p.has_track_descriptor()) {
      const uint64_t uuid = p.track_descriptor().uuid();
      if (uuid == 0 || !d.tracks.emplace(uuid, p.track_descriptor()).second)
        d.problems.push_back("track uuid " + std::to_string(uuid) + " is 0 or not unique");
    }
    for (const auto& n : p.interned_data().event_names())
      if (!d.names.emplace(n.iid(), n.name()).second)
        d.problems.push_back("event name iid defined twice");
    for (const auto& n : p.interned_data().debug_annotation_names())
      if (!d.arg_names.emplace(n.iid(), n.name()).second)
        d.problems.push_back("annotation name iid defined twice");
    for (const auto& n : p.interned_data().debug_annotation_string_values())
      if (!d.arg_values.emplace(n.iid(), n.str()).second)
        d.problems.push_back("annotation value iid defined twice");
  }
  return d;
}

std::string ArgName(const Decoded& d, const pp::DebugAnnotation& a) {
  if (a.has_name())
    return a.name();
  auto it = d.arg_names.find(a.name_iid());
  return it == d.arg_names.end() ? "" : it->second;
}

const pp::DebugAnnotation* FindArg(const Decoded& d, const pp::TrackEvent& e, const std::string& n) {
  for (const auto& a : e.debug_annotations())
    if (ArgName(d, a) == n)
      return &a;
  return nullptr;
}

std::string EventName(const Decoded& d, const pp::TrackEvent& e) {
  if (e.has_name())
    return e.name();
  auto it = d.names.find(e.name_iid());
  return it == d.names.end() ? "" : it->second;
}

// "core K" and "core K <counter>" tracks -> K; others -> -1.
int CoreOf(const pp::TrackDescriptor& t) {
  if (t.name().rfind("core ", 0) != 0)
    return -1;
  return std::atoi(t.name().c_str() + 5);
}

TEST(ExportProto, TracksAreUniqueAndEveryParentExists) {
  const pp::Trace trace = ExportFixture(FixturePath());
  const Decoded d = Decode(trace);
  EXPECT_TRUE(d.problems.empty()) << d.problems.front();
  ASSERT_GT(d.tracks.size(), 4u);
  std::set<std::string> group_names;
  std::map<int, int> core_tracks;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_parent_uuid())
      EXPECT_TRUE(d.tracks.count(t.parent_uuid())) << t.name() << ": parent missing";
    else
      group_names.insert(t.name());
    if (!t.has_counter() && CoreOf(t) >= 0)
      core_tracks[CoreOf(t)]++;
  }
  EXPECT_TRUE(group_names.count("hmb dev 0 (0000:00:02.0)"));
  ASSERT_EQ(core_tracks.size(), 4u);  // a main track per core, and span tracks
}

TEST(ExportProto, EveryTrackIsInTimeOrderAndItsSlicesNestAndBalance) {
  const pp::Trace trace = ExportFixture(FixturePath());
  const Decoded d = Decode(trace);
  std::map<uint64_t, uint64_t> last;
  std::map<uint64_t, int> depth;
  uint64_t begins = 0, events = 0;
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    events++;
    const pp::TrackEvent& e = p.track_event();
    ASSERT_TRUE(d.tracks.count(e.track_uuid())) << "event on an undeclared track";
    EXPECT_GE(p.timestamp(), last[e.track_uuid()]) << "track " << e.track_uuid();
    last[e.track_uuid()] = p.timestamp();
    int& dep = depth[e.track_uuid()];
    if (e.type() == pp::TrackEvent::TYPE_SLICE_BEGIN) {
      dep++;
      begins++;
      EXPECT_LE(dep, 1) << "overlapping slices on track " << e.track_uuid();
    } else if (e.type() == pp::TrackEvent::TYPE_SLICE_END) {
      dep--;
      EXPECT_GE(dep, 0) << "end without begin on track " << e.track_uuid();
    }
  }
  EXPECT_GT(begins, 100u);
  EXPECT_GT(events, 1000u);
  for (const auto& [track, dep] : depth)
    EXPECT_EQ(dep, 0) << "track " << track;
}

TEST(ExportProto, EveryFirmwareRecordAppearsOnceOnItsCore) {
  uint64_t independent[8] = {};
  ASSERT_EQ(count_hmb_records_per_core(FixturePath().c_str(), independent, 8), 1035);
  // stat's per-core counts, from the same capture.
  DictionaryStore stat_dicts;
  std::string error;
  ASSERT_TRUE(StatusOk(CollectDictionaries(FixturePath(), &stat_dicts), &error)) << error;
  StatCollector stat(&stat_dicts);
  ASSERT_TRUE(StatusOk(ReadCapture(FixturePath(),
                                   [&stat](const CaptureEvent& ev) {
                                     stat.Add(ev);
                                     return true;
                                   }),
                       &error));
  stat.Finish();
  const nlohmann::json stat_doc = stat.Json("f");

  const pp::Trace trace = ExportFixture(FixturePath());
  const Decoded d = Decode(trace);
  std::map<int, uint64_t> per_core;
  // Per track, whether each open slice's BEGIN has a seq.
  std::map<uint64_t, std::vector<bool>> open;
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    const pp::TrackEvent& e = p.track_event();
    const int core = CoreOf(d.tracks.at(e.track_uuid()));
    // A record is one event with its seq (a slice's begin, an end, an
    // instant), or one counter sample on its core's counter track; an
    // END with no arguments closing a BEGIN with a seq is a record whose
    // arguments the writer merged into that BEGIN.
    const bool seq = FindArg(d, e, "seq") != nullptr;
    std::vector<bool>& stack = open[e.track_uuid()];
    bool merged = false;
    if (e.type() == pp::TrackEvent::TYPE_SLICE_BEGIN) {
      stack.push_back(seq);
    } else if (e.type() == pp::TrackEvent::TYPE_SLICE_END && !stack.empty()) {
      merged = stack.back() && e.debug_annotations_size() == 0;
      stack.pop_back();
    }
    if (seq || merged || (e.type() == pp::TrackEvent::TYPE_COUNTER && core >= 0))
      per_core[core]++;
  }
  ASSERT_EQ(per_core.size(), 4u);
  for (int k = 0; k < 4; k++) {
    EXPECT_EQ(per_core[k], independent[k]) << "core " << k;
    EXPECT_EQ(per_core[k], stat_doc["devices"][0]["cores"][k]["records"].get<uint64_t>())
        << "core " << k;
  }
}

TEST(ExportProto, InternedIdsResolveAndArgumentsCarryTheDecodedFields) {
  const pp::Trace trace = ExportFixture(FixturePath());
  const Decoded d = Decode(trace);
  EXPECT_TRUE(d.problems.empty());
  std::set<std::string> names;
  bool saw_opc = false;
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    const pp::TrackEvent& e = p.track_event();
    if (e.has_name_iid()) {
      ASSERT_TRUE(d.names.count(e.name_iid())) << "name iid " << e.name_iid();
      names.insert(d.names.at(e.name_iid()));
    }
    for (const auto& a : e.debug_annotations()) {
      if (a.has_name_iid()) {
        ASSERT_TRUE(d.arg_names.count(a.name_iid())) << "arg name iid " << a.name_iid();
      }
      if (a.has_string_value_iid()) {
        ASSERT_TRUE(d.arg_values.count(a.string_value_iid()))
            << "arg value iid " << a.string_value_iid();
      }
    }
    if (EventName(d, e) == "cmd_fetch") {
      const pp::DebugAnnotation* opc = FindArg(d, e, "opcode");
      ASSERT_NE(opc, nullptr);
      ASSERT_TRUE(opc->has_string_value_iid());  // an enum, by name
      const std::string& v = d.arg_values.at(opc->string_value_iid());
      EXPECT_FALSE(v.empty());
      EXPECT_NE(FindArg(d, e, "cid"), nullptr);
      saw_opc = true;
    }
  }
  EXPECT_TRUE(saw_opc);
  EXPECT_TRUE(names.count("cmd_fetch"));
  EXPECT_TRUE(names.count("nand_read"));
}

TEST(ExportProto, LossesResetsAndMarkersAreOnTheTimelineAndCounted) {
  DictionaryStore dicts;
  MemoryFile file;
  ProtoTraceWriter writer(file.get());
  ExportModel model(&dicts, &writer);
  CaptureEvent lost;
  lost.kind = CaptureKind::kLost;
  lost.ts = 2000;
  lost.core = 3;
  lost.count = 7;
  lost.at_seq = 99;
  lost.reason = 1;
  model.Add(lost);
  CaptureEvent reset;
  reset.kind = CaptureKind::kState;
  reset.ts = 2500;
  reset.state = kStateReset;
  reset.producer_gen = 2;
  model.Add(reset);
  CaptureEvent marker;
  marker.kind = CaptureKind::kMarker;
  marker.ts = 3500;
  const std::string text = "phase 2\n";
  marker.data = std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  model.Add(marker);
  model.Finish();
  std::string error;
  ASSERT_TRUE(StatusOk(writer.Finish(), &error));
  EXPECT_EQ(model.counts().lost_records, 7u);
  EXPECT_EQ(model.counts().resets, 1u);
  EXPECT_EQ(model.counts().markers, 1u);
  const pp::Trace trace = Parse(file.Close());
  const Decoded d = Decode(trace);
  bool saw_lost = false, saw_total = false, saw_reset = false, saw_marker = false;
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    const pp::TrackEvent& e = p.track_event();
    const pp::TrackDescriptor& t = d.tracks.at(e.track_uuid());
    const std::string name = EventName(d, e);
    if (name == "lost") {
      saw_lost = true;
      EXPECT_EQ(t.name(), "core 3");
      EXPECT_EQ(p.timestamp(), 2000u);
      EXPECT_EQ(FindArg(d, e, "count")->uint_value(), 7u);
      EXPECT_EQ(d.arg_values.at(FindArg(d, e, "reason")->string_value_iid()), "torn");
    }
    if (e.type() == pp::TrackEvent::TYPE_COUNTER && t.name() == "lost records") {
      saw_total = true;
      EXPECT_EQ(e.counter_value(), 7);
      EXPECT_EQ(t.counter().unit(), pp::CounterDescriptor::UNIT_COUNT);
    }
    if (name == "state reset") {
      saw_reset = true;
      EXPECT_EQ(t.name(), "state");
    }
    if (name == "phase 2") {
      saw_marker = true;
      EXPECT_EQ(t.name(), "trace_marker");
      EXPECT_EQ(p.timestamp(), 3500u);
    }
  }
  EXPECT_TRUE(saw_lost);
  EXPECT_TRUE(saw_total);
  EXPECT_TRUE(saw_reset);
  EXPECT_TRUE(saw_marker);
}

TEST(ExportProto, TraceMarkerLinesOfACaptureAreInstants) {
  ExportCounts counts;
  const pp::Trace trace = ExportFixture(MarkersFixturePath(), &counts);
  const Decoded d = Decode(trace);
  EXPECT_EQ(counts.markers, 1u);
  int markers = 0;
  for (const pp::TracePacket& p : trace.packet())
    if (p.has_track_event() && EventName(d, p.track_event()) == "HMBMARK n=39") {
      markers++;
      EXPECT_EQ(d.tracks.at(p.track_event().track_uuid()).name(), "trace_marker");
    }
  EXPECT_EQ(markers, 1);
}

TEST(ExportProto, RecordsAreAtTheirConvertedTime) {
  const pp::Trace trace = ExportFixture(ClockFixturePath());
  const Decoded d = Decode(trace);
  std::map<uint64_t, uint64_t> ts_by_fw_ts;
  for (const pp::TracePacket& p : trace.packet())
    if (p.has_track_event())
      if (const pp::DebugAnnotation* a = FindArg(d, p.track_event(), "fw_ts"))
        ts_by_fw_ts[a->uint_value()] = p.timestamp();
  ASSERT_EQ(ts_by_fw_ts.size(), 11u);
  // Happened at 1.0017 s, drained at 1.0025 s (see make_clock_capture.py).
  EXPECT_EQ(ts_by_fw_ts.at(9001700086u), 1001700000u);
  // Before any fit: at its ftrace time.
  EXPECT_EQ(ts_by_fw_ts.at(8998999950u), 1000100000u);
}

TEST(ExportProto, CompressedPacketsInflateToTheSamePackets) {
  std::string plain_bytes, compressed_bytes;
  const pp::Trace plain = ExportFixture(FixturePath(), nullptr, false, &plain_bytes);
  const pp::Trace compressed = ExportFixture(FixturePath(), nullptr, true, &compressed_bytes);
  EXPECT_LT(compressed_bytes.size() * 2, plain_bytes.size());
  std::string inflated;
  for (const pp::TracePacket& p : compressed.packet()) {
    ASSERT_TRUE(p.has_compressed_packets());
    const std::string& z = p.compressed_packets();
    std::string out(kCompressPiece * 2, '\0');
    uLongf len = out.size();
    ASSERT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &len,
                         reinterpret_cast<const Bytef*>(z.data()), z.size()),
              Z_OK);
    inflated.append(out.data(), len);
  }
  EXPECT_EQ(inflated, plain_bytes);
  EXPECT_GT(plain.packet_size(), 1000);
}

// export --zstd: the same packets, in zstd_compressed_packets pieces.
TEST(ExportProto, ZstdPacketsDecompressToTheSamePackets) {
  if (!ProtoTraceWriter::HasZstd())
    GTEST_SKIP() << "built without libzstd";
#ifdef HMBTRACE_HAVE_ZSTD
  for (const std::string& path : {FixturePath(), CmdJoinFixturePath()}) {
    ExportSummary summary;
    const std::string plain_bytes = ExportBytes(path, false, &summary);
    DictionaryStore dicts;
    std::string error;
    MemoryFile file;
    ProtoTraceWriter writer(file.get(), true, ProtoTraceWriter::Codec::kZstd);
    ASSERT_TRUE(StatusOk(ExportCapture(path, &dicts, &writer, &summary), &error)) << error;
    ASSERT_TRUE(StatusOk(writer.Finish(), &error)) << error;
    const std::string zstd_bytes = file.Close();
    EXPECT_LT(zstd_bytes.size() * 2, plain_bytes.size()) << path;
    std::string out;
    const pp::Trace trace = ParseRaw(zstd_bytes);
    ASSERT_GT(trace.packet_size(), 0);
    for (const pp::TracePacket& p : trace.packet()) {
      ASSERT_TRUE(p.has_zstd_compressed_packets());
      EXPECT_FALSE(p.has_compressed_packets());
      const std::string& z = p.zstd_compressed_packets();
      std::string piece(kCompressPiece * 2, '\0');
      const size_t len = ZSTD_decompress(piece.data(), piece.size(), z.data(), z.size());
      ASSERT_FALSE(ZSTD_isError(len)) << ZSTD_getErrorName(len);
      out.append(piece.data(), len);
    }
    EXPECT_EQ(out, plain_bytes) << path;
  }
#endif
}

TEST(ExportProto, BeginsWithoutEndsEndUnfinishedInsteadOfGrowingTracksForEver) {
  // The fixture's device state and dictionary, then 3000 cmd_fetch with
  // distinct cids and no cmd_complete, all on core 0.
  DictionaryStore dicts;
  std::string error;
  ASSERT_TRUE(StatusOk(CollectDictionaries(FixturePath(), &dicts), &error)) << error;
  MemoryFile file;
  ProtoTraceWriter writer(file.get());
  ExportModel model(&dicts, &writer);
  CaptureEvent first_record;
  ASSERT_TRUE(StatusOk(ReadCapture(FixturePath(),
                                   [&](const CaptureEvent& ev) {
                                     if (ev.kind == CaptureKind::kState ||
                                         ev.kind == CaptureKind::kDict)
                                       model.Add(ev);
                                     if (ev.kind == CaptureKind::kRecord && first_record.ts == 0)
                                       first_record = ev;
                                     return true;
                                   }),
                       &error))
      << error;
  const Dictionary* dict = dicts.For(first_record.dev, first_record.cpu);
  ASSERT_NE(dict, nullptr);
  const EventDesc* fetch = nullptr;
  for (const EventDesc& d : dict->events())
    if (d.name == "cmd_fetch")
      fetch = &d;
  ASSERT_NE(fetch, nullptr);
  ASSERT_NE(fetch->key_field, HMB_TRACE_NO_FIELD);
  const FieldDesc& key = fetch->fields[fetch->key_field];
  size_t len = 0;
  for (const FieldDesc& f : fetch->fields)
    len = std::max<size_t>(len, f.offset + f.size);
  const int kBegins = 3000;
  for (int i = 0; i < kBegins; i++) {
    std::vector<uint8_t> payload(len);
    for (size_t b = 0; b < key.size && b < 8; b++)
      payload[key.offset + b] = static_cast<uint8_t>(static_cast<uint64_t>(i) >> (8 * b));
    CaptureEvent ev = first_record;
    ev.core = 0;
    ev.seq = static_cast<uint64_t>(i);
    ev.ts = first_record.ts + static_cast<uint64_t>(i) * 1000;
    ev.event_id = fetch->id;
    ev.data = payload;
    model.Add(ev);
  }
  model.Finish();
  ASSERT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  EXPECT_EQ(model.counts().evicted, static_cast<uint64_t>(kBegins) - kMaxLanes);
  EXPECT_EQ(model.counts().unfinished, static_cast<uint64_t>(kBegins));

  const pp::Trace trace = Parse(file.Close());
  const Decoded d = Decode(trace);
  size_t core0_tracks = 0;
  for (const auto& [uuid, t] : d.tracks)
    core0_tracks += t.name() == "core 0";
  EXPECT_EQ(core0_tracks, kMaxLanes + 1);  // the main track and the span tracks
  std::map<uint64_t, uint64_t> last;
  std::map<uint64_t, int> depth;
  uint64_t begins = 0;
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    const pp::TrackEvent& e = p.track_event();
    EXPECT_GE(p.timestamp(), last[e.track_uuid()]);
    last[e.track_uuid()] = p.timestamp();
    int& dep = depth[e.track_uuid()];
    if (e.type() == pp::TrackEvent::TYPE_SLICE_BEGIN) {
      begins++;
      EXPECT_LE(++dep, 1);
    } else if (e.type() == pp::TrackEvent::TYPE_SLICE_END) {
      EXPECT_GE(--dep, 0);
    }
  }
  EXPECT_EQ(begins, static_cast<uint64_t>(kBegins));
  for (const auto& [track, dep] : depth)
    EXPECT_EQ(dep, 0) << "track " << track;
}

// Passes the stream on to a writer and keeps, per track, the type and
// time of each event as ExportModel gave them.
class RecordingSink : public ExportSink {
 public:
  explicit RecordingSink(ExportSink* next) : next_(next) {}
  void Track(const ExportTrack& t) override { next_->Track(t); }
  void Event(const ExportEvent& e) override {
    events[e.track].push_back({static_cast<int>(e.type), e.ts});
    next_->Event(e);
  }
  void Ftrace(const ExportFtraceEvent& e) override { next_->Ftrace(e); }
  void Clock(const ExportClock& c) override { next_->Clock(c); }
  Status Finish() override { return next_->Finish(); }

  std::map<uint64_t, std::vector<std::pair<int, uint64_t>>> events;

 private:
  ExportSink* next_;
};

int ModelType(pp::TrackEvent::Type t) {
  switch (t) {
    case pp::TrackEvent::TYPE_SLICE_BEGIN:
      return static_cast<int>(ExportEvent::Type::kBegin);
    case pp::TrackEvent::TYPE_SLICE_END:
      return static_cast<int>(ExportEvent::Type::kEnd);
    case pp::TrackEvent::TYPE_COUNTER:
      return static_cast<int>(ExportEvent::Type::kCounter);
    default:
      return static_cast<int>(ExportEvent::Type::kInstant);
  }
}

TEST(ExportProto, TimestampsAreDeltasOnTheIncrementalClockAndResolveToTheModelsTimes) {
  DictionaryStore dicts;  // ExportCapture() collects the dictionaries into it
  std::string error;
  MemoryFile file;
  ProtoTraceWriter writer(file.get());
  RecordingSink sink(&writer);
  ExportSummary summary;
  ASSERT_TRUE(StatusOk(ExportCapture(FixturePath(), &dicts, &sink, &summary), &error)) << error;
  ASSERT_TRUE(StatusOk(sink.Finish(), &error)) << error;
  const std::string bytes = file.Close();

  const pp::Trace raw = ParseRaw(bytes);
  ASSERT_GT(raw.packet_size(), 1000);
  const pp::TracePacket& first = raw.packet(0);
  EXPECT_EQ(first.trace_packet_defaults().timestamp_clock_id(), kIncrementalClock);
  ASSERT_EQ(first.clock_snapshot().clocks_size(), 2);
  EXPECT_EQ(first.clock_snapshot().clocks(0).clock_id(), uint32_t{pp::BUILTIN_CLOCK_BOOTTIME});
  EXPECT_EQ(first.clock_snapshot().clocks(1).clock_id(), kIncrementalClock);
  EXPECT_TRUE(first.clock_snapshot().clocks(1).is_incremental());

  const pp::Trace resolved = Parse(bytes);
  ASSERT_EQ(resolved.packet_size(), raw.packet_size());
  uint64_t deltas = 0, absolute = 0, delta_equals_time = 0;
  std::map<uint64_t, std::vector<std::pair<int, uint64_t>>> written;
  for (int i = 0; i < raw.packet_size(); i++) {
    const pp::TracePacket& p = raw.packet(i);
    if (!p.has_track_event())
      continue;
    if (p.has_timestamp_clock_id()) {
      EXPECT_EQ(p.timestamp_clock_id(), uint32_t{pp::BUILTIN_CLOCK_BOOTTIME});
      EXPECT_EQ(p.timestamp(), resolved.packet(i).timestamp());
      absolute++;
    } else {
      deltas++;
      delta_equals_time += p.timestamp() == resolved.packet(i).timestamp();
    }
    const pp::TrackEvent& e = resolved.packet(i).track_event();
    written[e.track_uuid()].push_back({ModelType(e.type()), resolved.packet(i).timestamp()});
  }
  EXPECT_EQ(absolute, writer.late());
  EXPECT_GT(deltas, 10 * absolute);
  EXPECT_EQ(delta_equals_time, 1u);  // only the first, a delta from 0
  // Every track's events, in its order, at the times the model gave.
  EXPECT_EQ(written, sink.events);
}

TEST(ExportProto, EventsLeaveTheWindowInTimeOrderAndALateOneKeepsItsAbsoluteTime) {
  MemoryFile file;
  ProtoTraceWriter writer(file.get());
  writer.Track({ExportTrack::Kind::kSlices, 1, 0, "a", 0, "", 1});
  writer.Track({ExportTrack::Kind::kSlices, 2, 0, "b", 1, "", 1});
  auto instant = [&writer](uint64_t track, uint64_t ts) {
    ExportEvent e;
    e.track = track;
    e.ts = ts;
    e.name = "x";
    writer.Event(e);
  };
  const uint64_t t0 = 100'000'000;
  instant(1, t0 + 10);
  instant(2, t0 + 5);  // earlier, given later: still in the window
  instant(1, t0 + kReorderWindowNs + 20);  // pushes both out, stays
  instant(2, t0 - 50'000'000);             // older than what is written
  instant(2, t0 + kReorderWindowNs + 30);
  std::string error;
  ASSERT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  EXPECT_EQ(writer.late(), 1u);
  const std::string bytes = file.Close();
  const pp::Trace raw = ParseRaw(bytes);
  const pp::Trace resolved = Parse(bytes);
  std::vector<uint64_t> raw_ts, times;
  std::vector<bool> on_base_clock;
  for (int i = 0; i < raw.packet_size(); i++) {
    if (!raw.packet(i).has_track_event())
      continue;
    raw_ts.push_back(raw.packet(i).timestamp());
    on_base_clock.push_back(raw.packet(i).has_timestamp_clock_id());
    times.push_back(resolved.packet(i).timestamp());
  }
  // In file order: the late one as soon as it comes, the rest by time.
  EXPECT_EQ(times, (std::vector<uint64_t>{t0 + 5, t0 + 10, t0 - 50'000'000,
                                          t0 + kReorderWindowNs + 20, t0 + kReorderWindowNs + 30}));
  // Deltas from the previous packet on the incremental clock (the late
  // one is not on it).
  EXPECT_EQ(raw_ts, (std::vector<uint64_t>{t0 + 5, 5, t0 - 50'000'000, kReorderWindowNs + 10, 10}));
  EXPECT_EQ(on_base_clock, (std::vector<bool>{false, false, true, false, false}));
}

// An argument as a string: its name, '=' and its value (numbers in
// decimal, with their kind).
using ArgText = std::pair<std::string, std::string>;

ArgText ModelArg(const ExportArg& a) {
  switch (a.type) {
    case ExportArg::Type::kUint:
      return {std::string(a.name), "u" + std::to_string(a.u)};
    case ExportArg::Type::kInt:
      return {std::string(a.name), "i" + std::to_string(a.i)};
    case ExportArg::Type::kBool:
      return {std::string(a.name), a.u ? "true" : "false"};
    case ExportArg::Type::kString:
      break;
  }
  return {std::string(a.name), "s" + std::string(a.text())};
}

ArgText FileArg(const Decoded& d, const pp::DebugAnnotation& a) {
  const std::string name = ArgName(d, a);
  if (a.has_uint_value())
    return {name, "u" + std::to_string(a.uint_value())};
  if (a.has_int_value())
    return {name, "i" + std::to_string(a.int_value())};
  if (a.has_bool_value())
    return {name, a.bool_value() ? "true" : "false"};
  if (a.has_string_value_iid())
    return {name, "s" + d.arg_values.at(a.string_value_iid())};
  return {name, "s" + a.string_value()};
}

// trace_processor's slices and instants of a stream of (track, type,
// args) in order: an END's arguments merge into its track's innermost
// open slice, a key keeping the place of its first insertion and taking
// the last value (ArgsInserter::AddArg(), kAddOrUpdate).
struct MergedArgs {
  std::vector<std::vector<ArgText>> done;
  std::map<uint64_t, std::vector<std::vector<ArgText>>> open;

  void Add(uint64_t track, int type, const std::vector<ArgText>& args) {
    auto merge = [](std::vector<ArgText>* into, const std::vector<ArgText>& more) {
      for (const ArgText& a : more) {
        auto it = std::find_if(into->begin(), into->end(),
                               [&](const ArgText& b) { return b.first == a.first; });
        if (it == into->end())
          into->push_back(a);
        else
          it->second = a.second;
      }
    };
    std::vector<std::vector<ArgText>>& stack = open[track];
    if (type == static_cast<int>(ExportEvent::Type::kBegin)) {
      stack.emplace_back();
      merge(&stack.back(), args);
    } else if (type == static_cast<int>(ExportEvent::Type::kEnd)) {
      if (stack.empty())
        return;  // ignored
      merge(&stack.back(), args);
      done.push_back(std::move(stack.back()));
      stack.pop_back();
    } else {
      done.emplace_back();
      merge(&done.back(), args);
    }
  }
};

// Keeps the model's events' arguments as trace_processor would merge them.
class MergingSink : public ExportSink {
 public:
  explicit MergingSink(ExportSink* next) : next_(next) {}
  void Track(const ExportTrack& t) override { next_->Track(t); }
  void Event(const ExportEvent& e) override {
    std::vector<ArgText> args;
    for (const ExportArg& a : e.args)
      args.push_back(ModelArg(a));
    merged.Add(e.track, static_cast<int>(e.type), args);
    next_->Event(e);
  }
  void Ftrace(const ExportFtraceEvent& e) override { next_->Ftrace(e); }
  void Clock(const ExportClock& c) override { next_->Clock(c); }
  Status Finish() override { return next_->Finish(); }
  MergedArgs merged;

 private:
  ExportSink* next_;
};

MergedArgs FileMergedArgs(const pp::Trace& trace) {
  const Decoded d = Decode(trace);
  MergedArgs merged;
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    const pp::TrackEvent& e = p.track_event();
    std::vector<ArgText> args;
    for (const auto& a : e.debug_annotations())
      args.push_back(FileArg(d, a));
    merged.Add(e.track_uuid(), ModelType(e.type()), args);
  }
  return merged;
}

// Events with unsigned arguments, through a MergingSink into a writer.
class ArgEvents {
 public:
  using T = ExportEvent::Type;
  ArgEvents() : writer_(file_.get()), sink_(&writer_) {
    for (uint64_t t = 1; t <= 3; t++)
      writer_.Track({ExportTrack::Kind::kSlices, t, 0, "t", static_cast<int32_t>(t), "", 1});
  }
  void Add(uint64_t track, T type, uint64_t ts,
           std::vector<std::pair<std::string_view, uint64_t>> args,
           std::vector<uint64_t> flows = {}, std::vector<uint64_t> terminating = {}) {
    ExportEvent e;
    e.type = type;
    e.track = track;
    e.ts = ts;
    e.name = type == T::kEnd ? "" : "x";
    for (const auto& [name, v] : args) {
      ExportArg& a = e.args.emplace_back();
      a.name = name;
      a.u = v;
    }
    e.flow_ids = std::move(flows);
    e.terminating_flow_ids = std::move(terminating);
    sink_.Event(e);
  }
  // Finishes the file: its events' argument names, in file order.
  std::vector<std::vector<std::string>> Finish() {
    std::string error;
    EXPECT_TRUE(StatusOk(writer_.Finish(), &error)) << error;
    trace_ = Parse(file_.Close());
    const Decoded d = Decode(trace_);
    std::vector<std::vector<std::string>> names;
    for (const pp::TracePacket& p : trace_.packet()) {
      if (!p.has_track_event())
        continue;
      names.emplace_back();
      for (const auto& a : p.track_event().debug_annotations())
        names.back().push_back(ArgName(d, a));
    }
    return names;
  }
  const ProtoTraceWriter& writer() const { return writer_; }
  const MergedArgs& model_merged() const { return sink_.merged; }
  const pp::Trace& trace() const { return trace_; }

 private:
  MemoryFile file_;
  ProtoTraceWriter writer_;
  MergingSink sink_;
  pp::Trace trace_;
};

TEST(ExportProto, AnEndWhoseBeginIsWrittenLeavesOutOnlyTheArgumentsItsSliceAlreadyHas) {
  ArgEvents ev;
  using T = ArgEvents::T;
  constexpr uint64_t W = kReorderWindowNs;
  ev.Add(1, T::kBegin, 10, {{"seq", 1}, {"cid", 7}, {"qid", 2}});
  ev.Add(2, T::kBegin, 11, {{"cid", 7}});
  ev.Add(1, T::kBegin, 12, {{"cid", 8}});  // nested in the first
  ev.Add(3, T::kInstant, W + 12, {});      // the three BEGINs leave the window
  ev.Add(1, T::kEnd, W + 13, {{"seq", 2}, {"cid", 8}});  // closes the nested one
  ev.Add(2, T::kEnd, W + 14, {{"cid", 9}});              // another value: kept
  // The outer slice: cid 7 again (left out), qid twice (the last wins: kept).
  ev.Add(1, T::kEnd, W + 15, {{"seq", 3}, {"cid", 7}, {"qid", 2}, {"qid", 4}});
  ev.Add(1, T::kEnd, W + 16, {{"cid", 7}});  // no slice open: trace_processor ignores it
  ev.Add(1, T::kInstant, W + 17, {{"cid", 7}});
  EXPECT_EQ(ev.Finish(), (std::vector<std::vector<std::string>>{{"seq", "cid", "qid"},
                                                                {"cid"},
                                                                {"cid"},
                                                                {},
                                                                {"seq"},
                                                                {"cid"},
                                                                {"seq", "qid", "qid"},
                                                                {"cid"},
                                                                {"cid"}}));
  EXPECT_EQ(ev.writer().args_folded(), 2u);
  EXPECT_EQ(ev.writer().slices_merged(), 0u);
  const MergedArgs merged = FileMergedArgs(ev.trace());
  EXPECT_EQ(merged.done, ev.model_merged().done);
  EXPECT_EQ(merged.done.size(), 5u);
}

TEST(ExportProto, AnEndWhoseBeginStillWaitsGivesItItsArguments) {
  ArgEvents ev;
  using T = ArgEvents::T;
  ev.Add(1, T::kBegin, 10, {{"seq", 1}, {"cid", 7}, {"qid", 2}});
  ev.Add(2, T::kBegin, 11, {{"cid", 7}});
  ev.Add(1, T::kBegin, 12, {{"cid", 8}}, {5});  // nested in the first; a flow
  // Closes the nested one: its seq joins the BEGIN's, after cid; the
  // END keeps its flow.
  ev.Add(1, T::kEnd, 13, {{"seq", 2}, {"cid", 8}}, {}, {6});
  ev.Add(2, T::kEnd, 14, {{"cid", 9}});  // the BEGIN takes cid 9
  // The outer slice: qid twice (the last wins): not merged, cid left out.
  ev.Add(1, T::kEnd, 15, {{"seq", 3}, {"cid", 7}, {"qid", 2}, {"qid", 4}});
  ev.Add(1, T::kEnd, 16, {{"cid", 7}});  // no slice open: trace_processor ignores it
  ev.Add(1, T::kInstant, 17, {{"cid", 7}});
  ev.Add(2, T::kBegin, 18, {{"cid", 1}, {"cid", 2}});  // a name twice: not merged
  ev.Add(2, T::kEnd, 19, {{"cid", 3}});
  ev.Add(3, T::kBegin, 20, {{"a", 1}});  // no name in common: not merged
  ev.Add(3, T::kEnd, 21, {{"b", 2}});
  EXPECT_EQ(ev.Finish(), (std::vector<std::vector<std::string>>{{"seq", "cid", "qid"},
                                                                {"cid"},
                                                                {"cid", "seq"},
                                                                {},
                                                                {},
                                                                {"seq", "qid", "qid"},
                                                                {"cid"},
                                                                {"cid"},
                                                                {"cid", "cid"},
                                                                {"cid"},
                                                                {"a"},
                                                                {"b"}}));
  EXPECT_EQ(ev.writer().slices_merged(), 2u);
  EXPECT_EQ(ev.writer().args_folded(), 1u);
  const MergedArgs merged = FileMergedArgs(ev.trace());
  EXPECT_EQ(merged.done, ev.model_merged().done);
  EXPECT_EQ(merged.done.size(), 6u);
  // Flows stay on their events.
  std::vector<std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> flows;
  for (const pp::TracePacket& p : ev.trace().packet())
    if (p.has_track_event() && p.track_event().track_uuid() == 1 && p.timestamp() <= 13)
      flows.push_back({{p.track_event().flow_ids().begin(), p.track_event().flow_ids().end()},
                       {p.track_event().terminating_flow_ids().begin(),
                        p.track_event().terminating_flow_ids().end()}});
  EXPECT_EQ(flows, (std::vector<std::pair<std::vector<uint64_t>, std::vector<uint64_t>>>{
                       {{}, {}}, {{5}, {}}, {{}, {6}}}));
}

TEST(ExportProto, SlicesCarryTheArgumentsOfTheirBeginAndEndAsTraceProcessorMergesThem) {
  uint64_t merged_slices = 0;
  for (const std::string& path :
       {FixturePath(), MarkersFixturePath(), ClockFixturePath(), CmdJoinFixturePath()}) {
    DictionaryStore dicts;
    std::string error;
    MemoryFile file;
    ProtoTraceWriter writer(file.get());
    MergingSink sink(&writer);
    ExportSummary summary;
    ASSERT_TRUE(StatusOk(ExportCapture(path, &dicts, &sink, &summary), &error)) << error;
    ASSERT_TRUE(StatusOk(sink.Finish(), &error)) << error;
    MergedArgs merged = FileMergedArgs(Parse(file.Close()));
    EXPECT_GT(merged.done.size(), 10u) << path;
    merged_slices += writer.slices_merged();
    // The file's order is by time, the model's by track.
    std::sort(merged.done.begin(), merged.done.end());
    std::sort(sink.merged.done.begin(), sink.merged.done.end());
    EXPECT_EQ(merged.done, sink.merged.done) << path;
  }
  EXPECT_GT(merged_slices, 400u);  // the command slices, most of them
}

TEST(ExportProto, FormatComesFromTheOptionOrTheExtension) {
  EXPECT_EQ(ChooseExportFormat("auto", "a.pftrace"), ExportFormat::kProto);
  EXPECT_EQ(ChooseExportFormat("auto", "a.json"), ExportFormat::kJson);
  EXPECT_EQ(ChooseExportFormat("", "a.pb"), ExportFormat::kProto);
  EXPECT_EQ(ChooseExportFormat("json", "a.pftrace"), ExportFormat::kJson);
  EXPECT_EQ(ChooseExportFormat("proto", "a.json"), ExportFormat::kProto);
  EXPECT_EQ(ChooseExportFormat("xml", "a.json"), std::nullopt);
}

}  // namespace
// --- The whole story: host commands, flows, other ftrace events, clock ---

// What the export writes of a capture, through every pass (ExportCapture).
pp::Trace ExportAll(const std::string& path, ExportSummary* summary = nullptr) {
  ExportSummary s;
  const std::string bytes = ExportBytes(path, false, &s);
  if (summary)
    *summary = s;
  return Parse(bytes);
}

// The host's commands as the nvme driver's events say, read on their own
// (nvme_host_c.h), in setup order: the truth the export is checked against.
struct HostTruth {
  uint16_t qid = 0, cid = 0;
  uint64_t setup = 0;
  std::optional<uint64_t> complete;
};
std::vector<HostTruth> ReadHostTruth(const std::string& path, uint64_t* events = nullptr) {
  struct Walk {
    std::vector<HostTruth> out;
    std::map<std::pair<uint16_t, uint16_t>, size_t> open;
    uint64_t events = 0;
  } w;
  uint64_t malformed = 0;
  char err[256] = "";
  EXPECT_EQ(hmb_nvme_host_read(
                path.c_str(),
                [](const hmb_nvme_host_event* ev, void* data) {
                  Walk* w = static_cast<Walk*>(data);
                  w->events++;
                  if (ev->kind == HMB_NVME_SETUP) {
                    w->out.push_back({ev->qid, ev->cid, ev->ts, std::nullopt});
                    w->open[{ev->qid, ev->cid}] = w->out.size() - 1;
                  } else if (auto it = w->open.find({ev->qid, ev->cid}); it != w->open.end()) {
                    w->out[it->second].complete = ev->ts;
                    w->open.erase(it);
                  }
                  return 0;
                },
                &w, &malformed, nullptr, err, sizeof(err)),
            0)
      << err;
  EXPECT_EQ(malformed, 0u);
  if (events)
    *events = w.events;
  return w.out;
}

// A host command as the export shows it on its queue's track.
struct HostSlice {
  std::string group, track;
  uint64_t begin = 0;
  std::optional<uint64_t> end;  // none: an instant
  uint64_t cid = 0;
  std::string fw_fetch;
  std::vector<uint64_t> flows;
};
std::vector<HostSlice> HostSlices(const pp::Trace& trace, const Decoded& d) {
  std::vector<HostSlice> out;
  std::map<uint64_t, size_t> open;  // track -> its open slice
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    const pp::TrackEvent& e = p.track_event();
    const pp::TrackDescriptor& t = d.tracks.at(e.track_uuid());
    if (t.name().rfind("qid ", 0) != 0)
      continue;
    if (e.type() == pp::TrackEvent::TYPE_SLICE_END) {
      auto it = open.find(e.track_uuid());
      if (it == open.end()) {
        ADD_FAILURE() << "end without begin on " << t.name();
        continue;
      }
      out[it->second].end = p.timestamp();
      open.erase(it);
      continue;
    }
    HostSlice s;
    s.group = d.tracks.at(t.parent_uuid()).name();
    s.track = t.name();
    s.begin = p.timestamp();
    if (const pp::DebugAnnotation* a = FindArg(d, e, "cid"))
      s.cid = a->uint_value();
    if (const pp::DebugAnnotation* a = FindArg(d, e, "fw_fetch"))
      s.fw_fetch = d.arg_values.at(a->string_value_iid());
    s.flows.assign(e.flow_ids().begin(), e.flow_ids().end());
    if (e.type() == pp::TrackEvent::TYPE_SLICE_BEGIN) {
      EXPECT_FALSE(open.count(e.track_uuid())) << "overlapping slices on " << t.name();
      open[e.track_uuid()] = out.size();
    }
    out.push_back(s);
  }
  EXPECT_TRUE(open.empty());
  return out;
}

TEST(ExportProto, EveryHostCommandIsASliceOnItsQueuesTrack) {
  ExportSummary summary;
  const pp::Trace trace = ExportAll(CmdJoinFixturePath(), &summary);
  const Decoded d = Decode(trace);
  EXPECT_TRUE(d.problems.empty()) << d.problems.front();
  const std::vector<HostTruth> truth = ReadHostTruth(CmdJoinFixturePath());
  const std::vector<HostSlice> slices = HostSlices(trace, d);
  ASSERT_EQ(truth.size(), 24u);
  ASSERT_EQ(slices.size(), truth.size());
  EXPECT_EQ(summary.counts.host_commands, 24u);
  EXPECT_EQ(summary.counts.host_incomplete, 1u);
  // Each command once, on "qid N" of "nvme0", from its setup to its
  // completion (an instant at its setup without one).
  std::multiset<std::tuple<std::string, uint64_t, uint64_t, uint64_t>> want, got;
  for (const HostTruth& h : truth)
    want.insert({"qid " + std::to_string(h.qid), h.cid, h.setup, h.complete.value_or(0)});
  for (const HostSlice& s : slices) {
    EXPECT_EQ(s.group, "nvme0");
    got.insert({s.track, s.cid, s.begin, s.end.value_or(0)});
  }
  EXPECT_EQ(got, want);
  // Commands overlap on a queue (depth > 1): the queue needs more than one
  // same-named track, and each of them still nests (checked above).
  std::map<std::string, int> tracks_per_queue;
  for (const auto& [uuid, t] : d.tracks)
    if (t.name().rfind("qid ", 0) == 0)
      tracks_per_queue[t.name()]++;
  EXPECT_EQ(tracks_per_queue.size(), 4u);
  EXPECT_GT(tracks_per_queue["qid 1"], 2);
}

TEST(ExportProto, EachJoinedCommandHasOneFlowToTheFetchThatServedIt) {
  ExportSummary summary;
  const pp::Trace trace = ExportAll(CmdJoinFixturePath(), &summary);
  const Decoded d = Decode(trace);
  // Every event that names a flow id, by id.
  struct End {
    std::string track, name;
    uint64_t qid = 0, cid = 0;
    bool terminating = false;
  };
  std::map<uint64_t, std::vector<End>> ends;
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    const pp::TrackEvent& e = p.track_event();
    End end;
    end.track = d.tracks.at(e.track_uuid()).name();
    end.name = EventName(d, e);
    if (const pp::DebugAnnotation* a = FindArg(d, e, "qid"))
      end.qid = a->uint_value();
    if (const pp::DebugAnnotation* a = FindArg(d, e, "cid"))
      end.cid = a->uint_value();
    for (uint64_t id : e.flow_ids())
      ends[id].push_back(end);
    end.terminating = true;
    for (uint64_t id : e.terminating_flow_ids())
      ends[id].push_back(end);
  }
  const std::vector<HostTruth> truth = ReadHostTruth(CmdJoinFixturePath());
  const std::vector<HostSlice> slices = HostSlices(trace, d);
  ASSERT_EQ(slices.size(), 24u);
  uint64_t joined = 0;
  for (size_t i = 0; i < slices.size(); i++) {
    const HostSlice& s = slices[i];
    if (s.fw_fetch != "joined") {
      EXPECT_TRUE(s.flows.empty()) << "a flow for an unjoined command";
      continue;
    }
    joined++;
    ASSERT_EQ(s.flows.size(), 1u) << s.track << " cid " << s.cid;
    const std::vector<End>& e = ends[s.flows[0]];
    // Both ends: the host slice, and the firmware's cmd_fetch of the same
    // (qid, cid) on a core's track, where the flow terminates.
    ASSERT_EQ(e.size(), 2u) << "flow " << s.flows[0];
    const End& fw = e[0].track.rfind("core ", 0) == 0 ? e[0] : e[1];
    EXPECT_EQ(fw.name, "cmd_fetch");
    EXPECT_EQ(fw.track.rfind("core ", 0), 0u);
    EXPECT_TRUE(fw.terminating);
    EXPECT_EQ("qid " + std::to_string(fw.qid), s.track);
    EXPECT_EQ(fw.cid, s.cid);
  }
  EXPECT_EQ(joined, 22u);
  EXPECT_EQ(summary.counts.flows, 22u);
  EXPECT_EQ(ends.size(), 22u);  // no flow id anywhere else
}

TEST(ExportProto, AnUnjoinedCommandCarriesWhyAndNoFlow) {
  const pp::Trace trace = ExportAll(CmdJoinFixturePath());
  const Decoded d = Decode(trace);
  const std::vector<HostTruth> truth = ReadHostTruth(CmdJoinFixturePath());
  const std::vector<HostSlice> slices = HostSlices(trace, d);
  ASSERT_EQ(truth.size(), 24u);
  // Commands 5 and 17 (setup order) have no firmware record.
  for (size_t i : {size_t{5}, size_t{17}}) {
    auto it = std::find_if(slices.begin(), slices.end(), [&](const HostSlice& s) {
      return s.begin == truth[i].setup && s.cid == truth[i].cid;
    });
    ASSERT_NE(it, slices.end()) << "command " << i;
    EXPECT_EQ(it->fw_fetch, "no firmware record");
    EXPECT_TRUE(it->flows.empty());
  }
}

TEST(ExportProto, BundlesHoldTheMarkersAndNvmeEventsAtTheirTimestamps) {
  ExportSummary summary;
  const pp::Trace trace = ExportAll(CmdJoinFixturePath(), &summary);
  std::vector<std::tuple<uint64_t, uint32_t, std::string>> prints;
  std::multiset<std::tuple<std::string, uint64_t, int64_t, uint64_t>> nvme;  // name, ts, qid, cid
  std::map<uint32_t, uint64_t> last_per_cpu;
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_ftrace_events())
      continue;
    const pp::FtraceEventBundle& b = p.ftrace_events();
    ASSERT_TRUE(b.has_cpu());
    for (const pp::FtraceEvent& e : b.event()) {
      EXPECT_GE(e.timestamp(), last_per_cpu[b.cpu()]) << "cpu " << b.cpu();
      last_per_cpu[b.cpu()] = e.timestamp();
      EXPECT_TRUE(e.has_pid());
      if (e.has_print()) {
        prints.emplace_back(e.timestamp(), e.pid(), e.print().buf());
        continue;
      }
      ASSERT_TRUE(e.has_generic());
      int64_t qid = -1;
      uint64_t cid = 0;
      for (const auto& f : e.generic().field()) {
        if (f.name() == "qid")
          qid = f.int_value();
        if (f.name() == "cid")  // u16 in nvme_setup_cmd, int in nvme_complete_rq
          cid = f.has_int_value() ? static_cast<uint64_t>(f.int_value()) : f.uint_value();
      }
      nvme.insert({e.generic().event_name(), e.timestamp(), qid, cid});
    }
  }
  // Its two trace_marker lines are not in atrace form: not in a bundle
  // (Perfetto would count each as an import error), but on the
  // trace_marker track.
  EXPECT_TRUE(prints.empty());
  uint64_t host_events = 0;
  std::multiset<std::tuple<std::string, uint64_t, int64_t, uint64_t>> want;
  for (const HostTruth& h : ReadHostTruth(CmdJoinFixturePath(), &host_events)) {
    want.insert({"nvme_setup_cmd", h.setup, h.qid, h.cid});
    if (h.complete)
      want.insert({"nvme_complete_rq", *h.complete, h.qid, h.cid});
  }
  EXPECT_EQ(host_events, 47u);
  EXPECT_EQ(nvme, want);
  EXPECT_EQ(summary.counts.ftrace_events, 49u);
  EXPECT_EQ(summary.counts.markers, 2u);
}

// Perfetto's atrace grammar (ParseSystraceTracePoint() in its
// systrace_parser.h), restated here field by field (an istringstream split
// at '|', not AtraceAccepts()'s code), stricter where that parser is lax:
// what it takes without a systrace_parse_failure.
bool PerfettoAtraceTakes(std::string buf) {
  while (!buf.empty() && (buf.back() == '\n' || buf.back() == '\0'))
    buf.pop_back();
  if (buf.rfind("trace_event_clock_sync:", 0) == 0)
    return true;
  std::vector<std::string> f;
  std::istringstream in(buf);
  for (std::string field; std::getline(in, field, '|');)
    f.push_back(field);
  if (!buf.empty() && buf.back() == '|')
    f.push_back("");
  auto digits = [](const std::string& s, size_t max) {
    const size_t from = !s.empty() && s[0] == '-' && max > 10 ? 1 : 0;
    return s.size() > from && s.size() - from <= max &&
           s.find_first_not_of("0123456789", from) == std::string::npos;
  };
  auto has = [&](size_t i) { return f.size() > i && !f[i].empty(); };
  if (f.empty() || f[0].size() != 1)
    return false;
  const std::string ph = f[0];
  if (ph == "E")
    return f.size() == 1 || digits(f[1], 10);
  if (f.size() < 2 || f[1].find('-') != std::string::npos || !digits(f[1], 10))
    return false;
  if (ph == "B" || ph == "I")
    return has(2);
  if (ph == "N")
    return has(2) && has(3);
  if (ph == "S" || ph == "F" || ph == "C")
    return has(2) && f.size() > 3 && digits(f[3], 19);
  if (ph == "G")
    return has(2) && has(3) && f.size() > 4 && digits(f[4], 19);
  if (ph == "H")
    return has(2) && (has(4) ? digits(f[4], 19) : f.size() > 3 && digits(f[3], 19));
  return false;
}

TEST(ExportProto, AtraceFormIsWhatPerfettosAtraceParserTakes) {
  for (const char* ok : {"B|12|frame", "B|12|a|b\n", "E", "E|12", "E|12|x", "I|1|mark",
                         "N|1|track|mark", "S|1|load|7", "F|1|load|-7", "C|1|depth|42",
                         "G|1|track|name|3", "H|1|track|3", "H|1|track|name|3",
                         "trace_event_clock_sync: parent_ts=1\n"}) {
    EXPECT_TRUE(AtraceAccepts(ok)) << ok;
    EXPECT_TRUE(PerfettoAtraceTakes(ok)) << ok;
  }
  // Perfetto fails all but the "End ..." line (read as an end: not an
  // atrace writer's, so not accepted here either).
  for (const char* bad : {"HMBMARK n=39\n", "fixture start\n", "", "\n", "B", "B|x|name",
                          "B|12", "C|1|depth|4.5", "C|1|depth", "S|1|load|", "I|1|",
                          "End of test", "Bx|1|name", "X|1|name"}) {
    EXPECT_FALSE(AtraceAccepts(bad)) << bad;
    EXPECT_FALSE(PerfettoAtraceTakes(bad)) << bad;
  }
}

// Issue 25: Perfetto's ftrace parser gives every print to its atrace
// parser; text it rejects is an import error (severity error in the UI).
TEST(ExportProto, NoPrintEventCarriesTextPerfettosAtraceParserRejects) {
  for (const std::string& path : {MarkersFixturePath(), CmdJoinFixturePath(), ClockFixturePath()}) {
    ExportSummary summary;
    for (bool compress : {false, true}) {
      std::string bytes = ExportBytes(path, compress, &summary);
      const pp::Trace trace = compress ? Parse(Inflate(bytes)) : Parse(bytes);
      const Decoded d = Decode(trace);
      uint64_t prints = 0, marker_instants = 0;
      for (const pp::TracePacket& p : trace.packet()) {
        for (const pp::FtraceEvent& e : p.ftrace_events().event()) {
          if (!e.has_print())
            continue;
          prints++;
          EXPECT_TRUE(PerfettoAtraceTakes(e.print().buf())) << path << ": " << e.print().buf();
        }
        if (p.has_track_event() &&
            d.tracks.at(p.track_event().track_uuid()).name() == "trace_marker")
          marker_instants++;
      }
      // The text is not lost: every line is an instant of its own.
      EXPECT_GT(summary.counts.markers, 0u) << path;
      EXPECT_EQ(marker_instants, summary.counts.markers) << path;
      EXPECT_EQ(prints, 0u) << path;  // none of the fixtures' lines is atrace
    }
  }
}

TEST(ExportProto, AnAtraceMarkerStaysAPrintForPerfettosAtraceParser) {
  MemoryFile file;
  ProtoTraceWriter writer(file.get());
  ExportFtraceEvent ev;
  ev.print = true;
  ev.ts = 1000;
  ev.pid = 7;
  for (const char* text : {"B|7|load\n", "load done\n", "E|7\n"}) {
    ev.buf = text;
    writer.Ftrace(ev);
  }
  std::string error;
  ASSERT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  EXPECT_EQ(writer.prints_not_atrace(), 1u);
  std::vector<std::string> bufs;
  const pp::Trace trace = Parse(file.Close());
  for (const pp::TracePacket& p : trace.packet())
    for (const pp::FtraceEvent& e : p.ftrace_events().event())
      bufs.push_back(e.print().buf());
  EXPECT_EQ(bufs, (std::vector<std::string>{"B|7|load\n", "E|7\n"}));
}

TEST(ExportProto, TheClockSnapshotNamesTheCapturesBootClock) {
  ExportSummary summary;
  const pp::Trace trace = ExportAll(CmdJoinBootFixturePath(), &summary);
  EXPECT_EQ(summary.clock.trace_clock, "boot");
  // The first packet's snapshot declares the sequence's incremental clock
  // (tied to BOOTTIME) and names no trace clock; one more names BOOTTIME.
  int snapshots = 0;
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_clock_snapshot() || !p.clock_snapshot().has_primary_trace_clock())
      continue;
    snapshots++;
    EXPECT_EQ(p.clock_snapshot().primary_trace_clock(), pp::BUILTIN_CLOCK_BOOTTIME);
    ASSERT_EQ(p.clock_snapshot().clocks_size(), 1);
    EXPECT_EQ(p.clock_snapshot().clocks(0).clock_id(),
              static_cast<uint32_t>(pp::BUILTIN_CLOCK_BOOTTIME));
  }
  EXPECT_EQ(snapshots, 1);
}

TEST(ExportProto, AnotherTraceClockIsNamedAndNotPassedOffAsBoottime) {
  ExportSummary summary;
  const pp::Trace trace = ExportAll(CmdJoinFixturePath(), &summary);
  EXPECT_EQ(summary.clock.trace_clock, "local");
  const Decoded d = Decode(trace);
  int groups = 0;
  // Only the incremental clock's declaration: no snapshot names a trace
  // clock (that would claim the capture's times are BOOTTIME).
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_clock_snapshot())
      continue;
    EXPECT_FALSE(p.clock_snapshot().has_primary_trace_clock()) << "a snapshot would claim BOOTTIME";
    bool incremental = false;
    for (const auto& c : p.clock_snapshot().clocks())
      incremental |= c.clock_id() == kIncrementalClock && c.is_incremental();
    EXPECT_TRUE(incremental) << "a snapshot other than the incremental clock's";
  }
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_parent_uuid())
      continue;
    if (t.name() == "trace_marker")
      continue;
    groups++;
    EXPECT_NE(t.description().find("trace clock \"local\""), std::string::npos) << t.name();
    EXPECT_NE(t.description().find("within this file only"), std::string::npos) << t.name();
  }
  EXPECT_EQ(groups, 2);  // hmb dev 0, nvme0
}

TEST(ExportProto, TheCmdJoinExportIsInTimeOrderNestedAndBalancedPerTrack) {
  const pp::Trace trace = ExportAll(CmdJoinFixturePath());
  const Decoded d = Decode(trace);
  EXPECT_TRUE(d.problems.empty()) << d.problems.front();
  std::map<uint64_t, uint64_t> last;
  std::map<uint64_t, int> depth;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_parent_uuid()) {
      EXPECT_TRUE(d.tracks.count(t.parent_uuid())) << t.name();
    }
  }
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    const pp::TrackEvent& e = p.track_event();
    ASSERT_TRUE(d.tracks.count(e.track_uuid()));
    EXPECT_GE(p.timestamp(), last[e.track_uuid()]) << d.tracks.at(e.track_uuid()).name();
    last[e.track_uuid()] = p.timestamp();
    int& dep = depth[e.track_uuid()];
    if (e.type() == pp::TrackEvent::TYPE_SLICE_BEGIN) {
      EXPECT_LE(++dep, 1) << d.tracks.at(e.track_uuid()).name();
    } else if (e.type() == pp::TrackEvent::TYPE_SLICE_END) {
      EXPECT_GE(--dep, 0) << d.tracks.at(e.track_uuid()).name();
    }
  }
  for (const auto& [track, dep] : depth) {
    EXPECT_EQ(dep, 0) << d.tracks.at(track).name();
  }
}

// perfetto_fields.h against the classes protoc generates from the .proto:
// a wrong number there fails the build of this test.
#define HMBTRACE_SAME_FIELD(msg, field) \
  static_assert(perfetto_fields::msg::field == pp::msg::field, #msg "::" #field)
HMBTRACE_SAME_FIELD(Trace, kPacketFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kFtraceEventsFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kClockSnapshotFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kTimestampFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kTrustedPacketSequenceIdFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kTrackEventFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kInternedDataFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kSequenceFlagsFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kCompressedPacketsFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kZstdCompressedPacketsFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kTimestampClockIdFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kTracePacketDefaultsFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, kTrackDescriptorFieldNumber);
HMBTRACE_SAME_FIELD(TracePacket, SEQ_INCREMENTAL_STATE_CLEARED);
HMBTRACE_SAME_FIELD(TracePacketDefaults, kTimestampClockIdFieldNumber);
HMBTRACE_SAME_FIELD(ClockSnapshot, kClocksFieldNumber);
HMBTRACE_SAME_FIELD(ClockSnapshot, kPrimaryTraceClockFieldNumber);
HMBTRACE_SAME_FIELD(ClockSnapshot::Clock, kClockIdFieldNumber);
HMBTRACE_SAME_FIELD(ClockSnapshot::Clock, kTimestampFieldNumber);
HMBTRACE_SAME_FIELD(ClockSnapshot::Clock, kIsIncrementalFieldNumber);
HMBTRACE_SAME_FIELD(TrackDescriptor, kUuidFieldNumber);
HMBTRACE_SAME_FIELD(TrackDescriptor, kNameFieldNumber);
HMBTRACE_SAME_FIELD(TrackDescriptor, kParentUuidFieldNumber);
HMBTRACE_SAME_FIELD(TrackDescriptor, kCounterFieldNumber);
HMBTRACE_SAME_FIELD(TrackDescriptor, kChildOrderingFieldNumber);
HMBTRACE_SAME_FIELD(TrackDescriptor, kSiblingOrderRankFieldNumber);
HMBTRACE_SAME_FIELD(TrackDescriptor, kDescriptionFieldNumber);
HMBTRACE_SAME_FIELD(TrackDescriptor, EXPLICIT);
HMBTRACE_SAME_FIELD(CounterDescriptor, kUnitFieldNumber);
HMBTRACE_SAME_FIELD(CounterDescriptor, kUnitNameFieldNumber);
HMBTRACE_SAME_FIELD(CounterDescriptor, UNIT_TIME_NS);
HMBTRACE_SAME_FIELD(CounterDescriptor, UNIT_COUNT);
HMBTRACE_SAME_FIELD(CounterDescriptor, UNIT_SIZE_BYTES);
HMBTRACE_SAME_FIELD(TrackEvent, kDebugAnnotationsFieldNumber);
HMBTRACE_SAME_FIELD(TrackEvent, kTypeFieldNumber);
HMBTRACE_SAME_FIELD(TrackEvent, kNameIidFieldNumber);
HMBTRACE_SAME_FIELD(TrackEvent, kTrackUuidFieldNumber);
HMBTRACE_SAME_FIELD(TrackEvent, kNameFieldNumber);
HMBTRACE_SAME_FIELD(TrackEvent, kCounterValueFieldNumber);
HMBTRACE_SAME_FIELD(TrackEvent, kFlowIdsFieldNumber);
HMBTRACE_SAME_FIELD(TrackEvent, kTerminatingFlowIdsFieldNumber);
HMBTRACE_SAME_FIELD(TrackEvent, TYPE_SLICE_BEGIN);
HMBTRACE_SAME_FIELD(TrackEvent, TYPE_SLICE_END);
HMBTRACE_SAME_FIELD(TrackEvent, TYPE_INSTANT);
HMBTRACE_SAME_FIELD(TrackEvent, TYPE_COUNTER);
HMBTRACE_SAME_FIELD(DebugAnnotation, kNameIidFieldNumber);
HMBTRACE_SAME_FIELD(DebugAnnotation, kBoolValueFieldNumber);
HMBTRACE_SAME_FIELD(DebugAnnotation, kUintValueFieldNumber);
HMBTRACE_SAME_FIELD(DebugAnnotation, kIntValueFieldNumber);
HMBTRACE_SAME_FIELD(DebugAnnotation, kStringValueFieldNumber);
HMBTRACE_SAME_FIELD(DebugAnnotation, kNameFieldNumber);
HMBTRACE_SAME_FIELD(DebugAnnotation, kStringValueIidFieldNumber);
HMBTRACE_SAME_FIELD(InternedData, kEventNamesFieldNumber);
HMBTRACE_SAME_FIELD(InternedData, kDebugAnnotationNamesFieldNumber);
HMBTRACE_SAME_FIELD(InternedData, kDebugAnnotationStringValuesFieldNumber);
HMBTRACE_SAME_FIELD(FtraceEventBundle, kCpuFieldNumber);
HMBTRACE_SAME_FIELD(FtraceEventBundle, kEventFieldNumber);
HMBTRACE_SAME_FIELD(FtraceEvent, kTimestampFieldNumber);
HMBTRACE_SAME_FIELD(FtraceEvent, kPidFieldNumber);
HMBTRACE_SAME_FIELD(FtraceEvent, kPrintFieldNumber);
HMBTRACE_SAME_FIELD(FtraceEvent, kGenericFieldNumber);
HMBTRACE_SAME_FIELD(PrintFtraceEvent, kIpFieldNumber);
HMBTRACE_SAME_FIELD(PrintFtraceEvent, kBufFieldNumber);
HMBTRACE_SAME_FIELD(GenericFtraceEvent, kEventNameFieldNumber);
HMBTRACE_SAME_FIELD(GenericFtraceEvent, kFieldFieldNumber);
HMBTRACE_SAME_FIELD(GenericFtraceEvent::Field, kNameFieldNumber);
HMBTRACE_SAME_FIELD(GenericFtraceEvent::Field, kStrValueFieldNumber);
HMBTRACE_SAME_FIELD(GenericFtraceEvent::Field, kIntValueFieldNumber);
HMBTRACE_SAME_FIELD(GenericFtraceEvent::Field, kUintValueFieldNumber);
#undef HMBTRACE_SAME_FIELD
static_assert(perfetto_fields::BUILTIN_CLOCK_BOOTTIME == pp::BUILTIN_CLOCK_BOOTTIME);
static_assert(perfetto_fields::InternedEntry::kIidFieldNumber == pp::EventName::kIidFieldNumber &&
              perfetto_fields::InternedEntry::kIidFieldNumber ==
                  pp::DebugAnnotationName::kIidFieldNumber &&
              perfetto_fields::InternedEntry::kIidFieldNumber ==
                  pp::InternedString::kIidFieldNumber);
static_assert(perfetto_fields::InternedEntry::kNameFieldNumber == pp::EventName::kNameFieldNumber &&
              perfetto_fields::InternedEntry::kNameFieldNumber ==
                  pp::DebugAnnotationName::kNameFieldNumber &&
              perfetto_fields::InternedEntry::kNameFieldNumber ==
                  pp::InternedString::kStrFieldNumber);

// The framed packets of a Trace: each Trace.packet's bytes, in order.
std::vector<std::string> RawPackets(const std::string& trace) {
  std::vector<std::string> packets;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(trace.data()),
                                            static_cast<int>(trace.size()));
  uint32_t tag = 0;
  while ((tag = in.ReadTag()) != 0) {
    uint32_t len = 0;
    std::string bytes;
    if (tag != ((pp::Trace::kPacketFieldNumber << 3) | 2) || !in.ReadVarint32(&len) ||
        !in.ReadString(&bytes, static_cast<int>(len)))
      return {};
    packets.push_back(std::move(bytes));
  }
  return packets;
}

// The packets written by hand other than track events (descriptors, the
// clock snapshots, ftrace bundles) are, byte for byte, what libprotobuf
// writes for the same message: the same fields, in field-number order.
TEST(ExportProto, EveryPacketButTrackEventsIsWhatLibprotobufWrites) {
  MemoryFile file;
  ProtoTraceWriter writer(file.get());
  ExportTrack group{ExportTrack::Kind::kGroup, 1, 0, "group", -2, "", 1};
  group.description = "a description";
  writer.Track(group);
  writer.Track({ExportTrack::Kind::kSlices, 2, 1, "slices", 3, "", 1});
  uint64_t uuid = 10;
  for (const char* unit : {"count", "ns", "bytes", "\u00b0C", ""})
    writer.Track({ExportTrack::Kind::kCounter, uuid++, 1, unit, 0, unit, 1});
  writer.Clock({"boot", "", 1234567});
  ExportFtraceEvent print;
  print.ts = 5;
  print.cpu = 1;
  print.pid = 7;
  print.print = true;
  print.ip = 0xffff0000;
  print.buf = "B|1|name\n";
  writer.Ftrace(print);
  ExportFtraceEvent generic;
  generic.ts = 6;
  generic.cpu = 200;
  generic.pid = 8;
  generic.name = "nvme_setup_cmd";
  generic.fields = {{"qid", ExportFtraceField::Kind::kUint, 3, 0, ""},
                    {"delta", ExportFtraceField::Kind::kInt, 0, -4, ""},
                    {"disk", ExportFtraceField::Kind::kString, 0, 0, "nvme0n1"}};
  writer.Ftrace(generic);
  std::string error;
  ASSERT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  const std::vector<std::string> packets = RawPackets(file.Close());
  ASSERT_EQ(packets.size(), 11u);  // start, 7 tracks, clock, 2 bundles
  for (const std::string& bytes : packets) {
    pp::TracePacket p;
    ASSERT_TRUE(p.ParseFromString(bytes));
    EXPECT_EQ(p.SerializeAsString(), bytes) << p.DebugString();
  }
}

// Perfetto takes no bundle of a CPU of 1024 or above: such an event is
// left out, counted, and the export's summary says how many.
TEST(ExportProto, EventsOfACpuPerfettoRefusesAreLeftOutAndCounted) {
  MemoryFile file;
  ProtoTraceWriter writer(file.get());
  for (uint32_t cpu : {1023u, 1024u, 70000u}) {
    ExportFtraceEvent ev;
    ev.ts = 10 + cpu;
    ev.cpu = cpu;
    ev.name = "sched_switch";
    writer.Ftrace(ev);
  }
  std::string error;
  ASSERT_TRUE(StatusOk(writer.Finish(), &error)) << error;
  EXPECT_EQ(writer.ftrace_dropped(), 2u);
  std::vector<uint32_t> cpus;
  const pp::Trace trace = ParseRaw(file.Close());
  for (const pp::TracePacket& p : trace.packet())
    if (p.has_ftrace_events())
      cpus.push_back(p.ftrace_events().cpu());
  EXPECT_EQ(cpus, std::vector<uint32_t>{1023});

  ExportSummary summary;
  summary.counts.ftrace_events = 3;
  summary.ftrace_dropped = writer.ftrace_dropped();
  summary.clock.trace_clock = "local";
  MemoryFile out;
  PrintExportSummary(out.get(), "x.pftrace", true, summary);
  const std::string text = out.Close();
  EXPECT_NE(text.find("x.pftrace: 1 other ftrace events (markers, nvme, ...) in ftrace event "
                      "bundles"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("x.pftrace: 2 other ftrace events of CPU 1024 or above left out"),
            std::string::npos)
      << text;
}

// --- Command causes (ABI 1.2): stages nested in their command, flows ---

namespace {

// The die model (mock/fwsim/causes) written as a crash dump of its area,
// as die_model_dump writes it: tick 0 at 1 s of the local clock, 10 ns a
// tick.
constexpr uint64_t kModelHostRef = 1000000000;
constexpr uint64_t kModelNsPerTick = 10;

std::string DieModelDump(const DieModelRun& run, const std::string& name) {
  test::TestDump d;
  d.dict = test::ProduceDictionary({cz_events, cz_nr_events}, false, {cz_cmds, cz_nr_cmds});
  d.nr_cores = 1;
  d.clock_hz = 1000000000 / kModelNsPerTick;
  d.producer_gen = 1;
  d.name = "fwsim-die-model";
  const uint64_t last = run.records.empty() ? 0 : run.records.back().ts;
  d.taken_ns[HMB_TRACE_CLOCK_LOCAL] = kModelHostRef + (last + 1) * kModelNsPerTick;
  d.clocks.push_back(
      test::TestFit(HMB_TRACE_CLOCK_LOCAL, d.producer_gen, d.clock_hz, kModelHostRef));
  uint64_t seq = 0;
  for (const ModelRecord& r : run.records)
    d.records.push_back({0, r.event_id, seq++, r.ts, r.payload});
  const std::vector<uint8_t> bytes = test::WriteDump(d);
  const std::string path = testing::TempDir() + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
  return path;
}

// A slice as trace_processor builds it from BEGIN/END: its track, depth
// (its parent: the slice open below it), times, arguments and flow ids.
struct DecodedSlice {
  std::string track;
  size_t depth = 0;
  long parent = -1;
  uint64_t begin = 0, end = 0;
  std::string name;
  std::map<std::string, std::string> args;  // the strings
  uint64_t cid = 0;
  std::vector<uint64_t> flows_out, flows_in;
};

std::vector<DecodedSlice> Slices(const pp::Trace& trace, const Decoded& d) {
  std::vector<DecodedSlice> out;
  std::map<uint64_t, std::vector<size_t>> stacks;  // track -> its open slices
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    const pp::TrackEvent& e = p.track_event();
    std::vector<size_t>& stack = stacks[e.track_uuid()];
    if (e.type() == pp::TrackEvent::TYPE_SLICE_END) {
      if (stack.empty()) {
        ADD_FAILURE() << "end without begin";
        continue;
      }
      out[stack.back()].end = p.timestamp();
      stack.pop_back();
      continue;
    }
    if (e.type() != pp::TrackEvent::TYPE_SLICE_BEGIN)
      continue;
    DecodedSlice s;
    s.track = d.tracks.at(e.track_uuid()).name();
    s.depth = stack.size();
    s.parent = stack.empty() ? -1 : static_cast<long>(stack.back());
    s.begin = p.timestamp();
    s.name = EventName(d, e);
    for (const auto& a : e.debug_annotations()) {
      if (a.has_string_value())
        s.args[ArgName(d, a)] = a.string_value();
      else if (a.has_string_value_iid())
        s.args[ArgName(d, a)] = d.arg_values.at(a.string_value_iid());
      else if (ArgName(d, a) == "cid")
        s.cid = a.uint_value();
    }
    s.flows_out.assign(e.flow_ids().begin(), e.flow_ids().end());
    s.flows_in.assign(e.terminating_flow_ids().begin(), e.terminating_flow_ids().end());
    stack.push_back(out.size());
    out.push_back(s);
  }
  for (const auto& [track, stack] : stacks)
    EXPECT_TRUE(stack.empty()) << "a slice never ended";
  return out;
}

uint64_t ModelNs(uint64_t ticks) {
  return kModelHostRef + ticks * kModelNsPerTick;
}

TEST(ExportProto, ACommandsStagesNestInItAtTheirFirmwareTimes) {
  DieModelConfig config;
  config.nr_commands = 3000;
  const DieModelRun run = RunDieModel(config);
  ExportSummary summary;
  const pp::Trace trace = ExportAll(DieModelDump(run, "die-model-stages.hmbdump"), &summary);
  const Decoded d = Decode(trace);
  const std::vector<DecodedSlice> slices = Slices(trace, d);
  EXPECT_EQ(summary.counts.fw_commands, run.commands.size());
  EXPECT_EQ(summary.counts.fw_not_converted, 0u);
  // The truth by (qid, cid, fetch time on the host clock).
  std::map<std::tuple<uint64_t, uint64_t, uint64_t>, const TruthCommand*> truth;
  for (const TruthCommand& t : run.commands)
    truth[{t.qid, t.cid, ModelNs(t.fetch)}] = &t;
  size_t commands = 0, stages = 0;
  for (size_t i = 0; i < slices.size(); i++) {
    const DecodedSlice& c = slices[i];
    if (c.track.rfind("fw qid ", 0) != 0 || c.depth != 0)
      continue;
    commands++;
    const uint64_t qid = std::stoull(c.track.substr(7));
    const auto t = truth.find({qid, c.cid, c.begin});
    ASSERT_NE(t, truth.end()) << c.track << " cid " << c.cid << " at " << c.begin;
    EXPECT_EQ(c.end, ModelNs(t->second->complete));
    EXPECT_EQ(c.name, t->second->opcode == CZ_OPC_READ ? "read" : "write");
    EXPECT_EQ(c.args.at("main_cause"), t->second->cause);
    // Its children, in order, are the truth's stages at their times.
    std::vector<const DecodedSlice*> children;
    for (const DecodedSlice& s : slices)
      if (s.parent == static_cast<long>(i))
        children.push_back(&s);
    std::vector<TruthStage> want = t->second->stages;
    std::stable_sort(want.begin(), want.end(),
                     [](const TruthStage& a, const TruthStage& b) { return a.begin < b.begin; });
    ASSERT_EQ(children.size(), want.size()) << "cid " << c.cid;
    for (size_t k = 0; k < want.size(); k++) {
      const DecodedSlice& s = *children[k];
      EXPECT_EQ(s.name.substr(0, s.name.find(" (")), want[k].name);
      EXPECT_EQ(s.begin, ModelNs(want[k].begin)) << s.name;
      EXPECT_EQ(s.end, ModelNs(want[k].end)) << s.name;
      EXPECT_GE(s.begin, c.begin);
      EXPECT_LE(s.end, c.end);
      // A wait or rework is named with its cause.
      if (s.args.count("cause")) {
        EXPECT_EQ(s.name, want[k].name + " (" + s.args.at("cause") + ")");
      }
      stages++;
    }
  }
  EXPECT_EQ(commands, run.commands.size());
  EXPECT_EQ(stages, summary.counts.fw_stages);
}

TEST(ExportProto, AWaitHasAFlowToTheActivityOfItsResourceThatHeldIt) {
  DieModelConfig config;
  config.nr_commands = 3000;
  const DieModelRun run = RunDieModel(config);
  ExportSummary summary;
  const pp::Trace trace = ExportAll(DieModelDump(run, "die-model-flows.hmbdump"), &summary);
  const Decoded d = Decode(trace);
  const std::vector<DecodedSlice> slices = Slices(trace, d);
  // Every flow id, by the slices naming it: (slice, the flow starts there).
  std::map<uint64_t, std::vector<std::pair<const DecodedSlice*, bool>>> by_flow;
  for (const DecodedSlice& s : slices) {
    for (uint64_t id : s.flows_out)
      by_flow[id].push_back({&s, true});
    for (uint64_t id : s.flows_in)
      by_flow[id].push_back({&s, false});
  }
  size_t waits = 0;
  std::map<std::string, size_t> by_cause;
  for (const DecodedSlice& s : slices) {
    if (s.track.rfind("fw qid ", 0) != 0 || s.depth != 1)
      continue;
    const auto cause = s.args.find("cause");
    const bool blamed = cause != s.args.end() && s.args.count("resource") &&
                        cause->second != kCauseQueueing && cause->second != kCauseUnattributed &&
                        cause->second != s.name.substr(0, s.name.find(" ("));
    if (!blamed) {
      EXPECT_TRUE(s.flows_out.empty() && s.flows_in.empty()) << s.name;
      continue;
    }
    waits++;
    by_cause[cause->second]++;
    ASSERT_EQ(s.flows_out.size() + s.flows_in.size(), 1u) << s.name;
    const uint64_t id = s.flows_out.empty() ? s.flows_in[0] : s.flows_out[0];
    EXPECT_GE(id, kCauseFlowBase);
    const auto& ends = by_flow.at(id);
    ASSERT_EQ(ends.size(), 2u) << "flow " << id;
    const auto& [activity, activity_out] = ends[0].first == &s ? ends[1] : ends[0];
    // The activity: named as the cause, on the track of the wait's
    // resource, overlapping the wait; the flow starts at the earlier one.
    EXPECT_EQ(activity->name, cause->second);
    EXPECT_EQ(activity->track, s.args.at("resource"));
    EXPECT_EQ(activity->depth, 0u);
    EXPECT_LT(activity->begin, s.end);
    EXPECT_GT(activity->end, s.begin);
    EXPECT_EQ(activity_out, activity->begin < s.begin) << s.name;
  }
  // The model blames die waits on GC and NAND waits on the throttle.
  EXPECT_GT(by_cause["gc_erase"], 0u);
  EXPECT_GT(by_cause["thermal_throttle"], 0u);
  EXPECT_EQ(waits, summary.counts.cause_flows);
  // No other flow ids (a dump has no host commands).
  EXPECT_EQ(by_flow.size(), waits);
  // Every truth command whose main cause is an activity shows that wait.
  for (const TruthCommand& t : run.commands) {
    if (t.cause != "gc_erase" && t.cause != "thermal_throttle")
      continue;
    const std::string want = t.longest_delay + " (" + t.cause + ")";
    const bool found = std::any_of(slices.begin(), slices.end(), [&](const DecodedSlice& s) {
      return s.name == want && s.begin >= ModelNs(t.fetch) && s.end <= ModelNs(t.complete) &&
             s.track == "fw qid " + std::to_string(t.qid);
    });
    EXPECT_TRUE(found) << want << " of cid " << t.cid;
  }
}

// report --cmd reads the capture once more for the firmware's account of
// a command only when the join's pass saw a dictionary that gives one.
TEST(ExportProto, TheJoinSaysWhetherTheCaptureHasCommandAttribution) {
  DieModelConfig config;
  config.nr_commands = 200;
  CommandCapture with, without;
  std::string error;
  ASSERT_TRUE(StatusOk(
      ReadCommandCapture(DieModelDump(RunDieModel(config), "die-model-join.hmbdump"), &with),
      &error))
      << error;
  EXPECT_TRUE(with.command_attribution);
  ASSERT_TRUE(StatusOk(ReadCommandCapture(HMBTRACE_CMD_JOIN_FIXTURE, &without), &error)) << error;
  EXPECT_FALSE(without.command_attribution);
}

TEST(ExportProto, ACaptureWithoutAttributionHasNoCommandCauseTracks) {
  ExportSummary summary;
  const pp::Trace trace = ExportAll(HMBTRACE_CMD_JOIN_FIXTURE, &summary);
  const Decoded d = Decode(trace);
  for (const auto& [uuid, t] : d.tracks)
    EXPECT_NE(t.name().rfind("fw qid ", 0), 0u) << t.name();
  EXPECT_EQ(summary.counts.fw_commands + summary.counts.cause_flows, 0u);
}

}  // namespace

}  // namespace hmbtrace
