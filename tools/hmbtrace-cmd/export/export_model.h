// SPDX-License-Identifier: GPL-2.0-only
//
// What `hmbtrace-cmd export` shows of a capture, whatever the file format:
// tracks, and slices, instants and counters on them. Both writers (the
// Perfetto protobuf, export_proto.h, and Chrome JSON, export_json.h)
// receive the same stream from ExportModel, one event at a time, so memory
// stays flat in the length of the capture.
//
// Tracks:
//   - a group per device ("hmb dev N (<name>)");
//   - under it, per firmware core in core order, a slice track "core K"
//     (instants, losses) and as many more tracks also named "core K" as
//     the core has spans open at once (slices on one track must nest; the
//     Perfetto UI shows same-named siblings as one track);
//   - under it, a "state" track (resets and other state changes), a
//     "lost records" counter (cumulative, per device) and a counter track
//     per core and COUNTER event ("core K thermal", unit from the field
//     name's suffix);
//   - a root track "trace_marker" for the lines written there;
//   - with the host's nvme events (a capture of `hmbtrace-cmd record`), a
//     group per NVMe controller ("nvme0") and under it a track per queue
//     ("qid N", the admin queue 0 first), with as many more same-named
//     tracks as the queue has commands in flight (the lanes of the core
//     tracks, the same mechanism).
// Slices: BEGIN/END pairs of one core (the dictionary's pairing key and
// qid), and records with a latency field and no pair, from ts - latency to
// ts. A record's time is its firmware time converted by the capture's
// clock fits (decode/clock_set.h), never after its ftrace time, never
// before the previous record of its core; every track's events come in
// non-decreasing time. Other events are at their ftrace time.
//
// Host commands: one slice per command from nvme_setup_cmd to
// nvme_complete_rq, named after its opcode ("read", "write", ...), its
// cid, nsid, opcode, status and the join's verdict as arguments; a command
// with no completion in the capture is an instant at its setup. For each
// command whose fetch the join (export_join.h) placed, one flow: from the
// host slice (flow_ids) to the firmware record that fetched it
// (terminating_flow_ids; flow_ids if the record's converted time is before
// the setup, as a clock fit's bound allows, so that the flow still starts
// at the earlier end). No flow for a command the join did not place.
//
// Command causes (ABI 1.2 command attribution, causes/command_paths.h),
// only when a dictionary has it: per device, a track per queue ("fw qid
// N", with lanes as above) holding one slice per command the firmware
// served, from its fetch to its completion (named after its opcode; cid
// and main_cause as arguments), its stages nested in it in the order they
// began (a wait or rework named "<stage> (<cause>)", with its cause and
// resource as arguments); stages that overlap are cut where the
// previous one ended, so that they nest. A track per resource ("die 4")
// holds the activities a wait was blamed on (gc_erase,
// thermal_throttle, ...; their record as argument), and each such wait
// has a flow to its activity (flow ids from kCauseFlowBase; the flow
// starts at whichever of the two begins first). Commands and activities are at their firmware times
// converted by the capture's clock fits; without a fit they are left out
// (counted).
//
// Other ftrace events (markers, nvme, sched, ...) go to the sink as they
// are (ExportFtraceEvent) for the protobuf's ftrace event bundles; markers
// are also instants on the trace_marker track, where a reader finds them
// by name.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_MODEL_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_MODEL_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "capture/capture.h"
#include "capture/dictionaries.h"
#include "causes/command_paths.h"
#include "clock_set.h"
#include "export/export_join.h"
#include "hmbtrace/status.h"
#include "stat/open_spans.h"

namespace hmbtrace {

struct ExportTrack {
  enum class Kind { kGroup, kSlices, kCounter };
  Kind kind = Kind::kSlices;
  uint64_t uuid = 0;         // unique, never 0
  uint64_t parent_uuid = 0;  // 0: a root track
  std::string name;
  int rank = 0;       // order among siblings
  std::string unit;   // counters: "count", "ns", "bytes", or a free name ("°C")
  int pid = 0;        // for JSON: the process of a group and of its children
  std::string description = {};  // shown by the viewer (TrackDescriptor.description)
};

// Ids: a number the model gives a string for the whole export (a
// dictionary's event, field or enum value name; a constant), so that a
// writer can keep what it made of the text under it: an id always names
// the same text, one text may have many ids; 0: none (use the text).
// Ids from ExportIds are new ones, never given before.
class ExportIds {
 public:
  explicit ExportIds(uint32_t first) : next_(first) {}
  uint32_t Next() { return next_++; }

