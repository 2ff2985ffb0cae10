// SPDX-License-Identifier: GPL-2.0-only
#include "causes/command_paths.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "format.h"

namespace hmbtrace {
namespace {

constexpr size_t kNoCommand = std::numeric_limits<size_t>::max();

std::optional<uint64_t> Field(const EventDesc& ev,
                              uint8_t index,
                              std::span<const uint8_t> payload) {
  return RoleFieldValue(ev, index, payload);
}

bool IsCommandSpan(const EventDesc& ev) {
  return (ev.role == HMB_TRACE_ROLE_BEGIN || ev.role == HMB_TRACE_ROLE_END) &&
         ev.qid_field != HMB_TRACE_NO_FIELD && ev.cid_field != HMB_TRACE_NO_FIELD &&
         (ev.cmd_kind == HMB_TRACE_CMD_NONE || ev.cmd_kind == HMB_TRACE_CMD_BIND);
}

// The fetch's opcode as printed, if it has a field of that name.
std::string Opcode(const EventDesc& ev, std::span<const uint8_t> payload) {
  for (size_t f = 0; f < ev.fields.size(); f++) {
    const FieldDesc& fd = ev.fields[f];
    if (fd.name != "opcode" && fd.name != "opc")
      continue;
    const std::optional<uint64_t> v = FieldValue(ev, f, payload);
    if (!v)
      break;
    for (const ValueDesc& name : fd.values) {
      if (name.value == *v)
        return name.name;
    }
    return "opcode " + std::to_string(*v);
  }
  return ev.name;
}

}  // namespace

// Calls fn(activity, overlap) for the activities of |list| (sorted by
// begin, none longer than |longest|) that overlap |s|: from the first that
// can reach it, so a wait costs O(log n + overlapping), not O(n).
template <typename Activity, typename Fn>
void ForOverlapping(const std::vector<Activity>& list,
                    uint64_t longest,
                    const CommandStage& s,
                    Fn fn) {
  const uint64_t from = s.begin - std::min(s.begin, longest);
  auto it = std::lower_bound(list.begin(), list.end(), from,
                             [](const Activity& a, uint64_t t) { return a.begin < t; });
  for (; it != list.end() && it->begin < s.end; ++it) {
    if (it->end > s.begin)
      fn(*it, std::min(it->end, s.end) - std::max(it->begin, s.begin));
  }
}

bool HasCommandAttribution(const Dictionary& dict) {
  return std::any_of(dict.events().begin(), dict.events().end(),
                     [](const EventDesc& ev) { return ev.cmd_kind != HMB_TRACE_CMD_NONE; });
}

int CommandPath::LongestDelay() const {
  int best = -1;
  for (size_t i = 0; i < stages.size(); i++) {
    const CommandStage& s = stages[i];
    if (s.is_delay() && s.length() > 0 &&
        (best < 0 || s.length() > stages[static_cast<size_t>(best)].length()))
      best = static_cast<int>(i);
  }
  return best;
}

std::string CommandPath::MainCause() const {
  const int i = LongestDelay();
  return i < 0 ? kCauseNone : stages[static_cast<size_t>(i)].cause;
}

std::vector<const CommandStage*> CommandPath::StagesByBegin() const {
  std::vector<const CommandStage*> out;
  for (const CommandStage& s : stages)
    out.push_back(&s);
  std::stable_sort(out.begin(), out.end(),
                   [](const CommandStage* a, const CommandStage* b) { return a->begin < b->begin; });
  return out;
}

void CommandPaths::Add(uint16_t dev,
                       uint64_t ts,
                       const EventDesc& ev,
                       std::span<const uint8_t> payload) {
  Device& d = devices_[dev];
  if (ev.cmd_kind != HMB_TRACE_CMD_NONE)
    counts_.records++;
  if (IsCommandSpan(ev)) {
    AddCommandSpan(d, dev, ts, ev, payload);
    return;
  }
  switch (ev.cmd_kind) {
    case HMB_TRACE_CMD_STAGE:
    case HMB_TRACE_CMD_WAIT:
    case HMB_TRACE_CMD_REWORK:
      AddStage(d, ts, ev, payload);
      break;
    case HMB_TRACE_CMD_ACTIVITY:
      AddActivity(d, ts, ev, payload);
      break;
    case HMB_TRACE_CMD_BIND: {
      // A binding record that is not the command's span: the command must
      // be open already.
      const std::optional<uint64_t> qid = Field(ev, ev.qid_field, payload);
      const std::optional<uint64_t> cid = Field(ev, ev.cid_field, payload);
      const std::optional<uint64_t> tag = Field(ev, ev.tag_field, payload);
      if (!qid || !cid || !tag) {
        counts_.bad_field++;
      } else if (d.tags.size() >= kMaxOpen && !d.tags.count(*tag)) {
        counts_.dropped++;
      } else {
        d.tags[*tag] = {static_cast<uint16_t>(*qid), static_cast<uint16_t>(*cid)};
      }
      break;
    }
    default:
      break;
  }
}

void CommandPaths::AddCommandSpan(Device& d,
                                  uint16_t dev,
                                  uint64_t ts,
                                  const EventDesc& ev,
                                  std::span<const uint8_t> payload) {
  const std::optional<uint64_t> qid = Field(ev, ev.qid_field, payload);
  const std::optional<uint64_t> cid = Field(ev, ev.cid_field, payload);
  if (!qid || !cid) {
    counts_.bad_field++;
    return;
  }
  const std::pair<uint16_t, uint16_t> key{static_cast<uint16_t>(*qid), static_cast<uint16_t>(*cid)};
  if (ev.role == HMB_TRACE_ROLE_END) {
    auto it = d.open.find(key);
    if (it == d.open.end())
      return;  // fetched before the capture began
    CommandPath& c = commands_[it->second];
    c.complete = std::max(ts, c.fetch);
    c.completed = true;
    d.open.erase(it);
    // Its tag is free again: a later stage naming it names no command.
    std::erase_if(d.tags, [&](const auto& t) { return t.second == key; });
    return;
  }
  if (commands_.size() >= kMaxCommands || (d.open.size() >= kMaxOpen && !d.open.count(key))) {
    counts_.dropped++;
    return;
  }
  CommandPath c;
  c.dev = dev;
  c.qid = key.first;
  c.cid = key.second;
  c.opcode = Opcode(ev, payload);
  c.fetch = c.complete = ts;
  d.open[key] = commands_.size();
  commands_.push_back(std::move(c));
  if (ev.cmd_kind == HMB_TRACE_CMD_BIND) {
    const std::optional<uint64_t> tag = Field(ev, ev.tag_field, payload);
    if (!tag)
      counts_.bad_field++;
    else if (d.tags.size() < kMaxOpen || d.tags.count(*tag))
      d.tags[*tag] = key;
    else
      counts_.dropped++;
  }
}

long CommandPaths::FindCommand(Device& d, const EventDesc& ev, std::span<const uint8_t> payload) {
  std::pair<uint16_t, uint16_t> key;
  if (ev.tag_field != HMB_TRACE_NO_FIELD) {
    const std::optional<uint64_t> tag = Field(ev, ev.tag_field, payload);
    if (!tag) {
      counts_.bad_field++;
      return -1;
    }
    auto t = d.tags.find(*tag);
    if (t == d.tags.end()) {
      counts_.unknown_command++;
      return -1;
    }
    key = t->second;
  } else {
    const std::optional<uint64_t> qid = Field(ev, ev.qid_field, payload);
    const std::optional<uint64_t> cid = Field(ev, ev.cid_field, payload);
    if (!qid || !cid) {
      counts_.unknown_command++;  // a stage that names no command at all
      return -1;
    }
    key = {static_cast<uint16_t>(*qid), static_cast<uint16_t>(*cid)};
  }
  auto it = d.open.find(key);
  if (it == d.open.end()) {
    counts_.unknown_command++;
    return -1;
  }
  return static_cast<long>(it->second);
}

bool CommandPaths::Interval(Device& d,
                            uint64_t ts,
                            const EventDesc& ev,
                            std::span<const uint8_t> payload,
                            size_t owner,
                            uint64_t* begin,
                            uint64_t* end) {
  *end = ts;
  if (ev.role == HMB_TRACE_ROLE_BEGIN || ev.role == HMB_TRACE_ROLE_END) {
    const std::optional<uint64_t> k = Field(ev, ev.key_field, payload);
    if (!k) {
      counts_.bad_field++;
      return false;
    }
    if (ev.role == HMB_TRACE_ROLE_BEGIN) {
      if (d.spans.size() >= kMaxOpen) {
        counts_.dropped++;
        return false;
      }
      // A BEGIN again with the same key: the first never ended.
      auto [it, fresh] = d.spans.try_emplace({ev.id, *k, owner}, ts, ev.name);
      if (!fresh) {
        counts_.stage_never_ended++;
        it->second = {ts, ev.name};
      }
      return false;
    }
    auto it = d.spans.find({ev.pair_id, *k, owner});
    if (it == d.spans.end()) {
      counts_.stage_never_ended++;  // an end whose stage never began here
      return false;
    }
    *begin = std::min(it->second.first, ts);
    d.spans.erase(it);
    return true;
  }
  const std::optional<uint64_t> lat = Field(ev, ev.latency_field, payload);
  if (ev.latency_field != HMB_TRACE_NO_FIELD && !lat) {
    counts_.bad_field++;
    return false;
  }
  // Written when it ended, |lat| ticks long (none: an instant).
  *begin = lat ? ts - std::min(*lat, ts) : ts;
  return true;
}

void CommandPaths::AddStage(Device& d,
                            uint64_t ts,
                            const EventDesc& ev,
                            std::span<const uint8_t> payload) {
  const long c = FindCommand(d, ev, payload);
  if (c < 0)
    return;
  CommandStage s;
  if (!Interval(d, ts, ev, payload, static_cast<size_t>(c), &s.begin, &s.end))
    return;
  CommandPath& cmd = commands_[static_cast<size_t>(c)];
  if (cmd.stages.size() >= kMaxStagesPerCommand) {
    counts_.dropped++;
    return;
  }
  s.name = ev.name;
  s.kind = ev.cmd_kind;
  if (s.kind == HMB_TRACE_CMD_REWORK) {
    s.cause = s.name;
  } else if (s.kind == HMB_TRACE_CMD_WAIT) {
    const std::optional<uint64_t> r = Field(ev, ev.resource_field, payload);
    if (!r) {
      counts_.no_resource++;
      s.cause = kCauseUnattributed;
    } else {
      const std::string& kind = ev.fields[ev.resource_field].name;
      s.resource = kind + " " + std::to_string(*r);
      wait_keys_[{static_cast<size_t>(c), cmd.stages.size()}] = {kind, *r};
    }
  }
  cmd.stages.push_back(std::move(s));
}

void CommandPaths::AddActivity(Device& d,
                               uint64_t ts,
                               const EventDesc& ev,
                               std::span<const uint8_t> payload) {
  const std::optional<uint64_t> r = Field(ev, ev.resource_field, payload);
  if (!r) {
    counts_.no_resource++;
    return;
  }
  Activity a;
  if (!Interval(d, ts, ev, payload, kNoCommand, &a.begin, &a.end))
    return;
  if (activities_ >= kMaxActivities) {
    counts_.dropped++;
    return;
  }
  activities_++;
  a.name = ev.name;
  a.text = ev.name + " " + FormatEvent(ev, payload);
  d.resources.held[{ev.fields[ev.resource_field].name, *r}].push_back(std::move(a));
}

void CommandPaths::Finish() {
  for (auto& [dev, d] : devices_) {
    counts_.stage_never_ended += d.spans.size();
    d.spans.clear();
    for (auto& [key, list] : d.resources.held) {
      std::sort(list.begin(), list.end(),
                [](const Activity& a, const Activity& b) { return a.begin < b.begin; });
      uint64_t longest = 0;
      for (const Activity& a : list)
        longest = std::max(longest, a.end - a.begin);
      d.resources.longest[key] = longest;
    }
  }
  for (const auto& [where, key] : wait_keys_) {
    CommandPath& cmd = commands_[where.first];
    CommandStage& s = cmd.stages[where.second];
    s.cause = kCauseQueueing;
    const Device& d = devices_[cmd.dev];
    auto held = d.resources.held.find(key);
    if (held == d.resources.held.end() || s.length() == 0)
      continue;
    // Overlap with the wait, summed per activity name.
    std::map<std::string, uint64_t> by_name;
    ForOverlapping(held->second, d.resources.longest.at(key), s,
                   [&](const Activity& a, uint64_t o) { by_name[a.name] += o; });
    std::string best;
    uint64_t best_ticks = 0;
    for (const auto& [name, ticks] : by_name) {
      if (ticks > best_ticks) {
        best = name;
        best_ticks = ticks;
      }
    }
    // The activity held the resource for most of the wait; otherwise the
    // command queued behind other commands.
    if (2 * best_ticks <= s.length())
      continue;
    s.cause = best;
    const Activity* shown = nullptr;
    uint64_t shown_ticks = 0;
    ForOverlapping(held->second, d.resources.longest.at(key), s,
                   [&](const Activity& a, uint64_t o) {
                     if (a.name == best && o > shown_ticks) {
                       shown = &a;
                       shown_ticks = o;
                     }
                   });
    s.cause_text = shown->text;
    s.cause_begin = shown->begin;
    s.cause_end = shown->end;
  }
  wait_keys_.clear();
}

}  // namespace hmbtrace
