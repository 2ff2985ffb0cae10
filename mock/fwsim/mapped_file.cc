// SPDX-License-Identifier: GPL-2.0-only
#include "mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace hmbtrace {

namespace {

std::string ErrnoMessage(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

}  // namespace

Result<MappedFile> MappedFile::Create(const std::string& path, uint64_t size) {
  if (size == 0)
    return Status::Error("cannot map an empty area: " + path);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::Error(ErrnoMessage("cannot open", path));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    Status err = Status::Error(ErrnoMessage("cannot stat", path));
    close(fd);
    return err;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return Status::Error("not a regular file: " + path);
  }
  if (static_cast<uint64_t>(st.st_size) != size &&
      ftruncate(fd, static_cast<off_t>(size)) != 0) {
    Status err = Status::Error(ErrnoMessage("cannot resize", path));
    close(fd);
    return err;
  }
  void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    Status err = Status::Error(ErrnoMessage("cannot map", path));
    close(fd);
    return err;
  }
  return MappedFile(fd, static_cast<uint8_t*>(data), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  Reset();
}

void MappedFile::Reset() {
  if (data_)
    munmap(data_, size_);
  if (fd_ >= 0)
    close(fd_);
  data_ = nullptr;
  fd_ = -1;
  size_ = 0;
}

}  // namespace hmbtrace
