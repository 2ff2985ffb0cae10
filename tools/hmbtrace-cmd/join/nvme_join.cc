// SPDX-License-Identifier: GPL-2.0-only
#include "join/nvme_join.h"

#include <algorithm>
#include <limits>

namespace hmbtrace {
namespace {

// An hmb_lost is emitted when the module drains past the gap, after the
// records it stands for: a loss up to this long after a command's interval
// may still be the loss of its records (the report's reorder margin).
constexpr uint64_t kLossReachNs = 100000000;

constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();

uint64_t SatSub(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}
uint64_t SatAdd(uint64_t a, uint64_t b) {
  return a > kInfinity - b ? kInfinity : a + b;
}

bool AnyIn(const std::vector<uint64_t>& sorted, uint64_t lo, uint64_t hi) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), lo);
  return it != sorted.end() && *it <= hi;
}

}  // namespace

std::string_view FwUnmatchedName(FwUnmatched why) {
  switch (why) {
    case FwUnmatched::kNone:
      return "joined";
    case FwUnmatched::kOutsideWindows:
      return "outside every host interval of its (qid, cid)";
    case FwUnmatched::kNoHostCommand:
      return "no host command with its (qid, cid)";
    case FwUnmatched::kAmbiguous:
      return "inside two host intervals, order could not decide";
    case FwUnmatched::kNotConverted:
      return "no converted time, order could not decide";
    case FwUnmatched::kDuplicate:
      return "the command already has one";
    case FwUnmatched::kCount:
      break;
  }
  return "unknown";
}

std::string_view HostUnmatchedName(HostUnmatched why) {
  switch (why) {
    case HostUnmatched::kNone:
      return "joined";
    case HostUnmatched::kNotCompleted:
      return "no nvme_complete_rq in the capture";
    case HostUnmatched::kBeforeFirmware:
      return "before the firmware's first record in the capture";
    case HostUnmatched::kAfterFirmware:
      return "after the firmware's last record in the capture";
    case HostUnmatched::kFirmwareLost:
      return "firmware records lost on its core meanwhile";
    case HostUnmatched::kFirmwareReset:
      return "firmware reset meanwhile";
    case HostUnmatched::kNoDevice:
      return "no firmware records of its device";
    case HostUnmatched::kUndecided:
      return "a firmware record of its (qid, cid) that time and order could not place";
    case HostUnmatched::kNoRecord:
      return "no firmware record";
    case HostUnmatched::kCount:
      break;
  }
  return "unknown";
}

uint64_t Percentile(const std::vector<uint64_t>& sorted, unsigned p) {
  if (sorted.empty())
    return 0;
  const size_t n = sorted.size();
  size_t rank = (n * std::min(p, 100u) + 99) / 100;
  if (rank == 0)
    rank = 1;
  return sorted[rank - 1];
}

void CommandJoin::MapController(uint32_t ctrl, uint16_t dev) {
  ctrl_map_[ctrl] = dev;
}

uint16_t CommandJoin::DevOf(uint32_t ctrl) const {
  auto it = ctrl_map_.find(ctrl);
  if (it != ctrl_map_.end())
    return it->second;
  return static_cast<uint16_t>(std::min<uint32_t>(ctrl, 0xffff));
}

void CommandJoin::HostSetup(uint32_t ctrl,
                            uint16_t qid,
                            uint16_t cid,
                            uint8_t opcode,
                            uint32_t nsid,
                            uint64_t ts) {
  const uint64_t key = Key(DevOf(ctrl), qid, cid);
  if (open_.contains(key))
    counts_.setup_reopened++;  // its completion was not captured; it stays incomplete
  JoinedCommand& c = commands_.emplace_back();
  c.host.ctrl = ctrl;
  c.host.qid = qid;
  c.host.cid = cid;
  c.host.opcode = opcode;
  c.host.nsid = nsid;
  c.host.setup_ns = ts;
  open_[key] = commands_.size() - 1;
}

void CommandJoin::HostComplete(uint32_t ctrl,
                               uint16_t qid,
                               uint16_t cid,
                               uint16_t status,
                               uint64_t ts) {
  auto it = open_.find(Key(DevOf(ctrl), qid, cid));
  if (it == open_.end()) {
    counts_.complete_without_setup++;
    return;
  }
  HostCommand& h = commands_[it->second].host;
  h.complete_ns = std::max(ts, h.setup_ns);
  h.status = status;
  open_.erase(it);
}

