// SPDX-License-Identifier: GPL-2.0-only
#include "export_perfetto.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "format.h"

namespace hmbtrace {
namespace {

using nlohmann::json;

int DevPid(uint16_t dev) {
  return dev + 1;
}
int CoreTid(uint16_t core, size_t lane) {
  return core * kLaneStride + 1 + static_cast<int>(lane);
}

std::string Text(std::span<const uint8_t> bytes) {
  std::string_view s(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  while (!s.empty() && s.back() == '\0')
    s.remove_suffix(1);
  return Printable(s);
}

// The integer fields of a record as args; everything as the decoded text.
json RecordArgs(const CaptureEvent& ev, const EventDesc* desc, const FwTime& fw_time) {
  json args;
  args["seq"] = ev.seq;
  args["fw_ts"] = ev.fw_ts;
  if (ev.clock_format) {
    if (fw_time.converted()) {
      args["fw_time_bound_ns"] = fw_time.bound_ns;
      if (fw_time.stale)
        args["fw_time_stale_fit"] = true;
    } else {
      args["fw_time"] = "not converted: " + std::string(ClockMissName(fw_time.miss));
    }
  }
  if (!desc) {
    args["event_id"] = ev.event_id;
    args["payload"] = Hex(ev.data);
    return args;
  }
  for (size_t i = 0; i < desc->fields.size(); i++)
    if (auto v = FieldValue(*desc, i, ev.data))
      args[desc->fields[i].name] =
          desc->fields[i].is_signed() ? json(static_cast<int64_t>(*v)) : json(*v);
  args["text"] = FormatEvent(*desc, ev.data);
  return args;
}

}  // namespace

json PerfettoExporter::Base(const char* ph,
                            const std::string& name,
                            int pid,
                            int tid,
                            uint64_t ts) {
  json e;
  e["ph"] = ph;
  e["name"] = name;
  e["pid"] = pid;
  e["tid"] = tid;
  e["ts"] = static_cast<double>(ts) / 1000.0;
  return e;
}

PerfettoExporter::Core& PerfettoExporter::CoreFor(const CaptureEvent& ev) {
  Core& c = cores_[{ev.dev, ev.core}];
  const uint32_t gen = dicts_->GenerationFor(ev.dev, ev.cpu);
  if (gen != c.gen) {
    // A reset forgets commands in flight: end their spans here.
    for (auto& [key, open] : c.open) {
      json e = Base("E", open.second, DevPid(ev.dev), CoreTid(ev.core, open.first + 1), ev.ts);
      e["args"]["unfinished"] = "producer generation changed";
      events_.push_back(std::move(e));
      c.lanes[open.first] = Lane{false, ev.ts};
    }
    c.open.clear();
    c.gen = gen;
  }
  return c;
}

void PerfettoExporter::Add(const CaptureEvent& ev) {
  last_ts_ = std::max(last_ts_, ev.ts);
  switch (ev.kind) {
    case CaptureKind::kRecord:
      hmb_events_++;
      AddRecord(ev);
      break;
    case CaptureKind::kLost: {
      hmb_events_++;
      CoreFor(ev);
      json e = Base("i", "lost", DevPid(ev.dev), CoreTid(ev.core, 0), ev.ts);
      e["s"] = "t";
      e["args"] = {
          {"count", ev.count}, {"reason", LostReasonName(ev.reason)}, {"at_seq", ev.at_seq}};
      events_.push_back(std::move(e));
      break;
    }
    case CaptureKind::kState: {
      hmb_events_++;
      dicts_->FollowState(ev);
      clocks_.AddState(ev.dev, ev.producer_gen, ev.clock_hz);
      if (ev.state == 0)
        break;  // "attached" repeats every dict_interval_ms: not worth a mark
      json e = Base("i", "state " + std::string(StateName(ev.state)), DevPid(ev.dev), 0, ev.ts);
      e["s"] = "p";
      e["args"] = {{"producer_gen", ev.producer_gen}, {"name", Printable(ev.name)}};
      events_.push_back(std::move(e));
      break;
    }
    case CaptureKind::kDict:
      hmb_events_++;
      break;
    case CaptureKind::kClock:
      hmb_events_++;
      clocks_.Add(ClockFit{ev.dev, ev.producer_gen, ev.clock_flags, ev.clock});
      break;
    case CaptureKind::kMarker: {
      markers_ = true;
      json e = Base("i", Text(ev.data), kMarkersPid, 1, ev.ts);
      e["s"] = "t";
      events_.push_back(std::move(e));
      break;
    }
    case CaptureKind::kMalformed:
      break;
  }
}

void PerfettoExporter::AddRecord(const CaptureEvent& in) {
  // Placed at its converted firmware time where the capture has a fit.
  CaptureEvent ev = in;
  FwTime fw_time;
  if (ev.clock_format) {
    fw_time = clocks_.Convert(ev.dev, dicts_->GenerationFor(ev.dev, ev.cpu), ev.fw_ts);
    if (fw_time.converted())
      ev.ts = std::min(fw_time.host_ns, ev.ts);  // never after its drain
  }
  Core& core = CoreFor(ev);
  ev.ts = std::max(ev.ts, core.last_at);
  core.last_at = ev.ts;
  const Dictionary* dict = dicts_->For(ev.dev, ev.cpu);
  const EventDesc* desc = dict ? dict->Find(ev.event_id) : nullptr;
  const int pid = DevPid(ev.dev);
  const std::string name = desc ? desc->name : "event " + std::to_string(ev.event_id);

  if (desc && desc->role == HMB_TRACE_ROLE_COUNTER && desc->value_field != HMB_TRACE_NO_FIELD) {
    if (auto v = FieldValue(*desc, desc->value_field, ev.data)) {
      const FieldDesc& f = desc->fields[desc->value_field];
      json e = Base("C", "core " + std::to_string(ev.core) + " " + name, pid, CoreTid(ev.core, 0),
                    ev.ts);
      e["args"][f.name] = f.is_signed() ? json(static_cast<int64_t>(*v)) : json(*v);
      events_.push_back(std::move(e));
      return;
    }
  }
  if (desc && (desc->role == HMB_TRACE_ROLE_BEGIN || desc->role == HMB_TRACE_ROLE_END) &&
      desc->key_field != HMB_TRACE_NO_FIELD) {
    const auto key = FieldValue(*desc, desc->key_field, ev.data);
    const uint64_t qid = desc->qid_field == HMB_TRACE_NO_FIELD
                             ? 0
                             : FieldValue(*desc, desc->qid_field, ev.data).value_or(0);
    if (key && desc->role == HMB_TRACE_ROLE_BEGIN && !core.open.count({desc->id, *key, qid})) {
      // The lowest lane free since before now: an E and a B at one
      // timestamp on one thread could be ordered either way by a viewer.
      size_t lane = 0;
      while (lane < core.lanes.size() &&
             (core.lanes[lane].open || core.lanes[lane].last_end >= ev.ts))
        lane++;
      if (lane == core.lanes.size())
        core.lanes.push_back({});
      core.lanes[lane].open = true;
      core.open[{desc->id, *key, qid}] = {lane, name};
      json e = Base("B", name, pid, CoreTid(ev.core, lane + 1), ev.ts);
      e["args"] = RecordArgs(ev, desc, fw_time);
      events_.push_back(std::move(e));
      return;
    }
    if (key && desc->role == HMB_TRACE_ROLE_END) {
      auto it = core.open.find({desc->pair_id, *key, qid});
      if (it != core.open.end()) {
        const size_t lane = it->second.first;
        json e = Base("E", it->second.second, pid, CoreTid(ev.core, lane + 1), ev.ts);
        e["args"] = RecordArgs(ev, desc, fw_time);
        e["args"]["end"] = name;
        events_.push_back(std::move(e));
        core.lanes[lane] = Lane{false, ev.ts};
        core.open.erase(it);
        return;
      }
    }
    // A begin already open or an end with no begin: shown as an instant.
  }
  json e = Base("i", name, pid, CoreTid(ev.core, 0), ev.ts);
  e["s"] = "t";
  e["args"] = RecordArgs(ev, desc, fw_time);
  events_.push_back(std::move(e));
}

json PerfettoExporter::Finish() {
  for (auto& [key, core] : cores_) {
    for (auto& [span, open] : core.open) {
      json e =
          Base("E", open.second, DevPid(key.first), CoreTid(key.second, open.first + 1), last_ts_);
      e["args"]["unfinished"] = "capture ended";
      events_.push_back(std::move(e));
    }
    core.open.clear();
  }
  // Metadata: names and order of processes and threads.
  json meta = json::array();
  std::map<uint16_t, bool> devs;
  for (const auto& [key, core] : cores_) {
    const auto [dev, c] = key;
    if (!devs[dev]) {
      devs[dev] = true;
      std::string name = "hmb dev " + std::to_string(dev);
      if (auto it = dicts_->devices().find(dev);
          it != dicts_->devices().end() && !it->second.name.empty())
        name += " (" + it->second.name + ")";
      meta.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", DevPid(dev)},
                      {"args", {{"name", name}}}});
      meta.push_back({{"ph", "M"},
                      {"name", "process_sort_index"},
                      {"pid", DevPid(dev)},
                      {"args", {{"sort_index", dev}}}});
    }
    for (size_t lane = 0; lane <= core.lanes.size(); lane++) {
      const std::string name =
          "core " + std::to_string(c) + (lane ? " spans " + std::to_string(lane) : std::string());
      meta.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", DevPid(dev)},
                      {"tid", CoreTid(c, lane)},
                      {"args", {{"name", name}}}});
      meta.push_back({{"ph", "M"},
                      {"name", "thread_sort_index"},
                      {"pid", DevPid(dev)},
                      {"tid", CoreTid(c, lane)},
                      {"args", {{"sort_index", CoreTid(c, lane)}}}});
    }
  }
  if (markers_) {
    meta.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", kMarkersPid},
                    {"args", {{"name", "trace_marker"}}}});
    meta.push_back({{"ph", "M"},
                    {"name", "thread_name"},
                    {"pid", kMarkersPid},
                    {"tid", 1},
                    {"args", {{"name", "markers"}}}});
  }
  for (auto& e : events_)
    meta.push_back(std::move(e));
  events_ = json::array();
  json doc;
  doc["traceEvents"] = std::move(meta);
  doc["displayTimeUnit"] = "ns";
  doc["otherData"] = {{"producer", "hmbtrace-cmd export"},
                      {"clock", "host trace clock, us; firmware records at their converted time"}};
  return doc;
}

