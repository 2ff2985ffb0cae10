// SPDX-License-Identifier: GPL-2.0-only

#include "format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "decode_test_util.h"
#include "dictionary.h"

namespace hmbtrace {
namespace {

constexpr uint8_t kNo = HMB_TRACE_NO_FIELD;

// Eight integers of every type, at natural alignment.
constexpr hmb_trace_field_desc kInts[] = {
    {"a", 0, 1, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"b", 2, 2, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"c", 4, 4, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"d", 8, 8, HMB_TRACE_TYPE_U64, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"e", 16, 1, HMB_TRACE_TYPE_S8, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"f", 18, 2, HMB_TRACE_TYPE_S16, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"g", 20, 4, HMB_TRACE_TYPE_S32, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
    {"h", 24, 8, HMB_TRACE_TYPE_S64, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
};

constexpr hmb_trace_field_desc kBlob[] = {
    {"blob", 0, 4, HMB_TRACE_TYPE_BYTES, HMB_TRACE_DISPLAY_HEX, 0, nullptr},
};

enum FormatId : uint16_t {
  kDec = 10,
  kHex,
  kFlags,
  kExtra,
  kFewer,
  kLiteral,
  kHugeWidth,
  kBlobId,
  kNoFormat,
};

#define INTS_EVENT(id, name, format)                                         \
  {                                                                          \
    id, HMB_TRACE_ROLE_INSTANT, kNo, kNo, kNo, kNo, kNo, 0, name, format, 8, \
        kInts                                                                \
  }

constexpr hmb_trace_event_desc kFormatEvents[] = {
    INTS_EVENT(kDec, "dec", "%u %u %u %llu %d %d %d %lld"),
    INTS_EVENT(kHex, "hex", "%x %x %lx %llx %x %x %x %llx"),
    INTS_EVENT(kFlags, "flags", "[%5u][%-5u][%03u][%#x][%+d][%+d][%08X][%.3d]"),
    INTS_EVENT(kExtra, "extra", "%u %u %u %u %d %d %d %d x=%u y=%s"),
    INTS_EVENT(kFewer, "fewer", "a=%u only"),
    INTS_EVENT(kLiteral, "literal", "%u%% done, %f %"),
    INTS_EVENT(kHugeWidth, "huge_width", "%999999999u"),
    {kBlobId, HMB_TRACE_ROLE_INSTANT, kNo, kNo, kNo, kNo, kNo, 0, "blob", "%s",
     1, kBlob},
    INTS_EVENT(kNoFormat, "no_format", ""),
};

#undef INTS_EVENT

// Little-endian payload builder.
class Payload {
 public:
  explicit Payload(size_t size) : bytes_(size) {}
  Payload& Put(size_t off, uint64_t v, size_t size) {
    for (size_t i = 0; i < size; i++)
      bytes_.at(off + i) = uint8_t(v >> (8 * i));
    return *this;
  }
  Payload& PutString(size_t off, const std::string& s) {
    for (size_t i = 0; i < s.size(); i++)
      bytes_.at(off + i) = uint8_t(s[i]);
    return *this;
  }
  std::span<const uint8_t> span() const { return bytes_; }
  std::span<const uint8_t> first(size_t n) const { return span().first(n); }

 private:
  std::vector<uint8_t> bytes_;
};

Payload Ints(uint8_t a,
             uint16_t b,
             uint32_t c,
             uint64_t d,
             int8_t e,
             int16_t f,
             int32_t g,
             int64_t h) {
  Payload p(32);
  p.Put(0, a, 1).Put(2, b, 2).Put(4, c, 4).Put(8, d, 8);
  p.Put(16, uint64_t(e), 1).Put(18, uint64_t(f), 2).Put(20, uint64_t(g), 4);
  p.Put(24, uint64_t(h), 8);
  return p;
}

Payload ExtremeInts() {
  return Ints(200, 65535, 4000000000u, std::numeric_limits<uint64_t>::max(), -1,
              -300, std::numeric_limits<int32_t>::min(),
              std::numeric_limits<int64_t>::min());
}

Payload SmallInts() {
  return Ints(7, 42, 0, 255, -5, 5, 0x1234, 1);
}

Payload Command(uint8_t opcode, uint8_t flags);

class FormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    auto dict =
        Dictionary::Parse(test::ProduceDictionary(kFormatEvents), &error);
    ASSERT_TRUE(dict.has_value()) << error;
    formats_.emplace(std::move(*dict));
    dict = Dictionary::Parse(test::ProduceDictionary(test::RealisticEvents()),
                             &error);
    ASSERT_TRUE(dict.has_value()) << error;
    realistic_.emplace(std::move(*dict));
  }

  // FormatRecord(), checked against a FormatPlan of the event (a reader's
  // cache), which must print the same.
  static std::string Checked(const Dictionary& dict,
                             uint16_t id,
                             std::span<const uint8_t> payload) {
    std::string text = FormatRecord(dict, id, payload);
    if (const EventDesc* event = dict.Find(id)) {
      std::string planned;
      FormatPlan(*event).Append(&planned, payload);
      EXPECT_EQ(planned, text) << event->format;
    }
    return text;
  }

  std::string Format(uint16_t id, std::span<const uint8_t> payload) {
    return Checked(*formats_, id, payload);
  }

  std::string Realistic(uint16_t id, std::span<const uint8_t> payload) {
    return Checked(*realistic_, id, payload);
  }

  std::optional<Dictionary> formats_;
  std::optional<Dictionary> realistic_;
};

TEST_F(FormatTest, APlanPrintsWhatTheFormatPrintsForEveryEventAndPayload) {
  const Payload payloads[] = {ExtremeInts(), SmallInts(), Command(2, 0x0d), Command(0x7f, 0)};
  for (const Dictionary* dict : {&*formats_, &*realistic_}) {
    for (const EventDesc& event : dict->events()) {
      for (const Payload& p : payloads) {
        for (size_t len : {size_t{0}, size_t{3}, size_t{8}, p.span().size()})
          Checked(*dict, event.id, p.first(std::min(len, p.span().size())));
      }
    }
  }
}

TEST_F(FormatTest, DecimalConversionsFollowFieldSignedness) {
  EXPECT_EQ(Format(kDec, ExtremeInts().span()),
            "200 65535 4000000000 18446744073709551615 -1 -300 -2147483648 "
            "-9223372036854775808");
}

TEST_F(FormatTest, HexConversionsPrintFieldBitsWithoutSignExtension) {
  EXPECT_EQ(Format(kHex, ExtremeInts().span()),
            "c8 ffff ee6b2800 ffffffffffffffff ff fed4 80000000 "
            "8000000000000000");
}

TEST_F(FormatTest, FlagsWidthAndPrecisionWorkAsInPrintf) {
  EXPECT_EQ(Format(kFlags, SmallInts().span()),
            "[    7][42   ][000][0xff][-5][+5][00001234][001]");
}

TEST_F(FormatTest, ExtraConversionsPrintPlaceholder) {
  EXPECT_EQ(Format(kExtra, SmallInts().span()),
            "7 42 0 255 -5 5 4660 1 x=<?> y=<?>");
}

TEST_F(FormatTest, FieldsWithoutConversionAreNotPrinted) {
  EXPECT_EQ(Format(kFewer, SmallInts().span()), "a=7 only");
  EXPECT_EQ(Format(kNoFormat, SmallInts().span()), "");
}

TEST_F(FormatTest, PercentLiteralAndUnsupportedConversionsAreVerbatim) {
  EXPECT_EQ(Format(kLiteral, SmallInts().span()), "7% done, %f %");
}

TEST_F(FormatTest, HostileWidthIsCapped) {
  const std::string out = Format(kHugeWidth, SmallInts().span());
  EXPECT_EQ(out.size(), 256u);
  EXPECT_EQ(out.back(), '7');
}

TEST_F(FormatTest, FieldsOutsidePayloadPrintTruncated) {
  // a, b and c end within 8 bytes; d..h do not.
  EXPECT_EQ(Format(kDec, SmallInts().first(8)),
            "7 42 0 <truncated> <truncated> <truncated> <truncated> "
            "<truncated>");
  EXPECT_EQ(Format(kDec, SmallInts().first(0)),
            "<truncated> <truncated> <truncated> <truncated> <truncated> "
            "<truncated> <truncated> <truncated>");
  // A field that ends exactly at the end of the payload is complete.
  EXPECT_EQ(Format(kFewer, SmallInts().first(1)), "a=7 only");
}

TEST_F(FormatTest, FixedSizeBytesPrintAsHex) {
  Payload p(6);
  p.Put(0, 0xa1b2c3d4, 4);
  EXPECT_EQ(Format(kBlobId, p.span()), "d4c3b2a1");
  EXPECT_EQ(Format(kBlobId, p.first(3)), "<truncated>");
}

Payload Command(uint8_t opcode, uint8_t flags) {
  Payload p(28);
  p.Put(0, 3, 2).Put(2, 4660, 2).Put(4, opcode, 1).Put(5, flags, 1);
  p.Put(8, 1, 4).Put(16, 0x123456789, 8).Put(24, 8, 4);
  return p;
}

TEST_F(FormatTest, EnumAndFlagsPrintNames) {
  EXPECT_EQ(Realistic(test::kCmdBegin, Command(2, 0x0d).span()),
            "qid=3 cid=4660 op=read flags=fua|prio nsid=1 slba=0x123456789 "
            "nlb=8");
}

TEST_F(FormatTest, UnknownEnumValuePrintsHex) {
  EXPECT_EQ(Realistic(test::kCmdBegin, Command(0x7f, 0).span()),
            "qid=3 cid=4660 op=0x7f flags=0 nsid=1 slba=0x123456789 nlb=8");
  EXPECT_EQ(Realistic(test::kCmdBegin, Command(0, 1).span()).substr(0, 30),
            "qid=3 cid=4660 op=flush flags=");
}

TEST_F(FormatTest, FlagsNeedEveryBitOfAMaskAndShowLeftovers) {
  // 0x05: fua, plus one of prio's two bits, which alone has no name.
  EXPECT_NE(Realistic(test::kCmdBegin, Command(1, 0x05).span())
                .find("op=write flags=fua|0x4 "),
            std::string::npos);
  EXPECT_NE(Realistic(test::kCmdBegin, Command(1, 0x43).span())
                .find("flags=fua|lr|0x40 "),
            std::string::npos);
}

TEST_F(FormatTest, HexDisplayWithPercentSPrintsPrefixedHex) {
  Payload p(12);
  p.Put(0, 1, 2).Put(2, 9, 2).Put(4, 0x4002, 2).Put(8, 1500, 4);
  EXPECT_EQ(Realistic(test::kCmdEnd, p.span()),
            "qid=1 cid=9 status=0x4002 latency=1500");
}

TEST_F(FormatTest, StringsAndTrailingBytes) {
  Payload p(18);
  p.Put(0, 2, 1).PutString(1, "disk full").Put(16, 0xadde, 2);
  EXPECT_EQ(Realistic(test::kLog, p.span()), "[info] disk full data=dead");
  // Nothing after the fixed part: the open-ended BYTES field is empty.
  EXPECT_EQ(Realistic(test::kLog, p.first(16)), "[info] disk full data=");
}

TEST_F(FormatTest, StringsAreEscapedAndBoundedByTheirField) {
  Payload p(16);
  p.Put(0, 0, 1).PutString(1, std::string("a\x01"
                                          "b\\c\xff\x1b[2J",
                                          10));
  EXPECT_EQ(Realistic(test::kLog, p.span()),
            "[err] a\\x01b\\\\c\\xff\\x1b[2J data=");

  // No NUL in the 15-byte field: exactly 15 characters, nothing more.
  Payload full(16);
  full.Put(0, 1, 1).PutString(1, "0123456789abcde");
  EXPECT_EQ(Realistic(test::kLog, full.span()), "[warn] 0123456789abcde data=");
}

TEST_F(FormatTest, TruncatedStringAndBytes) {
  Payload p(10);
  p.Put(0, 1, 1).PutString(1, "abc");
  EXPECT_EQ(Realistic(test::kLog, p.span()),
            "[warn] <truncated> data=<truncated>");
}

TEST_F(FormatTest, SignedPaddingKeepsSignLeftOfZeros) {
  Payload p(16);
  p.Put(0, uint64_t(int64_t{-5}), 1).Put(2, 300, 2).Put(4, 42, 4);
  p.Put(8, uint64_t(int64_t{-7}), 8);
  EXPECT_EQ(Realistic(test::kTemps, p.span()), "-5 300 42 -7");

  // Same fields with pad-heavy formats, via a one-event dictionary.
  static constexpr hmb_trace_field_desc kTemps[] = {
      {"s8", 0, 1, HMB_TRACE_TYPE_S8, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
      {"s16", 2, 2, HMB_TRACE_TYPE_S16, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
      {"s32", 4, 4, HMB_TRACE_TYPE_S32, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
      {"s64", 8, 8, HMB_TRACE_TYPE_S64, HMB_TRACE_DISPLAY_DEC, 0, nullptr},
  };
  static constexpr hmb_trace_event_desc kPad[] = {
      {7, HMB_TRACE_ROLE_INSTANT, kNo, kNo, kNo, kNo, kNo, 0, "pad",
       "[%05d][%-6d][% d][%+6d]", 4, kTemps},
  };
  const auto dict = Dictionary::Parse(test::ProduceDictionary(kPad));
  ASSERT_TRUE(dict.has_value());
  EXPECT_EQ(FormatRecord(*dict, 7, p.span()), "[-0005][300   ][ 42][    -7]");
}

TEST_F(FormatTest, EnumNamesTakeWidth) {
  static constexpr hmb_trace_value_desc kLevels[] = {{1, "warn"}};
  static constexpr hmb_trace_field_desc kLevel[] = {
      {"level", 0, 1, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_ENUM, 1, kLevels},
      {"level2", 0, 1, HMB_TRACE_TYPE_U8, HMB_TRACE_DISPLAY_ENUM, 1, kLevels},
  };
  static constexpr hmb_trace_event_desc kEv[] = {
      {7, HMB_TRACE_ROLE_INSTANT, kNo, kNo, kNo, kNo, kNo, 0, "lvl",
       "[%-6s][%6u]", 2, kLevel},
  };
  const auto dict = Dictionary::Parse(test::ProduceDictionary(kEv));
  ASSERT_TRUE(dict.has_value());
  const uint8_t one = 1;
  EXPECT_EQ(FormatRecord(*dict, 7, std::span(&one, 1)), "[warn  ][  warn]");
}

TEST_F(FormatTest, UnknownEventPrintsHexDump) {
  const uint8_t small[] = {0x01, 0x02, 0xff};
  EXPECT_EQ(Format(999, small), "unknown event 999 len=3 data=0102ff");
  EXPECT_EQ(Format(0, {}), "unknown event 0 len=0 data=");

  const std::vector<uint8_t> big(100, 0xab);
  std::string hex;
  for (size_t i = 0; i < kUnknownEventHexBytes; i++)
    hex += "ab";
  EXPECT_EQ(Format(65535, big),
            "unknown event 65535 len=100 data=" + hex + "...");
}

TEST_F(FormatTest, FieldValueSignExtendsSignedTypes) {
  const EventDesc* ints = formats_->Find(kDec);
  ASSERT_NE(ints, nullptr);
  const Payload p = ExtremeInts();
  EXPECT_EQ(FieldValue(*ints, 0, p.span()), 200u);
  EXPECT_EQ(FieldValue(*ints, 2, p.span()), 4000000000u);
  EXPECT_EQ(FieldValue(*ints, 3, p.span()),
            std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(int64_t(*FieldValue(*ints, 4, p.span())), -1);
  EXPECT_EQ(int64_t(*FieldValue(*ints, 5, p.span())), -300);
  EXPECT_EQ(int64_t(*FieldValue(*ints, 6, p.span())),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(int64_t(*FieldValue(*ints, 7, p.span())),
            std::numeric_limits<int64_t>::min());
}

TEST_F(FormatTest, FieldValueRejectsWhatIsNotAnIntegerInThePayload) {
  const EventDesc* ints = formats_->Find(kDec);
  const EventDesc* log = realistic_->Find(test::kLog);
  ASSERT_NE(ints, nullptr);
  ASSERT_NE(log, nullptr);
  const Payload p = SmallInts();
  EXPECT_EQ(FieldValue(*ints, 8, p.span()), std::nullopt);
  EXPECT_EQ(FieldValue(*ints, 3, p.first(15)), std::nullopt);
  EXPECT_EQ(FieldValue(*ints, 3, p.first(16)), 255u);
  EXPECT_EQ(FieldValue(*log, 1, p.span()), std::nullopt);  // STRING
  EXPECT_EQ(FieldValue(*log, 2, p.span()), std::nullopt);  // BYTES
}

TEST_F(FormatTest, FieldValueDrivesPairingAndLatency) {
  const EventDesc* end = realistic_->Find(test::kCmdEnd);
  ASSERT_NE(end, nullptr);
  Payload p(12);
  p.Put(0, 1, 2).Put(2, 9, 2).Put(4, 0, 2).Put(8, 1500, 4);
  EXPECT_EQ(FieldValue(*end, end->cid_field, p.span()), 9u);
  EXPECT_EQ(FieldValue(*end, end->latency_field, p.span()), 1500u);
}

TEST(FormatHandBuiltTest, OddSizedIntegerFieldsDoNotMisbehave) {
  // EventDesc is a plain struct; a tool may build one without Parse().
  EventDesc ev;
  ev.format = "%d %x";
  FieldDesc f;
  f.type = HMB_TRACE_TYPE_S32;
  f.size = 0;
  ev.fields = {f, f};
  const uint8_t payload[] = {0xff, 0xff};
  EXPECT_EQ(FieldValue(ev, 0, payload), 0xffffu);
  EXPECT_EQ(FormatEvent(ev, payload), "65535 ffff");
}

}  // namespace
}  // namespace hmbtrace
