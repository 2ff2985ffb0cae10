// SPDX-License-Identifier: GPL-2.0-only
#include "workload.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

namespace hmbtrace {

// Payloads are copied byte for byte; the ABI says little-endian.
static_assert(std::endian::native == std::endian::little,
              "fwsim_events.h payloads are written in host byte order");

namespace {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Per-arrival probabilities, in arrivals per million, of each side
// activity; the other arrivals are host commands.
// (A host command is about three records: fetch, NAND, complete.)
constexpr uint32_t kGcPerMillion = 1500;
constexpr uint32_t kThermalPerMillion = 3000;
constexpr uint32_t kLogPerMillion = 6000;
constexpr uint32_t kStandaloneErrorPerMillion = 150;
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
    : config_(config),
      prng_(CoreSeed(config.seed, config.core)),
      pacing_origin_ns_(config.start_ns),
      last_arrival_ns_(config.start_ns) {
  if (config_.queue_depth == 0)
    config_.queue_depth = 1;
  if (config_.time_scale == 0)
    config_.time_scale = 1;
  in_flight_.reserve(config_.queue_depth);
  temperature_c_ = static_cast<int16_t>(prng_.Between(35, 45));
  next_arrival_ = DrawArrival();
}

void CoreWorkload::Reset() {
  in_flight_.clear();
  due_ = {};
  current_valid_ = false;
  gc_done_ns_ = 0;
}

uint64_t CoreWorkload::SkipTo(uint64_t now_ns) {
  uint64_t forgotten = current_valid_ && current_.at_ns < now_ns;
  if (forgotten)
    current_valid_ = false;
  while (!due_.empty() && due_.top().at_ns < now_ns) {
    Retire(due_.top().rec);
    due_.pop();
    forgotten++;
  }
  pacing_origin_ns_ = std::max(pacing_origin_ns_, now_ns);
  pacing_index_ = 0;
  last_arrival_ns_ = std::max(last_arrival_ns_, now_ns);
  return forgotten;
}

void CoreWorkload::Unpace() {
  config_.rate = 0;
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

fw_nand_op CoreWorkload::RandomNandOp(uint8_t die, uint16_t block) {
  fw_nand_op op{};
  op.die = die;
  op.plane = static_cast<uint8_t>(prng_.Below(4));
  op.block = block;
  op.page = static_cast<uint16_t>(prng_.Below(kPagesPerBlock));
  return op;
}

template <typename Payload>
void CoreWorkload::Queue(uint64_t at_ns,
                         uint16_t event_id,
                         const Payload& payload) {
  static_assert(sizeof(Payload) <= sizeof(FwRecord::fixed));
  Due d{at_ns, next_order_++, {}};
  d.rec.event_id = event_id;
  d.rec.fixed_len = sizeof(Payload);
  std::memcpy(d.rec.fixed.data(), &payload, sizeof(Payload));
  due_.push(d);
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

CoreWorkload::Arrival CoreWorkload::DrawArrival() {
  if (prng_.Chance(kGcPerMillion))
    return Arrival::kGarbageCollection;
  if (prng_.Chance(kThermalPerMillion))
    return Arrival::kThermal;
  if (prng_.Chance(kLogPerMillion))
    return Arrival::kLog;
  if (prng_.Chance(kStandaloneErrorPerMillion))
    return Arrival::kError;
  return Arrival::kCommand;
}

uint64_t CoreWorkload::ArrivalTime() const {
  const uint64_t offset =
      PacingOffsetNs(pacing_index_, config_.rate, config_.burst);
  const uint64_t scaled = offset > UINT64_MAX / config_.time_scale
                              ? UINT64_MAX
                              : offset * config_.time_scale;
  uint64_t at = pacing_origin_ns_ > UINT64_MAX - scaled
                    ? UINT64_MAX
                    : pacing_origin_ns_ + scaled;
  // Arrivals are served in order, never before what was already taken;
  // a command waits for a free slot.
  at = std::max({at, last_arrival_ns_, taken_ns_});
  if (next_arrival_ == Arrival::kCommand &&
      in_flight_.size() >= config_.queue_depth) {
    uint64_t first_done = UINT64_MAX;
    for (const Command& c : in_flight_)
      first_done = std::min(first_done, c.complete_ns);
    at = std::max(at, first_done);
  }
  return at;
}

void CoreWorkload::Retire(const FwRecord& rec) {
  if (rec.event_id != FW_EV_CMD_COMPLETE)
    return;
  fw_cmd_complete done;
  std::memcpy(&done, rec.fixed.data(), sizeof(done));
  std::erase_if(in_flight_, [&done](const Command& c) {
    return c.qid == done.qid && c.cid == done.cid;
  });
}

void CoreWorkload::Arrive(uint64_t at_ns) {
  last_arrival_ns_ = at_ns;
  uint64_t records = 0;
  switch (next_arrival_) {
    case Arrival::kGarbageCollection:
      records = QueueGarbageCollection(at_ns);
      break;
    case Arrival::kThermal:
      records = QueueThermal(at_ns);
      break;
    case Arrival::kLog:
      records = QueueLog(at_ns);
      break;
    case Arrival::kError: {
      const uint16_t code = static_cast<uint16_t>(
          prng_.Chance(500000)
              ? uint64_t{FW_ERR_READ_RETRY}
              : prng_.Between(FW_ERR_PROGRAM_FAIL, FW_ERR_CMD_TIMEOUT));
      const uint8_t die = RandomDie();
      records = QueueError(at_ns, code, die,
                           static_cast<uint16_t>(prng_.Below(kBlocksPerPlane)));
      break;
    }
    case Arrival::kCommand:
      records = StartCommand(at_ns);
      break;
  }
  pacing_index_ += records;
  next_arrival_ = DrawArrival();
}

const TimedRecord& CoreWorkload::Peek() {
  if (current_valid_)
    return current_;
  // The earliest of what is due and the next arrival; on a tie what is
  // due first (a completion frees its slot and cid before a fetch).
  for (;;) {
    const uint64_t arrival = ArrivalTime();
    if (!due_.empty() && due_.top().at_ns <= arrival)
      break;
    Arrive(arrival);
  }
  current_.at_ns = due_.top().at_ns;
  current_.rec = due_.top().rec;
  due_.pop();
  taken_ns_ = current_.at_ns;
  // A command is in flight until its completion is taken.
  Retire(current_.rec);
  current_valid_ = true;
  return current_;
}

void CoreWorkload::Pop() {
  if (!current_valid_)
    Peek();
  current_valid_ = false;
}

const FwRecord& CoreWorkload::Next() {
  Peek();
  Pop();
  return current_.rec;
}

uint64_t CoreWorkload::StartCommand(uint64_t at_ns) {
  Command cmd{};
  // A core serves two submission queues: 1 + core and 1 + core + nr_cores.
  cmd.qid = static_cast<uint16_t>(1 + config_.core +
                                  prng_.Below(2) * config_.nr_cores);
  cmd.cid = AllocateCid();
  uint8_t opcode = 0;
  uint32_t nlb = 0;
  uint8_t nand_ops = 0;
  uint64_t overhead_ns = 0;  // front end + back end: the firmware's own time
  const uint64_t pick = prng_.Below(100);
  if (pick < 55) {
    opcode = FW_NVME_OPC_READ;
    nlb = static_cast<uint32_t>((8u << prng_.Below(4)) - 1);
    nand_ops = static_cast<uint8_t>(1 + nlb / 32);
    overhead_ns = prng_.Between(8000, 15000);
  } else if (pick < 90) {
    opcode = FW_NVME_OPC_WRITE;
    nlb = static_cast<uint32_t>((8u << prng_.Below(4)) - 1);
    // Writes land in the write cache; some trigger a program.
    nand_ops = static_cast<uint8_t>(prng_.Below(3) == 0 ? 1 : 0);
    overhead_ns = prng_.Between(10000, 30000);
  } else if (pick < 93) {
    opcode = FW_NVME_OPC_FLUSH;
    nand_ops = static_cast<uint8_t>(prng_.Below(3));
    overhead_ns = prng_.Between(20000, 60000);
  } else if (pick < 97) {
    opcode = FW_NVME_OPC_DSM;
    nlb = 0;  // number of ranges, 0's based
    overhead_ns = prng_.Between(15000, 40000);
  } else if (pick < 99) {
    opcode = FW_NVME_OPC_WRITE_ZEROES;
    nlb = static_cast<uint32_t>(prng_.Between(7, 2047));
    overhead_ns = prng_.Between(10000, 20000);
  } else {
    opcode = FW_NVME_OPC_COMPARE;
    nlb = 7;
    nand_ops = 1;
    overhead_ns = prng_.Between(8000, 15000);
  }
  const uint64_t slba = prng_.Below(kNamespaceLbas / 8) * 8;
  uint16_t status = FW_NVME_SC_SUCCESS;
  if (prng_.Chance(kLbaRangePerMillion)) {
    status = FW_NVME_SC_LBA_RANGE;
    nand_ops = 0;
  } else if (opcode == FW_NVME_OPC_READ && prng_.Chance(kReadErrorPerMillion)) {
    status = FW_NVME_SC_READ_ERROR;
  }

  fw_cmd_fetch fetch{};
  fetch.qid = cmd.qid;
  fetch.cid = cmd.cid;
  fetch.opcode = opcode;
  fetch.nsid = 1;
  fetch.slba = slba;
  fetch.nlb = nlb;
  Queue(at_ns, FW_EV_CMD_FETCH, fetch);
  uint64_t records = 2;

  // Front end (parse, map lookup), the NAND work, back end (DMA, CQE).
  const uint64_t front_ns = overhead_ns / 2;
  uint64_t t = at_ns + front_ns;
  const bool senses =
      opcode == FW_NVME_OPC_READ || opcode == FW_NVME_OPC_COMPARE;
  const bool flushes = opcode == FW_NVME_OPC_FLUSH;
  for (uint8_t i = 0; i < nand_ops; i++) {
    fw_nand_op op = RandomNandOp(
        RandomDie(), static_cast<uint16_t>(prng_.Below(kBlocksPerPlane)));
    if (senses) {
      const uint64_t t_read = prng_.Between(45000, 90000);
      op.latency = Ticks(t_read);
      t += t_read;
      Queue(t, FW_EV_NAND_READ, op);
      records++;
      if (i + 1 == nand_ops && status == FW_NVME_SC_READ_ERROR)
        records += QueueError(t, FW_ERR_UECC, op.die, op.block);
    } else {
      const uint64_t t_prog = prng_.Between(400000, 900000);
      op.latency = Ticks(t_prog);
      records++;
      if (flushes) {
        // A flush waits for its programs.
        t += t_prog;
        Queue(t, FW_EV_NAND_PROGRAM, op);
      } else {
        // A write's program runs behind the write cache, off its path.
        Queue(t + t_prog, FW_EV_NAND_PROGRAM, op);
      }
    }
  }
  if (++commands_ == config_.slow_cmd)
    t += config_.slow_ns;
  cmd.complete_ns = t + (overhead_ns - front_ns);
  fw_cmd_complete done{};
  done.qid = cmd.qid;
  done.cid = cmd.cid;
  done.status = status;
  done.latency = Ticks(cmd.complete_ns - at_ns);
  Queue(cmd.complete_ns, FW_EV_CMD_COMPLETE, done);
  in_flight_.push_back(cmd);
  return records;
}

uint64_t CoreWorkload::QueueGarbageCollection(uint64_t at_ns) {
  // One collection at a time: none starts while one runs.
  if (at_ns < gc_done_ns_)
    return 0;
  const uint8_t die = RandomDie();
  const uint16_t victim = static_cast<uint16_t>(prng_.Below(kBlocksPerPlane));
  const uint16_t valid = static_cast<uint16_t>(prng_.Between(1, 12));
  Queue(at_ns, FW_EV_GC_BEGIN, fw_gc_begin{die, victim, valid});
  uint64_t records = 2;
  uint64_t t = at_ns;
  // Each valid page is read from the victim and programmed elsewhere, one
  // after the other on the die; then the victim is erased.
  for (uint16_t i = 0; i < valid; i++) {
    fw_nand_op op = RandomNandOp(die, victim);
    const uint64_t t_read = prng_.Between(45000, 90000);
    op.latency = Ticks(t_read);
    t += t_read;
    Queue(t, FW_EV_NAND_READ, op);
    op.block = static_cast<uint16_t>(prng_.Below(kBlocksPerPlane));
    const uint64_t t_prog = prng_.Between(400000, 900000);
    op.latency = Ticks(t_prog);
    t += t_prog;
    Queue(t, FW_EV_NAND_PROGRAM, op);
    records += 2;
  }
  fw_nand_erase erase{};
  erase.die = die;
  erase.plane = static_cast<uint8_t>(prng_.Below(4));
  erase.block = victim;
  const uint64_t t_erase = prng_.Between(3000000, 5000000);
  erase.latency = Ticks(t_erase);
  t += t_erase;
  if (prng_.Chance(20000))
    records += QueueError(t, FW_ERR_ERASE_FAIL, die, victim);
  Queue(t, FW_EV_NAND_ERASE, erase);
  Queue(t, FW_EV_GC_END, fw_gc_end{die, victim, valid, Ticks(t - at_ns)});
  gc_done_ns_ = t;
  return records + 1;
}

uint64_t CoreWorkload::QueueThermal(uint64_t at_ns) {
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
  Queue(at_ns, FW_EV_THERMAL,
        fw_thermal{static_cast<uint8_t>(config_.core), temperature_c_,
                   throttle});
  return 1;
}

uint64_t CoreWorkload::QueueLog(uint64_t at_ns) {
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
  Queue(at_ns, FW_EV_LOG, log);
  return 1;
}

uint64_t CoreWorkload::QueueError(uint64_t at_ns,
                                  uint16_t code,
                                  uint8_t die,
                                  uint16_t block) {
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
  Due d{at_ns, next_order_++, {}};
  d.rec.event_id = FW_EV_ERROR;
  d.rec.fixed_len = sizeof(err);
  std::memcpy(d.rec.fixed.data(), &err, sizeof(err));
  // Context: a register dump of variable length (syndrome, retry table...).
  d.rec.var_len = static_cast<uint16_t>(prng_.Between(4, FW_ERROR_CONTEXT_MAX));
  for (uint16_t i = 0; i < d.rec.var_len; i++)
    d.rec.var[i] = static_cast<uint8_t>(prng_.Next());
  due_.push(d);
  return 1;
}

}  // namespace hmbtrace
