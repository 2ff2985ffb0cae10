// SPDX-License-Identifier: GPL-2.0-only
// hmb-mutate: a hostile device. Maps an HMB trace area that hmb-fwsim is
// writing and, step by step, rewrites chosen fields of it (meta page, core
// descriptors, page headers, records, dictionary) or all of it, racing the
// producer on purpose, like buggy firmware would. Every mutation goes to a
// JSON-lines log with the CLOCK_MONOTONIC time (the simulator's firmware
// clock is CLOCK_MONOTONIC minus its epoch, see the truth) and the per-core
// producer positions before it, so a verifier knows what was damaged when.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "hmb_trace_abi.h"

namespace hmbtrace {
namespace {

constexpr uint64_t kNsPerSec = 1000000000ull;

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSec + static_cast<uint64_t>(ts.tv_nsec);
}

void SleepNs(uint64_t ns) {
  timespec ts = {static_cast<time_t>(ns / kNsPerSec), static_cast<long>(ns % kNsPerSec)};
  while (nanosleep(&ts, &ts) && errno == EINTR) {
  }
}

// The area, mapped shared read-write. Fields are read and written with
// single-copy atomic relaxed accesses: the producer runs concurrently and
// the races are the point, but each word is whole.
class Area {
 public:
  ~Area() {
    if (data_)
      munmap(data_, size_);
    if (fd_ >= 0)
      close(fd_);
  }
  // Waits up to |wait_s| seconds for the simulator to create the file and
  // give it its size.
  bool Open(const std::string& path, double wait_s, std::string* err) {
    const uint64_t end = NowNs() + static_cast<uint64_t>(wait_s * kNsPerSec);
    struct stat st;
    for (;;) {
      if (stat(path.c_str(), &st) == 0 && st.st_size >= static_cast<off_t>(8192))
        break;
      if (NowNs() > end) {
        *err = path + ": no area of at least 8 KiB (" + std::strerror(errno) + ")";
        return false;
      }
      SleepNs(20000000);
    }
    fd_ = open(path.c_str(), O_RDWR);
    if (fd_ < 0 || fstat(fd_, &st)) {
      *err = "open " + path + ": " + std::strerror(errno);
      return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p == MAP_FAILED) {
      *err = "mmap " + path + ": " + std::strerror(errno);
      return false;
    }
    data_ = static_cast<uint8_t*>(p);
    return true;
  }
  size_t size() const { return size_; }
  uint8_t* data() { return data_; }

  template <typename T>
  T Load(uint64_t off) const {
    if (off + sizeof(T) > size_)
      return 0;
    return __atomic_load_n(reinterpret_cast<T*>(data_ + off), __ATOMIC_RELAXED);
  }
  template <typename T>
  void Store(uint64_t off, T v) {
    if (off + sizeof(T) <= size_)
      __atomic_store_n(reinterpret_cast<T*>(data_ + off), v, __ATOMIC_RELEASE);
  }

 private:
  int fd_ = -1;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

#define META(f) offsetof(struct hmb_trace_meta, f)
#define CORE(f) offsetof(struct hmb_trace_core, f)
#define PAGE(f) offsetof(struct hmb_trace_page_header, f)

// The geometry as the meta page states it now (read, not trusted: the
// mutator only needs to find pages of a sane area).
struct Geometry {
  uint32_t page_size = 0;
  uint32_t pages_per_core = 0;
  uint16_t nr_cores = 0;
  uint64_t ring_offset = 0;
  uint64_t dict_offset = 0;
  uint32_t core_offset = 0;
  bool ok = false;
};

class Mutator {
 public:
  Mutator(Area* area, FILE* log, uint64_t seed) : a_(area), log_(log), rng_(seed) {}

  bool Run(const std::vector<std::string>& steps);

