// SPDX-License-Identifier: GPL-2.0-only
#include "qemu_nvme_follow.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "fw_clock.h"
#include "fwsim_events.h"

namespace hmbtrace {
namespace {

constexpr uint64_t kPollNs = 1000000;  // 1 ms between looks at the log
constexpr size_t kMaxLine = 4096;      // longer: not one of ours; skipped
constexpr size_t kMaxExamples = 5;

bool ParseNumber(std::string_view s, uint64_t* out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  if (s.empty())
    return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

// "key value key value ...": the value of `key`, a number (opname's
// quoted value has no spaces).
bool Value(std::string_view args, std::string_view key, uint64_t* out) {
  size_t pos = 0;
  while (pos < args.size()) {
    const size_t kend = args.find(' ', pos);
    if (kend == std::string_view::npos)
      return false;
    const std::string_view k = args.substr(pos, kend - pos);
    size_t vend = args.find(' ', kend + 1);
    if (vend == std::string_view::npos)
      vend = args.size();
    const std::string_view v = args.substr(kend + 1, vend - kend - 1);
    if (k == key)
      return ParseNumber(v, out);
    pos = vend + 1;
  }
  return false;
}

template <typename T>
bool Get(std::string_view args, std::string_view key, T* out) {
  uint64_t v = 0;
  if (!Value(args, key, &v) || v > static_cast<uint64_t>(static_cast<T>(~T{0})))
    return false;
  *out = static_cast<T>(v);
  return true;
}

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

}  // namespace

QemuLineParse ParseQemuNvmeLine(std::string_view line, QemuNvmeLine* out) {
  const size_t name_at = line.find("pci_nvme_");
  if (name_at == std::string_view::npos)
    return QemuLineParse::kOther;
  const size_t name_end = line.find(' ', name_at);
  if (name_end == std::string_view::npos)
    return QemuLineParse::kOther;
  const std::string_view name = line.substr(name_at, name_end - name_at);
  QemuNvmeLine l;
  if (name == "pci_nvme_io_cmd")
    l.kind = QemuNvmeLine::Kind::kIoCmd;
  else if (name == "pci_nvme_admin_cmd")
    l.kind = QemuNvmeLine::Kind::kAdminCmd;
  else if (name == "pci_nvme_enqueue_req_completion")
    l.kind = QemuNvmeLine::Kind::kCompletion;
  else if (name == "pci_nvme_read")
    l.kind = QemuNvmeLine::Kind::kRead;
  else if (name == "pci_nvme_write")
    l.kind = QemuNvmeLine::Kind::kWrite;
  else
    return QemuLineParse::kOther;

  // "PID@SEC.USEC:" right before the name.
  const std::string_view prefix = line.substr(0, name_at);
  const size_t at = prefix.find('@');
  const size_t dot = prefix.find('.', at == std::string_view::npos ? 0 : at);
  if (at == std::string_view::npos || dot == std::string_view::npos || prefix.empty() ||
      prefix.back() != ':')
    return QemuLineParse::kNoTimestamp;
  uint64_t sec = 0, usec = 0;
  if (!ParseNumber(prefix.substr(at + 1, dot - at - 1), &sec) ||
      !ParseNumber(prefix.substr(dot + 1, prefix.size() - dot - 2), &usec) || usec >= 1000000 ||
      sec > (UINT64_MAX / 1000000) - 1)
    return QemuLineParse::kMalformed;
  l.realtime_us = sec * 1000000 + usec;

  const std::string_view args = line.substr(name_end + 1);
  bool ok = Get(args, "cid", &l.cid);
  switch (l.kind) {
    case QemuNvmeLine::Kind::kIoCmd:
      ok = ok && Get(args, "nsid", &l.nsid) && Get(args, "sqid", &l.qid) &&
           Get(args, "opc", &l.opcode);
      break;
    case QemuNvmeLine::Kind::kAdminCmd:
      ok = ok && Get(args, "sqid", &l.qid) && Get(args, "opc", &l.opcode);
      break;
    case QemuNvmeLine::Kind::kCompletion:
      ok = ok && Get(args, "cqid", &l.qid) && Get(args, "status", &l.status);
      break;
    case QemuNvmeLine::Kind::kRead:
    case QemuNvmeLine::Kind::kWrite:
      ok = ok && Get(args, "nsid", &l.nsid) && Get(args, "nlb", &l.nlb) && Get(args, "lba", &l.slba);
      break;
  }
  if (!ok)
    return QemuLineParse::kMalformed;
  *out = l;
  return QemuLineParse::kOk;
}

QemuNvmeCommands::QemuNvmeCommands(uint16_t cores, uint64_t clock_hz,
                                   uint32_t time_scale)
    : cores_(std::max<uint16_t>(cores, 1)),
      clock_hz_(clock_hz),
      time_scale_(std::max<uint32_t>(time_scale, 1)),
      last_mono_ns_(cores_, 0) {}

uint64_t QemuNvmeCommands::Stamp(uint16_t core, uint64_t mono_ns) {
  last_mono_ns_[core] = std::max(last_mono_ns_[core], mono_ns);
  return last_mono_ns_[core];
}

uint16_t QemuNvmeCommands::CoreOf(uint16_t qid) const {
  return qid == 0 ? 0 : static_cast<uint16_t>((qid - 1u) % cores_);
}

uint32_t QemuNvmeCommands::Ticks(uint64_t ns) const {
  // ns of CLOCK_MONOTONIC; the clock ticks time_scale times faster.
  const unsigned __int128 t =
      static_cast<unsigned __int128>(ns) * time_scale_ * clock_hz_ / 1000000000u;
  return t > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(t);
}

void QemuNvmeCommands::EmitFetch(uint16_t qid, uint16_t cid, uint32_t nsid,
                                 std::vector<FollowedRecord>* out) {
  InFlight& c = in_flight_[{qid, cid}];
  // Records of a core are written in time order: a fetch held back for
  // its read/write line is not stamped before what the core wrote since.
  c.fetch_mono_ns = Stamp(c.core, c.fetch_mono_ns);
  fw_cmd_fetch fetch{};
  fetch.qid = qid;
  fetch.cid = cid;
  fetch.opcode = c.opcode;
  fetch.nsid = nsid;
  fetch.slba = c.slba;
  fetch.nlb = c.nlb;
  FollowedRecord& r = out->emplace_back();
  r.core = c.core;
  r.mono_ns = c.fetch_mono_ns;
  r.rec.event_id = FW_EV_CMD_FETCH;
  r.rec.fixed_len = sizeof(fetch);
  std::memcpy(r.rec.fixed.data(), &fetch, sizeof(fetch));
}

void QemuNvmeCommands::Flush(std::vector<FollowedRecord>* out) {
  if (!held_)
    return;
  EmitFetch(held_->first.first, held_->first.second, held_->second, out);
  held_.reset();
}

void QemuNvmeCommands::Feed(const QemuNvmeLine& line, uint64_t mono_ns,
                            std::vector<FollowedRecord>* out) {
  using Kind = QemuNvmeLine::Kind;
  if (line.kind == Kind::kRead || line.kind == Kind::kWrite) {
    // Belongs to the fetch just logged (same cid), if it is still held.
    if (held_ && held_->first.second == line.cid) {
      InFlight& c = in_flight_[held_->first];
      c.slba = line.slba;
      c.nlb = line.nlb ? line.nlb - 1 : 0;  // 0's based in the record
    }
    Flush(out);
    return;
  }
  Flush(out);
  const std::pair<uint16_t, uint16_t> key{line.qid, line.cid};
  if (line.kind == Kind::kIoCmd || line.kind == Kind::kAdminCmd) {
    counts_.fetched++;
    auto [it, fresh] = in_flight_.try_emplace(key);
    if (!fresh)
      counts_.refetched_in_flight++;
    it->second = InFlight{line.opcode, CoreOf(line.qid), mono_ns, 0, 0};
    held_ = {key, line.nsid};
    return;
  }
  // A completion.
  auto it = in_flight_.find(key);
  if (it == in_flight_.end()) {
    counts_.completion_without_fetch++;
    return;
  }
  const InFlight c = it->second;
  in_flight_.erase(it);
  counts_.completed++;
  // Stamped no earlier than the core's last record, so that the latency
  // fields are exactly the spans between the records' times.
  const uint64_t complete_ns = std::max(mono_ns, last_mono_ns_[c.core]);
  // The NAND work: a read senses a page, a write programs one; it starts at
  // the fetch and ends just before the completion (1 us, or the middle of a
  // shorter command), not before the core's last record.
  const bool io = line.qid != 0;
  if (io && (c.opcode == FW_NVME_OPC_READ || c.opcode == FW_NVME_OPC_WRITE)) {
    const uint64_t span = complete_ns - c.fetch_mono_ns;
    const uint64_t nand_ns =
        Stamp(c.core, complete_ns - std::min<uint64_t>(1000, span / 2));
    const uint64_t h = Mix(++nand_counter_ ^ (uint64_t{line.qid} << 32) ^ line.cid);
    fw_nand_op op{};
    op.die = static_cast<uint8_t>(h % 8);
    op.plane = static_cast<uint8_t>((h >> 3) % 2);
    op.block = static_cast<uint16_t>((h >> 8) % 1024);
    op.page = static_cast<uint16_t>((h >> 24) % 256);
    op.latency = Ticks(nand_ns - c.fetch_mono_ns);
    FollowedRecord& r = out->emplace_back();
    r.core = c.core;
    r.mono_ns = nand_ns;
    r.rec.event_id = c.opcode == FW_NVME_OPC_READ ? FW_EV_NAND_READ : FW_EV_NAND_PROGRAM;
    r.rec.fixed_len = sizeof(op);
    std::memcpy(r.rec.fixed.data(), &op, sizeof(op));
  }
  Stamp(c.core, complete_ns);
  fw_cmd_complete done{};
  done.qid = line.qid;
  done.cid = line.cid;
  done.status = line.status;
  done.latency = Ticks(complete_ns - c.fetch_mono_ns);
  FollowedRecord& r = out->emplace_back();
  r.core = c.core;
  r.mono_ns = complete_ns;
  r.rec.event_id = FW_EV_CMD_COMPLETE;
  r.rec.fixed_len = sizeof(done);
  std::memcpy(r.rec.fixed.data(), &done, sizeof(done));
  commands_.push_back({{"qid", line.qid},
                       {"cid", line.cid},
                       {"opcode", c.opcode},
                       {"core", c.core},
                       {"fetch_mono_ns", c.fetch_mono_ns},
                       {"complete_mono_ns", complete_ns},
                       {"status", line.status}});
}

int64_t RealtimeMinusMonotonicNs() {
  int64_t best_width = INT64_MAX, best = 0;
  for (int i = 0; i < 5; i++) {
    timespec m0, r, m1;
    clock_gettime(CLOCK_MONOTONIC, &m0);
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &m1);
    const int64_t a = m0.tv_sec * 1000000000ll + m0.tv_nsec;
    const int64_t b = m1.tv_sec * 1000000000ll + m1.tv_nsec;
    const int64_t rt = r.tv_sec * 1000000000ll + r.tv_nsec;
    if (b - a < best_width) {
      best_width = b - a;
      best = rt - (a + (b - a) / 2);
    }
  }
  return best;
}

void QemuNvmeFollower::Line(std::string_view line, std::vector<FollowedRecord>* out) {
  lines_++;
  QemuNvmeLine l;
  switch (ParseQemuNvmeLine(line, &l)) {
    case QemuLineParse::kOk: {
      // Re-read the offset each time: the wall clock may be stepped.
      const int64_t off = RealtimeMinusMonotonicNs();
      const int64_t mono = static_cast<int64_t>(l.realtime_us) * 1000 - off;
      commands_.Feed(l, mono > 0 ? static_cast<uint64_t>(mono) : 0, out);
      return;
    }
    case QemuLineParse::kOther:
      other_lines_++;
      return;
    case QemuLineParse::kNoTimestamp:
      no_timestamp_++;
      break;
    case QemuLineParse::kMalformed:
      malformed_++;
      break;
  }
  if (malformed_examples_.size() < kMaxExamples)
    malformed_examples_.emplace_back(line.substr(0, 200));
}

Status QemuNvmeFollower::Run(const std::atomic<bool>& stop, const Sink& sink) {
  int fd = -1;
  while (fd < 0) {
    fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
      break;
    if (errno != ENOENT)
      return Status::Error("--follow-qemu-nvme " + path_ + ": " + std::strerror(errno));
    if (stop.load(std::memory_order_relaxed))
      return {};
    const timespec pause = {0, static_cast<long>(kPollNs * 10)};
    nanosleep(&pause, nullptr);
  }
  std::string pending;
  std::vector<FollowedRecord> out;
  std::vector<char> buf(1 << 16);
  off_t offset = 0;
  uint64_t idle_polls = 0;
  for (;;) {
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      const int e = errno;
      close(fd);
      return Status::Error("--follow-qemu-nvme " + path_ + ": " + std::strerror(e));
    }
    if (n > 0) {
      idle_polls = 0;
      offset += n;
      pending.append(buf.data(), static_cast<size_t>(n));
      size_t start = 0;
      for (;;) {
        const size_t nl = pending.find('\n', start);
        if (nl == std::string::npos)
          break;
        Line(std::string_view(pending).substr(start, nl - start), &out);
        start = nl + 1;
      }
      pending.erase(0, start);
      if (pending.size() > kMaxLine) {
        malformed_++;
        pending.clear();
      }
      if (!out.empty()) {
        sink(out);
        out.clear();
      }
      continue;
    }
    // At the end of what is written.
    if (stop.load(std::memory_order_relaxed))
      break;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size < offset) {
      // Truncated: QEMU opened the log again. Start from its beginning.
      truncations_++;
      lseek(fd, 0, SEEK_SET);
      offset = 0;
      pending.clear();
      continue;
    }
    // A fetch held for its read/write line: after 10 ms without one, there
    // is none (an admin command, a flush).
    if (++idle_polls == 10) {
      commands_.Flush(&out);
      if (!out.empty()) {
        sink(out);
        out.clear();
      }
    }
    const timespec pause = {0, static_cast<long>(kPollNs)};
    nanosleep(&pause, nullptr);
  }
  close(fd);
  commands_.Flush(&out);
  if (!out.empty())
    sink(out);
  return {};
}

nlohmann::json QemuNvmeFollower::TruthJson() const {
  const QemuNvmeCommands::Counts& c = commands_.counts();
  return {
      {"log", path_},
      {"lines", lines_},
      {"other_lines", other_lines_},
      {"malformed_lines", malformed_},
      {"lines_without_timestamp", no_timestamp_},
      {"malformed_examples", malformed_examples_},
      {"truncations", truncations_},
      {"fetched", c.fetched},
      {"completed", c.completed},
      {"completion_without_fetch", c.completion_without_fetch},
      {"refetched_in_flight", c.refetched_in_flight},
      {"in_flight_at_exit", commands_.in_flight()},
      {"commands", commands_.commands()},
  };
}

}  // namespace hmbtrace
