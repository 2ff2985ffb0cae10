// SPDX-License-Identifier: GPL-2.0-only
#include "causes/die_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <queue>
#include <sstream>
#include <tuple>

#include "causes/causes_events.h"
#include "workload.h"  // Prng

namespace hmbtrace {
namespace {

// What occupied a die, and when (ticks).
struct Occupancy {
  uint64_t begin = 0, end = 0;
  bool gc = false;
};

struct Die {
  uint64_t free_ns = 0;
  std::vector<Occupancy> busy;
};

enum class Step { kArrive, kDieRequest, kProgram, kGc, kDone };

struct Pending {
  uint64_t at_ns = 0;
  uint64_t order = 0;  // FIFO among equal times
  Step step = Step::kArrive;
  uint32_t index = 0;  // command index, or the die of kProgram / kGc
  bool operator>(const Pending& o) const {
    return std::tie(at_ns, order) > std::tie(o.at_ns, o.order);
  }
};

struct Command {
  uint16_t tag = 0;
  uint8_t die = 0;
  bool read = true;
  uint32_t retry_steps = 0;
  uint64_t wait_from_ns = 0;  // when it asked for its die
};

class Model {
 public:
  explicit Model(const DieModelConfig& c) : c_(c), prng_(c.seed), dies_(c.nr_dies) {}

  DieModelRun Run() {
    PlanArrivals();
    while (!queue_.empty()) {
      const Pending p = queue_.top();
      queue_.pop();
      switch (p.step) {
        case Step::kArrive:
          Arrive(p.index, p.at_ns);
          break;
        case Step::kDieRequest:
          Dispatch(p.index, p.at_ns);
          break;
        case Step::kProgram:
          Program(p.index, p.at_ns);
          break;
        case Step::kGc:
          Gc(p.index, p.at_ns);
          break;
        case Step::kDone:
          free_tags_.push_back(cmds_[p.index].tag);
          break;
      }
    }
    if (c_.throttle && throttle_to_ > throttle_from_) {
      Emit(throttle_to_, CZ_EV_THERMAL_THROTTLE,
           cz_thermal_throttle{0, 85, Lat(throttle_from_, throttle_to_)});
    }
    std::stable_sort(run_.records.begin(), run_.records.end(),
                     [](const ModelRecord& a, const ModelRecord& b) { return a.ts < b.ts; });
    for (TruthCommand& t : run_.commands)
      Judge(t);
    return std::move(run_);
  }

 private:
  uint64_t Tick(uint64_t ns) const {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(ns) * c_.clock_hz / 1000000000u);
  }
  uint32_t Lat(uint64_t from_ns, uint64_t to_ns) const {
    return static_cast<uint32_t>(Tick(to_ns) - Tick(from_ns));
  }
  void Push(uint64_t at_ns, Step step, uint32_t index) {
    queue_.push(Pending{at_ns, order_++, step, index});
  }
  template <typename Payload>
  void Emit(uint64_t at_ns, uint16_t id, const Payload& pl) {
    ModelRecord r;
    r.ts = Tick(at_ns);
    r.event_id = id;
    r.payload.resize(sizeof(pl));
    std::memcpy(r.payload.data(), &pl, sizeof(pl));
    run_.records.push_back(std::move(r));
  }
  // A stage of command |i| from |from| to |to| (ns): its record and truth.
  template <typename Payload>
  void Stage(uint32_t i,
             uint16_t id,
             const char* name,
             uint64_t from,
             uint64_t to,
             const Payload& pl) {
    Emit(to, id, pl);
    run_.commands[i].stages.push_back(TruthStage{name, Tick(from), Tick(to)});
  }

