// SPDX-License-Identifier: GPL-2.0-only
// hmb-fwsim: simulated NVMe SSD firmware that writes trace records into an
// HMB trace area (a file shared with QEMU's ivshmem) with the reference
// producer, and writes the ground truth a test compares the host side with.
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "fwsim.h"
#include "mapped_file.h"

#ifndef HMBTRACE_VERSION
#define HMBTRACE_VERSION "unknown"
#endif

namespace hmbtrace {
namespace {

struct Options {
  std::string area;
  uint64_t size = 4u << 20;
  std::string truth;
  std::string mailbox;
  std::vector<std::string> stalls;
  std::vector<std::string> corruptions;
  bool quiet = false;
};

bool ParseU64(const std::string& s, uint64_t* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
    return false;
  try {
    *out = std::stoull(s);
  } catch (...) {
    return false;
  }
  return true;
}

// K[:SECONDS][@AFTER]
Result<StallSpec> ParseStall(const std::string& arg) {
  StallSpec spec;
  std::string rest = arg;
  const auto bad = [&arg](const std::string& why) {
    return Status::Error("--stall-core " + arg + ": " + why +
                         " (expected CORE[:SECONDS][@AFTER])");
  };
  if (auto at = rest.find('@'); at != std::string::npos) {
    if (!ParseU64(rest.substr(at + 1), &spec.after))
      return bad("AFTER is not a record count");
    rest.resize(at);
  }
  if (auto colon = rest.find(':'); colon != std::string::npos) {
    const std::string secs = rest.substr(colon + 1);
    size_t used = 0;
    double value = -1;
    try {
      value = std::stod(secs, &used);
    } catch (...) {
    }
    if (used != secs.size() || secs.empty() || !(value >= 0))
      return bad("SECONDS is not a number of seconds");
    spec.seconds = value;
    rest.resize(colon);
  }
  uint64_t core = 0;
  if (!ParseU64(rest, &core) || core >= HMB_TRACE_MAX_CORES)
    return bad("CORE is not a core number");
  spec.core = static_cast<uint16_t>(core);
  return spec;
}

// CORE:SEQ
Result<CorruptSpec> ParseCorrupt(const std::string& arg) {
  CorruptSpec spec;
  const auto colon = arg.find(':');
  uint64_t core = 0;
  if (colon == std::string::npos || !ParseU64(arg.substr(0, colon), &core) ||
      core >= HMB_TRACE_MAX_CORES ||
      !ParseU64(arg.substr(colon + 1), &spec.seq))
    return Status::Error("--corrupt-page " + arg + ": expected CORE:SEQ");
  spec.core = static_cast<uint16_t>(core);
  return spec;
}

// SIGINT and SIGTERM are blocked in every thread and taken here, so the
// simulator stops between records and the truth file is still written.
class SignalWatcher {
 public:
  explicit SignalWatcher(std::atomic<bool>* stop) : stop_(stop) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] { Watch(); });
  }
  ~SignalWatcher() {
    done_.store(true);
    thread_.join();
  }
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  void Watch() {
    const timespec poll = {0, 100000000};
    while (!done_.load()) {
      if (sigtimedwait(&set_, nullptr, &poll) > 0)
        stop_->store(true);
    }
  }

  std::atomic<bool>* stop_;
  std::atomic<bool> done_{false};
  sigset_t set_;
  std::thread thread_;
};

class ProgressPrinter {
 public:
  void operator()(double elapsed_s, std::span<const uint64_t> produced) {
    if (last_.size() != produced.size())
      last_.assign(produced.size(), 0);
    const double dt = elapsed_s - last_s_;
    std::string line = "hmb-fwsim: " + Fixed(elapsed_s, 1) + " s, records/s:";
    uint64_t total = 0;
    for (size_t k = 0; k < produced.size(); k++) {
      const uint64_t delta = produced[k] - last_[k];
      total += delta;
      line += " core" + std::to_string(k) + " " +
              Fixed(dt > 0 ? static_cast<double>(delta) / dt : 0, 0);
      last_[k] = produced[k];
    }
    line += ", total " +
            Fixed(dt > 0 ? static_cast<double>(total) / dt : 0, 0) + "\n";
    std::fputs(line.c_str(), stderr);
    last_s_ = elapsed_s;
  }