 private:
  uint32_t next_;
};

// What a writer made of an id's text (ExportEvent::name_id,
// ExportArg::name_id / value_id), kept to be reused: an interned id, the
// escaped text. Ids 1 .. kMax - 1; a value equal to T{} is "none" (never
// kept), and a larger id is made again each time.
template <typename T>
class ByExportId {
 public:
  static constexpr uint32_t kMax = 1u << 20;
  // What was kept for `id`, or nullptr.
  const T* Find(uint32_t id) const {
    return id < values_.size() && values_[id] != T{} ? &values_[id] : nullptr;
  }
  void Keep(uint32_t id, T value) {
    if (id == 0 || id >= kMax)
      return;
    if (id >= values_.size())
      values_.resize(std::max<size_t>(id + 1, 2 * values_.size()));
    values_[id] = std::move(value);
  }

 private:
  std::vector<T> values_;
};

// Plain data, made in place event after event: no allocation, no
// destructor per argument.
struct ExportArg {
  enum class Type : uint8_t { kUint, kInt, kString, kBool };
  std::string_view name;  // valid during the call
  Type type = Type::kUint;
  bool interned_string = false;  // a value from a small set (enum names)
  uint32_t name_id = 0;
  uint32_t value_id = 0;  // an interned string's id
  uint64_t u = 0;
  int64_t i = 0;
  std::string_view s;  // kString: valid during the call

  std::string_view text() const { return s; }
};
static_assert(std::is_trivially_copyable_v<ExportArg>);

struct ExportEvent {
  enum class Type { kBegin, kEnd, kInstant, kCounter };
  Type type = Type::kInstant;
  uint64_t track = 0;
  uint64_t ts = 0;        // host trace-clock ns
  std::string_view name;  // valid during the call; empty for kEnd and kCounter
  uint32_t name_id = 0;
  std::vector<ExportArg> args;
  // Text made for this event that args point into (a deque: it stays put
  // as more is added).
  std::deque<std::string> texts;
  int64_t counter = 0;
  std::vector<uint64_t> flow_ids;              // from the host<->firmware join
  std::vector<uint64_t> terminating_flow_ids;  // (issue 11); empty today
};

// A non-hmb ftrace event of the capture (ftrace_events_c.h); views are
// valid during the call.
struct ExportFtraceField {
  enum class Kind { kUint, kInt, kString };
  std::string_view name;
  Kind kind = Kind::kUint;
  uint64_t u = 0;
  int64_t i = 0;
  std::string_view s;
};
struct ExportFtraceEvent {
  uint64_t ts = 0;  // the buffer's trace clock, ns
  uint32_t cpu = 0;
  uint32_t pid = 0;
  std::string_view system;
  std::string_view name;
  bool print = false;  // ftrace:print (trace_marker): ip and buf
  uint64_t ip = 0;
  std::string_view buf;
  std::vector<ExportFtraceField> fields;  // the others
};

// The clock the file's timestamps are on: the capture's trace clock
// ("boot", "mono", "local", "global", ...; "" if the file does not say).
struct ExportClock {
  std::string trace_clock;
  std::string top_clock;  // the top buffer's, if it differs
  uint64_t ts = 0;        // a timestamp of the capture, for a snapshot
  bool boottime() const { return trace_clock == "boot"; }
};

// Where ExportModel's stream goes. A track is announced before its first
// event. Errors are sticky: Finish() reports them.
class ExportSink {
 public:
  virtual ~ExportSink() = default;
  virtual void Track(const ExportTrack& track) = 0;
  virtual void Event(const ExportEvent& event) = 0;
  // Formats without a place for them ignore these two.
  virtual void Ftrace(const ExportFtraceEvent& /*event*/) {}
  virtual void Clock(const ExportClock& /*clock*/) {}
  // Returns false with `error` set if anything could not be written.
  virtual Status Finish() = 0;
};

// What went into the file, for the summary and the tests.
struct ExportCounts {
  uint64_t hmb_events = 0;
  uint64_t records = 0;
  uint64_t lost_events = 0;
  uint64_t lost_records = 0;
  uint64_t resets = 0;
  uint64_t markers = 0;
  uint64_t malformed = 0;
  uint64_t slices = 0;
  uint64_t unfinished = 0;  // spans ended at a reset or the end of the capture
  uint64_t too_many_spans = 0;  // latency slices shown as instants: no lane free
  uint64_t evicted = 0;         // spans ended unfinished to free a lane
  uint64_t host_commands = 0;   // nvme commands shown (slices and instants)
  uint64_t host_incomplete = 0;  // of them, no completion in the capture: instants
  uint64_t flows = 0;           // host command -> firmware fetch
  uint64_t ftrace_events = 0;   // other ftrace events, to the bundles
  uint64_t fw_commands = 0;     // command-cause slices: commands drawn
  uint64_t fw_stages = 0;       // stages nested in them
  uint64_t fw_not_converted = 0;  // commands left out: no clock fit for them
  uint64_t cause_activities = 0;  // activities a wait was blamed on
  uint64_t cause_flows = 0;       // wait -> activity
};

// Flow ids of waits to their activities: above any host command's (ids
// 1..number of host commands, export_join.h).
inline constexpr uint64_t kCauseFlowBase = uint64_t{1} << 62;

// Span tracks per core at most. Begins whose end never comes (lost, or a
// hostile capture) would otherwise hold a track each for ever: past this,
// a new begin ends the span open longest ("unfinished": no end seen) and
// takes its track.
inline constexpr size_t kMaxLanes = 1024;

class DictionaryPlan;
class RecordPlan;

class ExportModel {
 public:
  // `dicts` must already hold the capture's dictionaries (a first pass),
  // which do not change while the model reads them (it plans their events
  // once: record_plan.h).
  ExportModel(DictionaryStore* dicts, ExportSink* sink);
  ~ExportModel();

