// SPDX-License-Identifier: GPL-2.0-only
//
// The command join: every host NVMe command (nvme:nvme_setup_cmd ..
// nvme:nvme_complete_rq) with the firmware records that served it.
//
// Facts it rests on (Documentation/design.rst, "Platform facts": nvme-pci):
// the host cid is genctr << 12 | tag, the value the device sees; qid is the
// SQ id; the host's intervals of one (controller, qid, cid) are disjoint.
// Firmware records that carry a qid and a cid (the dictionary's qid_field
// and cid_field roles; cmd_fetch is a BEGIN, cmd_complete an END) name a
// command the same way. Controller N is joined with hmb device N (the
// first NVMe controller with the first trace area) unless told otherwise.
//
// The rule, per (controller, qid, cid):
//   1. By window: a firmware record whose converted time t (bound b, the
//      clock fit's) lies in exactly one host interval widened by b,
//      [setup - b, complete + b], belongs to that command.
//   2. By order: when time cannot decide (no converted time, or t within
//      the widened intervals of two commands), the record goes to the
//      command after the one the previous record of its kind (fetch or
//      complete) of the same key went to, if that command's widened
//      interval admits t (when there is a t). Order is not trusted across
//      a firmware loss on the record's core or a firmware reset (a new
//      producer generation): after either, the chain restarts at the next
//      record matched by window.
//   3. In flight: a command the host had not completed when the capture
//      ended (a crash dump's commands in flight) takes the latest fetch
//      record of its key that time left outside every window, if no
//      fetch of the key joined after it, no complete of the key follows
//      it and nothing broke the order on its core since (a cid is not
//      reused while its command is in flight): a clock fit off by more
//      than its bound must not lose a hung command's fetch.
//   4. Otherwise the record is unmatched, with its reason; and a host
//      command that no fetch or no complete joined is listed with the
//      reason it most likely has (records lost on the core, a firmware
//      reset inside its interval, outside the firmware's capture, no
//      completion in the capture, ...). Nothing is dropped.
// A second record of a kind for a command already joined is unmatched
// ("duplicate"), unless time placed both and the second lies nearer the
// host's own interval (not widened by the bound) than the first: then the
// first is the duplicate. A record converted with a wide bound (time
// extrapolated before the first clock fit: an older use of the same cid
// at boot) is admitted by the widened window of a command whose own
// record comes after it, inside its interval.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_JOIN_NVME_JOIN_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_JOIN_NVME_JOIN_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace hmbtrace {

// One host command: nvme_setup_cmd and, if the capture has it,
// nvme_complete_rq of the same (ctrl, qid, cid).
// (Members by size: one is kept per command of the capture.)
struct HostCommand {
  uint64_t setup_ns = 0;
  std::optional<uint64_t> complete_ns;
  uint32_t ctrl = 0;
  uint32_t nsid = 0;
  uint16_t qid = 0;
  uint16_t cid = 0;
  uint16_t status = 0;
  uint8_t opcode = 0;
};

// One firmware record that names a command.
// (Members by size: two are kept per command of the capture.)
struct FwCommandRecord {
  enum class Kind : uint8_t { kFetch, kComplete };
  uint64_t seq = 0;
  uint64_t fw_ts = 0;
  uint64_t ftrace_ns = 0;  // when the module drained it
  uint64_t host_ns = 0;    // converted time
  uint64_t bound_ns = 0;   // its bound
  uint32_t producer_gen = 0;
  uint16_t dev = 0;
  uint16_t core = 0;
  uint16_t qid = 0;
  uint16_t cid = 0;
  Kind kind = Kind::kFetch;
  bool converted = false;
};

enum class FwUnmatched : uint8_t {
  kNone,
  kOutsideWindows,  // converted, inside no host interval of its key
  kNoHostCommand,   // no host command of its key at all
  kAmbiguous,       // inside two intervals, and order could not decide
  kNotConverted,    // no converted time, and order could not decide
  kDuplicate,       // the command has another (or a nearer) record of this kind
  kCount,
};
std::string_view FwUnmatchedName(FwUnmatched why);

enum class HostUnmatched : uint8_t {
  kNone,
  kNotCompleted,    // no nvme_complete_rq in the capture
  kBeforeFirmware,  // before the device's first record in the capture
  kAfterFirmware,   // after the device's last record in the capture
  kFirmwareLost,    // the core serving its queue lost records in its interval
  kFirmwareReset,   // a firmware reset inside its interval
  kNoDevice,        // no firmware records of its device at all
  kUndecided,       // a record of its key could be its; time and order could not decide
  kNoRecord,        // none of the above: the firmware wrote nothing for it
  kCount,
};
std::string_view HostUnmatchedName(HostUnmatched why);

enum class JoinedBy : uint8_t { kNone, kWindow, kOrder };

// A host command and what joined it.
struct JoinedCommand {
  HostCommand host;
  int64_t fetch = -1;     // index into CommandJoin::fw_records(), or -1
  int64_t complete = -1;  // likewise
  JoinedBy fetch_by = JoinedBy::kNone;
  JoinedBy complete_by = JoinedBy::kNone;
  HostUnmatched why_no_fetch = HostUnmatched::kNone;
  HostUnmatched why_no_complete = HostUnmatched::kNone;
  bool joined() const { return fetch >= 0 && complete >= 0; }
};

