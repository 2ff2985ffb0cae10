// SPDX-License-Identifier: GPL-2.0-only
#include "workload.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

namespace hmbtrace {

// Payloads are copied byte for byte; the ABI says little-endian.
static_assert(std::endian::native == std::endian::little,
              "fw_events.h payloads are written in host byte order");

namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Per-record probabilities, in records per million, of each side activity.
constexpr uint32_t kGcPerMillion = 500;
constexpr uint32_t kThermalPerMillion = 1000;
constexpr uint32_t kLogPerMillion = 2000;
constexpr uint32_t kStandaloneErrorPerMillion = 50;
// Per command.
constexpr uint32_t kReadErrorPerMillion = 500;
constexpr uint32_t kLbaRangePerMillion = 100;

constexpr uint16_t kBlocksPerPlane = 2048;
constexpr uint16_t kPagesPerBlock = 768;
constexpr uint64_t kNamespaceLbas = 1ull << 31;

}  // namespace

Prng::Prng(uint64_t seed) {
  for (auto& word : s_)
    word = SplitMix64(seed);
}

uint64_t Prng::Next() {
  const uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = std::rotl(s_[3], 45);
  return result;
}

uint64_t Prng::Below(uint64_t n) {
  // Lemire's multiply-shift; the tiny bias is irrelevant for a workload.
  return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >>
                               64);
}

uint64_t CoreSeed(uint64_t seed, uint16_t core) {
  uint64_t state = seed ^ (0xd1b54a32d192ed03ull * (core + 1ull));
  return SplitMix64(state);
}

uint64_t PacingOffsetNs(uint64_t index, uint64_t rate, uint32_t burst) {
  if (rate == 0)
    return 0;
  if (burst == 0)
    burst = 1;
  const unsigned __int128 burst_start = index - index % burst;
  const unsigned __int128 ns = burst_start * 1000000000u / rate;
  return ns > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(ns);
}

uint64_t NsToTicks(uint64_t ns, uint64_t clock_hz) {
  const unsigned __int128 ticks =
      static_cast<unsigned __int128>(ns) * clock_hz / 1000000000u;
  return ticks > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(ticks);
}

bool FwRecord::SameContent(const FwRecord& other) const {
  return event_id == other.event_id && fixed_len == other.fixed_len &&
         var_len == other.var_len &&
         std::memcmp(fixed.data(), other.fixed.data(), fixed_len) == 0 &&
         std::memcmp(var.data(), other.var.data(), var_len) == 0;
}

CoreWorkload::CoreWorkload(const WorkloadConfig& config)
    : config_(config), prng_(CoreSeed(config.seed, config.core)) {
  if (config_.queue_depth == 0)
    config_.queue_depth = 1;
  in_flight_.reserve(config_.queue_depth);
  temperature_c_ = static_cast<int16_t>(prng_.Between(35, 45));
}

void CoreWorkload::Reset() {
  in_flight_.clear();
  queued_.clear();
}

uint32_t CoreWorkload::Ticks(uint64_t ns) const {
  return static_cast<uint32_t>(
      std::min<uint64_t>(NsToTicks(ns, config_.clock_hz), UINT32_MAX));
}

uint8_t CoreWorkload::RandomDie() {
  // Each core drives its own four dies, as a channel-per-core FTL would.
  return static_cast<uint8_t>((uint64_t{config_.core} * 4 + prng_.Below(4)) &
                              0xff);
}

template <typename Payload>
void CoreWorkload::Queue(uint16_t event_id, const Payload& payload) {
  static_assert(sizeof(Payload) <= sizeof(FwRecord::fixed));
  FwRecord& rec = queued_.emplace_back();
  rec.event_id = event_id;
  rec.fixed_len = sizeof(Payload);
  std::memcpy(rec.fixed.data(), &payload, sizeof(Payload));
}

uint16_t CoreWorkload::AllocateCid() {
  for (;;) {
    const uint16_t cid = next_cid_++;
    const bool busy =
        std::any_of(in_flight_.begin(), in_flight_.end(),
                    [cid](const Command& c) { return c.cid == cid; });
    if (!busy)
      return cid;
  }
}

