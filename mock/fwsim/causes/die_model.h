// SPDX-License-Identifier: GPL-2.0-only
// The die model: a firmware whose host commands take their time where an
// SSD's do, and which says so in its records (causes_events.def, ABI 1.2
// "Command attribution"). Commands queue per die; NAND reads and programs
// take die time; garbage collection occupies a die now and then; some
// reads need retries; a thermal throttle period makes every NAND operation
// wait for the power budget. Each cause can be switched off.
//
// Besides the records, the model keeps its own account of every command
// (the truth): its stages and, for its longest delay, the cause, computed
// from the model's die schedule and not from the records, so a tool that
// reads the records can be checked against it.
#ifndef HMBTRACE_MOCK_FWSIM_CAUSES_DIE_MODEL_H_
#define HMBTRACE_MOCK_FWSIM_CAUSES_DIE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace hmbtrace {

struct DieModelConfig {
  uint64_t seed = 1;
  uint64_t clock_hz = 100000000;  // firmware ticks per second
  uint32_t nr_commands = 20000;
  uint8_t nr_dies = 8;
  uint16_t nr_queues = 4;
  uint32_t interarrival_ns = 30000;  // mean, exponential
  uint32_t write_percent = 30;
  // Stage lengths, ns.
  uint32_t ftl_ns = 4000;
  uint32_t read_ns = 60000;      // tR
  uint32_t program_ns = 300000;  // tPROG, behind the write buffer
  uint32_t xfer_ns = 8000;
  uint32_t buffer_ns = 15000;
  // The causes.
  bool gc = true;
  uint32_t gc_interval_ns = 4000000;  // mean between GC erases (any die)
  uint32_t erase_ns = 1500000;
  bool retry = true;
  uint32_t retry_per_million = 30000;  // reads that need retries
  uint32_t retry_step_ns = 350000;     // per retry step, 1..4 steps
  bool throttle = true;
  // The throttle period, as parts per thousand of the arrivals' span.
  uint32_t throttle_from_permille = 400, throttle_to_permille = 430;
  uint32_t throttle_wait_ns = 1200000;  // before each NAND op while throttled

  // Every cause off: commands only queue behind each other.
  void DisableCauses() { gc = retry = throttle = false; }
};

// One record as the firmware writes it: its time in ticks and its payload.
struct ModelRecord {
  uint64_t ts = 0;
  uint16_t event_id = 0;
  std::vector<uint8_t> payload;
};

// A stage of a command, as the model ran it (ticks).
struct TruthStage {
  std::string name;  // the event name of its record
  uint64_t begin = 0, end = 0;
};

// The truth about one host command.
struct TruthCommand {
  uint16_t qid = 0, cid = 0;
  uint8_t opcode = 0;
  uint64_t fetch = 0, complete = 0;  // ticks
  std::vector<TruthStage> stages;
  // Its longest delay (a wait or a rework; "none" if it had neither),
  // and what caused it: "queueing" (other host work held the die), the
  // activity that held the resource most of the wait ("gc_erase",
  // "thermal_throttle"), or the rework itself ("read_retry").
  std::string longest_delay = "none";
  std::string cause = "none";
  uint64_t delay_ticks = 0;
};

struct DieModelRun {
  std::vector<ModelRecord> records;    // in time order
  std::vector<TruthCommand> commands;  // in fetch order
};

DieModelRun RunDieModel(const DieModelConfig& config);

// The truth as text, one line per command:
// "qid cid fetch_ticks latency_ticks longest_delay cause delay_ticks".
std::string TruthLog(const DieModelRun& run);

}  // namespace hmbtrace

#endif  // HMBTRACE_MOCK_FWSIM_CAUSES_DIE_MODEL_H_
