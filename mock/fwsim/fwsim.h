// SPDX-License-Identifier: GPL-2.0-only
// The firmware simulator as a library: N simulated firmware cores write
// trace records into an HMB trace area with the reference producer, with
// optional fault injection, and report what they wrote (the ground truth).
#ifndef HMBTRACE_MOCK_FWSIM_FWSIM_H_
#define HMBTRACE_MOCK_FWSIM_FWSIM_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fw_clock.h"
#include "fwsim_events.h"
#include "hmb_trace_producer.h"
#include "mailbox.h"
#include "status.h"

namespace hmbtrace {

// Core |core| stops producing once it has produced |after| records (counted
// over the whole run), for |seconds|, or for good when that is empty.
struct StallSpec {
  uint16_t core = 0;
  std::optional<double> seconds;
  uint64_t after = 1000;
};

// Right after core |core| has produced the record with sequence number |seq|
// (in whichever producer generation first reaches it), garbage is written
// into that core's current page header.
struct CorruptSpec {
  uint16_t core = 0;
  uint64_t seq = 0;
};

struct SimConfig {
  // Geometry.
  uint16_t cores = 4;
  uint32_t page_size = 4096;
  uint32_t pages_per_core = 0;  // 0: as many as fit
  // The trace clock: rate, tick at the start, drift, time scale.
  ClockModelConfig clock;
  // Workload, per core.
  uint64_t rate = 10000;  // records/s; 0: as fast as possible
  uint32_t burst = 1;
  // Once a core has produced this many records in total (over the whole
  // run), it writes as fast as it can, unpaced; 0: never.
  uint64_t full_speed_after = 0;
  double duration_s = 0;  // 0: no limit
  uint64_t count = 0;     // 0: no limit
  uint64_t seed = 1;
  // The freeze's latency trigger on request: core 0's slow_cmd-th host
  // command (1-based; 0: none) takes slow_us longer.
  uint64_t slow_cmd = 0;
  uint64_t slow_us = 0;
  // Faults. reset_at: firmware resets after core 0 has produced that many
  // records in total (over the whole run).
  std::vector<uint64_t> reset_at;
  std::vector<StallSpec> stalls;
  std::vector<CorruptSpec> corruptions;
  // Each reset brings back a different firmware build (FirmwareBuild::Next):
  // same records, a different dictionary and build id.
  bool new_build_at_reset = false;
  // Each reset is a cold boot that lost the cores' counts: the new meta
  // page says nothing of the old generation (prev_gen 0, tail uncountable).
  bool reset_forgets = false;
  // Start control: wait for this path to exist, then for start_delay_s,
  // before the first record (the area is initialised before either).
  std::string wait_for;
  double start_delay_s = 0;
  // The control channel's mailbox server (when RunSimulation gets one).
  MailboxOptions mailbox;
  // Instead of the synthetic workload: the commands of QEMU's emulated
  // NVMe disk, followed in its trace log (qemu_nvme_follow.h). Excludes
  // resets and stalls.
  std::string follow_qemu_nvme;
};

// One firmware build: the event table it publishes as the dictionary, and
// its build id. Build 1 is fw_events as compiled, with FwEventsBuildId().
// Build n > 1 is what --new-build-at-reset brings back from the (n-1)th
// reset: the same event ids, roles, fields and payload layouts (so the same
// records), but every event name suffixed "_b<n>" (cmd_fetch_b2), the
// cmd_fetch and cmd_complete formats led by a word ("fetched qid=%u ...",
// "completed qid=%u ..."), and a build id derived from build n-1's and n.
// A decoder that applies one build's dictionary to another's records prints
// visibly different text. Immutable; events() points into the object.
class FirmwareBuild {
 public:
  static std::shared_ptr<const FirmwareBuild> First();
  // Build number() + 1; the same every time for the same build.
  std::shared_ptr<const FirmwareBuild> Next() const;

  uint32_t number() const { return number_; }
  const std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN>& build_id() const {
    return build_id_;
  }
  std::span<const hmb_trace_event_desc> events() const { return events_; }

