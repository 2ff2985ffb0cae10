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
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
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
  // The time bound of the consumer core (hmb_consumer.max_rate), the
  // kernel module's default; 0: no clock, a reset tail is bounded by a ring.
  uint64_t max_rate = 100000000;
  std::string truth;
  std::string records;  // every record, decoded, one line each ("" = none)
  bool quiet = false;
};

// Host page size of the mapping handed to the consumer core.
constexpr uint32_t kHostPageShift = 12;
constexpr uint64_t kHostPage = uint64_t{1} << kHostPageShift;

// Read-only shared mapping of the area file, as whole host pages. A file
// whose size is not a multiple of the host page is mapped with its last,
// partial page: the bytes past the end of the file read as zero, as the
// kernel maps them, so an area_len equal to the file size is accepted.
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
    if (fstat(fd, &st) || st.st_size < static_cast<off_t>(sizeof(hmb_trace_meta))) {
      *err = path + ": not a trace area (" + std::to_string(st.st_size) +
             " bytes, less than a meta page)";
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
  hmb_area area() const { return {pages_.data(), pages_.size(), kHostPageShift}; }
  uint64_t file_size() const { return len_; }

 private:
  AreaMapping(const uint8_t* base, uint64_t len) : base_(base), len_(len) {
    for (uint64_t off = 0; off < len; off += kHostPage) pages_.push_back(base + off);
  }
  const uint8_t* base_;
  uint64_t len_;
  std::vector<const uint8_t*> pages_;
};

// Little-endian field of a private copy of the meta page.
template <typename T>
T MetaField(const uint8_t* meta, size_t offset) {
  T v = 0;
  for (size_t i = sizeof(T); i-- > 0;) v = static_cast<T>(v << 8 | meta[offset + i]);
  return v;
}
#define HMB_META(T, meta, field) MetaField<T>(meta, offsetof(hmb_trace_meta, field))

// Delivered and lost records of one core, by loss reason.
struct CoreCounts {
  uint64_t delivered = 0;
  std::array<uint64_t, HMB_LOST_NR> lost{};
  uint64_t lost_total() const {
    uint64_t n = 0;
    for (uint64_t l : lost) n += l;
    return n;
  }
  void Add(const CoreCounts& o) {
    delivered += o.delivered;
    for (int r = 0; r < HMB_LOST_NR; r++) lost[r] += o.lost[r];
  }
};
using CoreTable = std::array<CoreCounts, HMB_TRACE_MAX_CORES>;

// What became of a core's unread tail when its generation ended in a reset.
enum class TailCount {
  kCounted,      // charged (reset, and overwritten beyond a ring), or nothing was unread
  kUncountable,  // the firmware did not say how far the core got (prev_gen 0)
  kRefused,      // it said more than the bound allows: implausible, not charged
};

// How a producer generation ended, as far as the reader could tell.
enum class GenerationEnd {
  kCurrent,     // the area was still in it when reading stopped
  kReset,       // the next generation followed: the unread tail is charged to "reset"
  kMissedNext,  // several re-initialisations between two polls: the unread tail is not counted
  kBroken,      // the meta page became invalid: the unread tail is not counted
};

// What the reader saw of one producer generation, from attach or reset to
// the next reset. Losses at a reset are charged to the generation that
// ended (the consumer reports them before the reset itself).
struct Generation {
  uint32_t producer_gen = 0;
  uint16_t nr_cores = 0;
  GenerationEnd end = GenerationEnd::kCurrent;
  CoreTable cores{};
  std::array<TailCount, HMB_TRACE_MAX_CORES> tails{};  // when end is kReset

  // Whether delivered + lost must equal what core |k| produced: the tail
  // of a reset is exact unless the firmware could not say how far the core
  // got. A refused tail was countable: it must add up, and does not.
  bool exact(uint16_t k) const {
    return end == GenerationEnd::kCurrent ||
           (end == GenerationEnd::kReset && tails[k] != TailCount::kUncountable);
  }
  bool exact() const {
    for (uint16_t k = 0; k < nr_cores; k++)
      if (!exact(k)) return false;
    return end == GenerationEnd::kCurrent || end == GenerationEnd::kReset;
  }
  std::string Title() const {
    const std::string gen = "producer generation " + std::to_string(producer_gen);
    switch (end) {
      case GenerationEnd::kCurrent:
        return gen + " (current)";
      case GenerationEnd::kReset:
        return gen + " (ended by a firmware reset)";
      case GenerationEnd::kMissedNext:
        return gen + " (ended by firmware resets the reader did not see one by one: records " +
               "it had not read are not counted)";
      case GenerationEnd::kBroken:
        return gen + " (ended with the area broken: records the reader had not read are not " +
               "counted)";
    }
    return gen;
  }
};

