// SPDX-License-Identifier: GPL-2.0-only
// Firmware time on the host clock, with hmb-fwsim alone (no guest): the
// test does what hmb_trace.ko does over the mock control channel. It runs
// hmb-fwsim with a known clock (1 GHz, an offset, +80 ppm, then -90 ppm half
// way through a 60 s run) and a mailbox; takes bursts of SYNC requests over
// the mmap'd mailbox, keeps the shortest round trip of each burst, fits the
// window with clock/hmb_clock_fit after every burst; and checks against the
// clock model in the truth file that the converted host time of ticks
// across the window and up to one sync period past it is never further
// from the truth than the stated bound. Then the mailbox stops answering:
// requests time out and are counted, the last fit is kept, marked stale.
//
// 60 s of model time in 10 s: hmb-fwsim --time-scale 6 runs its clock model
// 6 times faster than CLOCK_MONOTONIC, and the test reads host time on the
// same scale, (CLOCK_MONOTONIC - base) x 6; round trips look 6 times longer.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ctrl_host_test_util.h"
#include "hmb_clock_fit.h"

extern char** environ;

namespace hmbtrace {
namespace {

// The clock the firmware is given, and how the test samples it.
constexpr uint64_t kClockHz = 1000000000;
constexpr uint64_t kOffsetTicks = 7301234567891;
constexpr double kPpmBefore = 80, kPpmAfter = -90, kChangeAtS = 30;
constexpr uint32_t kScale = 6;
constexpr double kModelSeconds = 60;
constexpr uint64_t kPeriodModelNs = 100000000;  // a burst every 100 ms
constexpr int kBurst = 4;
constexpr uint32_t kTolerancePpm = 200;    // > the 170 ppm step
constexpr uint64_t kTimeoutNs = 10000000;  // real
// The mailbox answers for this long (real seconds after hmb-fwsim's start),
// a little more than the 60 model seconds; the test goes on for kStaleS.
constexpr double kAnswerS = kModelSeconds / kScale + 0.4;
constexpr double kStaleS = 0.6;

// A child process, ended (SIGTERM) if still running when destroyed.
class Child {
 public:
  explicit Child(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], nullptr, nullptr, args.data(), environ))
      pid_ = -1;
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      Wait();
    }
  }
  bool running() const { return pid_ > 0; }
  // SIGTERM (hmb-fwsim writes its truth and exits 0), then the exit status.
  int Stop() {
    kill(pid_, SIGTERM);
    return Wait();
  }

 private:
  int Wait() {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  pid_t pid_ = -1;
};

// The mailbox file, created zeroed and mapped before hmb-fwsim maps it.
class SharedFile {
 public:
  SharedFile(const std::string& path, size_t len) : path_(path), len_(len) {
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(len)) != 0)
      return;
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p != MAP_FAILED)
      data_ = static_cast<uint8_t*>(p);
  }
  ~SharedFile() {
    if (data_)
      munmap(data_, len_);
    unlink(path_.c_str());
  }
  std::span<uint8_t> bytes() { return {data_, data_ ? len_ : 0}; }

 private:
  std::string path_;
  size_t len_;
  uint8_t* data_ = nullptr;
};

// The truth file's clock model: tick <-> model ns since hmb-fwsim's start.
class TrueClock {
 public:
  explicit TrueClock(const nlohmann::json& clock)
      : hz_(clock["hz"].get<double>()),
        start_mono_ns_(clock["start_monotonic_ns"].get<uint64_t>()) {
    for (const nlohmann::json& s : clock["segments"])
      segs_.push_back(
          {s["from_model_ns"].get<uint64_t>(), s["tick"].get<uint64_t>(), s["ppb"].get<int64_t>()});
  }
  uint64_t start_mono_ns() const { return start_mono_ns_; }
  // The model time at which the clock showed |tick| (to a tick).
  long double ModelNsOf(uint64_t tick) const {
    const Seg* seg = &segs_.front();
    for (const Seg& s : segs_)
      if (s.tick <= tick)
        seg = &s;
    return static_cast<long double>(seg->from) +
           static_cast<long double>(static_cast<int64_t>(tick - seg->tick)) * 1e18L /
               (hz_ * (1e9L + static_cast<long double>(seg->ppb)));
  }
  uint64_t TickAt(long double model_ns) const {
    const Seg* seg = &segs_.front();
    for (const Seg& s : segs_)
      if (static_cast<long double>(s.from) <= model_ns)
        seg = &s;
    return seg->tick +
           static_cast<uint64_t>(std::floor((model_ns - static_cast<long double>(seg->from)) * hz_ *
                                            (1e9L + static_cast<long double>(seg->ppb)) / 1e18L));
  }

