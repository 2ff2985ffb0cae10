// SPDX-License-Identifier: GPL-2.0-only
// hmbtrace-cmd dict on the firmwares of producer/printf/: the sample's
// dictionary as the decoders read it, and each firmware it must refuse
// refused with the file and line of the site.
#include "dict/printf_dict.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dict/dict.h"
#include "dict/dict_file.h"
#include "dict/elf_file.h"
#include "dict/printf_firmwares_testutil.h"
#include "dictionary.h"
#include "format.h"
#include "hmb_trace_abi.h"

namespace hmbtrace {
namespace {

TEST(PrintfDict, SampleSitesBecomeEventsTypedByConversionAndArgument) {
  auto f = MakeDictFile(g_sample, true);
  ASSERT_TRUE(f.ok()) << f.message();
  std::string error;
  auto dict = Dictionary::Parse(f->dict, &error);
  ASSERT_TRUE(dict) << error;
  ASSERT_EQ(dict->events().size(), 4u);

  const EventDesc& gc = dict->events()[0];
  EXPECT_EQ(gc.id, 0x8000);
  EXPECT_EQ(gc.name, "printf_sample_sites_12");
  EXPECT_EQ(gc.format, "gc: victim=%u valid=%u");
  ASSERT_EQ(gc.fields.size(), 2u);
  EXPECT_EQ(gc.fields[0].name, "victim");
  EXPECT_EQ(gc.fields[0].type, HMB_TRACE_TYPE_U32);
  EXPECT_EQ(gc.fields[1].name, "valid");
  EXPECT_EQ(gc.fields[1].type, HMB_TRACE_TYPE_U16);
  EXPECT_EQ(gc.fields[1].offset, 4);

  const EventDesc& temp = dict->events()[1];
  ASSERT_EQ(temp.fields.size(), 1u);
  EXPECT_EQ(temp.fields[0].type, HMB_TRACE_TYPE_S8) << "int8_t with %d";
  const uint8_t minus5[] = {0xfb};
  EXPECT_EQ(FormatEvent(temp, minus5), "thermal: delta=-5");

  const EventDesc& erase = dict->events()[2];
  ASSERT_EQ(erase.fields.size(), 2u);
  EXPECT_EQ(erase.fields[0].display, HMB_TRACE_DISPLAY_HEX);
  EXPECT_EQ(erase.fields[1].name, "arg1") << "no word= before it";
  EXPECT_EQ(erase.fields[1].type, HMB_TRACE_TYPE_U64) << "uint64_t, whatever %llx says";

  EXPECT_EQ(dict->events()[3].fields.size(), 0u);
  EXPECT_EQ(dict->events()[3].id, 0x8003);
}

TEST(PrintfDict, BuildIdIsTheElfs) {
  auto f = MakeDictFile(g_sample, true);
  ASSERT_TRUE(f.ok());
  std::ifstream in(g_sample, std::ios::binary);
  std::vector<uint8_t> b{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto elf = ParseElf(b);
  ASSERT_TRUE(elf.ok());
  ASSERT_EQ(elf->build_id.size(), 20u);
  EXPECT_TRUE(std::equal(elf->build_id.begin(), elf->build_id.end(), f->build_id.begin()));
}

TEST(PrintfDict, WhatTheDictionaryCannotExpressNamesFileAndLine) {
  auto f = MakeDictFile(g_bad, true);
  ASSERT_FALSE(f.ok());
  const std::string& m = f.message();
  EXPECT_NE(m.find("printf_bad_fw.c:16: conversion %s cannot be expressed"), std::string::npos) << m;
  EXPECT_NE(m.find("printf_bad_fw.c:17: more conversions than the 1 arguments"), std::string::npos) << m;
  EXPECT_NE(m.find("printf_bad_fw.c:18: 2 arguments for 1 conversions"), std::string::npos) << m;
  EXPECT_NE(m.find("printf_bad_fw.c:19: argument 1 is not an integer"), std::string::npos) << m;
  EXPECT_NE(m.find("printf_bad_fw.c:20: a '*' width"), std::string::npos) << m;
}

TEST(PrintfDict, IdCollisionNamesBothSites) {
  auto f = MakeDictFile(g_collide, true);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.message().find("id 32768 collides with"), std::string::npos) << f.message();
  EXPECT_NE(f.message().find("printf_collide.c:13"), std::string::npos) << f.message();
  EXPECT_NE(f.message().find("printf_sample_sites.c:12"), std::string::npos) << f.message();
}

TEST(PrintfDict, NameTooLong) {
  auto f = MakeDictFile(g_long_name, true);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.message().find("printf_sample_with_a_long_file_name.c:12: event name "
                             "printf_sample_with_a_long_file_name_12 too long"),
            std::string::npos)
      << f.message();
}

TEST(PrintfDict, NoSectionIsAClearError) {
  auto f = MakeDictFile(g_stripped, true);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.message(), g_stripped +
                             ": no .hmb_trace_printf section (no HMB_TRACE_PRINTF call site, "
                             "or stripped)");
}

TEST(PrintfDict, DamagedSitesAreErrorsWithTheirOffset) {
  std::vector<uint8_t> b(2 * kPrintfSiteLen, 0);
  EXPECT_NE(ParsePrintfSites(b).message().find("at offset 0: not a printf site"),
            std::string::npos);
  b.resize(300);
  EXPECT_NE(ParsePrintfSites(b).message().find("not a multiple of 256"), std::string::npos);
}

TEST(DictFile, RoundTripsAndRefusesCutShort) {
  DictFile f;
  f.build_id[0] = 0xab;
  f.build_id[19] = 0xcd;
  f.dict = {1, 2, 3, 4, 5, 6, 7, 8};
  auto bytes = EncodeDictFile(f);
  auto back = DecodeDictFile(bytes);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->build_id, f.build_id);
  EXPECT_EQ(back->dict, f.dict);
  for (size_t len = 0; len < bytes.size(); len++) {
    std::span<const uint8_t> cut(bytes.data(), len);
    EXPECT_FALSE(DecodeDictFile(cut).ok()) << len;
  }
  EXPECT_EQ(BuildIdHex(f.build_id), "ab" + std::string(36, '0') + "cd");
}

}  // namespace
}  // namespace hmbtrace

int main(int argc, char** argv) { return hmbtrace::RunWithPrintfFirmwares(argc, argv); }