// The generation after |gen|: the producer never uses 0.
uint32_t NextGeneration(uint32_t gen) { return gen + 1 == 0 ? 1 : gen + 1; }

// Accounting per producer generation and decoding, fed by the consumer's
// callbacks.
struct Reader {
  hmb_consumer consumer{};
  std::unique_ptr<uint8_t[]> scratch{new uint8_t[HMB_CONSUMER_SCRATCH_LEN]};
  uint64_t file_size = 0;
  std::optional<Dictionary> dict;
  std::string dict_error;
  std::vector<Generation> generations;  // in the order seen; counts go to the last
  std::string broken_reason;            // why the meta page was last refused
  std::map<std::string, uint64_t> per_event;
  std::vector<std::string> shown;
  uint32_t show = 0;
  FILE* records = nullptr;  // --records: every record, decoded
  bool need_dict = true;
  bool quiet = false;

  CoreCounts* Counts(uint16_t core) {
    return generations.empty() ? nullptr : &generations.back().cores[core];
  }

  // Copies the dictionary of the generation the consumer is attached to,
  // with the consumer core's snapshot read (READY and the generation are
  // checked before and after the copy); a copy that overlapped a
  // re-initialisation is retried at the next poll.
  void LoadDictionary() {
    uint32_t len = 0;
    std::vector<uint8_t> bytes;
    hmb_dict_snapshot snap = hmb_consumer_dict_len(&consumer, &len);
    if (snap == HMB_DICT_OK) {
      bytes.resize(len);
      snap = hmb_consumer_dict_copy(&consumer, bytes.data(), len);
    }
    switch (snap) {
      case HMB_DICT_OK:
        need_dict = false;
        dict = Dictionary::Parse(bytes, &dict_error);
        return;
      case HMB_DICT_RETRY:
        return;  // need_dict stays set
      case HMB_DICT_NONE:
        dict_error = "the producer publishes no dictionary (dict_len 0)";
        break;
      case HMB_DICT_INVALID:
        dict_error = "the dictionary header is invalid (magic, or total_len beyond dict_len)";
        break;
    }
    need_dict = false;
    dict.reset();
  }

  // Why the consumer refused the meta page, in words: it counts only the
  // kind (bad_magic, bad_geometry), the reader adds the values.
  std::string BrokenReason() const {
    if (consumer.broken_reason == HMB_BROKEN_BAD_STATE)
      return "state is neither INIT nor READY";
    if (consumer.broken_reason == HMB_BROKEN_GEN_BACKWARDS)
      return "producer generation " + std::to_string(consumer.broken_gen) +
             " is older than the one being read (" +
             std::to_string(consumer.geo.producer_gen) + "): not read again";
    uint8_t m[sizeof(hmb_trace_meta)];
    if (hmb_area_read(&consumer, 0, m, sizeof(m))) return "the mapping cannot hold a meta page";
    const auto magic = HMB_META(uint32_t, m, magic);
    if (magic != HMB_TRACE_MAGIC) {
      char buf[96];
      std::snprintf(buf, sizeof(buf), "magic is 0x%08x, not 0x%08x (\"HMBT\")", magic,
                    HMB_TRACE_MAGIC);
      return buf;
    }
    const auto major = HMB_META(uint16_t, m, abi_major);
    if (major != HMB_TRACE_ABI_MAJOR)
      return "ABI major version " + std::to_string(major) + ", this reader reads " +
             std::to_string(HMB_TRACE_ABI_MAJOR);
    const auto area_len = HMB_META(uint64_t, m, area_len);
    if (area_len > consumer.mapped_len)
      return "area_len in the meta page is " + std::to_string(area_len) + " bytes, more than the " +
             std::to_string(consumer.mapped_len) + " bytes mapped (the file has " +
             std::to_string(file_size) + " bytes, mapped as whole " + std::to_string(kHostPage) +
             "-byte host pages)";
    return "the geometry fails validation (ABI spec, \"Validation of the meta page\"): meta_len " +
           std::to_string(HMB_META(uint32_t, m, meta_len)) + ", page_size " +
           std::to_string(HMB_META(uint32_t, m, page_size)) + ", nr_cores " +
           std::to_string(HMB_META(uint16_t, m, nr_cores)) + ", core_len " +
           std::to_string(HMB_META(uint16_t, m, core_len)) + ", core_offset " +
           std::to_string(HMB_META(uint32_t, m, core_offset)) + ", pages_per_core " +
           std::to_string(HMB_META(uint32_t, m, pages_per_core)) + ", area_len " +
           std::to_string(area_len) + ", dict_offset " +
           std::to_string(HMB_META(uint64_t, m, dict_offset)) + ", dict_len " +
           std::to_string(HMB_META(uint32_t, m, dict_len)) + ", ring_offset " +
           std::to_string(HMB_META(uint64_t, m, ring_offset));
  }

