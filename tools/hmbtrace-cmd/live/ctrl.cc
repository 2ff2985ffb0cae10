// SPDX-License-Identifier: GPL-2.0-only
#include "live/ctrl.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace hmbtrace {
namespace fs = std::filesystem;

namespace {

bool ParseU64(const std::string& s, uint64_t* v) {
  const char* b = s.data();
  const char* e = b + s.size();
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    b += 2;
    base = 16;
  }
  auto r = std::from_chars(b, e, *v, base);
  return r.ec == std::errc() && r.ptr == e && b != e;
}

std::string Hex64(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string ReadLine(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

// One write(2) of the whole value: sysfs takes a store in one call.
int WriteValue(const fs::path& p, const std::string& v) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  ssize_t n = ::write(fd, v.data(), v.size());
  int err = n == static_cast<ssize_t>(v.size()) ? 0 : (n < 0 ? errno : EIO);
  ::close(fd);
  return err;
}

}  // namespace

Status CtrlRequests(const std::vector<std::string>& args,
                    uint32_t max_id,
                    std::vector<CtrlRequest>* out) {
  out->clear();
  if (args.empty()) {
    return Status::Error(
        "no operation: start, stop, ring-mode MODE, mask EVENT_ID..., unmask-all, "
        "echo COOKIE [CORE], freeze-config THRESHOLD_US N, freeze-now [DETAIL], rearm");
  }
  const std::string& op = args[0];
  const size_t n = args.size() - 1;
  if ((op == "start" || op == "stop") && n == 0) {
    out->push_back({"tracing", op});
  } else if (op == "ring-mode" && n == 1 && (args[1] == "overwrite" || args[1] == "stop")) {
    out->push_back({"ring_mode", args[1]});
  } else if (op == "unmask-all" && n == 0) {
    for (uint64_t base = 0; base <= max_id; base += 64)
      out->push_back({"event_mask", std::to_string(base) + " " + Hex64(~0ull)});
  } else if (op == "mask" && n >= 1) {
    // Only the listed ids are produced: every 64-id word up to max_id.
    std::map<uint64_t, uint64_t> words;
    for (uint64_t base = 0; base <= max_id; base += 64)
      words[base] = 0;
    for (size_t i = 1; i < args.size(); i++) {
      uint64_t id;
      if (!ParseU64(args[i], &id) || id == 0 || id > max_id) {
        return Status::Error("mask: '" + args[i] + "' is not an event id 1.." +
                             std::to_string(max_id));
      }
      words[id / 64 * 64] |= 1ull << (id % 64);
    }
    for (const auto& [base, mask] : words)
      out->push_back({"event_mask", std::to_string(base) + " " + Hex64(mask)});
  } else if (op == "echo" && (n == 1 || n == 2)) {
    uint64_t cookie, core = 0;
    if (!ParseU64(args[1], &cookie) || (n == 2 && (!ParseU64(args[2], &core) || core > 65535))) {
      return Status::Error("echo: COOKIE and CORE are numbers (CORE 0..65535)");
    }
    out->push_back({"echo", std::to_string(cookie) + " " + std::to_string(core)});
  } else if (op == "freeze-config" && n == 2) {
    uint64_t us, after;
    if (!ParseU64(args[1], &us) || us > UINT64_MAX / 1000 || !ParseU64(args[2], &after) ||
        after > UINT32_MAX) {
      return Status::Error(
          "freeze-config: THRESHOLD_US (0: no latency trigger) and N (0..4294967295) are "
          "numbers");
    }
    out->push_back({"freeze_config", std::to_string(us * 1000) + " " + std::to_string(after)});
  } else if (op == "freeze-now" && n <= 1) {
    uint64_t detail = 0;
    if (n == 1 && !ParseU64(args[1], &detail))
      return Status::Error("freeze-now: DETAIL is a number");
    out->push_back({"freeze", "now " + std::to_string(detail)});
  } else if (op == "rearm" && n == 0) {
    out->push_back({"freeze", "rearm"});
  } else {
    return Status::Error("'" + op + "' with " + std::to_string(n) +
                         " argument(s) is not an operation: start, stop, ring-mode overwrite|stop, "
                         "mask EVENT_ID..., unmask-all, echo COOKIE [CORE], freeze-config "
                         "THRESHOLD_US N, freeze-now [DETAIL], rearm");
  }
  return {};
}

std::string CtrlErrorText(int err) {
  switch (err) {
    case ENODEV:
      return "the area has no control channel (ctrl/available is 0): the ivshmem mock needs "
             "ivshmem=AREA+MAILBOX and hmb-fwsim --mailbox; nvme-pci needs the kernel/patches "
             "series";
    case ETIMEDOUT:
      return "the firmware did not answer in time (counted in ctrl/timeouts): is it running?";
    case EOPNOTSUPP:
      return "the firmware does not support this operation";
    case EINVAL:
      return "the module or the firmware refused the value";
    case EACCES:
    case EPERM:
      return "permission denied: run as root";
    default:
      return std::strerror(err);
  }
}

int RunCtrl(const std::string& sysfs_dir, const std::string& device,
            const std::vector<std::string>& args) {
  std::error_code ec;
  fs::path dir;
  if (!device.empty()) {
    dir = fs::path(sysfs_dir) / device;
  } else {
    std::vector<fs::path> all;
    for (fs::directory_iterator it(sysfs_dir, ec), end; !ec && it != end; it.increment(ec))
      all.push_back(it->path());
    if (all.size() != 1) {
      std::fprintf(stderr,
                   "hmbtrace-cmd ctrl: %s areas under %s: name one with --device (see "
                   "hmbtrace-cmd status)\n",
                   all.empty() ? "no" : "several", sysfs_dir.c_str());
      return all.empty() ? 1 : 2;
    }
    dir = all[0];
  }
  if (!fs::is_directory(dir / "ctrl", ec)) {
    std::fprintf(stderr,
                 "hmbtrace-cmd ctrl: %s has no ctrl/ directory: is hmb_trace.ko loaded, and "
                 "recent enough?\n",
                 dir.c_str());
    return 1;
  }
  std::vector<CtrlRequest> reqs;
  if (Status s = CtrlRequests(args, kCtrlMaxEventId, &reqs); !s.ok()) {
    std::fprintf(stderr, "hmbtrace-cmd ctrl: %s\n", s.message().c_str());
    return 2;
  }
  for (const CtrlRequest& r : reqs) {
    int err = WriteValue(dir / "ctrl" / r.file, r.value + "\n");
    if (err) {
      std::fprintf(stderr, "hmbtrace-cmd ctrl: %s: %s\n", (dir / "ctrl" / r.file).c_str(),
                   CtrlErrorText(err).c_str());
      return 1;
    }
  }
  std::printf("%s: tracing %s, ring_mode %s, event_mask %s (as acknowledged by the firmware)\n",
              dir.filename().c_str(), ReadLine(dir / "ctrl" / "tracing").c_str(),
              ReadLine(dir / "ctrl" / "ring_mode").c_str(),
              ReadLine(dir / "ctrl" / "event_mask").c_str());
  // A module without the freeze has no such files: print nothing for it.
  if (fs::exists(dir / "ctrl" / "freeze", ec)) {
    std::printf("%s: freeze %s, freeze_config %s\n", dir.filename().c_str(),
                ReadLine(dir / "ctrl" / "freeze").c_str(),
                ReadLine(dir / "ctrl" / "freeze_config").c_str());
  }
  return 0;
}

}  // namespace hmbtrace
