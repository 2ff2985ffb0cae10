// SPDX-License-Identifier: GPL-2.0-only
// The page reader over each committed capture yields exactly the events
// libtracecmd yields, CPU by CPU of every buffer (top and instances): cpu,
// timestamp, common_type, payload bytes and missed-event counts
// (ftrace_file_pages_c.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "capture/ftrace_file_pages_c.h"
#include "capture/ftrace_pages_testutil.h"

namespace hmbtrace {
namespace {

struct Event {
  int buffer;
  int cpu;
  uint64_t ts;
  int common_type;
  std::vector<uint8_t> payload;
  int64_t missed_events;
  bool operator==(const Event&) const = default;
};

void Collect(const ftrace_test_event* ev, void* data) {
  const auto* p = static_cast<const uint8_t*>(ev->data);
  static_cast<std::vector<Event>*>(data)->push_back(
      Event{ev->buffer, ev->cpu, ev->ts, ev->common_type, std::vector<uint8_t>(p, p + ev->size),
            ev->missed_events});
}

std::string Describe(const Event& e) {
  return "buffer " + std::to_string(e.buffer) + " cpu " + std::to_string(e.cpu) + " ts " +
         std::to_string(e.ts) + " type " + std::to_string(e.common_type) + " size " +
         std::to_string(e.payload.size()) + " missed " + std::to_string(e.missed_events);
}

class PagesMatchTracecmd : public testing::TestWithParam<const char*> {};

TEST_P(PagesMatchTracecmd, SameEventsCpuByCpu) {
  std::vector<Event> reference, pages;
  ASSERT_EQ(ftrace_test_read_by_tracecmd(GetParam(), Collect, &reference), 0);
  uint64_t page_errors = 0;
  ASSERT_EQ(ftrace_test_read_by_pages(GetParam(), Collect, &pages, &page_errors, nullptr), 0);
  EXPECT_EQ(page_errors, 0u);
  ASSERT_FALSE(reference.empty());
  ASSERT_EQ(pages.size(), reference.size());
  for (size_t i = 0; i < reference.size(); i++)
    ASSERT_EQ(pages[i], reference[i]) << "event " << i << ": pages " << Describe(pages[i])
                                      << ", libtracecmd " << Describe(reference[i]);
}

INSTANTIATE_TEST_SUITE_P(CommittedCaptures,
                         PagesMatchTracecmd,
                         testing::Values(HMBTRACE_FIXTURE,
                                         HMBTRACE_MARKERS_FIXTURE,
                                         HMBTRACE_CMD_JOIN_FIXTURE,
                                         HMBTRACE_CMD_JOIN_BOOT_FIXTURE,
                                         HMBTRACE_CMD_JOIN_INSTANCE_FIXTURE,
                                         HMBTRACE_CLOCK_FIXTURE));

// A compressed capture (version 7) has no pages in the file: libtracecmd's walk reads it.
TEST(FtraceFilePages, CompressedCaptureIsNotReadByPages) {
  std::vector<Event> pages;
  uint64_t page_errors = 0;
  EXPECT_EQ(ftrace_test_read_by_pages(HMBTRACE_V7_FIXTURE, Collect, &pages, &page_errors, nullptr),
            1);
  EXPECT_TRUE(pages.empty());
}

// A copy of `path` with `bytes` written at `offset`: its path.
std::string CorruptCopy(const char* path, uint64_t offset, const std::vector<uint8_t>& bytes) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::memcpy(data.data() + offset, bytes.data(), bytes.size());
  const std::string out = testing::TempDir() + "ftrace_file_pages_corrupt.dat";
  std::ofstream(out, std::ios::binary)
      .write(data.data(), static_cast<std::streamsize>(data.size()));
  return out;
}

// A page whose commit reaches past its end is counted, located and
// skipped; the other pages' events stand.
TEST(FtraceFilePages, CorruptPageIsCountedLocatedAndSkipped) {
  uint64_t page = 0;
  uint32_t page_size = 0;
  ASSERT_EQ(ftrace_test_middle_page(HMBTRACE_MARKERS_FIXTURE, &page, &page_size), 0);
  ASSERT_EQ(page % page_size, 0u);
  // commit (a little-endian long at 8) of the page size: past its data.
  const std::string bad =
      CorruptCopy(HMBTRACE_MARKERS_FIXTURE, page + 8, {0x00, 0x10, 0, 0, 0, 0, 0, 0});
  std::vector<Event> reference, pages;
  ASSERT_EQ(ftrace_test_read_by_tracecmd(HMBTRACE_MARKERS_FIXTURE, Collect, &reference), 0);
  uint64_t page_errors = 0;
  ftrace_page_error first{};
  ASSERT_EQ(ftrace_test_read_by_pages(bad.c_str(), Collect, &pages, &page_errors, &first), 0);
  EXPECT_EQ(page_errors, 1u);
  EXPECT_EQ(first.offset, page + 8);
  EXPECT_EQ(first.status, FTRACE_PAGE_COMMIT_PAST_END);
  // Every event of the other pages, in order: reference less one page's.
  ASSERT_LT(pages.size(), reference.size());
  ASSERT_FALSE(pages.empty());
  size_t r = 0;
  for (const Event& e : pages) {
    while (r < reference.size() && !(reference[r] == e))
      r++;
    ASSERT_LT(r, reference.size()) << Describe(e) << " is not libtracecmd's";
    r++;
  }
  std::remove(bad.c_str());
}

// The readers walk a v6 capture from its pages; the reference walk when asked.
TEST(FtraceFilePages, ReadersWalkPagesUnlessTheReferenceIsAsked) {
  EXPECT_EQ(ftrace_test_walk_reads_pages(HMBTRACE_CMD_JOIN_INSTANCE_FIXTURE), 1);
  EXPECT_EQ(ftrace_test_walk_reads_pages(HMBTRACE_V7_FIXTURE), 0);
  ASSERT_EQ(setenv("HMBTRACE_REFERENCE_WALK", "1", 1), 0);
  EXPECT_EQ(ftrace_test_walk_reads_pages(HMBTRACE_CMD_JOIN_INSTANCE_FIXTURE), 0);
  ASSERT_EQ(setenv("HMBTRACE_REFERENCE_WALK", "0", 1), 0);
  EXPECT_EQ(ftrace_test_walk_reads_pages(HMBTRACE_CMD_JOIN_INSTANCE_FIXTURE), 1);
  ASSERT_EQ(unsetenv("HMBTRACE_REFERENCE_WALK"), 0);
}

}  // namespace
}  // namespace hmbtrace
