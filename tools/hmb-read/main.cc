// SPDX-License-Identifier: GPL-2.0-only
// hmb-read: drain an HMB trace area file from user space with the consumer
// core, decode records with the area's own dictionary, and print per-core
// delivered/lost. With --truth, check the exact accounting against
// hmb-fwsim's ground truth and exit non-zero on any difference.
//
// The area is mapped read-only: like the kernel module, this reader never
// writes the trace area.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dictionary.h"
#include "format.h"
#include "hmb_consumer.h"

namespace hmbtrace {
namespace {

volatile sig_atomic_t g_stop = 0;

struct Options {
  std::string area;
  double duration = 0;   // 0: until idle
  double idle_exit = 1.0;
  double wait_attach = 10.0;
  uint32_t poll_us = 200;
  uint32_t show = 8;
  std::string truth;
  bool quiet = false;
};

// Read-only shared mapping of the area file.
class AreaMapping {
 public:
  static std::optional<AreaMapping> Open(const std::string& path, std::string* err) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      *err = "cannot open " + path + ": " + std::strerror(errno) +
             " (start hmb-fwsim --area " + path + " first)";
      return std::nullopt;
    }
    struct stat st;
    if (fstat(fd, &st) || st.st_size < 4096) {
      *err = path + ": not a trace area (" + std::to_string(st.st_size) + " bytes)";
      ::close(fd);
      return std::nullopt;
    }
    void* p = mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) {
      *err = "cannot map " + path + ": " + std::strerror(errno);
      return std::nullopt;
    }
    return AreaMapping(static_cast<const uint8_t*>(p), st.st_size);
  }
  AreaMapping(AreaMapping&& o) noexcept
      : base_(std::exchange(o.base_, nullptr)), len_(o.len_), pages_(std::move(o.pages_)) {}
  AreaMapping& operator=(AreaMapping&& o) noexcept {
    std::swap(base_, o.base_);
    std::swap(len_, o.len_);
    std::swap(pages_, o.pages_);
    return *this;
  }
  ~AreaMapping() {
    if (base_) munmap(const_cast<uint8_t*>(base_), len_);
  }
  hmb_area area() const { return {pages_.data(), pages_.size(), 12}; }

 private:
  AreaMapping(const uint8_t* base, uint64_t len) : base_(base), len_(len) {
    for (uint64_t off = 0; off + 4096 <= len; off += 4096) pages_.push_back(base + off);
  }
  const uint8_t* base_;
  uint64_t len_;
  std::vector<const uint8_t*> pages_;
};

// Per-life accounting and decoding, fed by the consumer's callbacks.
struct Reader {
  struct Core {
    uint64_t delivered = 0;
    uint64_t lost[HMB_LOST_NR] = {};
    uint64_t lost_total() const {
      uint64_t n = 0;
      for (uint64_t l : lost) n += l;
      return n;
    }
  };
  hmb_consumer consumer{};
  std::unique_ptr<uint8_t[]> scratch{new uint8_t[HMB_CONSUMER_SCRATCH_LEN]};
  std::optional<Dictionary> dict;
  std::string dict_error;
  std::array<Core, HMB_TRACE_MAX_CORES> life{};  // since attach or the last reset
  std::map<std::string, uint64_t> per_event;
  std::vector<std::string> shown;
  uint32_t show = 0;
  bool need_dict = true;
  bool quiet = false;

  void LoadDictionary() {
    need_dict = false;
    std::vector<uint8_t> bytes(consumer.geo.dict_len);
    if (hmb_area_read(&consumer, consumer.geo.dict_offset, bytes.data(),
                      static_cast<uint32_t>(bytes.size()))) {
      dict_error = "dictionary lies outside the area";
      dict.reset();
      return;
    }
    dict = Dictionary::Parse(bytes, &dict_error);
  }