int RunExportPerfetto(const std::string& input, const std::string& output) {
  DictionaryStore dicts;
  std::string error;
  PerfettoExporter exporter(&dicts);
  if (!ReadCaptureWithDictionaries(
          input, &dicts,
          [&exporter](const CaptureEvent& ev) {
            exporter.Add(ev);
            return true;
          },
          &error)) {
    std::fprintf(stderr, "hmbtrace-cmd export: %s\n", error.c_str());
    return 1;
  }
  if (exporter.hmb_events() == 0) {
    std::fprintf(stderr, "hmbtrace-cmd export: %s: no hmb events; %s\n", input.c_str(),
                 std::string(kRecordHint).c_str());
    return 1;
  }
  const std::string doc = exporter.Finish().dump() + "\n";
  // Write beside the target, then rename: no half-written file on failure.
  const std::string tmp = output + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "hmbtrace-cmd export: %s: %s\n", tmp.c_str(), std::strerror(errno));
    return 1;
  }
  const bool written = std::fwrite(doc.data(), 1, doc.size(), f) == doc.size();
  if (std::fclose(f) != 0 || !written || std::rename(tmp.c_str(), output.c_str()) != 0) {
    std::fprintf(stderr, "hmbtrace-cmd export: %s: %s\n", output.c_str(), std::strerror(errno));
    std::remove(tmp.c_str());
    return 1;
  }
  return 0;
}

}  // namespace hmbtrace
