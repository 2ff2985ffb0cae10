// SPDX-License-Identifier: GPL-2.0-only
#include "export_proto.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <zlib.h>

#include "count_records_testutil.h"
#include "export.h"
#include "fixture_testutil.h"
#include "stat.h"

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

// Parsed, with absolute timestamps.
pp::Trace Parse(const std::string& bytes) {
  pp::Trace trace = ParseRaw(bytes);
  const std::vector<std::string> problems = ResolveTimestamps(&trace);
  EXPECT_TRUE(problems.empty()) << problems.front();
  return trace;
}

pp::Trace ExportFixture(const std::string& path,
                        ExportCounts* counts = nullptr,
                        bool compress = false,
                        std::string* raw = nullptr) {
  DictionaryStore dicts;
  std::string error;
  EXPECT_TRUE(CollectDictionaries(path, &dicts, &error)) << error;
  MemoryFile file;
  ProtoTraceWriter writer(file.get(), compress);
  ExportModel model(&dicts, &writer);
  EXPECT_TRUE(ReadCapture(
      path,
      [&model](const CaptureEvent& ev) {
        model.Add(ev);
        return true;
      },
      &error))
      << error;
  model.Finish();
  EXPECT_TRUE(writer.Finish(&error)) << error;
  if (counts)
    *counts = model.counts();
  const std::string bytes = file.Close();
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
  ASSERT_TRUE(CollectDictionaries(FixturePath(), &stat_dicts, &error)) << error;
  StatCollector stat(&stat_dicts);
  ASSERT_TRUE(ReadCapture(
      FixturePath(),
      [&stat](const CaptureEvent& ev) {
        stat.Add(ev);
        return true;
      },
      &error));
  stat.Finish();
  const nlohmann::json stat_doc = stat.Json("f");

  const pp::Trace trace = ExportFixture(FixturePath());
  const Decoded d = Decode(trace);
  std::map<int, uint64_t> per_core;
  for (const pp::TracePacket& p : trace.packet()) {
    if (!p.has_track_event())
      continue;
    const pp::TrackEvent& e = p.track_event();
    const int core = CoreOf(d.tracks.at(e.track_uuid()));
    // A record is one event with its seq (a slice's begin, an end, an
    // instant), or one counter sample on its core's counter track.
    if (FindArg(d, e, "seq") || (e.type() == pp::TrackEvent::TYPE_COUNTER && core >= 0))
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
  ASSERT_TRUE(writer.Finish(&error));
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

TEST(ExportProto, BeginsWithoutEndsEndUnfinishedInsteadOfGrowingTracksForEver) {
  // The fixture's device state and dictionary, then 3000 cmd_fetch with
  // distinct cids and no cmd_complete, all on core 0.
  DictionaryStore dicts;
  std::string error;
  ASSERT_TRUE(CollectDictionaries(FixturePath(), &dicts, &error)) << error;
  MemoryFile file;
  ProtoTraceWriter writer(file.get());
  ExportModel model(&dicts, &writer);
  CaptureEvent first_record;
  ASSERT_TRUE(ReadCapture(
      FixturePath(),
      [&](const CaptureEvent& ev) {
        if (ev.kind == CaptureKind::kState || ev.kind == CaptureKind::kDict)
          model.Add(ev);
        if (ev.kind == CaptureKind::kRecord && first_record.ts == 0)
          first_record = ev;
        return true;
      },
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
  ASSERT_TRUE(writer.Finish(&error)) << error;
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
  bool Finish(std::string* error) override { return next_->Finish(error); }

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
  DictionaryStore dicts;
  std::string error;
  ASSERT_TRUE(CollectDictionaries(FixturePath(), &dicts, &error)) << error;
  MemoryFile file;
  ProtoTraceWriter writer(file.get());
  RecordingSink sink(&writer);
  ExportModel model(&dicts, &sink);
  ASSERT_TRUE(ReadCapture(
      FixturePath(),
      [&model](const CaptureEvent& ev) {
        model.Add(ev);
        return true;
      },
      &error))
      << error;
  model.Finish();
  ASSERT_TRUE(sink.Finish(&error)) << error;
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
  ASSERT_TRUE(writer.Finish(&error)) << error;
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

TEST(ExportProto, FormatComesFromTheOptionOrTheExtension) {
  EXPECT_EQ(ChooseExportFormat("auto", "a.pftrace"), ExportFormat::kProto);
  EXPECT_EQ(ChooseExportFormat("auto", "a.json"), ExportFormat::kJson);
  EXPECT_EQ(ChooseExportFormat("", "a.pb"), ExportFormat::kProto);
  EXPECT_EQ(ChooseExportFormat("json", "a.pftrace"), ExportFormat::kJson);
  EXPECT_EQ(ChooseExportFormat("proto", "a.json"), ExportFormat::kProto);
  EXPECT_EQ(ChooseExportFormat("xml", "a.json"), std::nullopt);
}

}  // namespace
}  // namespace hmbtrace
