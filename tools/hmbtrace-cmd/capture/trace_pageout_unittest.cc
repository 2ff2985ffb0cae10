// SPDX-License-Identifier: GPL-2.0-only
#include "capture/trace_pageout_c.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <event-parse.h>
#include <gtest/gtest.h>

namespace hmbtrace {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kPages = 3 * TRACE_PAGEOUT_BATCH + 5;

// The Rss of the mapping that starts at base, in kB (/proc/self/smaps); -1: not found.
long RssKb(const void *base) {
  FILE *f = std::fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  bool in = false;
  long kb = -1;
  while (std::fgets(line, sizeof(line), f)) {
    unsigned long start, stop;
    if (std::sscanf(line, "%lx-%lx ", &start, &stop) == 2 && std::strchr(line, '-') &&
        line[0] != 'R') {
      in = start == reinterpret_cast<uintptr_t>(base);
      continue;
    }
    if (in && std::sscanf(line, "Rss: %ld kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb;
}

// A walk over pages [0, n) of base on one CPU, a record in each page.
void Walk(trace_pageout *p, tracecmd_input *handle, const unsigned char *base, size_t n) {
  for (size_t i = 0; i < n; i++) {
    tep_record rec;
    std::memset(&rec, 0, sizeof(rec));
    rec.data = const_cast<unsigned char *>(base) + i * kPage + 16;
    trace_pageout_behind(p, handle, &rec, 0);
  }
}

// A read-only private mapping of a temporary file of kPages pages (bytes
// from Byte()), every page read once so that all are resident.
class ResidentFile {
 public:
  static char Byte(size_t i) { return static_cast<char>(i * 7 + i / kPage); }
  ResidentFile() {
    char path[] = "/tmp/trace_pageout_unittest.XXXXXX";
    fd_ = mkstemp(path);
    if (fd_ < 0) return;
    unlink(path);
    std::string bytes(kPages * kPage, '\0');
    for (size_t i = 0; i < bytes.size(); i++) bytes[i] = Byte(i);
    if (write(fd_, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()) ||
        fstat(fd_, &st_) != 0)
      return;
    void *map = mmap(nullptr, bytes.size(), PROT_READ, MAP_PRIVATE, fd_, 0);
    if (map == MAP_FAILED) return;
    base_ = static_cast<const unsigned char *>(map);
    same_ = std::memcmp(base_, bytes.data(), bytes.size()) == 0;
  }
  ~ResidentFile() {
    if (base_) munmap(const_cast<unsigned char *>(base_), kPages * kPage);
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return base_ && same_; }
  const unsigned char *base() const { return base_; }
  dev_t dev() const { return st_.st_dev; }
  ino_t ino() const { return st_.st_ino; }
  // The bytes still read as written.
  bool Same() const {
    for (size_t i = 0; i < kPages * kPage; i++)
      if (base_[i] != static_cast<unsigned char>(Byte(i))) return false;
    return true;
  }

 private:
  int fd_ = -1;
  struct stat st_ {};
  const unsigned char *base_ = nullptr;
  bool same_ = false;
};

// A read-only private mapping of the file: the pages passed leave the
// process (MADV_DONTNEED), a batch at a time, the rest at the flush; the
// file's bytes read the same after.
TEST(TracePageout, FileMappingGivenBackInBatchesThenFlushed) {
  ResidentFile file;
  ASSERT_TRUE(file.ok());
  const unsigned char *base = file.base();
  ASSERT_EQ(RssKb(base), static_cast<long>(kPages * kPage / 1024));

  int fake;
  auto *handle = reinterpret_cast<tracecmd_input *>(&fake);
  trace_pageout p;
  trace_pageout_init(&p, &handle, 1, file.dev(), file.ino());
  Walk(&p, handle, base, kPages);
  // At most one batch and the current page are still held.
  long held = RssKb(base);
  EXPECT_GE(held, 0);
  EXPECT_LE(held, static_cast<long>((TRACE_PAGEOUT_BATCH + 1) * kPage / 1024));
  trace_pageout_flush(&p);
  EXPECT_EQ(RssKb(base), 0);
  trace_pageout_free(&p);
  EXPECT_TRUE(file.Same());
}

// Anonymous memory (a compressed capture libtracecmd has read into memory)
// is never dropped: its bytes read the same after the walk, whether the
// file is known or not (inode 0 is what /proc/self/maps shows for it).
void AnonymousKept(dev_t dev, ino_t ino) {
  const size_t len = kPages * kPage;
  void *map = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  auto *base = static_cast<unsigned char *>(map);
  for (size_t i = 0; i < len; i++) base[i] = static_cast<unsigned char>(i * 13 + 1);
  ASSERT_EQ(mprotect(map, len, PROT_READ), 0);  // as read-only as a file mapping

  int fake;
  auto *handle = reinterpret_cast<tracecmd_input *>(&fake);
  trace_pageout p;
  trace_pageout_init(&p, &handle, 1, dev, ino);
  Walk(&p, handle, base, kPages);
  trace_pageout_flush(&p);
  trace_pageout_free(&p);
  size_t wrong = 0;
  for (size_t i = 0; i < len; i++) wrong += base[i] != static_cast<unsigned char>(i * 13 + 1);
  EXPECT_EQ(wrong, 0u);
  munmap(map, len);
}

TEST(TracePageout, AnonymousMemoryKeptWhenTheFileIsUnknown) { AnonymousKept(0, 0); }

TEST(TracePageout, AnonymousMemoryKeptWhenTheFileIsKnown) {
  struct stat st;
  ASSERT_EQ(stat("/proc/self/exe", &st), 0);
  AnonymousKept(st.st_dev, st.st_ino);
}

// Records of a handle the walk was not given, or of a CPU out of range,
// are not the walk's: their pages stay resident (nothing indexed out of
// bounds either), and the walk's own records are still given back after.
TEST(TracePageout, OtherHandlesAndCpusIgnored) {
  ResidentFile file;
  ASSERT_TRUE(file.ok());
  const unsigned char *base = file.base();
  const long all = static_cast<long>(kPages * kPage / 1024);
  ASSERT_EQ(RssKb(base), all);

  int fake, other;
  auto *handle = reinterpret_cast<tracecmd_input *>(&fake);
  trace_pageout p;
  trace_pageout_init(&p, &handle, 1, file.dev(), file.ino());
  for (size_t i = 0; i < kPages; i++) {
    tep_record rec;
    std::memset(&rec, 0, sizeof(rec));
    rec.data = const_cast<unsigned char *>(base) + i * kPage + 16;
    trace_pageout_behind(&p, reinterpret_cast<tracecmd_input *>(&other), &rec, 0);
    trace_pageout_behind(&p, handle, &rec, -1);
    trace_pageout_behind(&p, handle, &rec, TRACE_PAGEOUT_MAX_CPUS);
  }
  trace_pageout_flush(&p);
  EXPECT_EQ(RssKb(base), all) << "pages of records not of this walk were given back";
  Walk(&p, handle, base, kPages);
  trace_pageout_flush(&p);
  EXPECT_EQ(RssKb(base), 0) << "the walk's own pages were kept";
  trace_pageout_free(&p);
  EXPECT_TRUE(file.Same());
}

}  // namespace
}  // namespace hmbtrace
