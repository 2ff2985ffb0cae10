// SPDX-License-Identifier: GPL-2.0-only
#include "stat/stat.h"

#include "causes/cause_stat.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>

#include "dump/dump_file.h"
#include "format.h"
#include "join/nvme_capture.h"
#include "stat/histogram.h"
#include "stat/html_report.h"

namespace hmbtrace {
namespace {

std::string EventName(const EventDesc* desc, uint16_t id) {
  return desc ? desc->name : "event " + std::to_string(id);
}

double TicksToUs(uint64_t ticks, uint64_t clock_hz) {
  return clock_hz ? static_cast<double>(ticks) * 1e6 / static_cast<double>(clock_hz) : 0;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// Right-aligned (left-aligned if `left`) in `width` columns, and never
// touching the column before it.
std::string Pad(const std::string& s, size_t width, bool left = false) {
  if (s.size() >= width)
    return left ? s + " " : " " + s;
  const std::string fill(width - s.size(), ' ');
  return left ? s + fill : fill + s;
}

uint64_t TicksToNs(uint64_t ticks, uint64_t hz) {
  // The same quotient without a 128-bit division where the product fits.
  if (hz == 1000000000u)
    return ticks;
  if (ticks <= UINT64_MAX / 1000000000u)
    return ticks * 1000000000u / hz;
  const unsigned __int128 ns = static_cast<unsigned __int128>(ticks) * 1000000000u / hz;
  return ns > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(ns);
}

}  // namespace

LatencySummary Summarize(const QuantileHistogram& h) {
  LatencySummary s;
  s.count = h.count();
  s.min = h.min();
  s.max = h.max();
  s.median = h.Median();
  s.p99 = h.P99();
  return s;
}

void LatencyStat::Add(uint64_t t, uint64_t hz) {
  ticks.Add(t);
  plot.Add(hz ? TicksToNs(t, hz) : t);
}

void CoreStat::AddLatency(const std::string& name, uint64_t ticks, uint64_t hz) {
  latencies[name].Add(ticks, hz);
}

uint64_t StatCollector::ClockHz(uint16_t dev) const {
  const auto it = dicts_->devices().find(dev);
  return it == dicts_->devices().end() ? 0 : it->second.clock_hz;
}

void StatCollector::SetSpan(uint64_t first_ts, uint64_t last_ts) {
  span_set_ = true;
  span_first_ = first_ts;
  span_last_ = last_ts;
}

uint64_t ClockStat::not_converted_total() const {
  uint64_t n = 0;
  for (uint64_t v : not_converted)
    n += v;
  return n;
}

uint64_t CoreStat::lost_total() const {
  uint64_t n = 0;
  for (uint64_t v : lost)
    n += v;
  return n;
}

StatCollector::SeqTracker& StatCollector::Track(const CaptureEvent& ev, CoreStat& cs) {
  SeqTracker& t = trackers_[{ev.dev, ev.core}];
  const uint32_t gen = dicts_->GenerationFor(ev.dev, ev.cpu);
  if (gen != t.gen) {
    FlushLost(t, cs);
    // A new producer generation numbers its records from 0 again.
    if (t.gen != 0)
      cs.begin_without_end += t.open.size();
    t = SeqTracker{};
    t.gen = gen;
    if (gen && std::find(cs.generations.begin(), cs.generations.end(), gen) == cs.generations.end())
      cs.generations.push_back(gen);
  }
  return t;
}

void StatCollector::Add(const CaptureEvent& ev) {
  have_fw_time_ = false;
  if (!any_)
    first_ts_ = ev.ts;
  any_ = true;
  last_ts_ = ev.ts;
  clock_format_ = clock_format_ || ev.clock_format;
  if (ev.kind != CaptureKind::kRecord)
    route_epoch_++;  // it may change what a record's route holds
  if (ev.missed_events)
    missed_[ev.cpu] += ev.missed_events;
  switch (ev.kind) {
    case CaptureKind::kRecord:
      AddRecord(ev);
      break;
    case CaptureKind::kLost:
      AddLost(ev);
      break;
    case CaptureKind::kState:
      states_++;
      dicts_->FollowState(ev);
      clocks_.AddState(ev.dev, ev.producer_gen, ev.clock_hz);
      break;
    case CaptureKind::kDict:
      dicts_seen_++;
      break;
    case CaptureKind::kClock:
      AddClock(ev);
      break;
    case CaptureKind::kMarker:
      markers_++;
      break;
    case CaptureKind::kMalformed:
      malformed_[Printable(ev.malformed_event) + ": " + std::string(ev.malformed_reason)]++;
      break;
  }
}

void StatCollector::AddClock(const CaptureEvent& ev) {
  clock_events_++;
  const ClockFit fit{ev.dev, ev.producer_gen, ev.clock_flags, ev.clock, ev.clock_id};
  if (!clocks_.Wants(fit)) {
    (void)clocks_.Add(fit);  // counted: a fit of another trace clock
    return;
  }
  ClockStat& cs = clock_stats_[ev.dev];
  cs.clock_events++;
  const ClockFit* before = clocks_.Find(ev.dev, ev.producer_gen);
  const bool same = before && before->flags == fit.flags &&
                    std::memcmp(&before->fit, &fit.fit, sizeof(fit.fit)) == 0;
  if (!clocks_.Add(fit).empty()) {
    cs.refused++;
    return;
  }
  if (same)
    return;  // the same fit, emitted on another CPU
  cs.fits++;
  if (fit.stale())
    cs.stale_fits++;
  if (std::find(cs.generations.begin(), cs.generations.end(), ev.producer_gen) ==
      cs.generations.end())
    cs.generations.push_back(ev.producer_gen);
}

StatCollector::RecordRoute& StatCollector::Route(const CaptureEvent& ev) {
  const size_t slot =
      (static_cast<size_t>(ev.core) * 7u + static_cast<size_t>(ev.cpu) * 31u + ev.dev * 131u) &
      (kRoutes - 1);
  RecordRoute& r = routes_[slot];
  if (r.epoch == route_epoch_ && r.dev == ev.dev && r.core == ev.core && r.cpu == ev.cpu)
    return r;
  r = RecordRoute{};
  r.epoch = route_epoch_;
  r.dev = ev.dev;
  r.core = ev.core;
  r.cpu = ev.cpu;
  r.gen = dicts_->GenerationFor(ev.dev, ev.cpu);
  // The clocks change only on events that are not records, which start a
  // new epoch.
  r.conv = clocks_.Prepare(ev.dev, r.gen);
  r.cs = &cores_[{ev.dev, ev.core}];
  r.t = &Track(ev, *r.cs);
  r.dict = dicts_->For(ev.dev, ev.cpu);
  if (r.dict) {
    auto [att, fresh] = attributing_.try_emplace(r.dict, false);
    if (fresh)
      att->second = HasCommandAttribution(*r.dict);
    r.attributing = att->second;
  }
  r.hz = ClockHz(ev.dev);
  return r;
}

void StatCollector::ConvertRecord(const CaptureEvent& ev, RecordRoute& r) {
  if (!ev.clock_format && !ev.retimed)
    return;
  if (!r.clock)
    r.clock = &clock_stats_[ev.dev];
  ClockStat& cs = *r.clock;
  if (ev.retimed)
    fw_time_ = RecordFwTime(clocks_, r.gen, ev);
  else
    ClockSet::Convert(r.conv, ev.fw_ts, &fw_time_);  // RecordFwTime()'s, looked up once
  have_fw_time_ = true;
  const FwTime& t = fw_time_;
  if (!t.converted()) {
    cs.not_converted[static_cast<size_t>(t.miss)]++;
    return;
  }
  cs.bounds.Add(t.bound_ns);
  if (t.stale)
    cs.converted_stale++;
  // A retimed record's timestamp is its converted time; its mark, its drain.
  const uint64_t drained = ev.retimed ? ev.drain_ts : ev.ts;
  if (drained >= t.host_ns)
    cs.drain_delays.Add(drained - t.host_ns);
  else if (t.host_ns - drained > t.bound_ns)
    cs.after_drain++;
  else
    cs.drain_delays.Add(0);  // within the bound of its drain
}

void StatCollector::AddRecord(const CaptureEvent& ev) {
  records_++;
  RecordRoute& r = Route(ev);
  ConvertRecord(ev, r);
  CoreStat& cs = *r.cs;
  SeqTracker& t = *r.t;
  FlushLost(t, cs);
  if (cs.records == 0)
    cs.first_seq = ev.seq;
  cs.records++;
  cs.last_seq = ev.seq;
  if (span_set_) {
    if (cs.activity.empty())
      cs.activity.assign(kActivityBins, 0);
    const uint64_t offset =
        std::min(std::max(ev.ts, span_first_), std::max(span_last_, span_first_)) - span_first_;
    if (offset < r.bin_first || offset > r.bin_last) {
      // Not the bin of the route's last record: divide (records come in
      // time order, so mostly they do not).
      const uint64_t bin_ns = TimeBinNs(span_first_, span_last_, kActivityBins);
      const uint64_t i = std::min<uint64_t>(offset / bin_ns, kActivityBins - 1);
      r.bin = &cs.activity[i];
      r.bin_first = i * bin_ns;
      r.bin_last = i == kActivityBins - 1 ? UINT64_MAX : r.bin_first + (bin_ns - 1);
    }
    ++*r.bin;
  } else {
    cs.record_times.push_back(ev.ts);
  }
  if (t.have) {
    if (ev.seq > t.expected)
      cs.gap_unexplained += ev.seq - t.expected;
    else if (ev.seq < t.expected)
      cs.seq_backwards++;
  }
  t.have = true;
  t.expected = ev.seq + 1;

  const Dictionary* dict = r.dict;
  RecordRoute::EventCache& cached = r.events[ev.event_id & (RecordRoute::kEventCache - 1)];
  if (!cached.desc || cached.id != ev.event_id) {
    const EventDesc* found = dict ? dict->Find(ev.event_id) : nullptr;
    if (!found) {
      cs.events[EventName(found, ev.event_id)]++;
      return;
    }
    cached.desc = found;
    cached.id = ev.event_id;
    cached.slot = &cs.slots[found];  // unordered_map: its elements stay put
  }
  const EventDesc* desc = cached.desc;
  CoreStat::EventSlot& slot = *cached.slot;
  if (!slot.count)
    slot.count = &cs.events[desc->name];
  ++*slot.count;
  if (r.attributing)
    paths_.Add(ev.dev, ev.fw_ts, *desc, ev.data);
  const uint64_t hz = r.hz;
  if (auto lat = RoleFieldValue(*desc, desc->latency_field, ev.data)) {
    if (!slot.latency)
      slot.latency = &cs.latencies[desc->name + "." + desc->fields[desc->latency_field].name];
    slot.latency->Add(*lat, hz);
  }
  if (desc->role != HMB_TRACE_ROLE_BEGIN && desc->role != HMB_TRACE_ROLE_END)
    return;
  const auto key = RoleFieldValue(*desc, desc->key_field, ev.data);
  if (!key)
    return;
  const uint64_t qid = RoleFieldValue(*desc, desc->qid_field, ev.data).value_or(0);
  if (desc->role == HMB_TRACE_ROLE_BEGIN) {
    if (!t.open.Open(desc->id, *key, qid, ev.fw_ts))
      cs.begin_without_end++;  // reopened before it was closed
    return;
  }
  uint64_t begin_ts = 0;
  if (!t.open.Close(desc->pair_id, *key, qid, &begin_ts)) {
    cs.end_without_begin++;
    return;
  }
  if (ev.fw_ts >= begin_ts) {
    if (!slot.pair_latency)
      slot.pair_latency =
          &cs.latencies[EventName(dict->Find(desc->pair_id), desc->pair_id) + "->" + desc->name];
    slot.pair_latency->Add(ev.fw_ts - begin_ts, hz);
  }
}

void StatCollector::AddLost(const CaptureEvent& ev) {
  lost_events_++;
  CoreStat& cs = cores_[{ev.dev, ev.core}];
  SeqTracker& t = Track(ev, cs);
  cs.lost[std::min<size_t>(ev.reason, kLostReasonCount)] += ev.count;
  if (t.lost_group && t.lost_at == ev.at_seq) {
    t.lost_count += ev.count;  // another reason for the same gap
    return;
  }
  FlushLost(t, cs);
  t.lost_group = true;
  t.lost_at = ev.at_seq;
  t.lost_count = ev.count;
}

void StatCollector::FlushLost(SeqTracker& t, CoreStat& cs) {
  if (!t.lost_group)
    return;
  t.lost_group = false;
  const uint64_t at = t.lost_at;
  const uint64_t count = t.lost_count;
  if (!t.have) {
    cs.lost_before_first += count;
    t.have = true;
    t.expected = at;
    return;
  }
  // The lost range is [at - count, at); the sequence says the next record
  // due is `expected`.
  const uint64_t start = count <= at ? at - count : 0;
  if (start > t.expected) {
    cs.gap_unexplained += start - t.expected;
  } else if (start < t.expected) {
    cs.lost_unmatched += std::min(t.expected - start, count);
  }
  t.expected = std::max(t.expected, at);
}

void StatCollector::Finish() {
  for (auto& [key, t] : trackers_) {
    FlushLost(t, cores_[key]);
    cores_[key].begin_without_end += t.open.size();
    t.open.clear();
  }
  paths_.Finish();
}

std::string StatCollector::ClockText(uint16_t dev) const {
  if (!clock_format_)
    return {};  // a capture of a module without clock fits
  auto it = clock_stats_.find(dev);
  if (it == clock_stats_.end() || (it->second.clock_events == 0 && it->second.bounds.empty() &&
                                   it->second.not_converted_total() == 0))
    return "  clock: no hmb_clock of this device; firmware times not converted\n";
  const ClockStat& cs = it->second;
  std::string out = "  clock: " + std::to_string(cs.fits) + " fits (" +
                    std::to_string(cs.clock_events) + " hmb_clock), " +
                    std::to_string(cs.stale_fits) + " stale";
  if (cs.refused)
    out += ", " + std::to_string(cs.refused) + " refused";
  if (!cs.generations.empty()) {
    out += ", producer_gens";
    for (uint32_t g : cs.generations)
      out += " " + std::to_string(g);
  }
  out += "\n    records converted " + std::to_string(cs.bounds.count());
  if (!cs.bounds.empty())
    out += ", bound median " + BoundText(cs.bounds.Median()) + " max " +
           BoundText(cs.bounds.max());
  if (cs.converted_stale)
    out += ", " + std::to_string(cs.converted_stale) + " with a stale fit";
  if (!cs.drain_delays.empty())
    out += "; drain delay median " + BoundText(cs.drain_delays.Median()) + " max " +
           BoundText(cs.drain_delays.max());
  out += "\n";
  if (cs.not_converted_total()) {
    out += "    records not converted " + std::to_string(cs.not_converted_total()) + ":";
    for (size_t i = 0; i < cs.not_converted.size(); i++)
      if (cs.not_converted[i])
        out += " " + std::string(ClockMissName(static_cast<ClockMiss>(i))) + " (" +
               std::to_string(cs.not_converted[i]) + "),";
    out.pop_back();
    out += "\n";
  }
  if (cs.after_drain)
    out += "    WARNING: " + std::to_string(cs.after_drain) +
           " records converted to after they were drained, beyond the bound (a wrong fit, or a "
           "trace clock other than local)\n";
  return out;
}

nlohmann::json StatCollector::ClockJson(uint16_t dev) const {
  using nlohmann::json;
  json c;
  auto it = clock_stats_.find(dev);
  const ClockStat empty;
  const ClockStat& cs = it == clock_stats_.end() ? empty : it->second;
  c["hmb_clock_events"] = cs.clock_events;
  c["fits"] = cs.fits;
  c["stale_fits"] = cs.stale_fits;
  c["refused_fits"] = cs.refused;
  c["producer_gens"] = cs.generations;
  c["records_converted"] = cs.bounds.count();
  c["records_converted_with_stale_fit"] = cs.converted_stale;
  c["records_after_their_drain"] = cs.after_drain;
  json not_converted = json::object();
  for (size_t i = 1; i < cs.not_converted.size(); i++)
    not_converted[std::string(ClockMissName(static_cast<ClockMiss>(i)))] = cs.not_converted[i];
  not_converted["total"] = cs.not_converted_total();
  c["records_not_converted"] = not_converted;
  for (const auto& [name, h] :
       {std::pair{"bound_ns", &cs.bounds}, std::pair{"drain_delay_ns", &cs.drain_delays}})
    c[name] = h->empty() ? json(nullptr) : json{{"median", h->Median()}, {"max", h->max()}};
  return c;
}

std::string StatCollector::SummaryText(const std::string& file) const {
  uint64_t lost = 0;
  for (const auto& [key, cs] : cores_)
    lost += cs.lost_total();
  std::string out = file + ": " + std::to_string(records_) + " records, " + std::to_string(lost) +
                    " lost (" + std::to_string(lost_events_) + " hmb_lost), " +
                    std::to_string(states_) + " hmb_state, " + std::to_string(dicts_seen_) +
                    " hmb_dict, " +
                    (clock_format_ ? std::to_string(clock_events_) + " hmb_clock, " : "") +
                    std::to_string(markers_) + " markers";
  if (any_)
    out += ", host time " + HostTime(first_ts_) + " .. " + HostTime(last_ts_);
  out += "\n";
  for (const auto& [cpu, n] : missed_)
    out += "warning: ftrace dropped " + std::to_string(n) + " events on CPU " +
           std::to_string(cpu) + " (trace buffer too small: raise buffer_size_kb)\n";
  for (const auto& [what, n] : malformed_)
    out += "warning: " + std::to_string(n) + " malformed " + what + "\n";
  for (const std::string& m : dicts_->messages())
    out += "warning: " + m + "\n";
  if (dicts_->total_problems()) {
    out += "dictionary chunks rejected:";
    for (size_t i = 0; i < dicts_->problems().size(); i++)
      if (dicts_->problems()[i])
        out += " " + std::string(ChunkProblemName(static_cast<ChunkProblem>(i))) + " " +
               std::to_string(dicts_->problems()[i]);
    out += "\n";
  }
  return out;
}

std::string StatCollector::DeviceText(uint16_t dev) const {
  const auto info_it = dicts_->devices().find(dev);
  const DeviceInfo* info = info_it == dicts_->devices().end() ? nullptr : &info_it->second;
  const uint64_t hz = info ? info->clock_hz : 0;
  std::string out;
  out += "dev " + std::to_string(dev);
  if (info && info->seen_state) {
    out += " (" + info->name + "): clock " + std::to_string(info->clock_hz) + " Hz, producer_gen " +
           std::to_string(info->producer_gen) + ", " + std::to_string(info->nr_cores) +
           " cores, state " + std::string(StateName(info->state)) + ", build_id " +
           Hex(info->build_id);
  } else {
    out += ": no hmb_state in the capture (clock rate unknown)";
  }
  if (const Dictionary* d = info ? dicts_->Find(dev, info->producer_gen) : nullptr)
    out += ", dictionary " + std::to_string(d->events().size()) + " events";
  else
    out += ", no complete dictionary";
  out += "\n";
  out += ClockText(dev);
  out += LatencyHistogramsText(cores_, dev, hz);
  return out;
}

std::string StatCollector::CoreText(uint16_t core, const CoreStat& cs, uint64_t hz) const {
  std::string out;
  out += "  core " + std::to_string(core) + ": " + std::to_string(cs.records) + " records";
  if (cs.records)
    out += ", seq " + std::to_string(cs.first_seq) + ".." + std::to_string(cs.last_seq);
  if (cs.generations.size() > 1) {
    out += ", producer_gens";
    for (uint32_t g : cs.generations)
      out += " " + std::to_string(g);
  }
  out += ", lost " + std::to_string(cs.lost_total());
  if (cs.lost_total()) {
    out += " (";
    bool first = true;
    for (size_t r = 0; r <= kLostReasonCount; r++) {
      if (!cs.lost[r])
        continue;
      out += (first ? "" : ", ") +
             std::string(r < kLostReasonCount ? LostReasonName(static_cast<uint8_t>(r))
                                              : "unknown reason") +
             " " + std::to_string(cs.lost[r]);
      first = false;
    }
    out += ")";
  }
  out += "\n";
  if (cs.lost_before_first)
    out += "    " + std::to_string(cs.lost_before_first) +
           " of them before the first record delivered (not checkable against seq)\n";
  if (!cs.seq_agrees())
    out += "    DISAGREEMENT: " + std::to_string(cs.gap_unexplained) +
           " records missing from the sequence without hmb_lost, " +
           std::to_string(cs.lost_unmatched) +
           " counted by hmb_lost that the sequence does not miss\n";
  if (cs.seq_backwards)
    out += "    " + std::to_string(cs.seq_backwards) +
           " records with a sequence number not above the previous one\n";
  if (!cs.events.empty()) {
    std::vector<std::pair<std::string, uint64_t>> ev(cs.events.begin(), cs.events.end());
    std::stable_sort(ev.begin(), ev.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    out += "    events:";
    for (const auto& [name, n] : ev)
      out += " " + name + " " + std::to_string(n);
    out += "\n";
  }
  if (cs.records)
    out += ActivityText(cs, PlotBegin(), PlotEnd());
  if (!cs.latencies.empty()) {
    out += "    " + Pad("latency (median/p99 +-0.4%)", 28, true) + Pad("count", 8) +
           Pad("min", 12) + Pad("median", 12) + Pad("p99", 12) + Pad("max", 12) + "  ticks |" +
           Pad("min", 10) + Pad("median", 10) + Pad("p99", 10) + Pad("max", 10) + "  us\n";
    for (const auto& [name, lat] : cs.latencies) {
      const LatencySummary s = Summarize(lat.ticks);
      out += "    " + Pad(name, 28, true) + Pad(std::to_string(s.count), 8) +
             Pad(std::to_string(s.min), 12) + Pad(std::to_string(s.median), 12) +
             Pad(std::to_string(s.p99), 12) + Pad(std::to_string(s.max), 12) + "        |";
      for (uint64_t t : {s.min, s.median, s.p99, s.max})
        out += Pad(hz ? Fixed(TicksToUs(t, hz), 3) : "?", 10);
      out += "\n";
    }
  }
  if (cs.end_without_begin || cs.begin_without_end)
    out += "    spans: " + std::to_string(cs.end_without_begin) + " ends without a begin, " +
           std::to_string(cs.begin_without_end) + " begins without an end\n";
  return out;
}

std::string StatCollector::Text(const std::string& file) const {
  std::string out = SummaryText(file);
  std::optional<uint16_t> dev_printed;
  for (const auto& [key, cs] : cores_) {
    const auto [dev, core] = key;
    if (dev_printed != dev) {
      dev_printed = dev;
      out += DeviceText(dev);
    }
    const auto info = dicts_->devices().find(dev);
    out += CoreText(core, cs, info == dicts_->devices().end() ? 0 : info->second.clock_hz);
  }
  out += CauseStatText(paths_, [this](uint16_t dev) { return ClockHz(dev); });
  return out;
}

nlohmann::json StatCollector::Json(const std::string& file) const {
  using nlohmann::json;
  json doc;
  doc["file"] = file;
  doc["records"] = records_;
  doc["hmb_lost_events"] = lost_events_;
  doc["hmb_state_events"] = states_;
  doc["hmb_dict_events"] = dicts_seen_;
  doc["hmb_clock_events"] = clock_events_;
  doc["markers"] = markers_;
  // Medians and p99s (latency, clock bound, drain delay) come from
  // log-linear histograms: within this fraction of the exact value.
  doc["percentile_relative_error"] = QuantileHistogram::kRelativeError;
  if (any_) {
    doc["first_ts_ns"] = first_ts_;
    doc["last_ts_ns"] = last_ts_;
  }
  json missed = json::object();
  for (const auto& [cpu, n] : missed_)
    missed[std::to_string(cpu)] = n;
  doc["ftrace_missed_events"] = missed;
  doc["malformed"] = json(malformed_);
  json problems = json::object();
  for (size_t i = 0; i < dicts_->problems().size(); i++)
    problems[std::string(ChunkProblemName(static_cast<ChunkProblem>(i)))] = dicts_->problems()[i];
  doc["dictionary_problems"] = problems;
  doc["dictionary_messages"] = dicts_->messages();

  std::map<uint16_t, json> devices;
  for (const auto& [key, cs] : cores_) {
    const auto [dev, core] = key;
    json& d = devices[dev];
    const auto info_it = dicts_->devices().find(dev);
    const uint64_t hz = info_it == dicts_->devices().end() ? 0 : info_it->second.clock_hz;
    if (d.is_null()) {
      d["dev"] = dev;
      if (info_it != dicts_->devices().end()) {
        const DeviceInfo& info = info_it->second;
        d["name"] = info.name;
        d["clock_hz"] = info.clock_hz;
        d["nr_cores"] = info.nr_cores;
        d["producer_gen"] = info.producer_gen;
        d["producer_gens"] = dicts_->Generations(dev);
        d["state"] = StateName(info.state);
        d["build_id"] = Hex(info.build_id);
        const Dictionary* dict = dicts_->Find(dev, info.producer_gen);
        d["dictionary_events"] = dict ? dict->events().size() : 0;
      }
      if (clock_format_)
        d["clock"] = ClockJson(dev);
      d["cores"] = json::array();
    }
    json c;
    c["core"] = core;
    c["records"] = cs.records;
    c["first_seq"] = cs.records ? json(cs.first_seq) : json(nullptr);
    c["last_seq"] = cs.records ? json(cs.last_seq) : json(nullptr);
    c["producer_gens"] = cs.generations;
    json lost = json::object();
    for (size_t r = 0; r < kLostReasonCount; r++)
      lost[std::string(LostReasonName(static_cast<uint8_t>(r)))] = cs.lost[r];
    lost["unknown"] = cs.lost[kLostReasonCount];
    lost["total"] = cs.lost_total();
    c["lost"] = lost;
    c["lost_before_first_record"] = cs.lost_before_first;
    c["seq_gaps_without_hmb_lost"] = cs.gap_unexplained;
    c["hmb_lost_not_in_seq"] = cs.lost_unmatched;
    c["seq_not_increasing"] = cs.seq_backwards;
    c["seq_check"] = cs.seq_agrees() ? "agrees" : "disagrees";
    c["events"] = json(cs.events);
    json lat = json::array();
    for (const auto& [name, stat] : cs.latencies) {
      const LatencySummary s = Summarize(stat.ticks);
      json l;
      l["name"] = name;
      l["count"] = s.count;
      l["ticks"] = {{"min", s.min}, {"median", s.median}, {"p99", s.p99}, {"max", s.max}};
      if (hz)
        l["us"] = {{"min", TicksToUs(s.min, hz)},
                   {"median", TicksToUs(s.median, hz)},
                   {"p99", TicksToUs(s.p99, hz)},
                   {"max", TicksToUs(s.max, hz)}};
      lat.push_back(l);
    }
    c["latency"] = lat;
    c["spans_end_without_begin"] = cs.end_without_begin;
    c["spans_begin_without_end"] = cs.begin_without_end;
    c.update(CorePlotsJson(cs, hz, PlotBegin(), PlotEnd()));
    d["cores"].push_back(c);
  }
  json devs = json::array();
  for (auto& [dev, d] : devices)
    devs.push_back(std::move(d));
  doc["devices"] = devs;
  if (paths_.any())
    doc["command_causes"] = CauseStatJson(paths_, [this](uint16_t dev) { return ClockHz(dev); });
  return doc;
}

Status CollectStat(const std::string& input,
                   DictionaryStore* dicts,
                   StatCollector* stat,
                   const std::function<void(const CaptureEvent&)>& also) {
  CaptureFile file;
  if (Status s = file.Open(input); !s.ok())
    return s;
  return CollectStat(file, dicts, stat, also);
}

Status CollectStat(CaptureFile& file,
                   DictionaryStore* dicts,
                   StatCollector* stat,
                   const std::function<void(const CaptureEvent&)>& also) {
  const std::string& input = file.path();
  ReadOptions options;
  options.on_scan = [stat](const CaptureScan& scan) { stat->SetSpan(scan.first_ts, scan.last_ts); };
  CaptureClocks trace_clocks;
  if (Status s = ReadCaptureClocks(file, &trace_clocks); !s.ok())
    return s;
  SetCaptureClock(&stat->clocks(), trace_clocks.hmb, "stat", input);
  Status s = ReadCaptureWithDictionaries(
      file, dicts,
      [stat, &also](const CaptureEvent& ev) {
        stat->Add(ev);
        if (also)
          also(ev);
        return true;
      },
      options);
  if (s.ok()) {
    ReportClockProblem(stat->clocks(), "stat", input);
    stat->Finish();
  }
  return s;
}

int RunStat(const std::string& input, bool json, bool commands, const std::string& html) {
  DictionaryStore dicts;
  StatCollector stat(&dicts);
  HtmlTimeline timeline;
  CommandCapture cap;
  // One open of the file serves every reader below.
  CaptureFile file;
  if (Status s = file.Open(input); !s.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd stat: %s\n", s.message().c_str());
    return 1;
  }
  // A crash dump holds no host events: no join to show, nor a hint to
  // record them.
  if (file.is_dump())
    commands = false;
  // The join reads the host's commands first, then takes the firmware's
  // records from the statistics' pass: one walk of the capture for both.
  std::optional<CommandCaptureReader> join;
  if (commands) {
    join.emplace(input, &cap);
    if (Status s = join->Begin(&file); !s.ok()) {
      std::fprintf(stderr, "hmbtrace-cmd stat: %s\n", s.message().c_str());
      return 1;
    }
  }
  std::function<void(const CaptureEvent&)> also;
  // Whether the join and stat convert to the same trace clock: both are
  // told theirs before the first event, and it stays.
  std::optional<bool> same_clock;
  if (!html.empty() || join)
    also = [&](const CaptureEvent& ev) {
      if (!html.empty())
        timeline.Add(ev);
      // On the same trace clock, the join takes stat's conversion of the record.
      if (join) {
        if (!same_clock)
          same_clock = join->trace_clock() == stat.clocks().trace_clock();
        join->Add(ev, dicts, *same_clock ? stat.last_fw_time() : nullptr);
      }
    };
  if (Status s = CollectStat(file, &dicts, &stat, also); !s.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd stat: %s\n", s.message().c_str());
    return 1;
  }
  if (join)
    join->Finish(dicts);
  if (stat.hmb_events() == 0) {
    std::fprintf(stderr, "hmbtrace-cmd stat: %s: no hmb events; %s\n", input.c_str(),
                 std::string(kRecordHint).c_str());
    return 1;
  }
  nlohmann::json doc = json ? stat.Json(input) : nlohmann::json();
  std::string out = json ? "" : stat.Text(input);
  if (commands) {
    if (json)
      doc["commands"] = CommandStatJson(cap);
    else
      out += CommandStatText(cap);
  }
  if (json)
    out = doc.dump(2) + "\n";
  if (!html.empty()) {
    if (Status s = WriteStatHtml(input, html, stat, timeline, commands ? &cap : nullptr); !s.ok()) {
      std::fprintf(stderr, "hmbtrace-cmd stat: %s\n", s.message().c_str());
      return 1;
    }
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace hmbtrace
