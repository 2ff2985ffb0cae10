// SPDX-License-Identifier: GPL-2.0-only
#include "dump/dump_events.h"

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <utility>

#include "clock_set.h"
#include "hmb_trace_dump_abi.h"
#include "hmb_trace_events_abi.h"
#include "join/nvme_capture.h"

namespace hmbtrace {
namespace {

bool UsableFit(const Dump& d, const DumpClock& c) {
  return c.gen == d.header.producer_gen && ClockFitProblem(c.fit).empty();
}

}  // namespace

std::string DumpTraceClock(const Dump& dump) {
  std::optional<uint32_t> best;
  for (const DumpClock& c : dump.clocks) {
    if (!UsableFit(dump, c))
      continue;
    if (!best || c.clock_id < *best)
      best = c.clock_id;
  }
  return TraceClockName(static_cast<uint8_t>(best ? *best : uint32_t{HMB_TRACE_CLOCK_LOCAL}));
}

std::optional<uint64_t> DumpSubmitTime(const Dump& dump, const DumpCmd& cmd, uint32_t clock_id) {
  const auto& taken = dump.header.taken_ns;
  const uint64_t mono = taken[HMB_TRACE_CLOCK_MONO];
  // The parser refuses a submit time more than 1 s after the dump; one
  // after it by less is taken as at the dump.
  if (!cmd.submit_ns || !mono || clock_id >= taken.size() || !taken[clock_id])
    return std::nullopt;
  const uint64_t before = mono > cmd.submit_ns ? mono - cmd.submit_ns : 0;
  return taken[clock_id] > before ? taken[clock_id] - before : 0;
}

std::vector<DumpInflightLine> DumpInflightLines(const Dump& dump) {
  std::vector<DumpInflightLine> out;
  if (!(dump.header.flags & HMB_DUMP_FL_INFLIGHT))
    return out;
  const std::optional<uint8_t> id = TraceClockId(DumpTraceClock(dump));
  const uint64_t taken = id && *id < dump.header.taken_ns.size() ? dump.header.taken_ns[*id] : 0;
  for (const DumpCmd& c : dump.inflight) {
    const std::optional<uint64_t> at = id ? DumpSubmitTime(dump, c, *id) : std::nullopt;
    std::string text = "dev=" + std::to_string(dump.header.area_index) +
                       " INFLIGHT qid=" + std::to_string(c.qid) + " cid=" + std::to_string(c.cid) +
                       " " + NvmeCommandName(c.qid, c.opcode);
    if (c.nsid)
      text += " nsid=" + std::to_string(c.nsid);
    if (c.nlb)
      text += " slba=" + std::to_string(c.slba) + " nlb=" + std::to_string(c.nlb);
    text += at ? " host submit, not completed at the dump"
               : " submit time unknown (placed at the dump), not completed at the dump";
    out.push_back(DumpInflightLine{at.value_or(taken), std::move(text)});
  }
  std::stable_sort(out.begin(), out.end(), [](const DumpInflightLine& a, const DumpInflightLine& b) {
    return a.at < b.at;
  });
  return out;
}

DumpCapture::DumpCapture(Dump dump) : dump_(std::move(dump)), trace_clock_(DumpTraceClock(dump_)) {
  Order();
}

void DumpCapture::Order() {
  const Dump& d = dump_;
  const uint16_t dev = d.header.area_index;
  const uint32_t gen = d.header.producer_gen;
  ClockSet clocks;
  clocks.SetTraceClock(trace_clock_);
  clocks.AddState(dev, gen, d.header.clock_hz);
  for (const DumpClock& c : d.clocks)
    if (c.gen == gen)
      clocks.Add(ClockFit{dev, gen, static_cast<uint8_t>(c.flags), c.fit,
                          static_cast<uint8_t>(c.clock_id)});

  // Per core (in CORE_STATE order), its records and losses in its order; a
  // loss sorts by the firmware time of the record after it.
  struct CoreItem {
    Kind kind;
    size_t index;
    uint64_t key;
  };
  std::map<uint16_t, size_t> slot;
  for (size_t i = 0; i < d.cores.size(); i++)
    slot[d.cores[i].core] = i;
  std::vector<std::vector<size_t>> recs(d.cores.size()), losts(d.cores.size());
  for (size_t i = 0; i < d.records.size(); i++)
    recs[slot.at(d.records[i].core)].push_back(i);
  for (size_t i = 0; i < d.lost.size(); i++)
    losts[slot.at(d.lost[i].core)].push_back(i);
  std::vector<std::vector<CoreItem>> per_core(d.cores.size());
  for (size_t c = 0; c < d.cores.size(); c++) {
    std::vector<CoreItem>& out = per_core[c];
    size_t l = 0;
    uint64_t last_key = 0;
    for (size_t r : recs[c]) {
      const DumpRecord& rec = d.records[r];
      for (; l < losts[c].size() && d.lost[losts[c][l]].at_seq <= rec.seq; l++)
        out.push_back(CoreItem{Kind::kLost, losts[c][l], rec.ts});
      out.push_back(CoreItem{Kind::kRecord, r, rec.ts});
      last_key = rec.ts;
    }
    for (; l < losts[c].size(); l++)
      out.push_back(CoreItem{Kind::kLost, losts[c][l], last_key});
  }
  // Merged by firmware time, ties by core order: a k-way merge keeps each
  // core's order even where its firmware time goes back.
  using Head = std::pair<uint64_t, std::pair<size_t, size_t>>;  // key, (core slot, position)
  std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
  for (size_t c = 0; c < per_core.size(); c++)
    if (!per_core[c].empty())
      heads.push({per_core[c][0].key, {c, 0}});
  std::vector<Item> body;
  body.reserve(d.records.size() + d.lost.size());
  std::vector<bool> converted;
  converted.reserve(body.capacity());
  while (!heads.empty()) {
    const auto [key, where] = heads.top();
    heads.pop();
    const CoreItem& ci = per_core[where.first][where.second];
    uint64_t ts = 0;
    bool ok = false;
    if (ci.kind == Kind::kRecord) {
      const FwTime t = clocks.Convert(dev, gen, d.records[ci.index].ts);
      ok = t.converted();
      ts = t.host_ns;
    }
    body.push_back(Item{ci.kind, ci.index, ts});
    converted.push_back(ok);
    if (where.second + 1 < per_core[where.first].size())
      heads.push({per_core[where.first][where.second + 1].key, {where.first, where.second + 1}});
  }
  // The events without a converted time of their own, and any conversion
  // that would go back, at the time of the event before them.
  uint64_t start = 0;
  const auto first = std::find(converted.begin(), converted.end(), true);
  if (first != converted.end()) {
    start = body[static_cast<size_t>(first - converted.begin())].ts;
  } else if (auto id = TraceClockId(trace_clock_); id && *id < d.header.taken_ns.size()) {
    start = d.header.taken_ns[*id];
  }
  uint64_t prev = start;
  for (size_t i = 0; i < body.size(); i++) {
    if (!converted[i] || body[i].ts < prev)
      body[i].ts = prev;
    prev = body[i].ts;
  }

  items_.clear();
  items_.push_back(Item{Kind::kState, 0, start});
  if (!d.dict.empty() && (d.header.flags & HMB_DUMP_FL_DICT) && d.dict.size() <= UINT32_MAX)
    items_.push_back(Item{Kind::kDict, 0, start});
  for (size_t i = 0; i < d.clocks.size(); i++)
    if (d.clocks[i].gen == gen)
      items_.push_back(Item{Kind::kClock, i, start});
  for (size_t i = 0; i < d.problems.size(); i++)
    items_.push_back(Item{Kind::kProblem, i, start});
  items_.insert(items_.end(), body.begin(), body.end());
}

CaptureEvent DumpCapture::Event(const Item& item) const {
  const Dump& d = dump_;
  CaptureEvent ev;
  ev.ts = item.ts;
  ev.cpu = 0;
  ev.dev = d.header.area_index;
  ev.producer_gen = d.header.producer_gen;
  ev.clock_format = true;
  ev.build_id = d.header.build_id;
  switch (item.kind) {
    case Kind::kState:
      ev.kind = CaptureKind::kState;
      ev.state = HMB_TRACE_EV_ATTACHED;
      ev.nr_cores = d.header.nr_cores;
      ev.clock_hz = d.header.clock_hz;
      ev.name = d.header.name;
      break;
    case Kind::kDict:
      ev.kind = CaptureKind::kDict;
      ev.total_len = static_cast<uint32_t>(d.dict.size());
      ev.offset = 0;
      ev.data = d.dict;
      break;
    case Kind::kClock: {
      const DumpClock& c = d.clocks[item.index];
      ev.kind = CaptureKind::kClock;
      ev.producer_gen = c.gen;
      ev.clock = c.fit;
      ev.clock_flags = static_cast<uint8_t>(c.flags);
      ev.clock_id = static_cast<uint8_t>(c.clock_id);
      break;
    }
    case Kind::kProblem:
      ev.kind = CaptureKind::kMalformed;
      ev.malformed_event = "dump";
      ev.malformed_reason = d.problems[item.index];
      break;
    case Kind::kRecord: {
      const DumpRecord& r = d.records[item.index];
      ev.kind = CaptureKind::kRecord;
      ev.core = r.core;
      ev.seq = r.seq;
      ev.fw_ts = r.ts;
      ev.event_id = r.event_id;
      ev.len = r.len;
      ev.data = d.Payload(r);
      break;
    }
    case Kind::kLost: {
      const DumpLost& l = d.lost[item.index];
      ev.kind = CaptureKind::kLost;
      ev.core = l.core;
      ev.count = l.count;
      ev.at_seq = l.at_seq;
      ev.reason = l.reason;
      break;
    }
  }
  return ev;
}

Status DumpCapture::Read(const CaptureCallback& fn,
                         bool metadata_only,
                         const std::function<void(uint64_t)>& tick,
                         uint64_t tick_every,
                         CaptureScan* scan) const {
  *scan = CaptureScan{};
  uint64_t walked = 0;
  bool stopped = false;
  for (const Item& item : items_) {
    walked++;
    if (tick && tick_every && walked % tick_every == 0)
      tick(walked);
    if (!stopped) {
      if (scan->events == 0)
        scan->first_ts = item.ts;
      scan->events++;
      scan->last_ts = item.ts;
    }
    if (stopped || (metadata_only && item.kind != Kind::kState && item.kind != Kind::kDict))
      continue;
    if (!fn(Event(item))) {
      stopped = true;
      break;
    }
  }
  return {};
}

}  // namespace hmbtrace