  void StartGeneration(uint32_t gen) {
    Generation g;
    g.producer_gen = gen;
    g.nr_cores = consumer.geo.nr_cores;
    generations.push_back(g);
    need_dict = true;
  }

  static int Deliver(void* ctx, const hmb_record* r) {
    auto* self = static_cast<Reader*>(ctx);
    if (CoreCounts* counts = self->Counts(r->core)) counts->delivered++;
    const EventDesc* ev = self->dict ? self->dict->Find(r->event_id) : nullptr;
    self->per_event[ev ? ev->name : "unknown#" + std::to_string(r->event_id)]++;
    if (self->records) {
      // The decoded part of hmbtrace-cmd report's and plugin_hmb.so's
      // line for the same record, so that the three can be compared.
      const std::string text = RecordText(self->dict ? &*self->dict : nullptr, r->event_id,
                                          std::span<const uint8_t>(r->payload, r->len));
      std::fprintf(self->records, "dev=0 core=%u seq=%llu fw_ts=%llu %s\n", r->core,
                   static_cast<unsigned long long>(r->seq),
                   static_cast<unsigned long long>(r->ts), text.c_str());
    }
    if (self->shown.size() < self->show) {
      std::span<const uint8_t> payload(r->payload, r->len);
      std::string text =
          self->dict ? FormatRecord(*self->dict, r->event_id, payload)
                     : "event " + std::to_string(r->event_id) + " len=" + std::to_string(r->len);
      const double secs = self->consumer.geo.clock_hz
                              ? static_cast<double>(r->ts) / self->consumer.geo.clock_hz
                              : 0;
      char head[96];
      std::snprintf(head, sizeof(head), "core %u seq %-8llu %14.9f  %-18s ", r->core,
                    static_cast<unsigned long long>(r->seq), secs, ev ? ev->name.c_str() : "?");
      self->shown.push_back(head + text);
    }
    return 0;
  }
  static void Lost(void* ctx, uint16_t core, uint64_t n, hmb_lost_reason reason, uint64_t at) {
    auto* self = static_cast<Reader*>(ctx);
    if (CoreCounts* counts = self->Counts(core)) counts->lost[reason] += n;
    if (!self->quiet)
      std::fprintf(stderr, "hmb-read: core %u: %llu records lost (%s) before seq %llu\n", core,
                   static_cast<unsigned long long>(n), hmb_lost_reason_name(reason),
                   static_cast<unsigned long long>(at));
  }
  static void Event(void* ctx, hmb_trace_ev_state ev, uint32_t gen) {
    auto* self = static_cast<Reader*>(ctx);
    static const char* const names[] = {"attached", "firmware reset", "producer initialising",
                                        "area broken"};
    Generation* last = self->generations.empty() ? nullptr : &self->generations.back();
    const bool open = last && last->end == GenerationEnd::kCurrent;
    if (ev == HMB_TRACE_EV_BROKEN) {
      self->broken_reason = self->BrokenReason();
      if (open) last->end = GenerationEnd::kBroken;
    } else if (ev == HMB_TRACE_EV_RESET && open) {
      last->end = gen == NextGeneration(last->producer_gen) ? GenerationEnd::kReset
                                                            : GenerationEnd::kMissedNext;
      const hmb_consumer& c = self->consumer;
      for (uint16_t k = 0; k < last->nr_cores; k++)
        last->tails[k] = c.reset_refused >> k & 1        ? TailCount::kRefused
                         : c.reset_uncountable >> k & 1 ? TailCount::kUncountable
                                                         : TailCount::kCounted;
    }
    // Attached again in the generation being read (after INIT or broken):
    // the consumer resumes where it was, so does the accounting.
    if (ev == HMB_TRACE_EV_ATTACHED && last && last->producer_gen == gen)
      last->end = GenerationEnd::kCurrent;
    else if (ev == HMB_TRACE_EV_ATTACHED || ev == HMB_TRACE_EV_RESET)
      self->StartGeneration(gen);
    if (self->quiet) return;
    if (ev == HMB_TRACE_EV_BROKEN)
      std::fprintf(stderr, "hmb-read: area broken (producer generation %u): %s\n", gen,
                   self->broken_reason.c_str());
    else if (ev == HMB_TRACE_EV_IMPLAUSIBLE)
      std::fprintf(stderr,
                   "hmb-read: implausible value in the area (producer generation %u): "
                   "counted, not charged\n",
                   gen);
    else if (static_cast<size_t>(ev) < std::size(names))
      std::fprintf(stderr, "hmb-read: %s (producer generation %u)\n", names[ev], gen);
  }
};

