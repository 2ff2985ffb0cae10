// SPDX-License-Identifier: GPL-2.0-only
// elf_file.h on a real firmware ELF (producer/printf/printf_sample_fw),
// whole, cut short at every length and damaged at every header byte.
#include "dict/elf_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dict/printf_firmwares_testutil.h"

namespace hmbtrace {
namespace {

std::vector<uint8_t> Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every section a parse returns lies inside the bytes it was given.
void ExpectInside(const ElfFile& f, const std::vector<uint8_t>& b) {
  for (const ElfSection& s : f.sections) {
    if (s.bytes.empty()) continue;
    EXPECT_GE(s.bytes.data(), b.data());
    EXPECT_LE(s.bytes.data() + s.bytes.size(), b.data() + b.size());
  }
}

TEST(ElfFile, FindsThePrintfSectionNotLoadedAndTheBuildId) {
  const auto b = Read(g_sample);
  auto f = ParseElf(b);
  ASSERT_TRUE(f.ok()) << f.message();
  const ElfSection* s = f->Find(".hmb_trace_printf");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->flags & kElfShfAlloc, 0u) << "the sites would be in the device image";
  EXPECT_EQ(s->bytes.size(), 4u * 256) << "four sites";
  EXPECT_EQ(f->build_id.size(), 20u) << "--build-id=sha1";
  ASSERT_NE(f->Find(".text"), nullptr);
  EXPECT_NE(f->Find(".text")->flags & kElfShfAlloc, 0u);
}

TEST(ElfFile, StrippedHasNoPrintfSection) {
  auto f = ParseElf(Read(g_stripped));
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->Find(".hmb_trace_printf"), nullptr);
}

TEST(ElfFile, NotElf) {
  const std::vector<uint8_t> b = {'#', '!', '/', 'b', 'i', 'n'};
  auto f = ParseElf(b);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.message().find("no ELF magic"), std::string::npos) << f.message();
  EXPECT_FALSE(ParseElf({}).ok());
}

TEST(ElfFile, CutShortAtAnyLengthIsAnErrorOrInside) {
  const auto whole = Read(g_sample);
  ASSERT_GT(whole.size(), 1000u);
  // The section header table is at the end: every cut loses it. Every
  // length of the headers, then strides: an ASan build's sample is ~1 MB
  // (its runtime), and each cut is a copy of its own size, so that a read
  // past the cut is caught.
  const size_t far = std::max<size_t>(97, whole.size() / 256);
  for (size_t len = 0; len < whole.size();
       len += (len < 256 ? 1 : len < 65536 ? 97 : far)) {
    std::vector<uint8_t> b(whole.begin(), whole.begin() + len);
    auto f = ParseElf(b);
    EXPECT_FALSE(f.ok()) << "cut at " << len;
  }
}

TEST(ElfFile, DamagedHeadersAreErrorsOrInside) {
  const auto whole = Read(g_sample);
  auto good = ParseElf(whole);
  ASSERT_TRUE(good.ok());
  // The section header table's offset, from the ELF64 header.
  uint64_t shoff = 0;
  for (int i = 0; i < 8; i++) shoff |= uint64_t{whole[40 + i]} << (8 * i);
  std::vector<size_t> offsets;
  for (size_t i = 0; i < 64; i++) offsets.push_back(i);
  for (size_t i = shoff; i < whole.size(); i++) offsets.push_back(i);
  size_t errors = 0;
  // One copy, each damage undone after it (a copy per damage made this
  // test take minutes on an ASan build's ~1 MB sample).
  auto b = whole;
  for (size_t off : offsets) {
    for (uint8_t v : {0x00, 0x7f, 0xff}) {
      b[off] = v;
      auto f = ParseElf(b);
      if (!f.ok()) {
        errors++;
        EXPECT_NE(f.message().find("offset"), std::string::npos) << f.message();
      } else {
        ExpectInside(f.value(), b);
      }
      b[off] = whole[off];
    }
  }
  EXPECT_GT(errors, 0u);
}

}  // namespace
}  // namespace hmbtrace

int main(int argc, char** argv) { return hmbtrace::RunWithPrintfFirmwares(argc, argv); }
