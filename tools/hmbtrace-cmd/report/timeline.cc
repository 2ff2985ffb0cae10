// SPDX-License-Identifier: GPL-2.0-only
#include "report/timeline.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <type_traits>

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

void Timeline::Store(std::string_view body, Held* held) {
  if (current_chunk_ == UINT32_MAX ||
      chunks_[current_chunk_].capacity - chunks_[current_chunk_].used < body.size()) {
    if (current_chunk_ != UINT32_MAX && chunks_[current_chunk_].live == 0) {
      chunks_[current_chunk_].used = 0;
      free_chunks_.push_back(current_chunk_);
    }
    current_chunk_ = UINT32_MAX;
    if (!free_chunks_.empty() && chunks_[free_chunks_.back()].capacity >= body.size()) {
      current_chunk_ = free_chunks_.back();
      free_chunks_.pop_back();
    } else {
      Chunk c;
      c.capacity = std::max(kChunkBytes, body.size());
      c.data = std::make_unique<char[]>(c.capacity);
      current_chunk_ = static_cast<uint32_t>(chunks_.size());
      chunks_.push_back(std::move(c));
    }
  }
  Chunk& c = chunks_[current_chunk_];
  if (!body.empty())
    std::memcpy(c.data.get() + c.used, body.data(), body.size());
  held->chunk = current_chunk_;
  held->offset = static_cast<uint32_t>(c.used);
  held->len = static_cast<uint32_t>(body.size());
  c.used += body.size();
  c.live++;
}

void Timeline::Drop(uint32_t chunk) {
  Chunk& c = chunks_[chunk];
  if (--c.live == 0 && chunk != current_chunk_) {
    c.used = 0;
    free_chunks_.push_back(chunk);
  }
}

void Timeline::Add(const TimelineLine& line) {
  now_ = std::max(now_, line.ts);
  uint64_t at = line.ts;
  Held held;
  held.cpu = line.cpu;
  bool pinned = false;
  PinKey pin{};
  uint32_t lane = 0;
  switch (line.kind) {
    case TimelineLine::Kind::kHost:
      break;
    case TimelineLine::Kind::kRecord: {
      at = std::min(line.at, line.ts);
      const auto [lane_of, added] = core_lane_.try_emplace(
          uint32_t{line.dev} << 16 | line.core, static_cast<uint32_t>(lanes_.size()));
      if (added)
        lanes_.emplace_back();
      lane = lane_of->second;
      uint64_t& core_at = lanes_[lane].core_at;
      at = std::max(at, core_at);
      bool any_released = any_released_;
      uint64_t released = released_;
      if (late_per_cpu_) {
        const auto cpu_released = cpu_released_.find(line.cpu);
        any_released = cpu_released != cpu_released_.end();
        if (any_released)
          released = cpu_released->second;
      }
      if (any_released && at < released) {
        const uint64_t by = released - at;
        late_++;
        late_max_ = std::max(late_max_, by);
        held.late_by = by;
        at = released;
      }
      core_at = at;
      if (!pins_.empty()) {
        Settle(PinKey{false, line.dev, line.cpu}, at);
        Settle(PinKey{true, line.dev, line.core}, at);
      }
      break;
    }
    case TimelineLine::Kind::kBeforeDevCpu:
      pinned = true;
      pin = PinKey{false, line.dev, line.cpu};
      break;
    case TimelineLine::Kind::kBeforeCore:
      pinned = true;
      pin = PinKey{true, line.dev, line.core};
      break;
  }
  held.key = Key{at, arrival_++};
  Store(line.body, &held);
  if (pinned) {
    pins_[pin].push_back(held.key);
    pinned_.emplace(held.key, Pinned{held, true, pin});
    return;
  }
  Lane& to = lanes_[lane];
  const bool was_empty = to.empty();
  const bool new_front = !was_empty && held.key < to.front();
  to.Push(held);
  lined_++;
  if (was_empty) {
    lane_heap_.push_back(lane);
    std::push_heap(lane_heap_.begin(), lane_heap_.end(), LaneLater{&lanes_});
  } else if (new_front) {
    std::make_heap(lane_heap_.begin(), lane_heap_.end(), LaneLater{&lanes_});  // rare
  }
}