 private:
  static std::string Fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
    return buf;
  }

  std::vector<uint64_t> last_;
  double last_s_ = 0;
};

// --clock-hz and the clock model: offset, drift, a drift step, time scale.
void AddClockOptions(CLI::App& app, ClockModelConfig& clock) {
  app.add_option("--clock-hz", clock.clock_hz,
                 "Firmware trace clock rate, nominal (see --drift-ppm)")
      ->capture_default_str()
      ->type_name("HZ");
  app.add_option("--clock-offset", clock.start_tick,
                 "The trace clock's tick at the simulator's start")
      ->capture_default_str()
      ->type_name("TICKS");
  app.add_option("--drift-ppm", clock.drift_ppm,
                 "The clock's rate error: it runs at clock-hz x (1 + P/1e6)")
      ->capture_default_str()
      ->type_name("P");
  auto* change =
      app.add_option("--drift-change-at", clock.drift_change_at_s,
                     "The rate steps to --drift-ppm-after this many "
                     "(model) seconds after the start")
          ->check(CLI::NonNegativeNumber.description(""))
          ->type_name("SECONDS");
  app.add_option("--drift-ppm-after", clock.drift_ppm_after,
                 "The drift after --drift-change-at")
      ->capture_default_str()
      ->needs(change)
      ->type_name("P2");
  app.add_option("--time-scale", clock.time_scale,
                 "Model time runs N times faster than CLOCK_MONOTONIC "
                 "(round trips look N times longer): a long run, quickly")
      ->capture_default_str()
      ->type_name("N");
}

// --area and the ring geometry.
void AddAreaOptions(CLI::App& app, SimConfig& config, Options& opt) {
  app.add_option("--area", opt.area,
                 "File mapped shared as the trace area; created, and resized "
                 "to --size (e.g. /dev/shm/hmb-area)")
      ->required()
      ->type_name("FILE");
  app.add_option("--size", opt.size,
                 "Area size in bytes, a power of two (QEMU's ivshmem needs "
                 "one); K, M, G suffixes are powers of 1024")
      ->transform(CLI::AsSizeValue(false).description(""))
      ->type_name("BYTES")
      ->default_str("4M");
  app.add_option("--cores", config.cores, "Simulated firmware cores (1..32)")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--page-size", config.page_size,
                 "Ring page size in bytes, a power of two (512..32768)")
      ->capture_default_str()
      ->type_name("BYTES");
  app.add_option("--pages-per-core", config.pages_per_core,
                 "Ring length in pages; 0: as many as fit")
      ->capture_default_str()
      ->type_name("N");
}

// Pacing, when to stop, the seed and the truth file.
void AddWorkloadOptions(CLI::App& app, SimConfig& config, Options& opt) {
  app.add_option("--rate", config.rate,
                 "Records per second per core; 0: as fast as 32 commands in flight allow")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--burst", config.burst,
                 "Records whose work arrives at the same time before pacing")
      ->capture_default_str()
      ->check(CLI::PositiveNumber.description(""))
      ->type_name("N");
  app.add_option("--full-speed-after", config.full_speed_after,
                 "Once a core has produced N records in total, work arrives as "
                 "fast as its queue depth allows (a burst that laps the ring); 0: never")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--duration", config.duration_s,
                 "Stop after this many seconds; 0: no limit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber.description(""))
      ->type_name("SECONDS");
  app.add_option("--count", config.count,
                 "Stop each core after this many records; 0: no limit")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--seed", config.seed,
                 "Workload seed: same seed and count, same records per core")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--slow-cmd", config.slow_cmd,
                 "Core 0's Nth host command (1-based) takes --slow-us longer: a latency "
                 "outlier for the firmware freeze's trigger (ctrl freeze-config); 0: none")
      ->capture_default_str()
      ->type_name("N");
  app.add_option("--slow-us", config.slow_us, "How much longer the --slow-cmd command takes")
      ->capture_default_str()
      ->type_name("US");
  app.add_option("--truth", opt.truth,
                 "Write the ground truth (JSON) here at exit, atomically")
      ->type_name("FILE");
}

