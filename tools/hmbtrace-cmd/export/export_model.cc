// SPDX-License-Identifier: GPL-2.0-only
#include "export/export_model.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <queue>
#include <tuple>

#include "export/record_plan.h"
#include "format.h"
#include "join/nvme_capture.h"

namespace hmbtrace {
namespace {

// Ids of the constant names of record arguments (export_model.h); the
// plans' ids follow.
enum : uint32_t {
  kIdSeq = 1,
  kIdFwTs,
  kIdFwTimeBound,
  kIdFwTimeStale,
  kIdEnd,
  kFirstPlanId,
};

// Arguments are made in place in the event's vector (reused from event to
// event): no temporary ExportArg per field on the hot path.
ExportArg& NewArg(std::vector<ExportArg>* args, std::string_view name, ExportArg::Type type) {
  ExportArg& a = args->emplace_back();
  a.name = name;
  a.type = type;
  return a;
}

// Text the event owns (ExportEvent::texts).
std::string_view Keep(ExportEvent* e, std::string text) {
  return e->texts.emplace_back(std::move(text));
}

ExportArg& AddUint(std::vector<ExportArg>* args, std::string_view name, uint64_t v) {
  ExportArg& a = NewArg(args, name, ExportArg::Type::kUint);
  a.u = v;
  return a;
}

// A value that outlives the event (dictionary names, constants).
ExportArg& AddView(std::vector<ExportArg>* args, std::string_view name, std::string_view v) {
  ExportArg& a = NewArg(args, name, ExportArg::Type::kString);
  a.s = v;
  a.interned_string = true;
  return a;
}

// A value made for the event.
void AddStr(ExportEvent* e, std::string_view name, std::string v, bool interned = false) {
  ExportArg& a = NewArg(&e->args, name, ExportArg::Type::kString);
  a.s = Keep(e, std::move(v));
  a.interned_string = interned;
}

}  // namespace

std::string CounterUnit(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kSuffixes{{
      {"_c", "°C"},
      {"_ns", "ns"},
      {"_us", "us"},
      {"_ms", "ms"},
      {"_bytes", "bytes"},
      {"_pct", "%"},
      {"_mv", "mV"},
      {"_ma", "mA"},
  }};
  for (const auto& [suffix, unit] : kSuffixes)
    if (name.size() > suffix.size() && name.ends_with(suffix))
      return std::string(unit);
  return "";
}

ExportModel::ExportModel(DictionaryStore* dicts, ExportSink* sink)
    : dicts_(dicts), sink_(sink), ids_(kFirstPlanId) {}

ExportModel::~ExportModel() = default;

// The fields of a record (enum fields by name), its sequence number,
// firmware timestamp and how that was converted.
void ExportModel::RecordArgs(const PlacedRecord& r, ExportEvent* e) const {
  std::vector<ExportArg>* args = &e->args;
  const CaptureEvent& ev = r.ev;
  AddUint(args, "seq", ev.seq).name_id = kIdSeq;
  AddUint(args, "fw_ts", ev.fw_ts).name_id = kIdFwTs;
  if (ev.clock_format) {
    if (r.fw_time.converted()) {
      AddUint(args, "fw_time_bound_ns", r.fw_time.bound_ns).name_id = kIdFwTimeBound;
      if (r.fw_time.stale) {
        ExportArg& a = NewArg(args, "fw_time_stale_fit", ExportArg::Type::kBool);
        a.u = 1;
        a.name_id = kIdFwTimeStale;
      }
    } else {
      AddStr(e, "fw_time", "not converted: " + std::string(ClockMissName(r.fw_time.miss)), true);
    }
  }
  if (!r.plan) {
    AddUint(args, "event_id", ev.event_id);
    AddStr(e, "payload", Hex(ev.data));
    return;
  }
  r.plan->AppendFields(ev.data, e);
}

uint64_t ExportModel::NewTrack(ExportTrack t, std::string description) {
  t.uuid = next_uuid_++;
  t.description = std::move(description);
  sink_->Track(t);
  return t.uuid;
}

void ExportModel::EndUnfinished(Lane& lane, uint64_t at, std::string_view why) {
  ExportEvent& e = scratch_;
  e.type = ExportEvent::Type::kEnd;
  e.track = lane.uuid;
  e.ts = std::max(at, lane.last);
  e.name = {};
  AddView(&e.args, "unfinished", why);
  Emit(e);
  lane = Lane{lane.uuid, false, e.ts};
  counts_.unfinished++;
}

std::vector<std::pair<ExportModel::SpanKey, size_t>> ExportModel::OpenInOrder(const Core& c) {
  std::vector<std::pair<SpanKey, size_t>> open;
  for (size_t i = 0; i < c.lanes.size() && open.size() < c.open.size(); i++)
    if (c.lanes[i].open)
      open.emplace_back(c.lanes[i].key, i);
  std::sort(open.begin(), open.end());
  return open;
}

void ExportModel::Emit(ExportEvent& e) {
  sink_->Event(e);
  e.name_id = 0;
  e.args.clear();
  e.texts.clear();
  e.flow_ids.clear();
  e.terminating_flow_ids.clear();
}

ExportModel::Device& ExportModel::DeviceFor(uint16_t dev) {
  auto [it, added] = devices_.try_emplace(dev);
  Device& d = it->second;
  if (added) {
    std::string name = "hmb dev " + std::to_string(dev);
    if (auto info = dicts_->devices().find(dev);
        info != dicts_->devices().end() && !info->second.name.empty())
      name += " (" + info->second.name + ")";
    d.pid = next_pid_++;
    d.group =
        NewTrack({ExportTrack::Kind::kGroup, 0, 0, name, dev, "", d.pid}, GroupDescription());
    d.state = NewTrack({ExportTrack::Kind::kSlices, 0, d.group, "state", -2, "", d.pid});
    d.lost = NewTrack({ExportTrack::Kind::kCounter, 0, d.group, "lost records", -1, "count", d.pid});
  }
  return d;
}

void ExportModel::InitDeviceTrack(Core* c, uint16_t dev, uint16_t core, std::string name,
                                  int rank) {
  const Device& d = DeviceFor(dev);
  c->dev = dev;
  c->core = core;
  c->group = d.group;
  c->pid = d.pid;
  c->track_name = std::move(name);
  c->rank = rank;
  c->lanes.push_back(
      {NewTrack({ExportTrack::Kind::kSlices, 0, c->group, c->track_name, c->rank, "", c->pid}),
       false, 0});
}

ExportModel::Core& ExportModel::CoreFor(uint16_t dev, uint16_t core, uint32_t gen, uint64_t ts) {
  const size_t direct = DirectIndex(dev, core);
  if (direct != SIZE_MAX && direct_cores_.empty())
    direct_cores_.resize(kDirectDevs * kDirect);
  Core*& known =
      direct != SIZE_MAX ? direct_cores_[direct] : core_index_[uint32_t{dev} << 16 | core];
  if (!known) {
    auto [it, added] = cores_.try_emplace({dev, core});
    known = &it->second;
    if (added)
      InitDeviceTrack(known, dev, core, "core " + std::to_string(core), core * 1000);
  }
  Core& c = *known;
  if (gen != c.gen) {
    // A reset forgets commands in flight: end their spans here.
    const uint64_t at = std::max(ts, c.last_at);
    if (c.open.size()) {
      for (const auto& [key, lane] : OpenInOrder(c))
        EndUnfinished(c.lanes[lane], at, "producer generation changed");
      c.open.clear();
    }
    c.gen = gen;
  }
  return c;
}

size_t ExportModel::FreeLane(Core& c, uint64_t from, bool strictly_after) {
  // Lane 0 holds the core's instants; spans go on lanes 1...
  size_t lane = 1;
  while (lane < c.lanes.size() &&
         (c.lanes[lane].open ||
          (strictly_after ? c.lanes[lane].last >= from : c.lanes[lane].last > from)))
    lane++;
  if (lane == c.lanes.size()) {
    if (lane > kMaxLanes) {
      size_t oldest = 0;
      for (size_t i = 1; strictly_after && i < c.lanes.size(); i++)
        if (c.lanes[i].open && (!oldest || c.lanes[i].opened < c.lanes[oldest].opened))
          oldest = i;
      if (!oldest) {
        counts_.too_many_spans++;
        return 0;
      }
      Lane& l = c.lanes[oldest];
      uint64_t ignored;
      c.open.Close(std::get<0>(l.key), std::get<1>(l.key), std::get<2>(l.key), &ignored);
      EndUnfinished(l, from, "end not seen before 1024 later spans of its track");
      counts_.evicted++;
      return oldest;
    }
    c.lanes.push_back({NewTrack({ExportTrack::Kind::kSlices, 0, c.group, c.track_name,
                                 c.rank + static_cast<int>(lane), "", c.pid}),
                       false, 0});
  }
  return lane;
}

void ExportModel::Add(const CaptureEvent& ev) {
  last_ts_ = std::max(last_ts_, ev.ts);
  switch (ev.kind) {
    case CaptureKind::kRecord:
      counts_.hmb_events++;
      counts_.records++;
      AddRecord(ev);
      break;
    case CaptureKind::kLost:
      counts_.hmb_events++;
      AddLost(ev);
      break;
    case CaptureKind::kState:
      counts_.hmb_events++;
      AddState(ev);
      break;
    case CaptureKind::kDict:
      counts_.hmb_events++;
      break;
    case CaptureKind::kClock:
      counts_.hmb_events++;
      clocks_.Add(ClockFit{ev.dev, ev.producer_gen, ev.clock_flags, ev.clock, ev.clock_id});
      break;
    case CaptureKind::kMarker:
      AddMarker(ev);
      break;
    case CaptureKind::kMalformed:
      counts_.malformed++;
      break;
  }
}

const ExportModel::Source& ExportModel::SourceFor(uint16_t dev, int cpu) {
  const size_t direct = cpu >= 0 ? DirectIndex(dev, static_cast<uint64_t>(cpu)) : SIZE_MAX;
  Source* found;
  bool added;
  if (direct != SIZE_MAX) {
    if (direct_sources_.empty())
      direct_sources_.resize(kDirectDevs * kDirect);
    DirectSource& d = direct_sources_[direct];
    added = d.epoch != source_epoch_;
    if (added)
      d = DirectSource{source_epoch_, {}};
    found = &d.src;
  } else {
    auto it = sources_.try_emplace(uint64_t{dev} << 32 | static_cast<uint32_t>(cpu));
    found = &it.first->second;
    added = it.second;
  }
  Source& src = *found;
  if (added) {
    src.gen = dicts_->GenerationFor(dev, cpu);
    if (const Dictionary* dict = dicts_->For(dev, cpu)) {
      std::unique_ptr<DictionaryPlan>& plans = plans_[dict];
      if (!plans)
        plans = std::make_unique<DictionaryPlan>(*dict, &ids_);
      src.plans = plans.get();
    }
  }
  return src;
}

void ExportModel::AddState(const CaptureEvent& ev) {
  dicts_->FollowState(ev);
  sources_.clear();  // a new generation may start here
  source_epoch_++;
  clocks_.AddState(ev.dev, ev.producer_gen, ev.clock_hz);
  Device& d = DeviceFor(ev.dev);
  if (ev.state == 0)
    return;  // "attached" repeats every dict_interval_ms: not worth a mark
  if (ev.state == kStateReset)
    counts_.resets++;
  const std::string name = "state " + std::string(StateName(ev.state));
  ExportEvent& e = scratch_;
  e.type = ExportEvent::Type::kInstant;
  e.track = d.state;
  e.ts = ev.ts;
  e.name = name;
  AddUint(&e.args, "producer_gen", ev.producer_gen);
  AddStr(&e, "name", Printable(ev.name));
  Emit(e);
}

void ExportModel::AddMarker(const CaptureEvent& ev) {
  counts_.markers++;
  if (!markers_track_)
    markers_track_ = NewTrack({ExportTrack::Kind::kSlices, 0, 0, "trace_marker", 1 << 20, "",
                               next_pid_++});
  const std::string text = PayloadText(ev.data);
  ExportEvent& e = scratch_;
  e.type = ExportEvent::Type::kInstant;
  e.track = markers_track_;
  e.ts = ev.ts;
  e.name = text;
  Emit(e);
}

void ExportModel::AddLost(const CaptureEvent& ev) {
  counts_.lost_events++;
  counts_.lost_records += ev.count;
  Core& c = CoreFor(ev.dev, ev.core, SourceFor(ev.dev, ev.cpu).gen, ev.ts);
  Device& d = devices_.at(ev.dev);
  // Where it happened: after the core's previous record (its ftrace time
  // is when the module noticed, which may be later than the next record).
  const uint64_t at = c.seen ? c.last_at : ev.ts;
  c.seen = true;
  c.last_at = at;
  ExportEvent& e = scratch_;
  e.type = ExportEvent::Type::kInstant;
  e.track = c.lanes[0].uuid;
  e.ts = std::max(at, c.lanes[0].last);
  c.lanes[0].last = e.ts;
  e.name = "lost";
  AddUint(&e.args, "count", ev.count);
  AddView(&e.args, "reason", LostReasonName(ev.reason));
  AddUint(&e.args, "at_seq", ev.at_seq);
  Emit(e);
  // The device's running total: a step at every loss.
  d.lost_total += ev.count;
  e.type = ExportEvent::Type::kCounter;
  e.track = d.lost;
  e.ts = ev.ts;
  e.name = {};
  e.counter = static_cast<int64_t>(d.lost_total);
  Emit(e);
}

void ExportModel::AddRecord(const CaptureEvent& ev) {
  // Placed at its converted firmware time where the capture has a fit.
  uint64_t ts = ev.ts;
  const Source& src = SourceFor(ev.dev, ev.cpu);
  const uint32_t gen = src.gen;
  // Made where it stays and read member by member (PlacedRecord points to
  // it): a copy's wide loads of the callee's narrow stores stalled.
  const FwTime fw_time =
      ev.clock_format || ev.retimed ? RecordFwTime(clocks_, gen, ev) : FwTime();
  if (fw_time.converted())
    ts = std::min(fw_time.host_ns, ev.ts);  // never after its drain
  Core& core = CoreFor(ev.dev, ev.core, gen, ts);
  ts = std::max(ts, core.last_at);
  core.last_at = ts;
  core.seen = true;
  const RecordPlan* plan = src.plans ? src.plans->Find(ev.event_id) : nullptr;
  const EventDesc* desc = plan ? &plan->desc() : nullptr;
  std::string unknown_name;
  if (!plan)
    unknown_name = "event " + std::to_string(ev.event_id);
  const std::string_view name = plan ? plan->name() : std::string_view(unknown_name);
  if (plan && src.plans->attributing()) {
    paths_.Add(ev.dev, ev.fw_ts, *desc, ev.data);
    path_gens_.resize(paths_.commands().size(), gen);
  }
  scratch_.ts = ts;
  const PlacedRecord r{ev, core, plan, desc, name, plan ? plan->name_id() : 0, fw_time, gen, ts};
  if (AddCounterRecord(r) || AddPairedRecord(r) || AddLatencyRecord(r))
    return;
  AddInstantRecord(r);
}

void ExportModel::AddInstantRecord(const PlacedRecord& r) {
  ExportEvent& e = scratch_;
  Lane& main = r.core.lanes[0];
  e.type = ExportEvent::Type::kInstant;
  e.track = main.uuid;
  e.ts = std::max(r.ts, main.last);
  main.last = e.ts;
  e.name = r.name;
  e.name_id = r.name_id;
  RecordArgs(r, &e);
  AddFlow(e, r.ev.dev, r.ev.core, r.gen, r.ev.seq);
  Emit(e);
}

bool ExportModel::AddCounterRecord(const PlacedRecord& r) {
  const EventDesc* desc = r.desc;
  if (!desc || desc->role != HMB_TRACE_ROLE_COUNTER || !r.plan->value.present())
    return false;
  const auto v = r.plan->value.Value(r.ev.data);
  if (!v)
    return false;
  const FieldDesc& f = *r.plan->value.field();
  auto [it, added] = r.core.counters.try_emplace(desc->name, 0);
  if (added) {
    const Device& d = devices_.at(r.ev.dev);
    it->second = NewTrack({ExportTrack::Kind::kCounter, 0, d.group,
                           "core " + std::to_string(r.ev.core) + " " + desc->name + " " + f.name,
                           1000000 + r.ev.core, CounterUnit(f.name), d.pid});
  }
  ExportEvent& e = scratch_;
  e.type = ExportEvent::Type::kCounter;
  e.track = it->second;
  e.name = {};
  e.counter = f.is_signed() ? static_cast<int64_t>(*v) : static_cast<int64_t>(*v);
  Emit(e);
  return true;
}

bool ExportModel::AddPairedRecord(const PlacedRecord& r) {
  const EventDesc* desc = r.desc;
  if (!desc || (desc->role != HMB_TRACE_ROLE_BEGIN && desc->role != HMB_TRACE_ROLE_END) ||
      desc->key_field == HMB_TRACE_NO_FIELD)
    return false;
  Core& core = r.core;
  ExportEvent& e = scratch_;
  const auto key = r.plan->key.Value(r.ev.data);
  const uint64_t qid = r.plan->qid.Value(r.ev.data).value_or(0);
  if (key && desc->role == HMB_TRACE_ROLE_BEGIN && !core.open.Contains(desc->id, *key, qid)) {
    // The lowest lane free since before now: an end and a begin at one
    // timestamp on one track could be ordered either way by a viewer.
    const size_t lane = FreeLane(core, r.ts, true);
    if (lane == 0) {
      AddInstantRecord(r);
      return true;
    }
    core.lanes[lane].open = true;
    core.lanes[lane].last = r.ts;
    core.lanes[lane].key = {desc->id, *key, qid};
    core.lanes[lane].opened = r.ts;
    core.open.Open(desc->id, *key, qid, lane);
    e.type = ExportEvent::Type::kBegin;
    e.track = core.lanes[lane].uuid;
    e.ts = r.ts;  // FreeLane may have used the scratch event
    e.name = r.name;
    e.name_id = r.name_id;
    RecordArgs(r, &e);
    AddFlow(e, r.ev.dev, r.ev.core, r.gen, r.ev.seq);
    Emit(e);
    counts_.slices++;
    return true;
  }
  if (key && desc->role == HMB_TRACE_ROLE_END) {
    uint64_t lane_index;
    if (core.open.Close(desc->pair_id, *key, qid, &lane_index)) {
      Lane& lane = core.lanes[lane_index];
      e.type = ExportEvent::Type::kEnd;
      e.track = lane.uuid;
      e.ts = std::max(r.ts, lane.last);
      e.name = {};
      RecordArgs(r, &e);
      ExportArg& end = AddView(&e.args, "end", r.name);
      end.name_id = kIdEnd;
      end.value_id = r.name_id;
      lane = Lane{lane.uuid, false, e.ts};
      Emit(e);
      return true;
    }
  }
  // A begin already open or an end with no begin: shown as the others.
  return false;
}

bool ExportModel::AddLatencyRecord(const PlacedRecord& r) {
  const EventDesc* desc = r.desc;
  if (!desc || desc->latency_field == HMB_TRACE_NO_FIELD)
    return false;
  const uint64_t hz = clocks_.ClockHz(r.ev.dev, r.gen);
  const auto ticks = r.plan->latency.Value(r.ev.data);
  if (!hz || !ticks)
    return false;
  // It took `latency` up to now: a slice that ends here.
  const unsigned __int128 ns = static_cast<unsigned __int128>(*ticks) * 1000000000u / hz;
  const uint64_t start = ns >= r.ts ? 0 : r.ts - static_cast<uint64_t>(ns);
  const size_t lane = FreeLane(r.core, start, false);
  if (lane == 0) {
    AddInstantRecord(r);
    return true;
  }
  Lane& l = r.core.lanes[lane];
  ExportEvent& e = scratch_;
  e.type = ExportEvent::Type::kBegin;
  e.track = l.uuid;
  e.ts = start;
  e.name = r.name;
  e.name_id = r.name_id;
  AddFlow(e, r.ev.dev, r.ev.core, r.gen, r.ev.seq);
  Emit(e);
  // The record itself is the end: its fields, at its time.
  e.type = ExportEvent::Type::kEnd;
  e.track = l.uuid;
  e.ts = r.ts;
  e.name = {};
  RecordArgs(r, &e);
  Emit(e);
  l.last = r.ts;
  counts_.slices++;
  return true;
}

void ExportModel::AddFlow(ExportEvent& e,
                          uint16_t dev,
                          uint16_t core,
                          uint32_t gen,
                          uint64_t seq) {
  if (!join_)
    return;
  const FwFlowEnd* end = join_->FlowAt(dev, core, gen, seq);
  if (!end)
    return;
  // A flow starts at the first event (by time) that names it.
  if (e.ts >= end->host_setup_ns)
    e.terminating_flow_ids.push_back(end->flow);
  else
    e.flow_ids.push_back(end->flow);
}

std::string ExportModel::GroupDescription() const {
  if (clock_.trace_clock.empty())
    return "Timestamps: the capture's trace clock (the file does not name it), written as "
           "BOOTTIME: they line up within this file only.";
  if (clock_.boottime())
    return "Timestamps: the capture's trace clock \"boot\" (CLOCK_BOOTTIME).";
  return "Timestamps: the capture's trace clock \"" + clock_.trace_clock +
         "\", written as BOOTTIME: they line up within this file only.";
}

void ExportModel::SetClock(const ExportClock& clock) {
  clock_ = clock;
  // Firmware records go on the hmb events' clock: its fits convert them.
  (void)clocks_.SetTraceClock(clock.trace_clock);
  sink_->Clock(clock_);
}

void ExportModel::AddFtrace(const ExportFtraceEvent& ev) {
  counts_.ftrace_events++;
  last_ts_ = std::max(last_ts_, ev.ts);
  sink_->Ftrace(ev);
}

ExportModel::Core& ExportModel::QueueFor(uint32_t ctrl, uint16_t qid) {
  auto [it, added] = queues_.try_emplace({ctrl, qid});
  Core& q = it->second;
  if (added) {
    auto [cit, new_ctrl] = controllers_.try_emplace(ctrl);
    if (new_ctrl) {
      cit->second.second = next_pid_++;
      cit->second.first =
          NewTrack({ExportTrack::Kind::kGroup, 0, 0, "nvme" + std::to_string(ctrl),
                    (1 << 16) + static_cast<int>(std::min<uint32_t>(ctrl, 1 << 14)), "",
                    cit->second.second},
                   GroupDescription());
    }
    q.group = cit->second.first;
    q.pid = cit->second.second;
    q.core = qid;
    q.track_name = "qid " + std::to_string(qid);
    q.rank = qid * 1000;  // the admin queue (0) first
    q.lanes.push_back(
        {NewTrack({ExportTrack::Kind::kSlices, 0, q.group, q.track_name, q.rank, "", q.pid}),
         false, 0});
  }
  return q;
}

void ExportModel::AddHostCommands() {
  if (!join_)
    return;
  // Slices begin in setup order; their ends wait here until no later
  // begin comes before them, so that every track's times go forward.
  struct PendingEnd {
    uint64_t ts;
    size_t command;
    Core* queue;
    size_t lane;
    bool operator>(const PendingEnd& o) const {
      return std::tie(ts, command) > std::tie(o.ts, o.command);
    }
  };
  std::priority_queue<PendingEnd, std::vector<PendingEnd>, std::greater<>> ends;
  auto end_until = [&](uint64_t until, bool all) {
    while (!ends.empty() && (all || ends.top().ts <= until)) {
      const PendingEnd p = ends.top();
      ends.pop();
      Lane& lane = p.queue->lanes[p.lane];
      const SpanKey key{0, p.command, p.queue->core};
      if (!lane.open || lane.key != key)
        continue;  // evicted (no lane was free): already ended unfinished
      ExportEvent& e = scratch_;
      e.type = ExportEvent::Type::kEnd;
      e.track = lane.uuid;
      e.ts = std::max(p.ts, lane.last);
      e.name = {};
      Emit(e);
      lane = Lane{lane.uuid, false, e.ts};
      uint64_t ignored;
      p.queue->open.Close(0, p.command, p.queue->core, &ignored);
    }
  };
  const std::vector<ExportHostCommand>& commands = join_->commands;
  for (size_t i = 0; i < commands.size(); i++) {
    const ExportHostCommand& h = commands[i];
    end_until(h.setup_ns, false);
    Core& q = QueueFor(h.ctrl, h.qid);
    const std::string name = NvmeCommandName(h.qid, h.opcode);
    size_t lane = 0;
    if (h.completed) {
      lane = FreeLane(q, h.setup_ns, true);
      q.lanes[lane].open = true;
      q.lanes[lane].key = {0, i, h.qid};
      q.lanes[lane].opened = h.setup_ns;
      q.open.Open(0, i, h.qid, lane);
      ends.push({h.complete_ns, i, &q, lane});
    } else {
      counts_.host_incomplete++;
    }
    Lane& l = q.lanes[lane];
    ExportEvent& e = scratch_;
    e.type = h.completed ? ExportEvent::Type::kBegin : ExportEvent::Type::kInstant;
    e.track = l.uuid;
    e.ts = std::max(h.setup_ns, l.last);
    l.last = e.ts;
    e.name = name;
    AddUint(&e.args, "cid", h.cid);
    AddUint(&e.args, "nsid", h.nsid);
    AddUint(&e.args, "opcode", h.opcode);
    if (h.completed)
      AddUint(&e.args, "status", h.status);
    else
      AddView(&e.args, "completion", HostUnmatchedName(HostUnmatched::kNotCompleted));
    AddView(&e.args, "fw_fetch",
            h.flow ? std::string_view("joined") : HostUnmatchedName(h.why_no_fetch));
    AddView(&e.args, "fw_complete",
            h.why_no_complete == HostUnmatched::kNone ? std::string_view("joined")
                                                      : HostUnmatchedName(h.why_no_complete));
    if (h.flow) {
      e.flow_ids.push_back(h.flow);
      counts_.flows++;
    }
    Emit(e);
    counts_.host_commands++;
  }
  end_until(0, true);
}

ExportModel::Core& ExportModel::FwQueueFor(uint16_t dev, uint16_t qid) {
  auto [it, added] = fw_queues_.try_emplace({dev, qid});
  if (added)
    InitDeviceTrack(&it->second, dev, qid, "fw qid " + std::to_string(qid), 2000000 + qid * 1000);
  return it->second;
}

ExportModel::Core& ExportModel::ResourceFor(uint16_t dev, const std::string& resource) {
  auto [it, added] = resources_.try_emplace({dev, resource});
  if (added)
    InitDeviceTrack(&it->second, dev, 0, resource,
                    3000000 + static_cast<int>(std::min<size_t>(resources_.size(), 1000)) * 1000);
  return it->second;
}

void ExportModel::AddCommandPaths() {
  paths_.Finish();
  if (!paths_.any())
    return;
  // An activity blamed for waits: (dev, resource, begin, end, name).
  using ActivityKey = std::tuple<uint16_t, std::string, uint64_t, uint64_t, std::string>;
  struct Blamed {
    std::string text;
    uint32_t gen = 0;
    std::vector<std::pair<uint64_t, bool>> flows;  // (id, the activity begins first)
  };
  std::map<ActivityKey, Blamed> blamed;
  uint64_t next_flow = kCauseFlowBase;
  const std::vector<CommandPath>& commands = paths_.commands();
  for (size_t i = 0; i < commands.size(); i++) {
    const CommandPath& c = commands[i];
    if (!c.completed)
      continue;
    const uint32_t gen = i < path_gens_.size() ? path_gens_[i] : 0;
    const FwTime fetch = clocks_.Convert(c.dev, gen, c.fetch);
    const FwTime complete = clocks_.Convert(c.dev, gen, c.complete);
    if (!fetch.converted() || !complete.converted()) {
      counts_.fw_not_converted++;
      continue;
    }
    Core& q = FwQueueFor(c.dev, c.qid);
    const size_t lane_index = FreeLane(q, fetch.host_ns, true);
    if (lane_index == 0)
      continue;  // counted (too_many_spans)
    Lane& lane = q.lanes[lane_index];
    ExportEvent& e = scratch_;
    e.type = ExportEvent::Type::kBegin;
    e.track = lane.uuid;
    e.ts = std::max(fetch.host_ns, lane.last);
    e.name = c.opcode;
    AddUint(&e.args, "cid", c.cid);
    AddStr(&e, "main_cause", c.MainCause(), true);
    const uint64_t end = std::max(complete.host_ns, e.ts);
    uint64_t cursor = e.ts;
    Emit(e);
    counts_.fw_commands++;
    for (const CommandStage* st : c.StagesByBegin()) {
      const FwTime b = clocks_.Convert(c.dev, gen, st->begin);
      const FwTime f = clocks_.Convert(c.dev, gen, st->end);
      if (!b.converted() || !f.converted())
        continue;
      // Nested in the command and after the previous stage.
      const uint64_t at = std::clamp(b.host_ns, cursor, end);
      const uint64_t until = std::clamp(f.host_ns, at, end);
      const std::string name = st->is_delay() ? st->name + " (" + st->cause + ")" : st->name;
      e.type = ExportEvent::Type::kBegin;
      e.ts = at;
      e.name = name;
      if (st->is_delay()) {
        AddView(&e.args, "cause", st->cause);
        if (!st->resource.empty())
          AddView(&e.args, "resource", st->resource);
      }
      if (st->kind == HMB_TRACE_CMD_WAIT && !st->resource.empty() &&
          st->cause_end > st->cause_begin && st->cause != kCauseQueueing &&
          st->cause != kCauseUnattributed) {
        const FwTime ab = clocks_.Convert(c.dev, gen, st->cause_begin);
        if (ab.converted()) {
          Blamed& a = blamed[{c.dev, st->resource, st->cause_begin, st->cause_end, st->cause}];
          a.text = st->cause_text;
          a.gen = gen;
          const bool activity_first = ab.host_ns < at;
          a.flows.emplace_back(next_flow, activity_first);
          (activity_first ? e.terminating_flow_ids : e.flow_ids).push_back(next_flow);
          next_flow++;
          counts_.cause_flows++;
        }
      }
      Emit(e);
      e.type = ExportEvent::Type::kEnd;
      e.ts = until;
      e.name = {};
      Emit(e);
      cursor = until;
      counts_.fw_stages++;
    }
    e.type = ExportEvent::Type::kEnd;
    e.ts = end;
    e.name = {};
    Emit(e);
    lane.last = end;
  }
  // The activities, per resource in time order (the map's order).
  for (const auto& [key, a] : blamed) {
    const auto& [dev, resource, begin, end_ticks, name] = key;
    const FwTime b = clocks_.Convert(dev, a.gen, begin);
    const FwTime f = clocks_.Convert(dev, a.gen, end_ticks);
    Core& r = ResourceFor(dev, resource);
    const size_t lane_index = FreeLane(r, b.host_ns, true);
    if (lane_index == 0)
      continue;
    Lane& lane = r.lanes[lane_index];
    ExportEvent& e = scratch_;
    e.type = ExportEvent::Type::kBegin;
    e.track = lane.uuid;
    e.ts = std::max(b.host_ns, lane.last);
    e.name = name;
    if (!a.text.empty())
      AddStr(&e, "record", a.text);
    for (const auto& [id, activity_first] : a.flows)
      (activity_first ? e.flow_ids : e.terminating_flow_ids).push_back(id);
    Emit(e);
    e.type = ExportEvent::Type::kEnd;
    e.ts = std::max(f.converted() ? f.host_ns : e.ts, e.ts);
    e.name = {};
    Emit(e);
    lane.last = e.ts;
    counts_.cause_activities++;
  }
}

void ExportModel::Finish() {
  AddHostCommands();
  AddCommandPaths();
  for (auto& [key, core] : cores_) {
    if (!core.open.size())
      continue;
    for (const auto& [span, lane] : OpenInOrder(core))
      EndUnfinished(core.lanes[lane], last_ts_, "capture ended");
    core.open.clear();
  }
}

}  // namespace hmbtrace