  // The host commands and their flows; must outlive the model. Before Add().
  void SetJoin(const ExportJoin* join) { join_ = join; }
  // The capture's clock: named in the file (ClockSnapshot or a description
  // on each group) before any track.
  void SetClock(const ExportClock& clock);

  void Add(const CaptureEvent& ev);
  // A non-hmb ftrace event, to the sink as it is (counted).
  void AddFtrace(const ExportFtraceEvent& ev);
  // Writes the host commands, ends the spans still open at the last
  // timestamp.
  void Finish();

  const ExportCounts& counts() const { return counts_; }
  // ClockSet::ClockProblem() of the fits seen.
  std::string clock_problem() const { return clocks_.ClockProblem(); }

 private:
  using SpanKey = std::tuple<uint16_t, uint64_t, uint64_t>;  // (begin id, key, qid)
  struct Lane {
    uint64_t uuid = 0;
    bool open = false;
    uint64_t last = 0;  // the last timestamp on it
    SpanKey key{};      // open: the span on it
    uint64_t opened = 0;  // open: when it began
  };
  // A firmware core, or a host queue: a main track and its lanes.
  struct Core {
    uint16_t dev = 0;
    uint16_t core = 0;
    uint64_t group = 0;      // parent of its tracks
    int pid = 0;
    std::string track_name;  // "core K", "qid N"
    int rank = 0;            // of its main track; lane L: rank + L
    uint32_t gen = 0;
    bool seen = false;  // any record or loss placed yet
    uint64_t last_at = 0;
    std::vector<Lane> lanes;  // lanes[0]: the core's main track
    // The open spans: key -> lane (in OpenSpans' time slot), one probe
    // per BEGIN and END instead of a map node each.
    OpenSpans open;
    std::map<std::string, uint64_t> counters;  // event name -> track
  };
  struct Device {
    uint64_t group = 0;
    uint64_t state = 0;
    uint64_t lost = 0;
    uint64_t lost_total = 0;
    int pid = 0;
  };

