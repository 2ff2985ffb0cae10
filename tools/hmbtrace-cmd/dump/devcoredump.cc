// SPDX-License-Identifier: GPL-2.0-only
#include "dump/devcoredump.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

#include "capture/capture.h"
#include "dump/dump_file.h"
#include "dump/dump_info.h"
#include "live/stop_signals.h"

namespace hmbtrace {
namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0)
      close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

std::string ErrnoText(int err) {
  if (err == EACCES || err == EPERM)
    return std::string(std::strerror(err)) + ": run as root";
  return std::strerror(err);
}

// Reads the whole of `path` (a sysfs binary attribute gives its size as
// 0 or a page: read to the end). Returns 0 or an errno.
int ReadAll(const std::string& path, std::vector<uint8_t>* out) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    return errno;
  out->clear();
  uint8_t buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    if (n == 0)
      return 0;
    if (out->size() + static_cast<size_t>(n) > kMaxDumpBytes)
      return EFBIG;
    out->insert(out->end(), buf, buf + n);
  }
}

int WriteAll(int fd, const uint8_t* p, size_t n) {
  while (n) {
    const ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

// Whether `path` starts with the dump magic, without reading the rest
// (another driver's dump may be large). Returns 0 or an errno.
int HasMagic(const std::string& path, bool* ours) {
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    return errno;
  uint8_t magic[8];
  size_t got = 0;
  while (got < sizeof(magic)) {
    const ssize_t n = read(fd.get(), magic + got, sizeof(magic) - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      break;
    got += static_cast<size_t>(n);
  }
  *ours = HasDumpMagic(std::span<const uint8_t>(magic, got));
  return 0;
}

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// Writes `bytes` to dir/name (name-1, name-2, ... if taken) through a
// temporary file renamed into place. Sets *path.
Status WriteAtomically(const std::string& dir,
                       const std::string& name,
                       const std::vector<uint8_t>& bytes,
                       std::string* path) {
  const std::string stem = name.substr(0, name.size() - std::string(".hmbdump").size());
  std::string target = dir + "/" + name;
  for (int i = 1; Exists(target); i++) {
    if (i > 999)
      return Status::Error(dir + "/" + name + ": exists, and so do 999 others of that name");
    target = dir + "/" + stem + "-" + std::to_string(i) + ".hmbdump";
  }
  std::string tmp = dir + "/." + name + ".XXXXXX";
  Fd fd(mkostemp(tmp.data(), O_CLOEXEC));
  if (fd.get() < 0)
    return Status::Error(dir + ": cannot create a file: " + ErrnoText(errno));
  int err = WriteAll(fd.get(), bytes.data(), bytes.size());
  if (!err && fsync(fd.get()) != 0)
    err = errno;
  if (!err && fchmod(fd.get(), 0644) != 0)
    err = errno;
  if (close(fd.Release()) != 0 && !err)
    err = errno;
  if (!err && rename(tmp.c_str(), target.c_str()) != 0)
    err = errno;
  if (err) {
    unlink(tmp.c_str());
    return Status::Error(target + ": " + ErrnoText(err));
  }
  *path = target;
  return {};
}

std::string SafeName(const std::string& name) {
  std::string out;
  for (char ch : name)
    out += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.' || ch == '-')
               ? ch
               : '_';
  return out.empty() ? "area" : out;
}

}  // namespace

std::string DevcoredumpDir() {
  const char* env = std::getenv(kDevcoredumpDirEnv);
  return env && *env ? env : kDefaultDevcoredumpDir;
}

std::string DumpFileName(const std::string& area_name, uint64_t taken_real_ns, uint32_t gen) {
  return "hmb-" + SafeName(area_name) + "-" + UtcFileTime(taken_real_ns) + "-" +
         std::to_string(gen) + ".hmbdump";
}

Status SaveDevcoredumps(const SaveOptions& options, std::vector<SavedDump>* saved) {
  const std::string& root = options.sysfs_dir;
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(root.c_str()), closedir);
  if (!d) {
    if (errno == ENOENT)
      return Status::Error(root +
                           ": no such directory: no devcoredump support in this kernel "
                           "(CONFIG_DEV_COREDUMP)");
    return Status::Error(root + ": " + ErrnoText(errno));
  }
  std::vector<std::string> names;
  while (const dirent* e = readdir(d.get())) {
    const std::string n = e->d_name;
    if (n.rfind("devcd", 0) == 0)
      names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    const std::string data_path = root + "/" + n + "/data";
    bool ours = false;
    if (const int err = HasMagic(data_path, &ours); err) {
      if (err == ENOENT)
        continue;  // dismissed or timed out since the listing
      return Status::Error(data_path + ": " + ErrnoText(err));
    }
    if (!ours)
      continue;  // another driver's: left alone
    std::vector<uint8_t> bytes;
    if (const int err = ReadAll(data_path, &bytes); err) {
      if (err == ENOENT)
        continue;
      return Status::Error(data_path + ": " + ErrnoText(err));
    }
    SavedDump s;
    s.devcd = n;
    char link[512];
    const ssize_t len =
        readlink((root + "/" + n + "/failing_device").c_str(), link, sizeof(link) - 1);
    if (len > 0) {
      link[len] = '\0';
      const char* base = std::strrchr(link, '/');
      s.device = base ? base + 1 : link;
    }
    // The name comes from the header; a dump too damaged to parse is
    // still saved (it is the only copy), named by the time it was saved.
    Result<Dump> dump = ParseDump(bytes, data_path);
    std::string name;
    std::string what;
    if (dump.ok()) {
      const DumpHeader& h = dump->header;
      name = DumpFileName(h.name, h.taken_real_ns, h.producer_gen);
      what = "area " + Printable(h.name) + ", generation " + std::to_string(h.producer_gen) + ", " +
             DumpReasonName(h.reason) + ", " + std::to_string(dump->records.size()) + " records" +
             (dump->problems.empty() ? "" : ", with problems (see dump info)");
    } else {
      struct timespec now {};
      clock_gettime(CLOCK_REALTIME, &now);
      name = DumpFileName("unreadable", static_cast<uint64_t>(now.tv_sec) * 1000000000u, 0);
      what = "unreadable: " + dump.message();
    }
    if (Status st = WriteAtomically(options.dir, name, bytes, &s.path); !st.ok())
      return st;
    if (!options.keep) {
      Fd fd(open(data_path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
      int err = fd.get() < 0 ? errno : WriteAll(fd.get(), reinterpret_cast<const uint8_t*>("1"), 1);
      if (err && err != ENOENT)
        return Status::Error(data_path + ": saved as " + s.path +
                             ", but not dismissed: " + ErrnoText(err));
    }
    s.line = s.path + ": " + n + (s.device.empty() ? "" : " of " + s.device) + ", " + what +
             (options.keep ? " (kept in devcoredump)" : "");
    saved->push_back(std::move(s));
  }
  return {};
}

int RunDumpSave(const SaveOptions& options, bool wait) {
  struct stat st;
  if (stat(options.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "hmbtrace-cmd dump save: %s: not a directory\n", options.dir.c_str());
    return 1;
  }
  std::unique_ptr<SignalScope> signals;
  if (wait)
    signals = std::make_unique<SignalScope>(SignalScope::Options{});
  uint64_t total = 0;
  for (;;) {
    std::vector<SavedDump> saved;
    const Status s = SaveDevcoredumps(options, &saved);
    for (const SavedDump& d : saved)
      std::printf("%s\n", d.line.c_str());
    std::fflush(stdout);
    total += saved.size();
    if (!s.ok()) {
      std::fprintf(stderr, "hmbtrace-cmd dump save: %s\n", s.message().c_str());
      return 1;
    }
    if (!wait)
      break;
    // No inotify on sysfs: a look every second. A signal ends the sleep.
    struct timespec second {
      1, 0
    };
    while (!SignalScope::stop_signal() && nanosleep(&second, &second) != 0 && errno == EINTR) {
    }
    if (SignalScope::stop_signal())
      break;
  }
  if (!wait && total == 0)
    std::fprintf(stderr,
                 "hmbtrace-cmd dump save: no pending crash dump of an HMB trace area in %s\n",
                 options.sysfs_dir.c_str());
  return 0;
}

}  // namespace hmbtrace