CommandJoin::CoreTrack& CommandJoin::Core(uint16_t dev, uint16_t core) {
  const std::pair<uint16_t, uint16_t> key{dev, core};
  if (!last_core_.track || last_core_.key != key) {
    last_core_.track = &cores_[key];
    last_core_.key = key;
  }
  return *last_core_.track;
}

void CommandJoin::FwSeen(uint16_t dev, uint16_t core, uint32_t producer_gen, uint64_t ts) {
  CoreTrack& t = Core(dev, core);
  if (!t.any) {
    t.any = true;
    t.first = ts;
    t.gen = producer_gen;
  } else if (producer_gen != t.gen) {
    t.gen = producer_gen;
    t.breaks++;
    t.reset_ts.push_back(ts);
  }
  t.first = std::min(t.first, ts);
  t.last = std::max(t.last, ts);
}

void CommandJoin::FwLost(uint16_t dev, uint16_t core, uint64_t ts) {
  CoreTrack& t = Core(dev, core);
  t.breaks++;
  t.loss_ts.push_back(ts);
}

void CommandJoin::FwRecord(const FwCommandRecord& rec) {
  FwSeen(rec.dev, rec.core, rec.producer_gen, rec.converted ? rec.host_ns : rec.ftrace_ns);
  if (count_only_) {
    fw_counted_++;
    return;
  }
  fw_.push_back(rec);
  fw_breaks_.push_back(Core(rec.dev, rec.core).breaks);
  queue_core_[{rec.dev, rec.qid}] = rec.core;
}

uint16_t CommandJoin::CoreOfQueue(uint16_t dev, uint16_t qid) const {
  auto it = queue_core_.find({dev, qid});
  return it == queue_core_.end() ? 0xffff : it->second;
}

