// SPDX-License-Identifier: GPL-2.0-only
#include "live/stream.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "capture/capture_c.h"
#include "live/instance.h"
#include "live/stop_signals.h"

namespace hmbtrace {
namespace {

namespace fs = std::filesystem;

Status WriteFile(const std::string& path, std::string_view value) {
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0)
    return Status::Error(path + ": " + std::strerror(errno));
  const ssize_t n = write(fd, value.data(), value.size());
  const int e = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    return Status::Error(path + ": " + (n < 0 ? std::strerror(e) : "short write"));
  return {};
}

bool ParseBuildId(const std::string& hex, std::array<uint8_t, 20>* out) {
  if (hex.size() != 40)
    return false;
  for (size_t i = 0; i < 20; i++) {
    unsigned v = 0;
    for (size_t j = 0; j < 2; j++) {
      const char c = hex[2 * i + j];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else
        return false;
    }
    (*out)[i] = static_cast<uint8_t>(v);
  }
  return true;
}

struct Reader {
  Reporter* reporter;
  StreamTally* tally;
  std::string* out;
};

int OnLiveEvent(const hmb_capture_event* c, void* data) {
  Reader* r = static_cast<Reader*>(data);
  const CaptureEvent ev = ToCaptureEvent(*c);
  r->tally->Add(ev);
  *r->out += r->reporter->Line(ev);
  return 0;
}

// The reading of the live buffers: rounds over every CPU's pages, each
// printed when it is read.
class Pump {
 public:
  Pump(hmb_instance* inst, Reader* reader) : inst_(inst), reader_(reader) {
    nr_cpus_ = hmb_instance_nr_cpus(inst);
  }
  // Reads at most `max_pages` pages of each CPU, then writes what they
  // printed. Returns the pages read, or -1 (error()) when reading failed.
  int Round(int max_pages) {
    int pages = 0;
    for (int i = 0; i < nr_cpus_; i++) {
      for (int p = 0; p < max_pages; p++) {
        const int r = hmb_instance_read_cpu(inst_, i, OnLiveEvent, reader_, err_, sizeof(err_));
        if (r < 0)
          return -1;
        if (r == 0)
          break;
        pages++;
      }
    }
    Flush();
    return pages;
  }
  bool stdout_ok() const { return stdout_ok_; }
  const char* error() const { return err_; }

 private:
  void Flush() {
    std::string& out = *reader_->out;
    if (!out.empty() && stdout_ok_) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);
      // A write cut short by SIGINT/SIGTERM is the end asked for, not a
      // broken stdout.
      stdout_ok_ = !std::ferror(stdout) || SignalScope::stop_signal();
    }
    out.clear();
  }

  hmb_instance* inst_;
  Reader* reader_;
  int nr_cpus_ = 0;
  bool stdout_ok_ = true;
  char err_[512] = "";
};

}  // namespace

Status EventEnableGuard::EnableAll(const std::string& instance_dir) {
  const fs::path events = fs::path(instance_dir) / "events" / "hmb";
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(events, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && fs::exists(it->path() / "enable", ec))
      files.push_back((it->path() / "enable").string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty())
    return Status::Error("no hmb events in " + events.string() + " (" + std::string(kNotLoaded) +
                         ")");
  for (const std::string& f : files) {
    std::ifstream in(f);
    std::string v;
    if (!in || !std::getline(in, v) || v.empty() || (v[0] != '0' && v[0] != '1'))
      return Status::Error(f + ": cannot read the event's state");
    saved_.emplace_back(f, v[0]);
  }
  for (const auto& [f, was] : saved_) {
    if (was == '1')
      continue;
    if (Status s = WriteFile(f, "1"); !s.ok())
      return s;
  }
  return {};
}

Status EventEnableGuard::Restore() {
  Status first;
  for (const auto& [f, was] : saved_) {
    Status s = WriteFile(f, std::string(1, was));
    if (first.ok())
      first = std::move(s);
  }
  saved_.clear();
  return first;
}

std::vector<CaptureEvent> DictionarySeeds(const std::vector<DeviceStatus>& devices,
                                          std::vector<std::vector<uint8_t>>* bytes) {
  std::vector<CaptureEvent> seeds;
  bytes->clear();
  bytes->reserve(devices.size());  // the spans below point into it
  for (const DeviceStatus& d : devices) {
    const auto index = d.Value("index");
    const auto gen = d.Value("producer_gen");
    if (!index || *index > UINT16_MAX || !gen || *gen == 0 || *gen > UINT32_MAX)
      continue;
    std::vector<uint8_t> dict = ReadDictionary(d);
    if (dict.empty() || dict.size() > kMaxDictionaryLen)
      continue;
    CaptureEvent ev;
    ev.kind = CaptureKind::kDict;
    ev.dev = static_cast<uint16_t>(*index);
    ev.producer_gen = static_cast<uint32_t>(*gen);
    ParseBuildId(d.build_id, &ev.build_id);
    ev.total_len = static_cast<uint32_t>(dict.size());
    ev.offset = 0;
    bytes->push_back(std::move(dict));
    ev.data = std::span<const uint8_t>(bytes->back());
    seeds.push_back(ev);
  }
  return seeds;
}