  void PlanArrivals() {
    uint64_t t = 0;
    for (uint32_t i = 0; i < c_.nr_commands; i++) {
      // Exponential interarrival from a uniform in (0, 1].
      const double u = (prng_.Below(1u << 30) + 1.0) / (1u << 30);
      t += static_cast<uint64_t>(-std::log(u) * c_.interarrival_ns);
      Push(t, Step::kArrive, i);
    }
    throttle_from_ = t / 1000 * c_.throttle_from_permille;
    throttle_to_ = t / 1000 * c_.throttle_to_permille;
    if (c_.gc) {
      for (uint64_t g = 0; g < t;) {
        const double u = (prng_.Below(1u << 30) + 1.0) / (1u << 30);
        g += static_cast<uint64_t>(-std::log(u) * c_.gc_interval_ns);
        Push(g, Step::kGc, static_cast<uint32_t>(prng_.Below(c_.nr_dies)));
      }
    }
    run_.commands.resize(c_.nr_commands);
    cmds_.resize(c_.nr_commands);
  }

  uint16_t TakeTag() {
    if (free_tags_.empty())
      return next_tag_++;
    const uint16_t tag = free_tags_.back();
    free_tags_.pop_back();
    return tag;
  }

  bool Throttled(uint64_t ns) const {
    return c_.throttle && ns >= throttle_from_ && ns < throttle_to_;
  }

  void Arrive(uint32_t i, uint64_t a) {
    Command& cmd = cmds_[i];
    TruthCommand& t = run_.commands[i];
    t.qid = static_cast<uint16_t>(1 + i % c_.nr_queues);
    t.cid = static_cast<uint16_t>(i / c_.nr_queues);
    cmd.read = prng_.Below(100) >= c_.write_percent;
    t.opcode = cmd.read ? CZ_OPC_READ : CZ_OPC_WRITE;
    cmd.die = static_cast<uint8_t>(prng_.Below(c_.nr_dies));
    cmd.tag = TakeTag();
    if (cmd.read && c_.retry && prng_.Chance(c_.retry_per_million))
      cmd.retry_steps = static_cast<uint32_t>(prng_.Between(1, 4));
    t.fetch = Tick(a);
    Emit(a, CZ_EV_CMD_FETCH, cz_cmd_fetch{t.qid, t.cid, cmd.tag, t.opcode, cmd.die});
    const uint64_t looked_up = a + c_.ftl_ns;
    Stage(i, CZ_EV_FTL_LOOKUP, "ftl_lookup", a, looked_up, cz_work{cmd.tag, Lat(a, looked_up)});
    if (!cmd.read) {
      const uint64_t done = looked_up + c_.buffer_ns;
      Stage(i, CZ_EV_WRITE_BUFFER, "write_buffer", looked_up, done,
            cz_work{cmd.tag, Lat(looked_up, done)});
      Complete(i, done);
      Push(done, Step::kProgram, cmd.die);
      return;
    }
    uint64_t ask = looked_up;
    if (Throttled(ask)) {
      // The power budget admits one NAND operation per wait, until the
      // period ends.
      const uint64_t admitted = std::min<uint64_t>(ask + c_.throttle_wait_ns, throttle_to_);
      Stage(i, CZ_EV_POWER_WAIT, "power_wait", ask, admitted,
            cz_power_wait{cmd.tag, 0, Lat(ask, admitted)});
      ask = admitted;
    }
    cmd.wait_from_ns = ask;
    Push(ask, Step::kDieRequest, i);
  }

  // Die requests run in the order they are made: each die is a FIFO.
  void Dispatch(uint32_t i, uint64_t now) {
    Command& cmd = cmds_[i];
    Die& die = dies_[cmd.die];
    const uint64_t start = std::max(now, die.free_ns);
    Stage(i, CZ_EV_DIE_WAIT, "die_wait", now, start,
          cz_die_wait{cmd.tag, cmd.die, Lat(now, start)});
    uint64_t end = start + c_.read_ns;
    Stage(i, CZ_EV_NAND_READ, "nand_read", start, end,
          cz_nand_read{cmd.tag, cmd.die, Lat(start, end)});
    if (cmd.retry_steps) {
      const uint64_t retried = end + uint64_t{cmd.retry_steps} * c_.retry_step_ns;
      Stage(i, CZ_EV_READ_RETRY, "read_retry", end, retried,
            cz_read_retry{cmd.tag, cmd.die, static_cast<uint8_t>(cmd.retry_steps),
                          Lat(end, retried)});
      end = retried;
    }
    Occupy(die, start, end, false);
    const uint64_t sent = end + c_.xfer_ns;
    Stage(i, CZ_EV_XFER, "xfer", end, sent, cz_work{cmd.tag, Lat(end, sent)});
    Complete(i, sent);
  }