void CoreWorkload::StartCommand() {
  Command cmd{};
  // A core serves two submission queues: 1 + core and 1 + core + nr_cores.
  cmd.qid = static_cast<uint16_t>(1 + config_.core +
                                  prng_.Below(2) * config_.nr_cores);
  cmd.cid = AllocateCid();
  uint32_t nlb = 0;
  const uint64_t pick = prng_.Below(100);
  if (pick < 55) {
    cmd.opcode = FW_NVME_OPC_READ;
    nlb = static_cast<uint32_t>((8u << prng_.Below(4)) - 1);
    cmd.nand_ops_left = static_cast<uint8_t>(1 + nlb / 32);
    cmd.latency_ns = static_cast<uint32_t>(prng_.Between(8000, 15000));
  } else if (pick < 90) {
    cmd.opcode = FW_NVME_OPC_WRITE;
    nlb = static_cast<uint32_t>((8u << prng_.Below(4)) - 1);
    // Writes land in the write cache; some trigger a program.
    cmd.nand_ops_left = static_cast<uint8_t>(prng_.Below(3) == 0 ? 1 : 0);
    cmd.latency_ns = static_cast<uint32_t>(prng_.Between(10000, 30000));
  } else if (pick < 93) {
    cmd.opcode = FW_NVME_OPC_FLUSH;
    cmd.nand_ops_left = static_cast<uint8_t>(prng_.Below(3));
    cmd.latency_ns = static_cast<uint32_t>(prng_.Between(50000, 2000000));
  } else if (pick < 97) {
    cmd.opcode = FW_NVME_OPC_DSM;
    nlb = 0;  // number of ranges, 0's based
    cmd.latency_ns = static_cast<uint32_t>(prng_.Between(15000, 40000));
  } else if (pick < 99) {
    cmd.opcode = FW_NVME_OPC_WRITE_ZEROES;
    nlb = static_cast<uint32_t>(prng_.Between(7, 2047));
    cmd.latency_ns = static_cast<uint32_t>(prng_.Between(10000, 20000));
  } else {
    cmd.opcode = FW_NVME_OPC_COMPARE;
    nlb = 7;
    cmd.nand_ops_left = 1;
    cmd.latency_ns = static_cast<uint32_t>(prng_.Between(8000, 15000));
  }
  cmd.slba = prng_.Below(kNamespaceLbas / 8) * 8;
  cmd.status = FW_NVME_SC_SUCCESS;
  if (prng_.Chance(kLbaRangePerMillion)) {
    cmd.status = FW_NVME_SC_LBA_RANGE;
    cmd.nand_ops_left = 0;
  } else if (cmd.opcode == FW_NVME_OPC_READ &&
             prng_.Chance(kReadErrorPerMillion)) {
    cmd.status = FW_NVME_SC_READ_ERROR;
  }

  fw_cmd_fetch fetch{};
  fetch.qid = cmd.qid;
  fetch.cid = cmd.cid;
  fetch.opcode = cmd.opcode;
  fetch.nsid = 1;
  fetch.slba = cmd.slba;
  fetch.nlb = nlb;
  Queue(FW_EV_CMD_FETCH, fetch);
  in_flight_.push_back(cmd);
}

void CoreWorkload::StepCommand(size_t index) {
  Command& cmd = in_flight_[index];
  if (cmd.nand_ops_left > 0) {
    cmd.nand_ops_left--;
    fw_nand_op op{};
    op.die = RandomDie();
    op.plane = static_cast<uint8_t>(prng_.Below(4));
    op.block = static_cast<uint16_t>(prng_.Below(kBlocksPerPlane));
    op.page = static_cast<uint16_t>(prng_.Below(kPagesPerBlock));
    if (cmd.opcode == FW_NVME_OPC_READ || cmd.opcode == FW_NVME_OPC_COMPARE) {
      const uint64_t t_read = prng_.Between(45000, 90000);
      op.latency = Ticks(t_read);
      cmd.latency_ns += static_cast<uint32_t>(t_read);
      Queue(FW_EV_NAND_READ, op);
      if (cmd.nand_ops_left == 0 && cmd.status == FW_NVME_SC_READ_ERROR)
        QueueError(FW_ERR_UECC, op.die, op.block);
    } else {
      // Programs run behind the write cache: not on the command's path.
      op.latency = Ticks(prng_.Between(400000, 900000));
      Queue(FW_EV_NAND_PROGRAM, op);
    }
    return;
  }
  fw_cmd_complete done{};
  done.qid = cmd.qid;
  done.cid = cmd.cid;
  done.status = cmd.status;
  done.latency = Ticks(cmd.latency_ns);
  Queue(FW_EV_CMD_COMPLETE, done);
  in_flight_[index] = in_flight_.back();
  in_flight_.pop_back();
}

void CoreWorkload::QueueGarbageCollection() {
  const uint8_t die = RandomDie();
  const uint16_t victim = static_cast<uint16_t>(prng_.Below(kBlocksPerPlane));
  const uint16_t valid = static_cast<uint16_t>(prng_.Between(1, 12));
  Queue(FW_EV_GC_BEGIN, fw_gc_begin{die, victim, valid});
  uint64_t elapsed_ns = 0;
  for (uint16_t i = 0; i < valid; i++) {
    fw_nand_op op{};
    op.die = die;
    op.plane = static_cast<uint8_t>(prng_.Below(4));
    op.block = victim;
    op.page = static_cast<uint16_t>(prng_.Below(kPagesPerBlock));
    const uint64_t t_read = prng_.Between(45000, 90000);
    op.latency = Ticks(t_read);
    Queue(FW_EV_NAND_READ, op);
    op.block = static_cast<uint16_t>(prng_.Below(kBlocksPerPlane));
    const uint64_t t_prog = prng_.Between(400000, 900000);
    op.latency = Ticks(t_prog);
    Queue(FW_EV_NAND_PROGRAM, op);
    elapsed_ns += t_read + t_prog;
  }
  fw_nand_erase erase{};
  erase.die = die;
  erase.plane = static_cast<uint8_t>(prng_.Below(4));
  erase.block = victim;
  const uint64_t t_erase = prng_.Between(3000000, 5000000);
  erase.latency = Ticks(t_erase);
  elapsed_ns += t_erase;
  if (prng_.Chance(20000)) {
    QueueError(FW_ERR_ERASE_FAIL, die, victim);
  }
  Queue(FW_EV_NAND_ERASE, erase);
  Queue(FW_EV_GC_END, fw_gc_end{die, victim, valid, Ticks(elapsed_ns)});
}