struct JoinCounts {
  uint64_t host_commands = 0;
  uint64_t joined = 0;   // fetch and complete
  uint64_t partial = 0;  // one of them
  uint64_t unjoined = 0;
  uint64_t by_order = 0;  // records matched by order
  std::array<uint64_t, static_cast<size_t>(HostUnmatched::kCount)> host_unmatched{};
  std::array<uint64_t, static_cast<size_t>(FwUnmatched::kCount)> fw_unmatched{};
  uint64_t fw_records = 0;
  uint64_t setup_reopened = 0;          // setup while the key was open: the older one left
  uint64_t complete_without_setup = 0;  // host completions with no setup in the capture
};

class CommandJoin {
 public:
  // Controller `ctrl` of the host is hmb device `ctrl` unless mapped here.
  void MapController(uint32_t ctrl, uint16_t dev);

  // Host events, in capture order.
  void HostSetup(uint32_t ctrl,
                 uint16_t qid,
                 uint16_t cid,
                 uint8_t opcode,
                 uint32_t nsid,
                 uint64_t ts);
  void HostComplete(uint32_t ctrl, uint16_t qid, uint16_t cid, uint16_t status, uint64_t ts);
  // Firmware side, in stream order per core (the capture's order).
  void FwRecord(const FwCommandRecord& rec);
  // With no host command to join them to (a capture without the host's
  // nvme events), firmware command records are counted (as unmatched,
  // kNoHostCommand), not kept: memory does not grow with a long
  // firmware-only capture. Call before the first FwRecord().
  void CountFwRecordsOnly() { count_only_ = true; }
  // Any firmware record of (dev, core), also those naming no command: the
  // extent of the firmware's capture, and where order stays trustworthy.
  void FwSeen(uint16_t dev, uint16_t core, uint32_t producer_gen, uint64_t ts);
  // Records of (dev, core) lost at host time `ts` (an hmb_lost).
  void FwLost(uint16_t dev, uint16_t core, uint64_t ts);

  // Joins everything fed; call once.
  void Finish();

  const std::deque<JoinedCommand>& commands() const { return commands_; }
  const std::deque<FwCommandRecord>& fw_records() const { return fw_; }
  // Per fw_records() index: why it is unmatched (kNone: joined).
  const std::deque<FwUnmatched>& fw_unmatched() const { return fw_why_; }
  const JoinCounts& counts() const { return counts_; }
  // The host device that `ctrl` is joined with.
  uint16_t DevOf(uint32_t ctrl) const;

 private:
  struct CoreTrack {
    bool any = false;
    uint64_t first = 0, last = 0;  // host time of its first and last record
    uint32_t gen = 0;
    uint64_t breaks = 0;             // losses and resets so far
    std::vector<uint64_t> loss_ts;   // host times of its losses
    std::vector<uint64_t> reset_ts;  // host times of its generation changes
  };

  CoreTrack& Core(uint16_t dev, uint16_t core);
  void MatchKind(FwCommandRecord::Kind kind);
  void JoinInFlightFetches();
  HostUnmatched WhyMissing(const JoinedCommand& c) const;
  static uint64_t Key(uint32_t dev, uint16_t qid, uint16_t cid) {
    return uint64_t{dev} << 32 | uint64_t{qid} << 16 | cid;
  }
  uint16_t CoreOfQueue(uint16_t dev, uint16_t qid) const;

  std::map<uint32_t, uint16_t> ctrl_map_;
  // Deques: a long capture's commands and records grow them without the
  // copy (and twice the memory) of a vector's reallocation.
  std::deque<JoinedCommand> commands_;
  bool count_only_ = false;
  uint64_t fw_counted_ = 0;  // records counted, not kept (CountFwRecordsOnly())
  std::unordered_map<uint64_t, size_t> open_;  // key (dev) -> open setup's index
  std::deque<FwCommandRecord> fw_;
  std::deque<uint64_t> fw_breaks_;  // per record: its core's breaks when it came
  std::deque<FwUnmatched> fw_why_;
  std::map<std::pair<uint16_t, uint16_t>, CoreTrack> cores_;
  // The core of the last record (Core()): a capture's records come in runs
  // of one core, and a map's elements stay put. A copy starts without it:
  // it points into this object's map.
  struct CoreCache {
    std::pair<uint16_t, uint16_t> key{};
    CoreTrack* track = nullptr;
    CoreCache() = default;
    CoreCache(const CoreCache&) {}
    CoreCache& operator=(const CoreCache&) {
      track = nullptr;
      return *this;
    }
  } last_core_;
  // Keys with a record that time and order could not place.
  std::unordered_set<uint64_t> undecided_;
  // (dev, qid) -> the core whose records name it (the last seen).
  std::map<std::pair<uint16_t, uint16_t>, uint16_t> queue_core_;
  JoinCounts counts_;
  bool finished_ = false;
};

// Nearest-rank percentile of sorted `v` (p in 0..100); 0 when empty.
uint64_t Percentile(const std::vector<uint64_t>& sorted, unsigned p);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_JOIN_NVME_JOIN_H_
