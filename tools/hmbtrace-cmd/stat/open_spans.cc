// SPDX-License-Identifier: GPL-2.0-only
#include "stat/open_spans.h"

#include <utility>

namespace hmbtrace {

size_t OpenSpans::Find(uint16_t id, uint64_t key, uint64_t qid) const {
  const size_t mask = slots_.size() - 1;
  // Never full (at most half used): the probe ends at a free slot.
  for (size_t i = Hash(id, key, qid) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (!s.used || (s.id == id && s.key == key && s.qid == qid))
      return i;
  }
}

void OpenSpans::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
  for (const Slot& s : old) {
    if (s.used)
      slots_[Find(s.id, s.key, s.qid)] = s;
  }
}

bool OpenSpans::Open(uint16_t id, uint64_t key, uint64_t qid, uint64_t fw_ts) {
  if ((size_ + 1) * 2 > slots_.size())
    Grow();
  Slot& s = slots_[Find(id, key, qid)];
  const bool fresh = !s.used;
  if (fresh) {
    s = Slot{key, qid, 0, id, true};
    size_++;
  }
  s.fw_ts = fw_ts;
  return fresh;
}

bool OpenSpans::Close(uint16_t id, uint64_t key, uint64_t qid, uint64_t* fw_ts) {
  if (!size_)
    return false;
  const size_t mask = slots_.size() - 1;
  size_t i = Find(id, key, qid);
  if (!slots_[i].used)
    return false;
  *fw_ts = slots_[i].fw_ts;
  // Backward shift: each slot after the hole in its probe run moves into
  // the hole if the hole lies between its home and where it is.
  for (size_t j = (i + 1) & mask; slots_[j].used; j = (j + 1) & mask) {
    const size_t home = Hash(slots_[j].id, slots_[j].key, slots_[j].qid) & mask;
    if (((i - home) & mask) < ((j - home) & mask)) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = Slot{};
  size_--;
  return true;
}

void OpenSpans::clear() {
  slots_.clear();
  size_ = 0;
}

}  // namespace hmbtrace
