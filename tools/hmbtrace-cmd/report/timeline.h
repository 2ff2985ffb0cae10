// SPDX-License-Identifier: GPL-2.0-only
//
// The order of hmbtrace-cmd report: one host timeline in which firmware
// records sit at their converted firmware time (Documentation/design.rst,
// decision 7), not where the module's drain wrote them.
//
// A capture is read in ftrace order, the time each event went into the
// trace buffer. A firmware record goes in when the module drains it: a few
// hundred us after it happened while records flow, up to idle_interval_us
// (50 ms by default) after an idle spell. So lines wait in a reorder
// window: a line placed at host time T is final once the capture has
// reached ftrace time T + margin. A line that arrives with its place
// before a line already released (its record was drained more than the
// margin after it happened) cannot be placed: it goes at the end of what
// was released, marked "[placed late by D: ...]", and is counted.
//
// Places:
//   - a record: its converted time (else its ftrace time), never after its
//     ftrace time (nothing is drained before it happens) and never before
//     the previous record of its (dev, core), so a core stays in sequence
//     order across re-fits and resets;
//   - hmb_state, hmb_dict, hmb_clock: their ftrace time, but before the
//     next record of their dev on their CPU (the module emits them before
//     the records they describe); hmb_lost: likewise before the next
//     record of its core, so a loss stays where it happened;
//   - anything else (trace_marker lines): its ftrace time.
// Lines with the same place keep their order in the capture.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_TIMELINE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_TIMELINE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hmbtrace {

// The reorder margin by default: twice the module's default idle back-off.
inline constexpr uint64_t kDefaultReorderMarginMs = 100;

// One line of the report before it has its place.
struct TimelineLine {
  enum class Kind {
    kHost,          // at its ftrace time
    kRecord,        // at `at`, the converted time (or the ftrace time)
    kBeforeDevCpu,  // before the next record of (dev, cpu)
    kBeforeCore,    // before the next record of (dev, core)
  };
  Kind kind = Kind::kHost;
  uint64_t ts = 0;  // ftrace time
  uint64_t at = 0;  // kRecord: where it belongs
  int cpu = 0;
  uint16_t dev = 0;
  uint16_t core = 0;
  std::string body;  // the line after "<time> [<cpu>] ", no newline
};

// " [NNN] ": a report line's CPU, as trace-cmd report prints it ("[%03d]").
void AppendCpu(std::string* out, int cpu);

class Timeline {
 public:
  explicit Timeline(uint64_t margin_ns) : margin_(margin_ns) {}

  // For a reader whose output keeps each CPU's lines apart (hmbtrace-cmd
  // retime writes per-CPU buffers that readers merge): a record is late
  // only if its place is before what was released *on its CPU*, not
  // before any line released. Lines then come out of order across CPUs,
  // in order within each.
  void SetLatePerCpu(bool on) { late_per_cpu_ = on; }

  // Lines must come in ftrace order (the capture's). The body is copied:
  // a caller may reuse `line` for the next one.
  void Add(const TimelineLine& line);
  // Appends to `out` the lines whose place is final, in order.
  void Release(std::string* out);
  // Appends every line still held: the capture has ended.
  void Finish(std::string* out);

  // The same for a reader that places something other than text
  // (hmbtrace-cmd retime): each line whose place is final, in order, as
  // (place, cpu, body); a line placed late has no "placed late" note.
  using Sink = std::function<void(uint64_t at, int cpu, std::string& body)>;
  void Release(const Sink& sink);
  void Finish(const Sink& sink);
  // Lines held, waiting for their place to be final.
  size_t held() const { return lined_ + pinned_.size(); }

  uint64_t late() const { return late_; }
  uint64_t late_max_ns() const { return late_max_; }
  uint64_t margin_ns() const { return margin_; }

 private:
  using Key = std::pair<uint64_t, uint64_t>;       // (place, arrival)
  using PinKey = std::tuple<bool, uint16_t, int>;  // (by core, dev, cpu or core)
  // A line held: its place and its body in the arena.
  struct Held {
    Key key;
    uint64_t late_by = 0;  // placed late by this much
    uint32_t chunk = 0;    // body: chunks_[chunk].data[offset, offset + len)
    uint32_t offset = 0;
    uint32_t len = 0;
    int cpu = 0;
  };
  // A line that is or was pinned, and what it waits for.
  struct Pinned {
    Held held;
    bool pinned = false;
    PinKey pin{};
  };
  // Bodies of held lines, in chunks reused once every line in them is out
  // (lines leave in about the order they came: memory stays flat).
  struct Chunk {
    std::unique_ptr<char[]> data;
    size_t capacity = 0;
    size_t used = 0;
    size_t live = 0;  // lines held with their body here
  };
  static constexpr size_t kChunkBytes = 1u << 16;

  uint64_t Final() const { return now_ >= margin_ ? now_ - margin_ : 0; }
  // `notes`: a line placed late says so in its body.
  template <typename Out>
  void ReleaseUntil(uint64_t until, Out&& out, bool notes);
  // Moves the held lines pinned to `pin` up to `at`, and unpins them.
  void Settle(const PinKey& pin, uint64_t at);
  void Store(std::string_view body, Held* held);
  void Drop(uint32_t chunk);

  uint64_t margin_;
  uint64_t now_ = 0;       // the latest ftrace time seen
  uint64_t released_ = 0;  // the place of the last line released
  bool any_released_ = false;
  bool late_per_cpu_ = false;
  std::map<int, uint64_t> cpu_released_;  // late_per_cpu_: per CPU
  uint64_t arrival_ = 0;
  // Lines that never waited for a record (most of them), in lanes whose
  // keys only grow: one per (dev, core) for records (a core's places
  // never go back: core_at) and one for host lines (at their ftrace time,
  // which the capture gives in order). A line that would break its lane's
  // order is inserted in place, so the order holds whatever comes.
  struct Lane {
    std::vector<Held> lines;  // in key order from lines[head] on
    size_t head = 0;
    uint64_t core_at = 0;  // a record lane: its last record's place
    bool empty() const { return head == lines.size(); }
    const Key& front() const { return lines[head].key; }
    void Push(const Held& held);
    void Pop();
  };
  // Lines that are or were pinned (rare), whose key Settle() moves, stay
  // in a map. Release merges the lanes and the map in key order.
  std::vector<Lane> lanes_{1};  // lanes_[0]: host lines
  // The lanes with lines, a min-heap by their first line's key.
  struct LaneLater {
    const std::vector<Lane>* lanes;
    bool operator()(uint32_t a, uint32_t b) const {
      return (*lanes)[b].front() < (*lanes)[a].front();
    }
  };
  std::vector<uint32_t> lane_heap_;
  std::unordered_map<uint32_t, uint32_t> core_lane_;  // (dev << 16 | core) -> lane
  size_t lined_ = 0;  // lines in lanes_
  std::map<Key, Pinned> pinned_;
  std::map<PinKey, std::vector<Key>> pins_;
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> free_chunks_;
  uint32_t current_chunk_ = UINT32_MAX;
  std::string scratch_;  // a body for a Sink
  uint64_t late_ = 0;
  uint64_t late_max_ = 0;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_REPORT_TIMELINE_H_
