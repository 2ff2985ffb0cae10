// SPDX-License-Identifier: GPL-2.0-only
// A file mapped MAP_SHARED, read-write: the HMB trace area as the firmware
// simulator sees it. Owns the descriptor and the mapping.
#ifndef HMBTRACE_MOCK_FWSIM_MAPPED_FILE_H_
#define HMBTRACE_MOCK_FWSIM_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "status.h"

namespace hmbtrace {

class MappedFile {
 public:
  // Opens or creates |path|, sets its length to |size| bytes (an existing
  // file keeps its contents up to that length, so a reader that already
  // mapped it is not cut short) and maps it shared.
  static Result<MappedFile> Create(const std::string& path, uint64_t size);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<uint8_t> bytes() const { return {data_, size_}; }

 private:
  MappedFile(int fd, uint8_t* data, size_t size)
      : fd_(fd), data_(data), size_(size) {}
  void Reset();

  int fd_ = -1;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_MOCK_FWSIM_MAPPED_FILE_H_