void CommandJoin::MatchKind(FwCommandRecord::Kind kind) {
  // Per key: the host commands in setup order (disjoint intervals).
  // Built once per call; cheap next to the records.
  std::unordered_map<uint64_t, std::vector<size_t>> windows;
  windows.reserve(commands_.size());
  for (size_t i = 0; i < commands_.size(); i++) {
    const HostCommand& h = commands_[i].host;
    windows[Key(DevOf(h.ctrl), h.qid, h.cid)].push_back(i);
  }
  for (auto& [key, list] : windows)
    std::stable_sort(list.begin(), list.end(), [this](size_t a, size_t b) {
      return commands_[a].host.setup_ns < commands_[b].host.setup_ns;
    });
  struct Chain {
    size_t pos = 0;  // index into the key's list of the last match
    uint64_t breaks = 0;
    uint16_t core = 0;
  };
  std::unordered_map<uint64_t, Chain> chains;
  const bool fetch = kind == FwCommandRecord::Kind::kFetch;

  for (size_t r = 0; r < fw_.size(); r++) {
    const FwCommandRecord& rec = fw_[r];
    if (rec.kind != kind)
      continue;
    const uint64_t key = Key(rec.dev, rec.qid, rec.cid);
    auto wit = windows.find(key);
    if (wit == windows.end()) {
      fw_why_[r] = FwUnmatched::kNoHostCommand;
      continue;
    }
    const std::vector<size_t>& list = wit->second;
    auto end_of = [&](size_t pos) {
      const HostCommand& h = commands_[list[pos]].host;
      return h.complete_ns ? SatAdd(*h.complete_ns, rec.bound_ns) : kInfinity;
    };
    auto admits = [&](size_t pos) {
      const HostCommand& h = commands_[list[pos]].host;
      return SatSub(h.setup_ns, rec.bound_ns) <= rec.host_ns && rec.host_ns <= end_of(pos);
    };
    // Candidates by time: the intervals are disjoint and sorted, so the
    // widened ones that hold t are consecutive, from the first that ends
    // at or after t.
    size_t first = 0, nr = 0;
    if (rec.converted) {
      size_t lo = 0, hi = list.size();
      while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (end_of(mid) < rec.host_ns)
          lo = mid + 1;
        else
          hi = mid;
      }
      first = lo;
      for (size_t p = lo; p < list.size() && nr < 2 && admits(p); p++)
        nr++;
    }
    // How far a converted record lies outside the host's own interval
    // (not widened by the bound): 0 inside.
    auto outside = [&](const FwCommandRecord& x, const HostCommand& h) -> uint64_t {
      if (x.host_ns < h.setup_ns)
        return h.setup_ns - x.host_ns;
      if (h.complete_ns && x.host_ns > *h.complete_ns)
        return x.host_ns - *h.complete_ns;
      return 0;
    };
    auto take = [&](size_t pos, JoinedBy by) {
      JoinedCommand& c = commands_[list[pos]];
      int64_t& slot = fetch ? c.fetch : c.complete;
      if (slot >= 0) {
        // A second record of the kind. The nearer one is the command's:
        // a record converted with a wide bound (extrapolated before the
        // first clock fit, e.g. an older use of the same cid at boot) is
        // admitted by the widened window of a command whose own record
        // comes later, inside its interval. Else the first stays.
        const FwCommandRecord& held = fw_[static_cast<size_t>(slot)];
        if (by != JoinedBy::kWindow || !rec.converted || !held.converted ||
            outside(rec, c.host) >= outside(held, c.host)) {
          fw_why_[r] = FwUnmatched::kDuplicate;
          return;
        }
        fw_why_[static_cast<size_t>(slot)] = FwUnmatched::kDuplicate;
        if ((fetch ? c.fetch_by : c.complete_by) == JoinedBy::kOrder)
          counts_.by_order--;
        slot = -1;
      }
      slot = static_cast<int64_t>(r);
      (fetch ? c.fetch_by : c.complete_by) = by;
      fw_why_[r] = FwUnmatched::kNone;
      if (by == JoinedBy::kOrder)
        counts_.by_order++;
      chains[key] = Chain{pos, fw_breaks_[r], rec.core};
    };
    if (nr == 1) {
      take(first, JoinedBy::kWindow);
      continue;
    }
    // Time cannot decide: the command after the chain's last, if nothing
    // broke the order on this core since and time does not rule it out.
    auto cit = chains.find(key);
    if (cit != chains.end() && cit->second.core == rec.core &&
        cit->second.breaks == fw_breaks_[r] && cit->second.pos + 1 < list.size()) {
      const size_t next = cit->second.pos + 1;
      if (!rec.converted || admits(next)) {
        take(next, JoinedBy::kOrder);
        continue;
      }
    }
    fw_why_[r] = !rec.converted ? FwUnmatched::kNotConverted
                 : nr == 0      ? FwUnmatched::kOutsideWindows
                                : FwUnmatched::kAmbiguous;
    if (fw_why_[r] != FwUnmatched::kOutsideWindows)
      undecided_.insert(key);
  }
}

// A command the host had not completed when the capture ended (a crash
// dump's commands in flight): a cid is not reused while its command is in
// flight, so the latest fetch record of its key is its fetch when time
// placed it outside every window (a clock fit off by more than its bound)
// and nothing says otherwise: no fetch of the key joined after it, no
// complete record of the key after it, no loss or reset on its core
// since. Joined by order.
void CommandJoin::JoinInFlightFetches() {
  std::unordered_map<uint64_t, size_t> last;  // key -> its latest host command
  for (size_t i = 0; i < commands_.size(); i++) {
    const HostCommand& h = commands_[i].host;
    auto [it, fresh] = last.try_emplace(Key(DevOf(h.ctrl), h.qid, h.cid), i);
    if (!fresh && commands_[it->second].host.setup_ns <= h.setup_ns)
      it->second = i;
  }
  // Per key, in capture order: the latest fetch left outside every window,
  // and the latest record that rules it out.
  std::unordered_map<uint64_t, size_t> outside, later;
  for (size_t r = 0; r < fw_.size(); r++) {
    const FwCommandRecord& rec = fw_[r];
    const uint64_t key = Key(rec.dev, rec.qid, rec.cid);
    const bool fetch = rec.kind == FwCommandRecord::Kind::kFetch;
    if (fetch && fw_why_[r] == FwUnmatched::kOutsideWindows)
      outside[key] = r;
    else if (!fetch || fw_why_[r] == FwUnmatched::kNone)
      later[key] = r;
  }
  for (const auto& [key, i] : last) {
    JoinedCommand& c = commands_[i];
    auto o = outside.find(key);
    if (c.host.complete_ns || c.fetch >= 0 || o == outside.end())
      continue;
    const size_t r = o->second;
    if (auto l = later.find(key); l != later.end() && l->second > r)
      continue;
    if (cores_[{fw_[r].dev, fw_[r].core}].breaks != fw_breaks_[r])
      continue;
    c.fetch = static_cast<int64_t>(r);
    c.fetch_by = JoinedBy::kOrder;
    fw_why_[r] = FwUnmatched::kNone;
    counts_.by_order++;
  }
}