// Resets, stalls, corrupted pages.
void AddFaultOptions(CLI::App& app, SimConfig& config, Options& opt) {
  app.add_option("--reset-at", config.reset_at,
                 "Firmware reset (producer re-initialised, new generation) "
                 "after core 0 has produced N records in total; repeatable")
      ->type_name("N");
  app.add_flag("--reset-forgets", config.reset_forgets,
               "Each reset is a cold boot that lost the cores' counts: "
               "prev_gen and prev_next_seq stay 0 (the old generation's "
               "unread tail is uncountable)");
  app.add_flag("--new-build-at-reset", config.new_build_at_reset,
               "Each reset brings back another firmware build: new build_id,"
               " event names suffixed _b2, _b3..., cmd_fetch and cmd_complete"
               " formats reworded; the same records");
  app.add_option("--stall-core", opt.stalls,
                 "Core K stops after AFTER records (default 1000) for SECONDS,"
                 " or for good without SECONDS; repeatable")
      ->type_name("K[:SECONDS][@AFTER]");
  app.add_option("--corrupt-page", opt.corruptions,
                 "After core CORE produced record SEQ, write garbage into its "
                 "current page header; repeatable")
      ->type_name("CORE:SEQ");
}

// When to start, the control channel, and QEMU's NVMe disk to follow.
void AddHostOptions(CLI::App& app, SimConfig& config, Options& opt) {
  app.add_option("--wait-for", config.wait_for,
                 "Initialise the area, then wait until PATH exists before "
                 "producing (the guest signals readiness)")
      ->type_name("PATH");
  app.add_option("--start-delay", config.start_delay_s,
                 "Then wait this many seconds before producing")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber.description(""))
      ->type_name("SECONDS");
  app.add_option("--mailbox", opt.mailbox,
                 "Serve the control channel: map FILE shared as the mailbox "
                 "(4096 bytes; created, zeroed), answer requests until exit")
      ->type_name("FILE");
  app.add_option("--mailbox-poll-us", config.mailbox.poll_us,
                 "Sleep between looks at the mailbox, in microseconds, "
                 "within 20 ms of the last request")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u).description(""))
      ->type_name("US");
  app.add_option("--mailbox-idle-poll-us", config.mailbox.idle_poll_us,
                 "The same after 20 ms without a request")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u).description(""))
      ->type_name("US");
  app.add_option("--mailbox-stop-after", config.mailbox.stop_after_s,
                 "Stop answering the mailbox this many seconds after the "
                 "start (the host's timeout path); 0: never")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber.description(""))
      ->type_name("SECONDS");
  app.add_option("--follow-qemu-nvme", config.follow_qemu_nvme,
                 "Instead of the synthetic workload, write the records of the "
                 "commands of QEMU's -device nvme, read as its trace log FILE "
                 "grows (-trace pci_nvme_io_cmd, pci_nvme_admin_cmd, "
                 "pci_nvme_enqueue_req_completion; -msg timestamp=on)")
      ->type_name("FILE");
}

// The option values that need more than CLI11's checks: fault
// specifications, the area size, the geometry (before the file is touched).
Status CheckOptions(const Options& opt, SimConfig& config) {
  for (const std::string& s : opt.stalls) {
    Result<StallSpec> spec = ParseStall(s);
    if (!spec.ok())
      return spec.status();
    config.stalls.push_back(spec.value());
  }
  for (const std::string& s : opt.corruptions) {
    Result<CorruptSpec> spec = ParseCorrupt(s);
    if (!spec.ok())
      return spec.status();
    config.corruptions.push_back(spec.value());
  }
  if (Status st = CheckAreaSizePowerOfTwo(opt.size); !st.ok())
    return st;
  return CheckConfig(config, opt.size);
}