void StreamTally::Add(const CaptureEvent& ev) {
  ftrace_missed_ += ev.missed_events;
  switch (ev.kind) {
    case CaptureKind::kRecord: {
      Core& c = cores_[{ev.dev, ev.core}];
      if (c.records == 0)
        c.first_seq = ev.seq;
      c.records++;
      c.last_seq = ev.seq;
      c.cpu = ev.cpu;
      break;
    }
    case CaptureKind::kLost:
      cores_[{ev.dev, ev.core}].lost += ev.count;
      break;
    case CaptureKind::kMarker:
      markers_++;
      break;
    case CaptureKind::kMalformed:
      malformed_++;
      break;
    default:
      break;
  }
}

uint64_t StreamTally::records() const {
  uint64_t n = 0;
  for (const auto& [key, c] : cores_)
    n += c.records;
  return n;
}

std::string StreamTally::Summary(double seconds) const {
  uint64_t lost = 0;
  for (const auto& [key, c] : cores_)
    lost += c.lost;
  char head[256];
  std::snprintf(head, sizeof(head),
                "hmbtrace-cmd stream: %.1f s, %llu records, %llu lost, %llu markers, "
                "%llu events dropped by ftrace, %llu malformed\n",
                seconds, static_cast<unsigned long long>(records()),
                static_cast<unsigned long long>(lost), static_cast<unsigned long long>(markers_),
                static_cast<unsigned long long>(ftrace_missed_),
                static_cast<unsigned long long>(malformed_));
  std::string out = head;
  for (const auto& [key, c] : cores_) {
    out += "  dev " + std::to_string(key.first) + " core " + std::to_string(key.second) + ": " +
           std::to_string(c.records) + " records";
    if (c.records)
      out += " (seq " + std::to_string(c.first_seq) + ".." + std::to_string(c.last_seq) + ", cpu " +
             std::to_string(c.cpu) + ")";
    out += ", " + std::to_string(c.lost) + " lost\n";
  }
  return out;
}

namespace {

// The instance's trace clock: the bracketed name of its trace_clock file
// ("[local] global counter ..."); "" if it cannot be read.
std::string InstanceTraceClock(const std::string& dir) {
  std::ifstream in(dir + "/trace_clock");
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('[');
  const size_t close = open == std::string::npos ? open : line.find(']', open);
  return close == std::string::npos ? std::string() : line.substr(open + 1, close - open - 1);
}

}  // namespace

int RunStream(const StreamOptions& options) {
  auto fail = [](const std::string& msg) {
    std::fprintf(stderr, "hmbtrace-cmd stream: %s\n", msg.c_str());
    return 1;
  };
  std::vector<DeviceStatus> devices;
  if (Status s = ReadDevices(options.sysfs_dir, &devices); !s.ok())
    return fail(s.message());
  Result<InstancePtr> opened = OpenInstance(options.tracefs_dir);
  if (!opened.ok())
    return fail(opened.message());
  InstancePtr inst = std::move(opened.value());
  char err[512] = "";
  if (hmb_instance_stream_start(inst.get(), err, sizeof(err)) != 0)
    return fail(err);
  if (!hmb_instance_has_hmb_events(inst.get()))
    return fail("no hmb event formats in " + options.tracefs_dir + "/events/hmb (" +
                std::string(kNotLoaded) + ")");

  Reporter reporter(options.report);
  // Firmware time on the instance's own clock (the module fits each one).
  if (std::string problem =
          reporter.clocks().SetTraceClock(InstanceTraceClock(InstanceDir(options.tracefs_dir)));
      !problem.empty())
    std::fprintf(stderr, "hmbtrace-cmd stream: %s\n", problem.c_str());
  std::vector<std::vector<uint8_t>> seed_bytes;
  for (const CaptureEvent& seed : DictionarySeeds(devices, &seed_bytes)) {
    const DictionaryStore::Update u = reporter.Seed(seed);
    if (!u.problem.empty())
      std::fprintf(stderr, "hmbtrace-cmd stream: the module's dictionary: %s\n", u.problem.c_str());
  }

  // SIGINT/SIGTERM end the stream (the loop sees stop_signal(); a sleep
  // returns early); a closed stdout is an error the loop sees, so the
  // events are restored.
  SignalScope signals({.ignore_sigpipe = true});
  EventEnableGuard enabled;
  if (Status s = enabled.EnableAll(InstanceDir(options.tracefs_dir)); !s.ok()) {
    (void)enabled.Restore();  // what could be restored; the first error is the one to tell
    return fail(s.message());
  }

  StreamTally tally;
  std::string out;
  Reader reader{&reporter, &tally, &out};
  Pump pump(inst.get(), &reader);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(options.duration));
  // A round reads at most this many pages per CPU, so that one busy CPU
  // does not starve the others' lines.
  constexpr int kPagesPerRound = 64;
  int rc = 0;
  for (;;) {
    const int pages = pump.Round(kPagesPerRound);
    if (pages < 0) {
      rc = fail(pump.error());
      break;
    }
    if (!pump.stdout_ok() || SignalScope::stop_signal())
      break;
    if (options.duration > 0 && std::chrono::steady_clock::now() >= deadline)
      break;
    if (pages == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // What is already in the buffers when it ends, bounded (the producer
  // may still be running).
  if (rc == 0 && pump.stdout_ok() && pump.Round(1024) < 0)
    rc = fail(pump.error());

  if (Status s = enabled.Restore(); !s.ok())
    rc = fail("restoring the hmb events' enable state: " + s.message());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fputs(tally.Summary(seconds).c_str(), stderr);
  if (!pump.stdout_ok())
    return fail("writing to stdout failed; stopped");
  return rc;
}

}  // namespace hmbtrace