  // What the records of a (dev, cpu) are read with until the next
  // hmb_state: their producer generation and its dictionary's plans.
  struct Source {
    uint32_t gen = 0;
    const DictionaryPlan* plans = nullptr;  // nullptr: no dictionary
  };
  const Source& SourceFor(uint16_t dev, int cpu);
  void AddRecord(const CaptureEvent& ev);
  // A firmware record as AddRecord has placed it, for the shapes it can
  // take below; each returns false when the record does not take it.
  struct PlacedRecord {
    const CaptureEvent& ev;
    Core& core;
    const RecordPlan* plan;  // nullptr: not in its dictionary
    const EventDesc* desc;   // the plan's
    std::string_view name;
    uint32_t name_id = 0;
    const FwTime& fw_time;
    uint32_t gen = 0;
    uint64_t ts = 0;  // its place on the timeline
  };
  // A counter event: a value on the core's track of that counter.
  bool AddCounterRecord(const PlacedRecord& r);
  // A BEGIN opens a slice on a free lane, its END closes it.
  bool AddPairedRecord(const PlacedRecord& r);
  // A record with a latency: a slice that ends at it.
  bool AddLatencyRecord(const PlacedRecord& r);
  // Anything else: an instant on the core's main track.
  void AddInstantRecord(const PlacedRecord& r);
  void AddLost(const CaptureEvent& ev);
  void AddState(const CaptureEvent& ev);
  void AddMarker(const CaptureEvent& ev);
  void AddHostCommands();
  // The command causes, at Finish() (see the top of this file).
  void AddCommandPaths();
  // The firmware command track of (dev, qid), or of resource `resource`.
  // A device's track of slices, `name` at `rank`, set up in `c`.
  void InitDeviceTrack(Core* c, uint16_t dev, uint16_t core, std::string name, int rank);
  Core& FwQueueFor(uint16_t dev, uint16_t qid);
  Core& ResourceFor(uint16_t dev, const std::string& resource);
  Core& QueueFor(uint32_t ctrl, uint16_t qid);
  // The flow ids of the firmware record (dev, core, gen, seq) onto `e`.
  void AddFlow(ExportEvent& e, uint16_t dev, uint16_t core, uint32_t gen, uint64_t seq);
  std::string GroupDescription() const;
  Device& DeviceFor(uint16_t dev);
  // The core's tracks; its spans still open end unfinished if `gen` is not
  // the generation of its previous record.
  Core& CoreFor(uint16_t dev, uint16_t core, uint32_t gen, uint64_t ts);
  // The arguments of a record: its sequence, firmware time and fields.
  void RecordArgs(const PlacedRecord& r, ExportEvent* e) const;
  uint64_t NewTrack(ExportTrack t, std::string description = {});
  // A lane of `c` free since before `from` (a new one if none is). With
  // kMaxLanes in use: for a begin (strictly_after), the lane of the span
  // open longest, ended at `from`; for a latency slice 0 (none).
  size_t FreeLane(Core& c, uint64_t from, bool strictly_after);
  void Emit(ExportEvent& e);
  // The core's open spans, in SpanKey order: (key, lane).
  static std::vector<std::pair<SpanKey, size_t>> OpenInOrder(const Core& c);
  // Ends the span open on `lane` at `at` (not before the lane's last
  // event), marked unfinished for `why`, and frees the lane.
  void EndUnfinished(Lane& lane, uint64_t at, std::string_view why);

  DictionaryStore* dicts_;
  ExportSink* sink_;
  ClockSet clocks_;  // in stream order
  std::map<uint16_t, Device> devices_;
  std::map<std::pair<uint16_t, uint16_t>, Core> cores_;
  const ExportJoin* join_ = nullptr;
  ExportClock clock_;
  std::map<uint32_t, std::pair<uint64_t, int>> controllers_;  // ctrl -> (group, pid)
  std::map<std::pair<uint32_t, uint16_t>, Core> queues_;      // (ctrl, qid)
  uint64_t markers_track_ = 0;
  uint64_t next_uuid_ = 1;
  int next_pid_ = 1;
  uint64_t last_ts_ = 0;
  ExportCounts counts_;
  // Command causes: fed only the records of dictionaries with attribution.
  CommandPaths paths_;
  ExportIds ids_;
  std::unordered_map<const Dictionary*, std::unique_ptr<DictionaryPlan>> plans_;
  std::unordered_map<uint64_t, Source> sources_;  // (dev, cpu); emptied at every hmb_state
  std::unordered_map<uint32_t, Core*> core_index_;  // (dev, core) -> cores_
  // The usual small devs, cores and CPUs by index instead of hashed, a
  // look-up per record each (sources_ and core_index_ for the others):
  // dev * kDirect + core (cpu).
  static constexpr size_t kDirectDevs = 16;
  static constexpr size_t kDirect = 256;
  static size_t DirectIndex(uint16_t dev, uint64_t n) {
    return dev < kDirectDevs && n < kDirect ? dev * kDirect + n : SIZE_MAX;
  }
  struct DirectSource {
    uint64_t epoch = 0;  // valid in source_epoch_ only
    Source src;
  };
  std::vector<DirectSource> direct_sources_;
  uint64_t source_epoch_ = 1;  // moves on where sources_ is emptied
  std::vector<Core*> direct_cores_;
  std::vector<uint32_t> path_gens_;  // per paths_ command: its producer generation
  std::map<std::pair<uint16_t, uint16_t>, Core> fw_queues_;     // (dev, qid)
  std::map<std::pair<uint16_t, std::string>, Core> resources_;  // (dev, resource)
  ExportEvent scratch_;  // reused: its vectors keep their capacity
};

// Suffix of a counter field's name -> the unit shown ("temperature_c" ->
// "°C"); "" if none is known.
std::string CounterUnit(std::string_view field_name);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_EXPORT_MODEL_H_