 private:
  struct Seg {
    uint64_t from;
    uint64_t tick;
    int64_t ppb;
  };
  long double hz_;
  uint64_t start_mono_ns_;
  std::vector<Seg> segs_;
};

// What the module does: bursts of sync samples, the shortest round trip of
// each into the window, a fit after every burst; a burst with no answer at
// all keeps the last fit and marks it stale.
class Sampler {
 public:
  struct Fit {
    struct hmb_clock_fit fit;
    uint64_t host_ns;  // model host time of the burst that made it
  };

  Sampler(CtrlHost& host, uint64_t base_mono_ns)
      : host_(host), base_(base_mono_ns), nominal_(hmb_clock_nominal_mult(kClockHz)) {
    hmb_clock_window_reset(&window_);
  }

  // Host time as the test (and the fit) sees it: model time, from base.
  uint64_t HostNs(uint64_t mono_ns) const { return (mono_ns - base_) * kScale; }

  void Burst() {
    hmb_clock_sample best{};
    uint64_t best_rtt = UINT64_MAX;
    for (int i = 0; i < kBurst; i++) {
      const CtrlAnswer a = host_.Request(HMB_CTRL_OP_SYNC, {}, kTimeoutNs);
      requests_.push_back(a);
      if (!a.answered || a.status != HMB_CTRL_OK)
        continue;
      if (a.t1 - a.t0 < best_rtt) {
        best_rtt = a.t1 - a.t0;
        best = {HostNs(a.t0), HostNs(a.t1), a.val[0]};
      }
    }
    if (best_rtt == UINT64_MAX) {
      stale_ = true;  // the error path: keep the last fit
      return;
    }
    burst_rtt_ns_.push_back(best_rtt);
    if (hmb_clock_window_add(&window_, &best) != 0) {
      refused_++;
      return;
    }
    struct hmb_clock_fit f;
    if (hmb_clock_fit(&window_, nominal_, kTolerancePpm, &f) != 0)
      return;
    fits_.push_back({f, best.t1});
    stale_ = false;
  }

  bool stale() const { return stale_; }
  const std::vector<Fit>& fits() const { return fits_; }
  const std::vector<CtrlAnswer>& requests() const { return requests_; }
  const std::vector<uint64_t>& burst_rtt_ns() const { return burst_rtt_ns_; }
  uint64_t refused() const { return refused_; }

 private:
  CtrlHost& host_;
  uint64_t base_;
  uint64_t nominal_;
  hmb_clock_window window_;
  bool stale_ = false;
  uint64_t refused_ = 0;
  std::vector<Fit> fits_;
  std::vector<CtrlAnswer> requests_;
  std::vector<uint64_t> burst_rtt_ns_;  // real ns, the best of each burst
};

template <typename T>
T Median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? T{} : v[v.size() / 2];
}