  void Program(uint32_t d, uint64_t now) {
    Die& die = dies_[d];
    const uint64_t start = std::max(now, die.free_ns);
    Occupy(die, start, start + c_.program_ns, false);
  }

  void Gc(uint32_t d, uint64_t now) {
    Die& die = dies_[d];
    const uint64_t start = std::max(now, die.free_ns);
    const uint64_t end = start + c_.erase_ns;
    Occupy(die, start, end, true);
    Emit(end, CZ_EV_GC_ERASE,
         cz_gc_erase{static_cast<uint8_t>(d), static_cast<uint32_t>(prng_.Below(4096)),
                     Lat(start, end)});
  }

  void Occupy(Die& die, uint64_t from, uint64_t to, bool gc) {
    die.free_ns = to;
    die.busy.push_back(Occupancy{Tick(from), Tick(to), gc});
  }

  void Complete(uint32_t i, uint64_t done) {
    TruthCommand& t = run_.commands[i];
    t.complete = Tick(done);
    Emit(done, CZ_EV_CMD_COMPLETE,
         cz_cmd_complete{t.qid, t.cid, 0, static_cast<uint32_t>(t.complete - t.fetch)});
    // The tag is free once the completion is posted, not before.
    Push(done, Step::kDone, i);
  }

  // The truth's verdict on command |t|, from the model's schedule.
  void Judge(TruthCommand& t) {
    const Command& cmd = cmds_[&t - run_.commands.data()];
    for (const TruthStage& s : t.stages) {
      const bool wait = s.name == "die_wait" || s.name == "power_wait";
      if ((!wait && s.name != "read_retry") || s.end - s.begin <= t.delay_ticks)
        continue;
      t.delay_ticks = s.end - s.begin;
      t.longest_delay = s.name;
      if (s.name == "read_retry") {
        t.cause = "read_retry";
      } else if (s.name == "power_wait") {
        // Admitted only when the throttle lets it: all of it is throttling.
        t.cause = "thermal_throttle";
      } else {
        uint64_t gc = 0;
        for (const Occupancy& o : dies_[cmd.die].busy) {
          if (o.gc && o.end > s.begin && o.begin < s.end)
            gc += std::min(o.end, s.end) - std::max(o.begin, s.begin);
        }
        t.cause = 2 * gc > s.end - s.begin ? "gc_erase" : "queueing";
      }
    }
  }

  const DieModelConfig c_;
  Prng prng_;
  std::vector<Die> dies_;
  std::vector<Command> cmds_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> queue_;
  uint64_t order_ = 0;
  std::vector<uint16_t> free_tags_;
  uint16_t next_tag_ = 0;
  uint64_t throttle_from_ = 0, throttle_to_ = 0;
  DieModelRun run_;
};

}  // namespace

DieModelRun RunDieModel(const DieModelConfig& config) {
  return Model(config).Run();
}

std::string TruthLog(const DieModelRun& run) {
  std::ostringstream out;
  for (const TruthCommand& t : run.commands) {
    out << t.qid << ' ' << t.cid << ' ' << t.fetch << ' ' << (t.complete - t.fetch) << ' '
        << t.longest_delay << ' ' << t.cause << ' ' << t.delay_ticks << '\n';
  }
  return out.str();
}

}  // namespace hmbtrace