  static int Deliver(void* ctx, const hmb_record* r) {
    auto* self = static_cast<Reader*>(ctx);
    self->life[r->core].delivered++;
    const EventDesc* ev = self->dict ? self->dict->Find(r->event_id) : nullptr;
    self->per_event[ev ? ev->name : "unknown#" + std::to_string(r->event_id)]++;
    if (self->shown.size() < self->show) {
      std::span<const uint8_t> payload(r->payload, r->len);
      std::string text = self->dict ? FormatRecord(*self->dict, r->event_id, payload)
                                    : "event " + std::to_string(r->event_id) +
                                          " len=" + std::to_string(r->len);
      const double secs = self->consumer.geo.clock_hz
                              ? static_cast<double>(r->ts) / self->consumer.geo.clock_hz
                              : 0;
      char head[96];
      std::snprintf(head, sizeof(head), "core %u seq %-8llu %14.9f  %-18s ", r->core,
                    static_cast<unsigned long long>(r->seq), secs,
                    ev ? ev->name.c_str() : "?");
      self->shown.push_back(head + text);
    }
    return 0;
  }
  static void Lost(void* ctx, uint16_t core, uint64_t n, hmb_lost_reason reason, uint64_t at) {
    auto* self = static_cast<Reader*>(ctx);
    self->life[core].lost[reason] += n;
    if (!self->quiet)
      std::fprintf(stderr, "hmb-read: core %u: %llu records lost (%s) before seq %llu\n", core,
                   static_cast<unsigned long long>(n), hmb_lost_reason_name(reason),
                   static_cast<unsigned long long>(at));
  }
  static void Event(void* ctx, hmb_consumer_event ev, uint32_t gen) {
    auto* self = static_cast<Reader*>(ctx);
    static const char* const names[] = {"attached", "firmware reset", "producer initialising",
                                        "area broken"};
    if (!self->quiet)
      std::fprintf(stderr, "hmb-read: %s (producer generation %u)\n", names[ev], gen);
    if (ev == HMB_EVENT_ATTACHED || ev == HMB_EVENT_RESET) {
      self->life = {};
      self->need_dict = true;
    }
  }
};