void PrintTable(const std::string& title, uint16_t nr_cores, const CoreTable& cores) {
  std::printf("\n%s:\n%-5s %12s", title.c_str(), "core", "delivered");
  for (int r = 0; r < HMB_LOST_NR; r++)
    std::printf(" %11s", hmb_lost_reason_name(static_cast<hmb_lost_reason>(r)));
  std::printf("\n");
  CoreCounts all;
  auto row = [](const std::string& label, const CoreCounts& n) {
    std::printf("%-5s %12llu", label.c_str(), static_cast<unsigned long long>(n.delivered));
    for (uint64_t l : n.lost) std::printf(" %11llu", static_cast<unsigned long long>(l));
    std::printf("\n");
  };
  for (uint16_t k = 0; k < nr_cores; k++) {
    row(std::to_string(k), cores[k]);
    all.Add(cores[k]);
  }
  row("all", all);
}

// Per-core counts of every generation, then their sum when there are several.
void PrintAccounting(const Reader& rd) {
  CoreTable total{};
  uint16_t nr_cores = 0;
  for (const Generation& g : rd.generations) {
    PrintTable(g.Title(), g.nr_cores, g.cores);
    nr_cores = std::max(nr_cores, g.nr_cores);
    for (uint16_t k = 0; k < g.nr_cores; k++) total[k].Add(g.cores[k]);
  }
  if (rd.generations.size() > 1)
    PrintTable("all " + std::to_string(rd.generations.size()) + " generations", nr_cores, total);
}

void PrintSummary(const Reader& rd) {
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
  if (c.state == HMB_CONSUMER_BROKEN) std::printf("area: broken: %s\n", rd.broken_reason.c_str());
  if (c.max_rate)
    std::printf("bound: time: a loss claimed beyond a ring plus %llu records/s per core since the "
                "core was last confirmed (CLOCK_MONOTONIC) is implausible\n",
                static_cast<unsigned long long>(c.max_rate));
  else
    std::printf("bound: ring only (--max-rate 0, no clock): a reset's unread tail beyond one ring "
                "is implausible, even when honest\n");
  std::printf("\nfirst records:\n");
  for (const std::string& s : rd.shown) std::printf("  %s\n", s.c_str());
  std::printf("\nrecords by event:\n");
  for (const auto& [name, n] : rd.per_event)
    std::printf("  %-22s %10llu\n", name.c_str(), static_cast<unsigned long long>(n));
  PrintAccounting(rd);
  std::printf("\n");
  bool any_error = false;
  for (int e = 0; e < HMB_ERR_NR; e++) {
    if (!c.errors[e]) continue;
    any_error = true;
    std::printf("area error %s: %llu\n",
                hmb_consumer_error_name(static_cast<hmb_consumer_error>(e)),
                static_cast<unsigned long long>(c.errors[e]));
  }
  if (!any_error) std::printf("area errors: none\n");
}

// The last generation the reader saw with this number, or nullptr.
const Generation* FindGeneration(const Reader& rd, uint32_t gen) {
  for (auto it = rd.generations.rbegin(); it != rd.generations.rend(); ++it)
    if (it->producer_gen == gen) return &*it;
  return nullptr;
}

