// SPDX-License-Identifier: GPL-2.0-only
#include "export/write_behind.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace hmbtrace {
namespace {

// In the working directory (the build tree: on disk, where the exports
// go; a tmpfs, as /tmp may be, cannot drop what it holds).
std::string TempPath() {
  return "write_behind_unittest." + std::to_string(getpid()) + ".tmp";
}

// Pages of `path` in the page cache, from mincore() on a mapping of it.
size_t ResidentBytes(const std::string& path, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fileno(f), 0);
  std::fclose(f);
  if (map == MAP_FAILED)
    return size;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((size + page - 1) / page);
  size_t resident = 0;
  if (mincore(map, size, in.data()) == 0)
    for (unsigned char c : in)
      resident += (c & 1) ? page : 0;
  munmap(map, size);
  return resident;
}

TEST(WriteBehind, ALongTraceIsWrittenWholeAndLeavesThePageCache) {
  const std::string path = TempPath();
  constexpr size_t kSize = 12 * kWriteBehindPiece + 12345;
  std::FILE* f = OpenWriteBehind(path);
  ASSERT_NE(f, nullptr);
  std::string chunk(100000, '\0');
  size_t written = 0;
  while (written < kSize) {
    const size_t n = std::min(chunk.size(), kSize - written);
    for (size_t i = 0; i < n; i++)
      chunk[i] = static_cast<char>((written + i) * 7 % 251);
    ASSERT_EQ(std::fwrite(chunk.data(), 1, n, f), n);
    written += n;
  }
  ASSERT_EQ(std::fclose(f), 0);
  // At most the pieces not yet dropped are still cached (before reading it
  // back, which brings it all in again).
  const size_t resident = ResidentBytes(path, kSize);
  EXPECT_LE(resident, (kWriteBehindLag + 1) * kWriteBehindPiece + (1u << 20))
      << resident / (1 << 20) << " MiB of " << kSize / (1 << 20) << " MiB cached";
  // Every byte is there.
  f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  size_t read = 0, wrong = 0, n;
  while ((n = std::fread(chunk.data(), 1, chunk.size(), f)) > 0) {
    for (size_t i = 0; i < n; i++)
      wrong += chunk[i] != static_cast<char>((read + i) * 7 % 251);
    read += n;
  }
  std::fclose(f);
  unlink(path.c_str());
  EXPECT_EQ(read, kSize);
  EXPECT_EQ(wrong, 0u);
}

TEST(WriteBehind, AWriteErrorShowsOnTheStream) {
  // /dev/full: every write fails with ENOSPC, as a full disk would.
  std::FILE* f = OpenWriteBehind("/dev/full");
  ASSERT_NE(f, nullptr);
  const std::string data(1 << 16, 'x');
  EXPECT_LT(std::fwrite(data.data(), 1, data.size(), f), data.size());
  EXPECT_TRUE(std::ferror(f));
  std::fclose(f);
}

TEST(WriteBehind, AnUnwritablePathIsAnError) {
  EXPECT_EQ(OpenWriteBehind("/nonexistent-dir/x.pftrace"), nullptr);
  EXPECT_EQ(errno, ENOENT);
}

}  // namespace
}  // namespace hmbtrace