 private:
  Geometry Geo() const;
  uint64_t CoreOff(const Geometry& g, uint16_t core) const {
    return g.core_offset + static_cast<uint64_t>(core) * sizeof(struct hmb_trace_core);
  }
  uint64_t PageOff(const Geometry& g, uint16_t core, uint64_t page_seq) const {
    return g.ring_offset +
           (static_cast<uint64_t>(core) * g.pages_per_core + page_seq % g.pages_per_core) *
               g.page_size;
  }
  nlohmann::json Snapshot() const;
  void Log(const std::string& op, nlohmann::json extra);
  bool Step(const std::string& step);
  // Waits until core's head page changes; returns the new head (or ~0 on timeout).
  uint64_t WaitNewPage(const Geometry& g, uint16_t core, uint64_t timeout_ns);
  bool Fail(const std::string& msg) {
    std::fprintf(stderr, "hmb-mutate: %s\n", msg.c_str());
    Log("error", {{"message", msg}});
    return false;
  }

  void RecordFlips(const std::string& cores, double seconds, double hz, bool headers);
  void ResetPrevNext(uint64_t delta, double timeout);
  void PageSeqAhead(uint16_t core, unsigned log2);
  void PageGenBit(uint16_t core, unsigned bit);
  void PageUnclose(uint16_t core);
  void Alternate(uint64_t field_off,
                 uint32_t a,
                 uint32_t b,
                 double seconds,
                 double period_ms,
                 const std::string& op);
  void DictFlip(uint32_t offset);
  void Fill(const std::string& what);