// Checks one generation of the truth. Returns false if it is wrong.
bool VerifyGeneration(const Generation& g, const nlohmann::json& life) {
  const uint32_t gen = g.producer_gen;
  int cores = 0, good = 0, inexact = 0;
  uint64_t uncounted = 0;
  for (const auto& core : life["cores"]) {
    const uint16_t k = core["core"].get<uint16_t>();
    const uint64_t produced = core["produced"].get<uint64_t>();
    const bool known = k < g.nr_cores;
    const uint64_t seen = known ? g.cores[k].delivered + g.cores[k].lost_total() : 0;
    const bool exact = known && g.exact(k);
    cores++;
    if (exact ? seen == produced : seen <= produced) {
      good++;
      if (!exact) {
        inexact++;
        uncounted += produced - seen;
        if (produced != seen)
          std::printf("verify: generation %u: core %u: delivered + lost = %llu <= produced %llu: "
                      "%llu uncountable (%s)\n",
                      gen, k, static_cast<unsigned long long>(seen),
                      static_cast<unsigned long long>(produced),
                      static_cast<unsigned long long>(produced - seen),
                      g.end == GenerationEnd::kReset
                          ? "the firmware's reset did not say how far the core got, prev_gen 0"
                          : "the generation ended unseen by the reader");
      }
      continue;
    }
    const bool refused = known && g.end == GenerationEnd::kReset &&
                         g.tails[k] == TailCount::kRefused;
    std::printf("verify: generation %u: core %u: delivered + lost = %llu, firmware produced %llu%s\n",
                gen, k, static_cast<unsigned long long>(seen),
                static_cast<unsigned long long>(produced),
                refused ? " (the reset's tail was refused as implausible by the bound)" : "");
  }
  if (!inexact)
    std::printf("verify: generation %u: %s: delivered + lost == produced on %d of %d cores\n", gen,
                good == cores ? "ok" : "FAIL", good, cores);
  else
    std::printf(
        "verify: generation %u: %s: delivered + lost == produced on %d of %d cores, <= on the "
        "%d others; %llu records it had not read when it ended cannot be counted\n",
        gen, good == cores ? "ok" : "FAIL", good - inexact, cores, inexact,
        static_cast<unsigned long long>(uncounted));
  return good == cores;
}

// The members of the truth file that hmb-read uses, with their types.
bool TruthWellFormed(const nlohmann::json& truth) {
  if (truth.is_discarded() || !truth.is_object() || !truth.contains("lives") ||
      !truth["lives"].is_array() || truth["lives"].empty())
    return false;
  for (const auto& life : truth["lives"]) {
    if (!life.is_object() || !life.contains("producer_gen") ||
        !life["producer_gen"].is_number_unsigned() || !life.contains("cores") ||
        !life["cores"].is_array())
      return false;
    for (const auto& core : life["cores"])
      if (!core.is_object() || !core.contains("core") || !core["core"].is_number_unsigned() ||
          !core.contains("produced") || !core["produced"].is_number_unsigned())
        return false;
  }
  return true;
}

// hmb-fwsim writes its truth when it ends, whole (a rename), and that can
// be after the reader went idle (a loaded machine, a producer that stopped
// writing records before it exits): a truth file that is not there yet is
// waited for, up to kTruthWaitS.
constexpr double kTruthWaitS = 30;