// The truth file (if asked for) and the summary line; the exit status.
int Report(const Options& opt, const SimResult& result, bool mailbox) {
  int rc = 0;
  if (!opt.truth.empty()) {
    nlohmann::json truth = TruthJson(result);
    truth["area"] = opt.area;
    if (mailbox)
      truth["control"]["mailbox"] = opt.mailbox;
    const std::string doc = truth.dump(2) + "\n";
    if (Status st = WriteFileAtomically(opt.truth, doc); !st.ok()) {
      std::fprintf(stderr, "hmb-fwsim: %s\n", st.message().c_str());
      rc = 1;
    }
  }
  if (!opt.quiet) {
    uint64_t total = 0;
    for (const LifeTruth& life : result.lives)
      for (const CoreTruth& c : life.cores)
        total += c.produced;
    const double secs = result.elapsed_s > 0 ? result.elapsed_s : 1;
    std::fprintf(stderr,
                 "hmb-fwsim: %llu records in %.2f s (%.0f records/s), "
                 "%zu producer generation(s), %zu fault(s), %u pages/core, "
                 "stopped by %s\n",
                 static_cast<unsigned long long>(total), result.elapsed_s,
                 static_cast<double>(total) / secs, result.lives.size(),
                 result.faults.size(), result.pages_per_core,
                 result.stop_reason.c_str());
  }
  if (result.stop_reason == "error")
    rc = 1;
  return rc;
}

// Maps the area (and the mailbox), runs the simulation until it stops or a
// signal comes, and reports.
int Simulate(const SimConfig& config, const Options& opt) {
  std::atomic<bool> stop{false};
  SignalWatcher signals(&stop);
  Result<MappedFile> area = MappedFile::Create(opt.area, opt.size);
  if (!area.ok()) {
    std::fprintf(stderr, "hmb-fwsim: %s\n", area.message().c_str());
    return 1;
  }
  std::optional<MappedFile> mailbox;
  if (!opt.mailbox.empty()) {
    Result<MappedFile> mb =
        MappedFile::Create(opt.mailbox, HMB_CTRL_MAILBOX_SIZE);
    if (!mb.ok()) {
      std::fprintf(stderr, "hmb-fwsim: %s\n", mb.message().c_str());
      return 1;
    }
    mailbox.emplace(std::move(mb.value()));
  }
  if (!opt.quiet && !config.wait_for.empty())
    std::fprintf(stderr, "hmb-fwsim: area ready, waiting for %s\n",
                 config.wait_for.c_str());

  ProgressPrinter printer;
  ProgressFn progress;
  if (!opt.quiet)
    progress = [&printer](double t, std::span<const uint64_t> produced) {
      printer(t, produced);
    };
  Result<SimResult> result =
      RunSimulation(config, area->bytes(), stop, progress,
                    mailbox ? mailbox->bytes() : std::span<uint8_t>());
  if (!result.ok()) {
    std::fprintf(stderr, "hmb-fwsim: %s\n", result.message().c_str());
    return 1;
  }
  return Report(opt, result.value(), mailbox.has_value());
}

int Main(int argc, char** argv) {
  SimConfig config;
  Options opt;
  CLI::App app{
      "hmb-fwsim: simulated NVMe SSD firmware. Maps FILE as the HMB trace "
      "area, initialises it with the reference producer and runs N firmware "
      "cores that emit trace records, with optional fault injection. Writes "
      "the ground truth as JSON at exit.",
      "hmb-fwsim"};
  app.set_version_flag("--version", HMBTRACE_VERSION);
  app.get_formatter()->column_width(34);
  AddAreaOptions(app, config, opt);
  AddClockOptions(app, config.clock);
  AddWorkloadOptions(app, config, opt);
  AddFaultOptions(app, config, opt);
  AddHostOptions(app, config, opt);
  app.add_flag("-q,--quiet", opt.quiet,
               "No progress on stderr (otherwise records/s once a second)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (Status st = CheckOptions(opt, config); !st.ok()) {
    std::fprintf(stderr, "hmb-fwsim: %s\n", st.message().c_str());
    return 2;
  }
  return Simulate(config, opt);
}

}  // namespace
}  // namespace hmbtrace

int main(int argc, char** argv) {
  try {
    return hmbtrace::Main(argc, argv);
  } catch (const std::exception& e) {
    // Only allocation failure or a library bug gets here.
    std::fprintf(stderr, "hmb-fwsim: %s\n", e.what());
    return 1;
  }
}