void CoreWorkload::QueueThermal() {
  // A bounded random walk around the operating range.
  temperature_c_ = static_cast<int16_t>(std::clamp<int>(
      temperature_c_ + static_cast<int>(prng_.Below(5)) - 2, 25, 95));
  uint8_t throttle = FW_THROTTLE_NONE;
  if (temperature_c_ >= 88)
    throttle = FW_THROTTLE_CRITICAL;
  else if (temperature_c_ >= 80)
    throttle = FW_THROTTLE_HEAVY;
  else if (temperature_c_ >= 70)
    throttle = FW_THROTTLE_LIGHT;
  Queue(FW_EV_THERMAL, fw_thermal{static_cast<uint8_t>(config_.core),
                                  temperature_c_, throttle});
}

void CoreWorkload::QueueLog() {
  fw_log log{};
  const uint64_t pick = prng_.Below(4);
  const unsigned a = static_cast<unsigned>(prng_.Below(10000));
  const unsigned b = static_cast<unsigned>(prng_.Below(64));
  switch (pick) {
    case 0:
      log.level = FW_LOG_DEBUG;
      std::snprintf(log.msg, sizeof(log.msg), "ftl: flushed %u map pages", b);
      break;
    case 1:
      log.level = FW_LOG_INFO;
      std::snprintf(log.msg, sizeof(log.msg), "wl: block %u moved to die %u",
                    a % kBlocksPerPlane, b % 8);
      break;
    case 2:
      log.level = FW_LOG_DEBUG;
      std::snprintf(log.msg, sizeof(log.msg), "hil: sq doorbell %u, %u queued",
                    a, static_cast<unsigned>(in_flight_.size()));
      break;
    default:
      log.level = FW_LOG_WARN;
      std::snprintf(log.msg, sizeof(log.msg), "pwr: power state %u entered",
                    b % 5);
      break;
  }
  Queue(FW_EV_LOG, log);
}

void CoreWorkload::QueueError(uint16_t code, uint8_t die, uint16_t block) {
  fw_error err{};
  err.code = code;
  err.die = die;
  err.block = block;
  switch (code) {
    case FW_ERR_UECC:
      err.flags = FW_ERR_F_RETRIED | FW_ERR_F_HOST_VISIBLE;
      break;
    case FW_ERR_READ_RETRY:
      err.flags = FW_ERR_F_RETRIED | FW_ERR_F_RECOVERED;
      break;
    case FW_ERR_ERASE_FAIL:
    case FW_ERR_PROGRAM_FAIL:
      err.flags = FW_ERR_F_GROWN_BAD | FW_ERR_F_RECOVERED;
      break;
    default:
      err.flags = FW_ERR_F_RECOVERED;
      break;
  }
  Queue(FW_EV_ERROR, err);
  FwRecord& rec = queued_.back();
  // Context: a register dump of variable length (syndrome, retry table...).
  rec.var_len = static_cast<uint16_t>(prng_.Between(4, FW_ERROR_CONTEXT_MAX));
  for (uint16_t i = 0; i < rec.var_len; i++)
    rec.var[i] = static_cast<uint8_t>(prng_.Next());
}

const FwRecord& CoreWorkload::Next() {
  while (queued_.empty()) {
    if (prng_.Chance(kGcPerMillion)) {
      QueueGarbageCollection();
    } else if (prng_.Chance(kThermalPerMillion)) {
      QueueThermal();
    } else if (prng_.Chance(kLogPerMillion)) {
      QueueLog();
    } else if (prng_.Chance(kStandaloneErrorPerMillion)) {
      const uint16_t code = static_cast<uint16_t>(
          prng_.Chance(500000)
              ? uint64_t{FW_ERR_READ_RETRY}
              : prng_.Between(FW_ERR_PROGRAM_FAIL, FW_ERR_CMD_TIMEOUT));
      QueueError(code, RandomDie(),
                 static_cast<uint16_t>(prng_.Below(kBlocksPerPlane)));
    } else if (in_flight_.size() < config_.queue_depth &&
               (in_flight_.empty() || prng_.Below(100) < 45)) {
      StartCommand();
    } else {
      StepCommand(prng_.Below(in_flight_.size()));
    }
  }
  current_ = queued_.front();
  queued_.pop_front();
  return current_;
}

}  // namespace hmbtrace