  Area* a_;
  FILE* log_;
  std::mt19937_64 rng_;
  std::vector<uint8_t> saved_;  // the area as "save" found it
};

Geometry Mutator::Geo() const {
  Geometry g;
  g.page_size = a_->Load<uint32_t>(META(page_size));
  g.pages_per_core = a_->Load<uint32_t>(META(pages_per_core));
  g.nr_cores = a_->Load<uint16_t>(META(nr_cores));
  g.ring_offset = a_->Load<uint64_t>(META(ring_offset));
  g.dict_offset = a_->Load<uint64_t>(META(dict_offset));
  g.core_offset = a_->Load<uint32_t>(META(core_offset));
  g.ok = a_->Load<uint32_t>(META(magic)) == HMB_TRACE_MAGIC && g.page_size >= 512 &&
         g.pages_per_core >= 2 && g.nr_cores >= 1 && g.nr_cores <= HMB_TRACE_MAX_CORES &&
         g.ring_offset + static_cast<uint64_t>(g.nr_cores) * g.pages_per_core * g.page_size <=
             a_->size();
  return g;
}

nlohmann::json Mutator::Snapshot() const {
  Geometry g = Geo();
  nlohmann::json s = {{"producer_gen", a_->Load<uint32_t>(META(producer_gen))},
                      {"state", a_->Load<uint32_t>(META(state))}};
  if (!g.ok)
    return s;
  nlohmann::json next = nlohmann::json::array(), head = nlohmann::json::array();
  for (uint16_t c = 0; c < g.nr_cores; c++) {
    next.push_back(a_->Load<uint64_t>(CoreOff(g, c) + CORE(next_seq)));
    head.push_back(a_->Load<uint64_t>(CoreOff(g, c) + CORE(head_page)));
  }
  s["next_seq"] = next;
  s["head_page"] = head;
  return s;
}

void Mutator::Log(const std::string& op, nlohmann::json extra) {
  extra["mono_ns"] = NowNs();
  extra["op"] = op;
  extra["area"] = Snapshot();
  std::fprintf(log_, "%s\n", extra.dump().c_str());
  std::fflush(log_);
}

uint64_t Mutator::WaitNewPage(const Geometry& g, uint16_t core, uint64_t timeout_ns) {
  const uint64_t off = CoreOff(g, core) + CORE(head_page);
  const uint64_t first = a_->Load<uint64_t>(off), end = NowNs() + timeout_ns;
  while (NowNs() < end) {
    uint64_t h = a_->Load<uint64_t>(off);
    if (h != first && h != ~0ull)
      return h;
    SleepNs(20000);
  }
  return ~0ull;
}

// Random bytes of records the producer has committed on the head page of
// each chosen core, as soon as they are committed (so, often before the
// consumer read them): payload bytes only, or (headers) any byte of a
// record. Damage to records only: every record stays accounted.
void Mutator::RecordFlips(const std::string& cores, double seconds, double hz, bool headers) {
  const uint64_t end = NowNs() + static_cast<uint64_t>(seconds * kNsPerSec);
  const uint64_t period = static_cast<uint64_t>(kNsPerSec / hz);
  Log(headers ? "record-flips-begin" : "payload-flips-begin",
      {{"cores", cores}, {"seconds", seconds}, {"hz", hz}});
  uint64_t n = 0;
  while (NowNs() < end) {
    Geometry g = Geo();
    if (!g.ok) {
      SleepNs(period);
      continue;
    }
    for (uint16_t c = 0; c < g.nr_cores; c++) {
      if (cores != "all" && std::to_string(c) != cores)
        continue;
      uint64_t head = a_->Load<uint64_t>(CoreOff(g, c) + CORE(head_page));
      if (head == ~0ull)
        continue;
      uint64_t po = PageOff(g, c, head);
      uint32_t commit = a_->Load<uint32_t>(po + PAGE(commit));
      if (commit == HMB_TRACE_COMMIT_BUSY || !HMB_TRACE_COMMIT_RECORDS(commit))
        continue;
      // The last committed record: walk the lengths (a walk over damaged
      // lengths just stops).
      uint32_t bytes = HMB_TRACE_COMMIT_BYTES(commit), at = 0, last = 0;
      const uint64_t data = po + sizeof(struct hmb_trace_page_header);
      while (at + sizeof(struct hmb_trace_record_header) <= bytes) {
        uint16_t len = a_->Load<uint16_t>(data + at + 2);
        uint32_t size = static_cast<uint32_t>(sizeof(struct hmb_trace_record_header)) +
                        ((len + HMB_TRACE_RECORD_ALIGN - 1) & ~(HMB_TRACE_RECORD_ALIGN - 1));
        last = at;
        at += size;
      }
      if (at != bytes)
        continue;
      uint16_t len = a_->Load<uint16_t>(data + last + 2);
      uint32_t from = headers ? 0 : sizeof(struct hmb_trace_record_header);
      uint32_t span = static_cast<uint32_t>(sizeof(struct hmb_trace_record_header)) + len - from;
      if (!span)
        continue;
      uint64_t byte = data + last + from + rng_() % span;
      uint8_t mask = static_cast<uint8_t>(1u << (rng_() % 8));
      a_->Store<uint8_t>(byte, a_->Load<uint8_t>(byte) ^ mask);
      n++;
    }
    SleepNs(period);
  }
  Log(headers ? "record-flips-end" : "payload-flips-end", {{"flips", n}});
}

// At the next re-initialisation: the previous generation's final next_seq
// of every core, as published in the core descriptor, plus delta.
void Mutator::ResetPrevNext(uint64_t delta, double timeout) {
  const uint32_t gen = a_->Load<uint32_t>(META(producer_gen));
  const uint64_t end = NowNs() + static_cast<uint64_t>(timeout * kNsPerSec);
  Log("reset-prev-next-armed", {{"delta", delta}, {"old_gen", gen}});
  while (NowNs() < end) {
    if (a_->Load<uint32_t>(META(producer_gen)) == gen) {
      SleepNs(5000);
      continue;
    }
    // The producer writes prev_gen/prev_next_seq after invalidating the
    // rings and the dictionary; wait for core 0's prev_gen to show it.
    Geometry g = Geo();
    uint16_t n = g.nr_cores && g.nr_cores <= HMB_TRACE_MAX_CORES ? g.nr_cores : 0;
    uint64_t wait_end = NowNs() + 200000000ull;
    while (n && a_->Load<uint32_t>(CoreOff(g, 0) + CORE(prev_gen)) != gen && NowNs() < wait_end)
      ;
    nlohmann::json was = nlohmann::json::array(), now = nlohmann::json::array();
    for (uint16_t c = 0; c < n; c++) {
      uint64_t off = CoreOff(g, c) + CORE(prev_next_seq);
      uint64_t v = a_->Load<uint64_t>(off);
      a_->Store<uint64_t>(off, v + delta);
      was.push_back(v);
      now.push_back(v + delta);
    }
    Log("reset-prev-next", {{"delta", delta},
                            {"old_gen", gen},
                            {"new_gen", a_->Load<uint32_t>(META(producer_gen))},
                            {"prev_next_seq_true", was},
                            {"prev_next_seq_written", now}});
    return;
  }
  Fail("reset-prev-next: no re-initialisation within the timeout");
}

// The head page of @core jumps about 2^log2 pages ahead (whole laps), with a first_seq that is
// consistent with that (100 records per skipped page, below the page's
// record capacity), so a consumer's plausibility check passes.
void Mutator::PageSeqAhead(uint16_t core, unsigned log2) {
  Geometry g = Geo();
  if (!g.ok || core >= g.nr_cores) {
    Fail("page-seq-ahead: no such core / area not sane");
    return;
  }
  uint64_t head = WaitNewPage(g, core, 2 * kNsPerSec);
  if (head == ~0ull) {
    Fail("page-seq-ahead: core did not open a page");
    return;
  }
  uint64_t po = PageOff(g, core, head);
  uint64_t seq = a_->Load<uint64_t>(po + PAGE(page_seq));
  uint64_t first = a_->Load<uint64_t>(po + PAGE(first_seq));
  // A whole number of ring laps, so the slot is the one a page that far
  // ahead would really use.
  uint64_t jump = ((1ull << log2) / g.pages_per_core) * g.pages_per_core;
  a_->Store<uint64_t>(po + PAGE(page_seq), seq + jump);
  a_->Store<uint64_t>(po + PAGE(first_seq), first + jump * 100);
  Log("page-seq-ahead", {{"core", core},
                         {"page_seq", seq},
                         {"first_seq", first},
                         {"written_page_seq", seq + jump},
                         {"written_first_seq", first + jump * 100},
                         {"pages_per_core", g.pages_per_core}});
}

// One bit of producer_gen in the page @core has just opened.
void Mutator::PageGenBit(uint16_t core, unsigned bit) {
  Geometry g = Geo();
  if (!g.ok || core >= g.nr_cores) {
    Fail("page-gen-bit: no such core / area not sane");
    return;
  }
  uint64_t head = WaitNewPage(g, core, 2 * kNsPerSec);
  if (head == ~0ull) {
    Fail("page-gen-bit: core did not open a page");
    return;
  }
  uint64_t po = PageOff(g, core, head);
  uint32_t gen = a_->Load<uint32_t>(po + PAGE(producer_gen));
  a_->Store<uint32_t>(po + PAGE(producer_gen), gen ^ (1u << bit));
  Log("page-gen-bit", {{"core", core},
                       {"page_seq", a_->Load<uint64_t>(po + PAGE(page_seq))},
                       {"first_seq", a_->Load<uint64_t>(po + PAGE(first_seq))},
                       {"producer_gen", gen},
                       {"written_producer_gen", gen ^ (1u << bit)}});
}

// The CLOSED bit of the page @core has just closed, cleared (so a reader
// still on it takes it for the open page).
void Mutator::PageUnclose(uint16_t core) {
  Geometry g = Geo();
  if (!g.ok || core >= g.nr_cores) {
    Fail("page-unclose: no such core / area not sane");
    return;
  }
  uint64_t head = WaitNewPage(g, core, 2 * kNsPerSec);
  if (head == ~0ull || head == 0) {
    Fail("page-unclose: core did not close a page");
    return;
  }
  uint64_t po = PageOff(g, core, head - 1);
  uint32_t commit = a_->Load<uint32_t>(po + PAGE(commit));
  if (commit == HMB_TRACE_COMMIT_BUSY || !(commit & HMB_TRACE_COMMIT_CLOSED)) {
    Fail("page-unclose: previous page not closed");
    return;
  }
  a_->Store<uint32_t>(po + PAGE(commit), commit & ~HMB_TRACE_COMMIT_CLOSED);
  Log("page-unclose", {{"core", core},
                       {"page_seq", a_->Load<uint64_t>(po + PAGE(page_seq))},
                       {"first_seq", a_->Load<uint64_t>(po + PAGE(first_seq))},
                       {"commit", commit},
                       {"written_commit", commit & ~HMB_TRACE_COMMIT_CLOSED}});
}

// A 32-bit meta field alternating a, b, a, ... then left at a.
void Mutator::Alternate(uint64_t off,
                        uint32_t a,
                        uint32_t b,
                        double seconds,
                        double period_ms,
                        const std::string& op) {
  const uint64_t end = NowNs() + static_cast<uint64_t>(seconds * kNsPerSec);
  const uint64_t period = static_cast<uint64_t>(period_ms * 1e6);
  Log(op + "-begin", {{"a", a}, {"b", b}, {"seconds", seconds}, {"period_ms", period_ms}});
  uint64_t flips = 0;
  while (NowNs() < end) {
    a_->Store<uint32_t>(off, (flips & 1) ? a : b);
    flips++;
    SleepNs(period);
  }
  a_->Store<uint32_t>(off, a);
  Log(op + "-end", {{"writes", flips}});
}

void Mutator::DictFlip(uint32_t offset) {
  Geometry g = Geo();
  if (!g.ok) {
    Fail("dict-flip: area not sane");
    return;
  }
  uint64_t off = g.dict_offset + offset;
  uint8_t v = a_->Load<uint8_t>(off);
  a_->Store<uint8_t>(off, static_cast<uint8_t>(v ^ 0xff));
  Log("dict-flip", {{"offset", offset}, {"byte", v}, {"written", v ^ 0xff}});
}

void Mutator::Fill(const std::string& what) {
  uint8_t* p = a_->data();
  if (what == "zero") {
    std::memset(p, 0, a_->size());
  } else if (what == "ff") {
    std::memset(p, 0xff, a_->size());
  } else {
    for (size_t i = 0; i + 8 <= a_->size(); i += 8) {
      uint64_t v = rng_();
      std::memcpy(p + i, &v, 8);
    }
  }
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  Log("fill", {{"what", what}, {"bytes", a_->size()}});
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t i = s.find(':', start);
    out.push_back(s.substr(start, i == std::string::npos ? i : i - start));
    if (i == std::string::npos)
      return out;
    start = i + 1;
  }
}

bool Mutator::Step(const std::string& step) {
  std::vector<std::string> w = Split(step);
  const std::string& op = w[0];
  auto arg = [&](size_t i, const char* def) { return i < w.size() ? w[i] : std::string(def); };
  try {
    if (op == "sleep") {
      SleepNs(static_cast<uint64_t>(std::stod(arg(1, "1")) * kNsPerSec));
    } else if (op == "wait-file") {
      const uint64_t end = NowNs() + static_cast<uint64_t>(std::stod(arg(2, "120")) * kNsPerSec);
      while (access(arg(1, "").c_str(), F_OK) != 0) {
        if (NowNs() > end)
          return Fail("wait-file " + arg(1, "") + ": timed out");
        SleepNs(20000000);
      }
      Log("wait-file", {{"path", arg(1, "")}});
    } else if (op == "touch") {
      FILE* f = std::fopen(arg(1, "").c_str(), "w");
      if (!f)
        return Fail("touch " + arg(1, "") + ": " + std::strerror(errno));
      std::fclose(f);
      Log("touch", {{"path", arg(1, "")}});
    } else if (op == "mark") {
      Log("mark", {{"name", arg(1, "")}});
    } else if (op == "payload-flips" || op == "record-flips") {
      RecordFlips(arg(1, "all"), std::stod(arg(2, "1")), std::stod(arg(3, "100")),
                  op == "record-flips");
    } else if (op == "reset-prev-next") {
      ResetPrevNext(1ull << std::stoul(arg(1, "32")), std::stod(arg(2, "60")));
    } else if (op == "page-seq-ahead") {
      PageSeqAhead(static_cast<uint16_t>(std::stoul(arg(1, "0"))),
                   static_cast<unsigned>(std::stoul(arg(2, "50"))));
    } else if (op == "page-gen-bit") {
      PageGenBit(static_cast<uint16_t>(std::stoul(arg(1, "0"))),
                 static_cast<unsigned>(std::stoul(arg(2, "0"))));
    } else if (op == "page-unclose") {
      PageUnclose(static_cast<uint16_t>(std::stoul(arg(1, "0"))));
    } else if (op == "gen-alternate") {
      uint32_t g = a_->Load<uint32_t>(META(producer_gen));
      Alternate(META(producer_gen), g, g + 1, std::stod(arg(1, "1")), std::stod(arg(2, "20")), op);
    } else if (op == "state-flip") {
      Alternate(META(state), HMB_TRACE_STATE_READY, HMB_TRACE_STATE_INIT, std::stod(arg(1, "1")),
                std::stod(arg(2, "20")), op);
    } else if (op == "dict-flip") {
      DictFlip(static_cast<uint32_t>(std::stoul(arg(1, "0"))));
    } else if (op == "fill") {
      Fill(arg(1, "zero"));
    } else if (op == "save") {
      saved_.assign(a_->data(), a_->data() + a_->size());
      Log("save", {{"bytes", saved_.size()}});
    } else if (op == "restore") {
      if (saved_.size() != a_->size())
        return Fail("restore: nothing saved");
      std::memcpy(a_->data(), saved_.data(), saved_.size());
      __atomic_thread_fence(__ATOMIC_SEQ_CST);
      Log("restore", {{"bytes", saved_.size()}});
    } else {
      return Fail("unknown step " + step);
    }
  } catch (const std::exception& e) {
    return Fail("step " + step + ": bad argument (" + e.what() + ")");
  }
  return true;
}

bool Mutator::Run(const std::vector<std::string>& steps) {
  Log("start", {{"steps", steps}});
  bool ok = true;
  for (const std::string& s : steps)
    ok = Step(s) && ok;
  Log("end", {{"ok", ok}});
  return ok;
}

constexpr const char* kSteps = R"(STEPS run in order, each OP[:ARG...]:
  sleep:S                      wait S seconds
  wait-file:PATH[:S]           wait until PATH exists (timeout S, default 120)
  touch:PATH                   create PATH (tells a guest a step is done)
  mark:NAME                    a log line only
  payload-flips:CORES:S:HZ     for S seconds, HZ times a second, flip one bit of
                               the payload of the last committed record of the
                               head page of each core (CORES: a number or all)
  record-flips:CORES:S:HZ      the same, any byte of the record (header too)
  reset-prev-next:LOG2[:S]     at the next re-initialisation (within S s), add
                               2^LOG2 to every core's prev_next_seq
  page-seq-ahead:CORE:LOG2     the next page CORE opens: page_seq += J (2^LOG2
                               rounded down to whole laps), first_seq +=
                               100 * J (consistent)
  page-gen-bit:CORE:BIT        the next page CORE opens: flip producer_gen bit
  page-unclose:CORE            the page CORE closes next: clear its CLOSED bit
  gen-alternate:S:MS           meta producer_gen G+1, G, G+1, ... every MS ms
                               for S seconds, then G
  state-flip:S:MS              meta state INIT, READY, ... then READY
  dict-flip:OFFSET             invert one byte of the dictionary
  fill:zero|ff|random          the whole area
  save, restore                copy the whole area aside; write it back
The log (--log) has one JSON object a line: op, mono_ns (CLOCK_MONOTONIC),
the fields written, and "area": producer_gen, state and every core's
next_seq and head_page when the line was written.)";

