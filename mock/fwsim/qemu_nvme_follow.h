// SPDX-License-Identifier: GPL-2.0-only
// The firmware side of a real emulated NVMe disk: QEMU's `-device nvme`
// logs every command it fetches and every completion it posts
// (`-trace enable=pci_nvme_io_cmd -trace enable=pci_nvme_admin_cmd -trace
// enable=pci_nvme_enqueue_req_completion -D LOG -msg timestamp=on`, and
// optionally pci_nvme_read / pci_nvme_write for the LBA range). hmb-fwsim
// follows that log as it grows (--follow-qemu-nvme) and writes, for those
// very commands, the records a firmware would: cmd_fetch, a NAND read or
// program, cmd_complete, with the real (sqid, cid), stamped on its own
// drifting clock at the time QEMU logged the line.
//
// A log line reads
//   PID@SECONDS.MICROS:pci_nvme_io_cmd cid 192 nsid 0x1 sqid 2 opc 0x2 opname 'NVME_NVM_CMD_READ'
// with the host's wall clock (gettimeofday); the follower maps it to
// CLOCK_MONOTONIC, the clock the simulated firmware clock runs on.
//
// Which core serves a queue: SQ q goes to core (q - 1) mod cores, the admin
// queue (0) to core 0, so a command's records are on one core and in order.
#ifndef HMBTRACE_MOCK_FWSIM_QEMU_NVME_FOLLOW_H_
#define HMBTRACE_MOCK_FWSIM_QEMU_NVME_FOLLOW_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "status.h"
#include "workload.h"

namespace hmbtrace {

// One line of QEMU's trace log that matters here.
struct QemuNvmeLine {
  enum class Kind { kIoCmd, kAdminCmd, kCompletion, kRead, kWrite };
  Kind kind = Kind::kIoCmd;
  uint64_t realtime_us = 0;  // host wall clock
  uint16_t cid = 0;
  uint16_t qid = 0;  // sqid (commands), cqid (completions)
  uint8_t opcode = 0;
  uint32_t nsid = 0;
  uint16_t status = 0;  // completions: (SCT << 8) | SC
  uint32_t nlb = 0;     // kRead/kWrite: blocks, 1's based as QEMU prints it
  uint64_t slba = 0;    // kRead/kWrite
};

enum class QemuLineParse { kOk, kOther, kNoTimestamp, kMalformed };

// Parses one line (without its newline). kOther: a line of another trace
// event or of something else; kNoTimestamp: one of ours without the
// "PID@SEC.USEC:" prefix (QEMU was started without -msg timestamp=on).
QemuLineParse ParseQemuNvmeLine(std::string_view line, QemuNvmeLine* out);

// A record for core `core`, which happened at CLOCK_MONOTONIC `mono_ns`.
struct FollowedRecord {
  uint16_t core = 0;
  uint64_t mono_ns = 0;
  FwRecord rec;
};

// Turns the log's lines into firmware records. Pure: no clock, no file.
class QemuNvmeCommands {
 public:
  // `cores`: the simulator's; `clock_hz`: the firmware clock's nominal
  // rate and `time_scale` its pace (fw_clock.h), for the latency fields (in
  // ticks): a latency is exactly the span of model time between the
  // records' stamps. A core's records are stamped in order: a line logged
  // out of order is stamped at the core's last record.
  QemuNvmeCommands(uint16_t cores, uint64_t clock_hz, uint32_t time_scale = 1);

  // Feeds a parsed line that happened at CLOCK_MONOTONIC `mono_ns`;
  // appends the records it produces to `out`.
  void Feed(const QemuNvmeLine& line, uint64_t mono_ns,
            std::vector<FollowedRecord>* out);
  // The fetch held back for its pci_nvme_read/write line, if any.
  void Flush(std::vector<FollowedRecord>* out);

  struct Counts {
    uint64_t fetched = 0;
    uint64_t completed = 0;
    uint64_t completion_without_fetch = 0;  // fetched before we followed
    uint64_t refetched_in_flight = 0;  // same (qid, cid) fetched twice
  };
  const Counts& counts() const { return counts_; }
  size_t in_flight() const { return in_flight_.size(); }
  // Every completed command: qid, cid, opcode, core, fetch_mono_ns,
  // complete_mono_ns, status.
  const nlohmann::json& commands() const { return commands_; }

 private:
  struct InFlight {
    uint8_t opcode = 0;
    uint16_t core = 0;
    uint64_t fetch_mono_ns = 0;
    uint64_t slba = 0;
    uint32_t nlb = 0;
  };
  uint16_t CoreOf(uint16_t qid) const;
  uint32_t Ticks(uint64_t ns) const;
  // max(mono_ns, the core's last stamp), which becomes the last stamp.
  uint64_t Stamp(uint16_t core, uint64_t mono_ns);
  void EmitFetch(uint16_t qid, uint16_t cid, uint32_t nsid,
                 std::vector<FollowedRecord>* out);

  uint16_t cores_;
  uint64_t clock_hz_;
  uint32_t time_scale_;
  std::vector<uint64_t> last_mono_ns_;  // per core
  std::map<std::pair<uint16_t, uint16_t>, InFlight> in_flight_;
  // The last fetch, held until the next line: QEMU logs pci_nvme_read or
  // pci_nvme_write (with the LBA range) right after pci_nvme_io_cmd.
  std::optional<std::pair<std::pair<uint16_t, uint16_t>, uint32_t>> held_;
  Counts counts_;
  nlohmann::json commands_ = nlohmann::json::array();
  uint64_t nand_counter_ = 0;
};

// Follows a growing QEMU trace log: reads what is there, then polls for
// more until `stop`; handles a line written in pieces and a file
// truncated (QEMU reopened it). The file may not exist yet: waits for it.
class QemuNvmeFollower {
 public:
  using Sink = std::function<void(std::vector<FollowedRecord>&)>;

  QemuNvmeFollower(std::string path, uint16_t cores, uint64_t clock_hz,
                   uint32_t time_scale = 1)
      : path_(std::move(path)), commands_(cores, clock_hz, time_scale) {}

  // Runs until `stop`; hands each batch of records to `sink`. An error
  // only when the file cannot be read at all.
  Status Run(const std::atomic<bool>& stop, const Sink& sink);

  // The truth: the log's path, lines read, by kind, unparsed lines (with
  // the first few), the commands.
  nlohmann::json TruthJson() const;

 private:
  void Line(std::string_view line, std::vector<FollowedRecord>* out);

  std::string path_;
  QemuNvmeCommands commands_;
  uint64_t lines_ = 0;
  uint64_t other_lines_ = 0;
  uint64_t malformed_ = 0;
  uint64_t no_timestamp_ = 0;
  uint64_t truncations_ = 0;
  std::vector<std::string> malformed_examples_;
};

// CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns (read back to back, the
// smallest of a few tries).
int64_t RealtimeMinusMonotonicNs();

}  // namespace hmbtrace

#endif  // HMBTRACE_MOCK_FWSIM_QEMU_NVME_FOLLOW_H_
