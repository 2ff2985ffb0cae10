// SPDX-License-Identifier: GPL-2.0-only
#include "report/timeline.h"

#include <algorithm>
#include <cstdio>

#include "capture/capture.h"
#include "clock_set.h"

namespace hmbtrace {

void AppendCpu(std::string* out, int cpu) {
  // " [%03d] ", as trace-cmd report prints the CPU.
  if (cpu >= 0 && cpu < 1000) {
    const char text[] = {' ', '[', static_cast<char>('0' + cpu / 100),
                         static_cast<char>('0' + cpu / 10 % 10), static_cast<char>('0' + cpu % 10),
                         ']', ' '};
    out->append(text, sizeof(text));
    return;
  }
  char buf[24];
  std::snprintf(buf, sizeof(buf), " [%03d] ", cpu);
  *out += buf;
}

void Timeline::Add(TimelineLine line) {
  now_ = std::max(now_, line.ts);
  uint64_t at = line.ts;
  Held held{line.cpu, std::move(line.body), false, {}, 0};
  switch (line.kind) {
    case TimelineLine::Kind::kHost:
      break;
    case TimelineLine::Kind::kRecord: {
      at = std::min(line.at, line.ts);
      uint64_t& core_at = core_at_[{line.dev, line.core}];
      at = std::max(at, core_at);
      const auto cpu_released = cpu_released_.find(line.cpu);
      const bool any_released =
          late_per_cpu_ ? cpu_released != cpu_released_.end() : any_released_;
      const uint64_t released = late_per_cpu_ && any_released ? cpu_released->second : released_;
      if (any_released && at < released) {
        const uint64_t by = released - at;
        late_++;
        late_max_ = std::max(late_max_, by);
        held.late_by = by;
        at = released;
      }
      core_at = at;
      Settle(PinKey{false, line.dev, line.cpu}, at);
      Settle(PinKey{true, line.dev, line.core}, at);
      break;
    }
    case TimelineLine::Kind::kBeforeDevCpu:
      held.pinned = true;
      held.pin = PinKey{false, line.dev, line.cpu};
      break;
    case TimelineLine::Kind::kBeforeCore:
      held.pinned = true;
      held.pin = PinKey{true, line.dev, line.core};
      break;
  }
  const Key key{at, arrival_++};
  if (held.pinned)
    pins_[held.pin].push_back(key);
  held_.emplace(key, std::move(held));
}

void Timeline::Settle(const PinKey& pin, uint64_t at) {
  auto it = pins_.find(pin);
  if (it == pins_.end())
    return;
  for (const Key& key : it->second) {
    auto h = held_.find(key);
    if (h == held_.end())
      continue;
    Held held = std::move(h->second);
    held_.erase(h);
    held.pinned = false;
    // Arrival order is kept: the pinned line came before the record.
    held_.emplace(Key{std::min(key.first, at), key.second}, std::move(held));
  }
  pins_.erase(it);
}

Timeline::Sink Timeline::TextSink(std::string* out) {
  return [out](uint64_t at, int cpu, std::string& body) {
    AppendHostTime(out, at);
    AppendCpu(out, cpu);
    *out += body;
    *out += '\n';
  };
}

void Timeline::ReleaseUntil(uint64_t until, const Sink& sink, bool notes) {
  while (!held_.empty() && held_.begin()->first.first <= until) {
    auto it = held_.begin();
    const uint64_t at = it->first.first;
    Held& h = it->second;
    if (h.pinned) {
      auto p = pins_.find(h.pin);
      if (p != pins_.end()) {
        auto& keys = p->second;
        keys.erase(std::remove(keys.begin(), keys.end(), it->first), keys.end());
        if (keys.empty())
          pins_.erase(p);
      }
    }
    if (notes && h.late_by)
      h.body += " [placed late by " + BoundText(h.late_by) + ": drained past the " +
                std::to_string(margin_ / 1000000) + "ms reorder margin]";
    sink(at, h.cpu, h.body);
    released_ = at;
    any_released_ = true;
    if (late_per_cpu_)
      cpu_released_[h.cpu] = std::max(cpu_released_[h.cpu], at);
    held_.erase(it);
  }
}

}  // namespace hmbtrace
