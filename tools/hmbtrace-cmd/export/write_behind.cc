// SPDX-License-Identifier: GPL-2.0-only
#include "export/write_behind.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace hmbtrace {
namespace {

struct Cookie {
  int fd = -1;
  bool regular = false;
  off_t written = 0;  // bytes written to fd
  off_t started = 0;  // pieces [0, started) are being written back
};

ssize_t Write(void* c, const char* data, size_t size) {
  auto* cookie = static_cast<Cookie*>(c);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(cookie->fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return done ? static_cast<ssize_t>(done) : -1;
    }
    done += static_cast<size_t>(n);
  }
  cookie->written += static_cast<off_t>(done);
  if (!cookie->regular)
    return static_cast<ssize_t>(done);
  constexpr off_t kPiece = static_cast<off_t>(kWriteBehindPiece);
  constexpr off_t kLag = static_cast<off_t>(kWriteBehindLag) * kPiece;
  while (cookie->started + kPiece <= cookie->written) {
    const off_t piece = cookie->started;
    // Its writeback starts now; the piece kLag behind it is (or is made) on
    // disk and leaves the cache. Failures here only cost the saving: the
    // data is written either way, and errors surface at close.
    sync_file_range(cookie->fd, piece, kPiece, SYNC_FILE_RANGE_WRITE);
    if (piece >= kLag) {
      const off_t old = piece - kLag;
      sync_file_range(cookie->fd, old, kPiece,
                      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                          SYNC_FILE_RANGE_WAIT_AFTER);
      posix_fadvise(cookie->fd, old, kPiece, POSIX_FADV_DONTNEED);
    }
    cookie->started += kPiece;
  }
  return static_cast<ssize_t>(done);
}

int Close(void* c) {
  auto* cookie = static_cast<Cookie*>(c);
  const int ret = ::close(cookie->fd);
  delete cookie;
  return ret;
}

}  // namespace

std::FILE* OpenWriteBehind(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    return nullptr;
  struct stat st {};
  auto* cookie = new Cookie;
  cookie->fd = fd;
  cookie->regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  cookie_io_functions_t io{};
  io.write = Write;
  io.close = Close;
  std::FILE* f = fopencookie(cookie, "w", io);
  if (!f) {
    const int err = errno;
    ::close(fd);
    delete cookie;
    errno = err;
  }
  return f;
}

}  // namespace hmbtrace
