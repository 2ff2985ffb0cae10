// SPDX-License-Identifier: GPL-2.0-only
//
// The spans of one firmware core that a BEGIN record opened and no END
// closed yet, by (begin event id, key, qid), with the firmware time of the
// BEGIN: what stat pairs an END with. A BEGIN and an END for most command
// records, so one insertion and one removal per span: an open-addressing
// table (linear probing, removal by backward shift, no tombstones) in one
// array, instead of a node allocated and freed per span. Only counted,
// never listed: its order is nobody's business.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_OPEN_SPANS_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_OPEN_SPANS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hmbtrace {

class OpenSpans {
 public:
  // Opens the span at firmware time fw_ts: true, or false when it was
  // open already (then its time is fw_ts now).
  bool Open(uint16_t id, uint64_t key, uint64_t qid, uint64_t fw_ts);
  // Closes the span: true with its BEGIN's firmware time in *fw_ts, or
  // false when it is not open.
  bool Close(uint16_t id, uint64_t key, uint64_t qid, uint64_t* fw_ts);
  // Whether the span is open.
  bool Contains(uint16_t id, uint64_t key, uint64_t qid) const {
    return size_ && slots_[Find(id, key, qid)].used;
  }
  size_t size() const { return size_; }
  void clear();

 private:
  struct Slot {
    uint64_t key = 0;
    uint64_t qid = 0;
    uint64_t fw_ts = 0;
    uint16_t id = 0;
    bool used = false;
  };

  static size_t Hash(uint16_t id, uint64_t key, uint64_t qid) {
    const uint64_t h = (key * 0x9e3779b97f4a7c15ull) ^ (qid * 0xc2b2ae3d27d4eb4full) ^ id;
    return static_cast<size_t>(h ^ (h >> 29));
  }
  // The slot of the span, or of the free slot where it would go.
  size_t Find(uint16_t id, uint64_t key, uint64_t qid) const;
  void Grow();

  // A power of two in size, at most half used; empty until the first span.
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_STAT_OPEN_SPANS_H_