void SleepUntil(uint64_t mono_ns) {
  const timespec ts = {static_cast<time_t>(mono_ns / 1000000000),
                       static_cast<long>(mono_ns % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

class ClockSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* fwsim = std::getenv("HMB_FWSIM");
    ASSERT_NE(fwsim, nullptr) << "HMB_FWSIM: the hmb-fwsim to run";
    fwsim_ = fwsim;
    char dir[] = "/tmp/hmb-clock-sync-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    for (const char* f : {"/area", "/truth.json"})
      unlink((dir_ + f).c_str());
    rmdir(dir_.c_str());
  }

  std::string fwsim_;
  std::string dir_;
};

TEST_F(ClockSyncTest, ConvertedTimeStaysWithinTheBoundAndAStaleMailboxKeepsTheFit) {
  SharedFile mailbox(dir_ + "/mailbox", HMB_CTRL_MAILBOX_SIZE);
  ASSERT_FALSE(mailbox.bytes().empty());
  Child sim({fwsim_,
             "--area",
             dir_ + "/area",
             "--size",
             "1M",
             "--cores",
             "2",
             "--rate",
             "2000",
             "-q",
             "--duration",
             "30",
             "--truth",
             dir_ + "/truth.json",
             "--clock-hz",
             std::to_string(kClockHz),
             "--clock-offset",
             std::to_string(kOffsetTicks),
             "--drift-ppm",
             std::to_string(kPpmBefore),
             "--drift-change-at",
             std::to_string(kChangeAtS),
             "--drift-ppm-after",
             std::to_string(kPpmAfter),
             "--time-scale",
             std::to_string(kScale),
             "--mailbox",
             dir_ + "/mailbox",
             "--mailbox-stop-after",
             std::to_string(kAnswerS)});
  ASSERT_TRUE(sim.running());
  CtrlHost host(mailbox.bytes());
  ASSERT_TRUE(host.WaitForDevice(10000000000)) << "hmb-fwsim never served";
  ASSERT_EQ(host.Request(HMB_CTRL_OP_NOP).status, HMB_CTRL_OK);

  // As the module's wait would: short sleeps, each as short as asked.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const uint64_t base = MonotonicNowNs();
  Sampler sampler(host, base);
  const uint64_t period_real = kPeriodModelNs / kScale;
  const auto end = base + static_cast<uint64_t>((kAnswerS + kStaleS) * 1e9);
  struct BurstLog {
    uint64_t t0;         // CLOCK_MONOTONIC before its first request
    size_t fits_before;  // fits made before it
    bool stale_after;
  };
  std::vector<BurstLog> bursts;
  for (uint64_t next = base; next < end; next += period_real) {
    SleepUntil(next);
    BurstLog log{MonotonicNowNs(), sampler.fits().size(), false};
    sampler.Burst();
    log.stale_after = sampler.stale();
    bursts.push_back(log);
  }
  ASSERT_EQ(sim.Stop(), 0);

  std::ifstream in(dir_ + "/truth.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json truth = nlohmann::json::parse(in);
  const nlohmann::json& clock = truth["clock"];
  ASSERT_EQ(clock["start_tick"], kOffsetTicks);
  ASSERT_EQ(clock["time_scale"], kScale);
  ASSERT_EQ(clock["segments"].size(), 2u);
  EXPECT_EQ(clock["segments"][1]["ppm"], kPpmAfter);
  const TrueClock true_clock(clock);
  // Test host ns = model ns since hmb-fwsim's start + shift.
  const long double shift =
      (static_cast<long double>(true_clock.start_mono_ns()) - static_cast<long double>(base)) *
      kScale;

  // Every fit, from its window's oldest tick to one sync period past the
  // burst that made it (what a reader converts before the next fit).
  uint64_t checks = 0, violations = 0;
  std::vector<uint64_t> bounds;
  std::vector<long double> errors;
  long double worst_ratio = 0;
  std::string worst_where;
  std::string first_violation;
  for (const Sampler::Fit& fit : sampler.fits()) {
    const struct hmb_clock_fit& f = fit.fit;
    const uint64_t a = f.tick_first;
    const uint64_t b =
        true_clock.TickAt(static_cast<long double>(fit.host_ns + kPeriodModelNs) - shift);
    for (int i = 0; i <= 50; i++) {
      const uint64_t tick = a + (b - a) / 50 * static_cast<uint64_t>(i);
      uint64_t bound = 0;
      const uint64_t host = hmb_clock_to_host(&f, tick, &bound);
      const long double truth_ns = true_clock.ModelNsOf(tick) + shift;
      const long double err = std::fabs(static_cast<long double>(host) - truth_ns);
      checks++;
      bounds.push_back(bound);
      errors.push_back(err);
      if (err / static_cast<long double>(bound) > worst_ratio) {
        worst_ratio = err / static_cast<long double>(bound);
        char buf[400];
        std::snprintf(
            buf, sizeof(buf),
            "worst at model s %.4f: window %.4f..%.4f, made at %.4f, "
            "error %.1f us, bound %.1f us (err_ns %u, slope_err %.1f ppm, rtt_min %u, samples %u)",
            static_cast<double>(true_clock.ModelNsOf(tick) / 1e9L),
            static_cast<double>(true_clock.ModelNsOf(f.tick_first) / 1e9L),
            static_cast<double>(true_clock.ModelNsOf(f.tick_last) / 1e9L),
            static_cast<double>((fit.host_ns - shift) / 1e9L), static_cast<double>(err / 1e3L),
            bound / 1e3, f.err_ns, static_cast<double>(f.slope_err) / 4294.967296, f.rtt_min_ns,
            f.samples);
        worst_where = buf;
      }
      if (err > static_cast<long double>(bound) && violations++ == 0)
        first_violation = "tick " + std::to_string(tick) + " error " +
                          std::to_string(static_cast<double>(err)) + " ns > bound " +
                          std::to_string(bound) + " ns";
    }
  }

  // Coverage: the whole 60 s, across the drift change.
  ASSERT_FALSE(sampler.fits().empty());
  const long double covered_s =
      (static_cast<long double>(sampler.fits().back().host_ns) - shift) / 1e9L;
  EXPECT_GE(covered_s, kModelSeconds) << "fits up to model second " << covered_s;
  EXPECT_EQ(violations, 0u) << first_violation << "; worst error/bound "
                            << static_cast<double>(worst_ratio);

  // The error path: once the mailbox is silent, nothing is answered, every
  // request is counted as timed out, no fit is made, the last one is kept
  // and marked stale.
  ASSERT_TRUE(truth["control"]["stopped_answering_monotonic_ns"].is_number())
      << "the mailbox never stopped answering";
  const uint64_t stopped = truth["control"]["stopped_answering_monotonic_ns"].get<uint64_t>();
  const auto silent = std::find_if(bursts.begin(), bursts.end(),
                                   [stopped](const BurstLog& b) { return b.t0 > stopped; });
  ASSERT_NE(silent, bursts.end());
  const size_t fits_before_silence = silent->fits_before;
  EXPECT_GE(fits_before_silence, static_cast<size_t>(silent - bursts.begin()) * 95 / 100)
      << "bursts without a fit while the mailbox answered";
  for (auto b = silent; b != bursts.end(); ++b)
    EXPECT_TRUE(b->stale_after) << "burst " << b - bursts.begin();
  EXPECT_EQ(sampler.fits().size(), fits_before_silence) << "a fit from nothing";
  EXPECT_TRUE(sampler.stale());
  uint64_t answered = 0, late_timeouts = 0;
  for (const CtrlAnswer& a : sampler.requests()) {
    answered += a.answered;
    if (a.t0 > stopped) {
      EXPECT_FALSE(a.answered) << "answered after the mailbox stopped";
      late_timeouts++;
    }
  }
  EXPECT_GE(late_timeouts, 8u);
  EXPECT_EQ(host.timeouts(), sampler.requests().size() - answered);
  EXPECT_GE(host.timeouts(), late_timeouts);
  // The device counted what it answered (+ the NOP); a request it answered
  // after the host gave up would count there and not here.
  const uint64_t served_syncs = truth["control"]["requests"]["sync"];
  EXPECT_GE(served_syncs, answered);
  EXPECT_LE(served_syncs, sampler.requests().size());
  EXPECT_EQ(truth["control"]["requests"]["nop"], 1);

  std::vector<uint64_t> rtts = sampler.burst_rtt_ns();
  const uint64_t rtt_median = Median(rtts);
  const uint64_t rtt_worst = rtts.empty() ? 0 : *std::max_element(rtts.begin(), rtts.end());
  const uint64_t bound_median = Median(bounds);
  const uint64_t bound_worst = bounds.empty() ? 0 : *std::max_element(bounds.begin(), bounds.end());
  std::printf(
      "bursts %zu, fits %zu, requests %zu (answered %llu, timed out %llu, "
      "%llu after the mailbox stopped)\n"
      "round trip, best of each burst (real): median %.1f us, worst %.1f us "
      "(x%u in model time)\n"
      "stated bound (model ns): median %.1f us, worst %.1f us; error: median "
      "%.1f us, worst %.1f us; worst error/bound %.3f over %llu checks\n",
      bursts.size(), sampler.fits().size(), sampler.requests().size(),
      static_cast<unsigned long long>(answered), static_cast<unsigned long long>(host.timeouts()),
      static_cast<unsigned long long>(late_timeouts), rtt_median / 1e3, rtt_worst / 1e3, kScale,
      bound_median / 1e3, bound_worst / 1e3, static_cast<double>(Median(errors)) / 1e3,
      static_cast<double>(*std::max_element(errors.begin(), errors.end())) / 1e3,
      static_cast<double>(worst_ratio), static_cast<unsigned long long>(checks));
  std::printf("%s\n", worst_where.c_str());
  RecordProperty("rtt_median_ns", std::to_string(rtt_median));
  RecordProperty("rtt_worst_ns", std::to_string(rtt_worst));
  RecordProperty("bound_median_ns", std::to_string(bound_median));
  RecordProperty("bound_worst_ns", std::to_string(bound_worst));
}

}  // namespace
}  // namespace hmbtrace