  FirmwareBuild(const FirmwareBuild&) = delete;
  FirmwareBuild& operator=(const FirmwareBuild&) = delete;

 private:
  FirmwareBuild() = default;

  uint32_t number_ = 1;
  std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN> build_id_{};
  std::vector<std::string> names_;    // events_[i].name points here
  std::vector<std::string> formats_;  // events_[i].format points here
  std::vector<hmb_trace_event_desc> events_;
};

// What one core produced in one producer generation.
struct CoreTruth {
  uint16_t core = 0;
  uint64_t produced = 0;  // == the area's next_seq for this core
  uint64_t dropped = 0;
  std::array<uint64_t, FW_EV_NR_IDS> event_counts{};
};

struct LifeTruth {
  uint32_t producer_gen = 0;
  std::shared_ptr<const FirmwareBuild> build;  // whose dictionary it published
  std::vector<CoreTruth> cores;
};

struct SimResult {
  SimConfig config;
  uint64_t area_len = 0;
  uint32_t pages_per_core = 0;  // as the producer chose it
  uint64_t dict_offset = 0;
  uint32_t dict_len = 0;
  uint64_t ring_offset = 0;
  // The first build's; lives[i].build has each life's.
  std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN> build_id{};
  nlohmann::json clock;    // FirmwareClock::TruthJson()
  nlohmann::json control;  // null without a mailbox; see TruthJson()
  std::vector<LifeTruth> lives;
  std::vector<nlohmann::json> faults;  // in the order they happened
  nlohmann::json qemu_nvme;  // null unless follow_qemu_nvme
  // "count", "duration", "signal", "stalled" (every core stalled for good or
  // finished without --count), "error" (a reset failed).
  std::string stop_reason;
  double elapsed_s = 0;
};

// Called about once a second from the thread running the simulation with
// the records produced so far by each core (over the whole run).
using ProgressFn =
    std::function<void(double elapsed_s, std::span<const uint64_t> produced)>;

// True if |size| is a power of two (QEMU's ivshmem needs one); otherwise an
// error that names the nearest power of two above.
Status CheckAreaSizePowerOfTwo(uint64_t size);

// The producer configuration for |config| in an area of |area_len| bytes,
// or an error that says what is wrong and what size would do.
Result<hmb_trace_producer_config> MakeProducerConfig(const SimConfig& config,
                                                     uint64_t area_len);

// MakeProducerConfig() plus the fault specifications' core numbers.
Status CheckConfig(const SimConfig& config, uint64_t area_len);

// A build id derived from the event table: it changes whenever the
// dictionary does. FirmwareBuild::First()'s.
std::array<uint8_t, HMB_TRACE_BUILD_ID_LEN> FwEventsBuildId();

// Initialises |area| with the reference producer and runs the cores until
// every core reached config.count, config.duration_s passed, or |stop| is
// set (checked at least every 50 ms). |area| must stay mapped throughout.
// With a |mailbox| (HMB_CTRL_MAILBOX_SIZE bytes, 8-byte aligned, mapped
// throughout), a MailboxServer answers the control channel from before the
// wait for config.wait_for until the cores have stopped.
Result<SimResult> RunSimulation(const SimConfig& config,
                                std::span<uint8_t> area,
                                const std::atomic<bool>& stop,
                                const ProgressFn& progress = {},
                                std::span<uint8_t> mailbox = {});

// The ground-truth document for |result|. With new_build_at_reset, each
// life also has "build_id" and "events" (its build's) and each reset fault
// "new_build_id"; otherwise those keys are absent. "clock" is the clock
// model (FirmwareClock::TruthJson()). With a mailbox, "control" has the
// server's MailboxServer::TruthJson() and "masked": per core, the records
// that the event mask kept from being produced (never lost: they have no
// sequence number).
nlohmann::json TruthJson(const SimResult& result);

// Writes |contents| to |path| through a temporary file and a rename, so a
// reader sees the old file or the complete new one.
Status WriteFileAtomically(const std::string& path,
                           const std::string& contents);

}  // namespace hmbtrace

#endif  // HMBTRACE_MOCK_FWSIM_FWSIM_H_