// Returns 0 once the file is there, or the errno of the last look.
int WaitForTruth(const std::string& path, bool quiet) {
  const auto start = std::chrono::steady_clock::now();
  bool said = false;
  struct stat st;
  while (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
    if (err != ENOENT || g_stop || waited.count() >= kTruthWaitS)
      return err;
    if (!said && !quiet) {
      std::fprintf(stderr, "hmb-read: waiting for %s (hmb-fwsim writes it when it ends)\n",
                   path.c_str());
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

// Compares the accounting of every generation with hmb-fwsim's truth.
// Return: the exit status.
int VerifyTruth(const Reader& rd, const std::string& path, bool quiet) {
  if (const int err = WaitForTruth(path, quiet)) {
    std::fprintf(stderr,
                 "hmb-read: %s: %s (waited up to %.0f s); hmb-fwsim --truth writes it when it "
                 "ends: is it running, with the same path?\n",
                 path.c_str(), std::strerror(err), kTruthWaitS);
    return 2;
  }
  std::ifstream in(path);
  nlohmann::json truth = nlohmann::json::parse(in, nullptr, false);
  if (!TruthWellFormed(truth)) {
    std::fprintf(stderr, "hmb-read: %s: not an hmb-fwsim truth file\n", path.c_str());
    return 2;
  }
  const auto& lives = truth["lives"];
  const uint32_t truth_last = lives.back()["producer_gen"].get<uint32_t>();
  if (rd.generations.empty() || truth_last != rd.generations.back().producer_gen) {
    std::printf(
        "verify: FAIL: truth ends in producer generation %u, the reader in %s\n", truth_last,
        rd.generations.empty() ? "none"
                               : std::to_string(rd.generations.back().producer_gen).c_str());
    return 1;
  }
  const uint32_t first_seen = rd.generations.front().producer_gen;
  size_t checked = 0, bad = 0, exact = 0;
  for (const auto& life : lives) {
    const uint32_t gen = life["producer_gen"].get<uint32_t>();
    const Generation* g = FindGeneration(rd, gen);
    if (!g) {
      std::printf("verify: generation %u: not seen by the reader (%s)\n", gen,
                  gen < first_seen ? "it attached later" : "re-initialised between two polls");
      continue;
    }
    checked++;
    if (!VerifyGeneration(*g, life))
      bad++;
    else if (g->exact())
      exact++;
  }
  std::printf(
      "verify: %s: delivered + lost == produced on every core in %zu of the %zu "
      "generations the reader saw (the truth has %zu)\n",
      bad ? "FAIL" : "ok", exact, checked, lives.size());
  return bad ? 1 : 0;
}

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
  std::unique_ptr<FILE, int (*)(FILE*)> records(nullptr, fclose);
  if (!opt.records.empty()) {
    records.reset(std::fopen(opt.records.c_str(), "w"));
    if (!records) {
      std::fprintf(stderr, "hmb-read: --records %s: %s\n", opt.records.c_str(),
                   std::strerror(errno));
      return 2;
    }
    rd.records = records.get();
  }
  rd.file_size = mapping->file_size();
  hmb_area area = mapping->area();
  hmb_consumer_ops ops{Reader::Deliver, Reader::Lost, Reader::Event};
  hmb_consumer_init(&rd.consumer, &area, &ops, &rd, rd.scratch.get());
  // The kernel module's time bound: CLOCK_MONOTONIC and a rate.
  if (opt.max_rate) {
    rd.consumer.now_ns = [](void*) -> uint64_t {
      timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
    };
    rd.consumer.max_rate = opt.max_rate;
  }

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
      std::fprintf(stderr, "hmb-read: no valid trace area in %s after %.0f s (%s)\n",
                   opt.area.c_str(), opt.wait_attach,
                   st == HMB_CONSUMER_BROKEN ? ("area broken: " + rd.broken_reason).c_str()
                                             : "state: not initialised; is the producer running?");
      return 2;
    }
    if (opt.duration == 0 && attached_once && seconds_since(last_data) >= opt.idle_exit) break;
    if (!got) std::this_thread::sleep_for(std::chrono::microseconds(opt.poll_us));
  }

  PrintSummary(rd);
  return opt.truth.empty() ? 0 : VerifyTruth(rd, opt.truth, opt.quiet);
}

}  // namespace
}  // namespace hmbtrace

int main(int argc, char** argv) {
  hmbtrace::Options opt;
  CLI::App app{
      "hmb-read - drain an HMB trace area file (as written by hmb-fwsim) with the consumer "
      "core, decode records with the area's dictionary, and print per-core delivered/lost by "
      "reason, for each producer generation and in total."};
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
  app.add_option("--max-rate", opt.max_rate,
                 "Most records per second a firmware core can write, as hmb_trace.ko's max_rate: "
                 "a loss the area claims beyond a ring plus this rate since the core was last read "
                 "is implausible, not charged; 0: no clock, a reset's tail is bounded by one ring")
      ->capture_default_str();
  app.add_option("--truth", opt.truth,
                 "hmb-fwsim ground-truth JSON: verify delivered + lost == produced per core, "
                 "in every producer generation the reader saw");
  app.add_option("--records", opt.records,
                 "Write every record to this file, one line each: dev=0 core=C seq=S fw_ts=T and "
                 "the record decoded as hmbtrace-cmd report prints it");
  app.add_flag("-q,--quiet", opt.quiet, "Do not report attach, reset and loss as they happen");
  CLI11_PARSE(app, argc, argv);
  signal(SIGINT, [](int) { hmbtrace::g_stop = 1; });
  signal(SIGTERM, [](int) { hmbtrace::g_stop = 1; });
  return hmbtrace::Run(opt);
}