int Main(int argc, char** argv) {
  CLI::App app{
      "hmb-mutate: a hostile device. Maps the HMB trace area FILE (written by "
      "hmb-fwsim) read-write and performs the STEPS, racing the producer, "
      "logging what it wrote and when."};
  app.footer(kSteps);
  std::string area_path, log_path;
  uint64_t seed = 1;
  double wait_area = 30;
  std::vector<std::string> steps;
  app.add_option("--area", area_path, "The area file (e.g. /dev/shm/hmb-area)")->required();
  app.add_option("--log", log_path, "JSON-lines log of every mutation (default: stdout)");
  app.add_option("--wait-area", wait_area,
                 "Seconds to wait for the area file to exist with its size")
      ->capture_default_str();
  app.add_option("--seed", seed, "Seed of the random choices")->capture_default_str();
  app.add_option("steps", steps, "Steps, in order (see below)")->required();
  CLI11_PARSE(app, argc, argv);

  Area area;
  std::string err;
  if (!area.Open(area_path, wait_area, &err)) {
    std::fprintf(stderr, "hmb-mutate: %s\n", err.c_str());
    return 1;
  }
  FILE* log = stdout;
  if (!log_path.empty() && !(log = std::fopen(log_path.c_str(), "a"))) {
    std::fprintf(stderr, "hmb-mutate: %s: %s\n", log_path.c_str(), std::strerror(errno));
    return 1;
  }
  Mutator m(&area, log, seed);
  bool ok = m.Run(steps);
  if (log != stdout)
    std::fclose(log);
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace hmbtrace

int main(int argc, char** argv) {
  return hmbtrace::Main(argc, argv);
}