int Run(const Options& opt) {
  std::string err;
  // The producer may not have created the file yet: wait as for attaching.
  auto mapping = AreaMapping::Open(opt.area, &err);
  for (double waited = 0; !mapping && !g_stop && waited < opt.wait_attach; waited += 0.05) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    mapping = AreaMapping::Open(opt.area, &err);
  }
  if (!mapping) {
    std::fprintf(stderr, "hmb-read: %s\n", err.c_str());
    return 2;
  }
  Reader rd;
  rd.show = opt.show;
  rd.quiet = opt.quiet;
  hmb_area area = mapping->area();
  hmb_consumer_ops ops{Reader::Deliver, Reader::Lost, Reader::Event};
  hmb_consumer_init(&rd.consumer, &area, &ops, &rd, rd.scratch.get());

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto last_data = start;
  auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  bool attached_once = false;
  while (!g_stop) {
    const hmb_consumer_state st = hmb_consumer_poll(&rd.consumer);
    uint64_t got = 0;
    if (st == HMB_CONSUMER_ATTACHED) {
      attached_once = true;
      if (rd.need_dict) rd.LoadDictionary();
      for (uint16_t k = 0; k < rd.consumer.geo.nr_cores; k++)
        got += hmb_consumer_drain_core(&rd.consumer, k, 4096);
    }
    if (got) last_data = Clock::now();
    if (opt.duration > 0 && seconds_since(start) >= opt.duration) break;
    if (!attached_once && seconds_since(start) >= opt.wait_attach) {
      std::fprintf(stderr,
                   "hmb-read: no valid trace area in %s after %.0f s (state: %s); is the "
                   "producer running?\n",
                   opt.area.c_str(), opt.wait_attach,
                   st == HMB_CONSUMER_BROKEN ? "broken meta page" : "not initialised");
      return 2;
    }
    if (opt.duration == 0 && attached_once && seconds_since(last_data) >= opt.idle_exit) break;
    if (!got) std::this_thread::sleep_for(std::chrono::microseconds(opt.poll_us));
  }

  const hmb_consumer& c = rd.consumer;
  if (!rd.dict)
    std::printf("dictionary: not decodable: %s\n", rd.dict_error.c_str());
  else
    std::printf("dictionary: %zu events, build id ", rd.dict->events().size());
  if (rd.dict)
    for (uint8_t b : c.geo.build_id) std::printf("%02x", b);
  std::printf("\narea: %u cores x %u pages of %u bytes, producer generation %u, %llu resets seen\n",
              c.geo.nr_cores, c.geo.pages_per_core, c.geo.page_size, c.geo.producer_gen,
              static_cast<unsigned long long>(c.resets));
  std::printf("\nfirst records:\n");
  for (const std::string& s : rd.shown) std::printf("  %s\n", s.c_str());
  std::printf("\nrecords by event:\n");
  for (const auto& [name, n] : rd.per_event)
    std::printf("  %-22s %10llu\n", name.c_str(), static_cast<unsigned long long>(n));
  std::printf("\n%-5s %12s", "core", "delivered");
  for (int r = 0; r < HMB_LOST_NR; r++)
    std::printf(" %11s", hmb_lost_reason_name(static_cast<hmb_lost_reason>(r)));
  std::printf("\n");
  for (uint16_t k = 0; k < c.geo.nr_cores; k++) {
    const auto& l = rd.life[k];
    std::printf("%-5u %12llu", k, static_cast<unsigned long long>(l.delivered));
    for (uint64_t n : l.lost) std::printf(" %11llu", static_cast<unsigned long long>(n));
    std::printf("\n");
  }
  bool any_error = false;
  for (int e = 0; e < HMB_ERR_NR; e++) {
    if (!c.errors[e]) continue;
    any_error = true;
    std::printf("area error %s: %llu\n", hmb_consumer_error_name(static_cast<hmb_consumer_error>(e)),
                static_cast<unsigned long long>(c.errors[e]));
  }
  if (!any_error) std::printf("area errors: none\n");

  if (opt.truth.empty()) return 0;
  std::ifstream in(opt.truth);
  nlohmann::json truth = nlohmann::json::parse(in, nullptr, false);
  if (truth.is_discarded() || !truth.contains("lives") || truth["lives"].empty()) {
    std::fprintf(stderr, "hmb-read: %s: not an hmb-fwsim truth file\n", opt.truth.c_str());
    return 2;
  }
  // The reader accounts for the life it ended in; so does the last entry.
  const auto& life = truth["lives"].back();
  if (life["producer_gen"].get<uint32_t>() != c.geo.producer_gen) {
    std::printf("verify: FAIL: truth ends in producer generation %u, the area is in %u\n",
                life["producer_gen"].get<uint32_t>(), c.geo.producer_gen);
    return 1;
  }
  int bad = 0;
  for (const auto& core : life["cores"]) {
    const uint16_t k = core["core"].get<uint16_t>();
    const uint64_t produced = core["produced"].get<uint64_t>();
    const uint64_t seen = k < c.geo.nr_cores ? rd.life[k].delivered + rd.life[k].lost_total() : 0;
    if (seen != produced) {
      bad++;
      std::printf("verify: core %u: delivered + lost = %llu, firmware produced %llu\n", k,
                  static_cast<unsigned long long>(seen),
                  static_cast<unsigned long long>(produced));
    }
  }
  std::printf("verify: %s: delivered + lost == produced on %zu of %zu cores\n",
              bad ? "FAIL" : "ok", life["cores"].size() - bad, life["cores"].size());
  return bad ? 1 : 0;
}

}  // namespace
}  // namespace hmbtrace

int main(int argc, char** argv) {
  hmbtrace::Options opt;
  CLI::App app{
      "hmb-read - drain an HMB trace area file (as written by hmb-fwsim) with the consumer "
      "core, decode records with the area's dictionary, and print per-core delivered/lost."};
  app.add_option("-a,--area", opt.area, "Trace area file to read (mapped read-only)")->required();
  app.add_option("-d,--duration", opt.duration,
                 "Read for this many seconds (default 0: until the producer is idle)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--idle-exit", opt.idle_exit,
                 "With no --duration: stop after this many seconds without new records")
      ->capture_default_str();
  app.add_option("--wait-attach", opt.wait_attach,
                 "Give up if no valid area appears within this many seconds")
      ->capture_default_str();
  app.add_option("--poll-us", opt.poll_us, "Sleep between polls when idle, in microseconds")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("-n,--show", opt.show, "Decode and print the first N records")
      ->capture_default_str();
  app.add_option("--truth", opt.truth,
                 "hmb-fwsim ground-truth JSON: verify delivered + lost == produced per core");
  app.add_flag("-q,--quiet", opt.quiet, "Do not report attach, reset and loss as they happen");
  CLI11_PARSE(app, argc, argv);
  signal(SIGINT, [](int) { hmbtrace::g_stop = 1; });
  signal(SIGTERM, [](int) { hmbtrace::g_stop = 1; });
  return hmbtrace::Run(opt);
}