void Timeline::Lane::Push(const Held& held) {
  if (empty() || !(held.key < lines.back().key)) {
    lines.push_back(held);
    return;
  }
  const auto at_key =
      std::upper_bound(lines.begin() + static_cast<ptrdiff_t>(head), lines.end(), held.key,
                       [](const Key& k, const Held& h) { return k < h.key; });
  lines.insert(at_key, held);
}

void Timeline::Lane::Pop() {
  head++;
  // The released front goes once it is most of the lane (amortized O(1)).
  if (head == lines.size()) {
    lines.clear();
    head = 0;
  } else if (head >= 4096 && head * 2 >= lines.size()) {
    lines.erase(lines.begin(), lines.begin() + static_cast<ptrdiff_t>(head));
    head = 0;
  }
}

void Timeline::Settle(const PinKey& pin, uint64_t at) {
  auto it = pins_.find(pin);
  if (it == pins_.end())
    return;
  for (const Key& key : it->second) {
    auto h = pinned_.find(key);
    if (h == pinned_.end())
      continue;
    Pinned p = h->second;
    pinned_.erase(h);
    p.pinned = false;
    // Arrival order is kept: the pinned line came before the record.
    p.held.key = Key{std::min(key.first, at), key.second};
    pinned_.emplace(p.held.key, p);
  }
  pins_.erase(it);
}

void Timeline::Release(std::string* out) {
  ReleaseUntil(Final(), out, true);
}

void Timeline::Finish(std::string* out) {
  ReleaseUntil(UINT64_MAX, out, true);
}

void Timeline::Release(const Sink& sink) {
  ReleaseUntil(Final(), sink, false);
}

void Timeline::Finish(const Sink& sink) {
  ReleaseUntil(UINT64_MAX, sink, false);
}

template <typename Out>
void Timeline::ReleaseUntil(uint64_t until, Out&& out, bool notes) {
  for (;;) {
    Lane* first = lane_heap_.empty() ? nullptr : &lanes_[lane_heap_.front()];
    Held h;
    if (first && (pinned_.empty() || first->front() < pinned_.begin()->first)) {
      if (first->front().first > until)
        break;
      // Out of the heap while its first line changes, back in after.
      const uint32_t lane = lane_heap_.front();
      std::pop_heap(lane_heap_.begin(), lane_heap_.end(), LaneLater{&lanes_});
      lane_heap_.pop_back();
      h = first->lines[first->head];
      first->Pop();
      lined_--;
      if (!first->empty()) {
        lane_heap_.push_back(lane);
        std::push_heap(lane_heap_.begin(), lane_heap_.end(), LaneLater{&lanes_});
      }
    } else {
      if (pinned_.empty() || pinned_.begin()->first.first > until)
        break;
      auto it = pinned_.begin();
      const Pinned p = it->second;
      pinned_.erase(it);
      h = p.held;
      if (p.pinned) {
        auto pins = pins_.find(p.pin);
        if (pins != pins_.end()) {
          auto& keys = pins->second;
          keys.erase(std::remove(keys.begin(), keys.end(), h.key), keys.end());
          if (keys.empty())
            pins_.erase(pins);
        }
      }
    }
    const uint64_t at = h.key.first;
    const std::string_view body(chunks_[h.chunk].data.get() + h.offset, h.len);
    if constexpr (std::is_same_v<std::decay_t<Out>, std::string*>) {
      std::string* text = out;
      AppendHostTime(text, at);
      AppendCpu(text, h.cpu);
      text->append(body);
      if (notes && h.late_by) {
        *text += " [placed late by ";
        AppendBoundText(text, h.late_by);
        *text += ": drained past the ";
        *text += std::to_string(margin_ / 1000000);
        *text += "ms reorder margin]";
      }
      *text += '\n';
    } else {
      scratch_.assign(body);
      out(at, h.cpu, scratch_);
    }
    Drop(h.chunk);
    released_ = at;
    any_released_ = true;
    if (late_per_cpu_)
      cpu_released_[h.cpu] = std::max(cpu_released_[h.cpu], at);
  }
}

}  // namespace hmbtrace