HostUnmatched CommandJoin::WhyMissing(const JoinedCommand& c) const {
  const HostCommand& h = c.host;
  const uint16_t dev = DevOf(h.ctrl);
  const uint64_t lo = h.setup_ns;
  const uint64_t hi = h.complete_ns ? *h.complete_ns : kInfinity;
  bool any = false;
  uint64_t first = kInfinity, last = 0;
  const uint16_t core = CoreOfQueue(dev, h.qid);
  for (auto it = cores_.lower_bound({dev, 0}); it != cores_.end() && it->first.first == dev; ++it) {
    const CoreTrack& t = it->second;
    if (!t.any)
      continue;
    any = true;
    first = std::min(first, t.first);
    last = std::max(last, t.last);
  }
  if (!any)
    return HostUnmatched::kNoDevice;
  for (auto it = cores_.lower_bound({dev, 0}); it != cores_.end() && it->first.first == dev; ++it) {
    if (core != 0xffff && it->first.second != core)
      continue;
    if (AnyIn(it->second.reset_ts, lo, hi))
      return HostUnmatched::kFirmwareReset;
    if (AnyIn(it->second.loss_ts, lo, SatAdd(hi, kLossReachNs)))
      return HostUnmatched::kFirmwareLost;
  }
  if (undecided_.contains(Key(dev, h.qid, h.cid)))
    return HostUnmatched::kUndecided;
  if (hi < first)
    return HostUnmatched::kBeforeFirmware;
  if (lo > last)
    return HostUnmatched::kAfterFirmware;
  return HostUnmatched::kNoRecord;
}

void CommandJoin::Finish() {
  if (finished_)
    return;
  finished_ = true;
  for (auto& [dev_core, t] : cores_) {
    std::sort(t.loss_ts.begin(), t.loss_ts.end());
    std::sort(t.reset_ts.begin(), t.reset_ts.end());
  }
  fw_why_.assign(fw_.size(), FwUnmatched::kNone);
  MatchKind(FwCommandRecord::Kind::kFetch);
  MatchKind(FwCommandRecord::Kind::kComplete);
  JoinInFlightFetches();

  counts_.host_commands = commands_.size();
  counts_.fw_records = fw_.size() + fw_counted_;
  counts_.fw_unmatched[static_cast<size_t>(FwUnmatched::kNoHostCommand)] += fw_counted_;
  for (JoinedCommand& c : commands_) {
    if (c.fetch < 0)
      c.why_no_fetch = WhyMissing(c);
    if (c.complete < 0)
      c.why_no_complete = c.host.complete_ns ? WhyMissing(c) : HostUnmatched::kNotCompleted;
    if (c.joined()) {
      counts_.joined++;
      continue;
    }
    if (c.fetch >= 0 || c.complete >= 0)
      counts_.partial++;
    else
      counts_.unjoined++;
    // One reason per command: the completion's when it has no completion,
    // else the first missing side's.
    const HostUnmatched why = c.fetch < 0 ? c.why_no_fetch : c.why_no_complete;
    counts_.host_unmatched[static_cast<size_t>(
        c.host.complete_ns ? why : HostUnmatched::kNotCompleted)]++;
  }
  for (FwUnmatched w : fw_why_)
    if (w != FwUnmatched::kNone)
      counts_.fw_unmatched[static_cast<size_t>(w)]++;
}

}  // namespace hmbtrace
