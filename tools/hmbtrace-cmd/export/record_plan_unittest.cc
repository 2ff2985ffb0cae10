// SPDX-License-Identifier: GPL-2.0-only
#include "export/record_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture.h"
#include "decode_test_util.h"

namespace hmbtrace {
namespace {

constexpr uint8_t kNo = HMB_TRACE_NO_FIELD;

Dictionary Parsed(std::span<const hmb_trace_event_desc> events) {
  const std::vector<uint8_t> bytes = test::ProduceDictionary(events);
  std::string error;
  std::optional<Dictionary> dict = Dictionary::Parse(bytes, &error);
  EXPECT_TRUE(dict) << error;
  return std::move(*dict);
}

// What a record's field arguments are by the dictionary's rules, field by
// field with FieldValue() (format.h), as ExportModel made them before it
// planned them: the reference for the plan.
std::vector<std::string> Reference(const EventDesc& desc, std::span<const uint8_t> payload) {
  std::vector<std::string> out;
  for (size_t i = 0; i < desc.fields.size(); i++) {
    const FieldDesc& f = desc.fields[i];
    if (!f.is_integer()) {
      if (f.offset > payload.size())
        continue;
      const size_t n = f.size ? std::min<size_t>(f.size, payload.size() - f.offset)
                              : payload.size() - f.offset;
      const auto bytes = payload.subspan(f.offset, n);
      out.push_back(f.name + "=s:" +
                    (f.type == HMB_TRACE_TYPE_STRING ? PayloadText(bytes) : Hex(bytes)));
      continue;
    }
    const auto v = FieldValue(desc, i, payload);
    if (!v)
      continue;
    if (f.display == HMB_TRACE_DISPLAY_ENUM) {
      auto it = std::find_if(f.values.begin(), f.values.end(),
                             [&](const ValueDesc& d) { return d.value == *v; });
      if (it != f.values.end()) {
        out.push_back(f.name + "=e:" + it->name);
        continue;
      }
    }
    out.push_back(f.name + (f.is_signed() ? "=i:" + std::to_string(static_cast<int64_t>(*v))
                                          : "=u:" + std::to_string(*v)));
  }
  return out;
}

std::vector<std::string> Shown(const std::vector<ExportArg>& args) {
  std::vector<std::string> out;
  for (const ExportArg& a : args) {
    std::string s(a.name);
    switch (a.type) {
      case ExportArg::Type::kUint:
        s += "=u:" + std::to_string(a.u);
        break;
      case ExportArg::Type::kInt:
        s += "=i:" + std::to_string(a.i);
        break;
      case ExportArg::Type::kBool:
        s += "=b";
        break;
      case ExportArg::Type::kString:
        s += (a.interned_string ? "=e:" : "=s:") + std::string(a.text());
        break;
    }
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> Planned(const RecordPlan& plan, std::span<const uint8_t> payload) {
  ExportEvent e;
  plan.AppendFields(payload, &e);
  return Shown(e.args);
}

TEST(RecordPlan, ArgumentsOfEveryPayloadLengthAreTheDictionarysFieldsAsBefore) {
  // Every event of a realistic dictionary (enums, flags, strings, bytes,
  // signed integers), with payloads from empty to longer than its fields:
  // fields cut by the payload's end are left out, text and bytes cut there.
  const Dictionary dict = Parsed(test::RealisticEvents());
  ExportIds ids(1);
  const DictionaryPlan plans(dict, &ids);
  std::vector<uint8_t> payload(40);
  for (size_t i = 0; i < payload.size(); i++)
    payload[i] = static_cast<uint8_t>(0x81 + 37 * i);  // signed fields negative
  payload[4] = 2;                                       // opcode "read", level "info"
  payload[0] = 1;                                       // level "warn"
  for (const EventDesc& desc : dict.events()) {
    const RecordPlan* plan = plans.Find(desc.id);
    ASSERT_NE(plan, nullptr) << desc.name;
    EXPECT_EQ(plan->name(), desc.name);
    for (size_t len = 0; len <= payload.size(); len++) {
      const std::span<const uint8_t> p(payload.data(), len);
      EXPECT_EQ(Planned(*plan, p), Reference(desc, p)) << desc.name << " len " << len;
    }
  }
  EXPECT_EQ(plans.Find(999), nullptr);
}

TEST(RecordPlan, AnEnumValueNamedTwiceShowsTheFirstNameAndAnUnnamedOneItsNumber) {
  static constexpr hmb_trace_value_desc kStates[] = {
      {7, "busy"}, {0, "idle"}, {7, "occupied"}, {3, "off"}};
  static constexpr hmb_trace_field_desc kFields[] = {
      {"state", 0, 2, HMB_TRACE_TYPE_U16, HMB_TRACE_DISPLAY_ENUM, 4, kStates}};
  static constexpr hmb_trace_event_desc kEvents[] = {
      {1, HMB_TRACE_ROLE_INSTANT, kNo, kNo, kNo, kNo, kNo, 0, "die_state", "%s", 1, kFields}};
  const Dictionary dict = Parsed(kEvents);
  ExportIds ids(1);
  const DictionaryPlan plans(dict, &ids);
  const RecordPlan* plan = plans.Find(1);
  ASSERT_NE(plan, nullptr);
  for (uint8_t v : {7, 0, 3, 5}) {
    const std::vector<uint8_t> payload{v, 0};
    EXPECT_EQ(Planned(*plan, payload), Reference(dict.events()[0], payload)) << int{v};
  }
  const std::vector<uint8_t> busy{7, 0};
  EXPECT_EQ(Planned(*plan, busy), std::vector<std::string>{"state=e:busy"});
}

TEST(RecordPlan, NamesKeepTheirIdsFromRecordToRecord) {
  // What a writer keeps under an id (export_model.h) must be the text the
  // next record shows under it.
  const Dictionary dict = Parsed(test::RealisticEvents());
  ExportIds ids(10);
  const DictionaryPlan plans(dict, &ids);
  const RecordPlan* begin = plans.Find(test::kCmdBegin);
  const RecordPlan* log = plans.Find(test::kLog);
  ASSERT_NE(begin, nullptr);
  ASSERT_NE(log, nullptr);
  EXPECT_GE(begin->name_id(), 10u);
  EXPECT_NE(begin->name_id(), log->name_id());
  std::map<uint32_t, std::string> text_of;
  auto same_text = [&](uint32_t id, std::string_view text) {
    ASSERT_NE(id, 0u) << text;
    auto [it, added] = text_of.try_emplace(id, text);
    EXPECT_EQ(it->second, text) << "id " << id;
  };
  same_text(begin->name_id(), begin->name());
  same_text(log->name_id(), log->name());
  for (uint8_t op : {0, 1, 2, 1, 0}) {
    std::vector<uint8_t> payload(28);
    payload[4] = op;
    ExportEvent e;
    begin->AppendFields(payload, &e);
    ASSERT_EQ(e.args.size(), 7u);
    for (const ExportArg& a : e.args) {
      same_text(a.name_id, a.name);
      if (a.interned_string)
        same_text(a.value_id, a.text());
    }
  }
}

TEST(RecordPlan, EventIdsPastTheTableAreFoundToo) {
  static constexpr hmb_trace_field_desc kFields[] = {
      {"v", 0, 4, HMB_TRACE_TYPE_U32, HMB_TRACE_DISPLAY_DEC, 0, nullptr}};
  static constexpr hmb_trace_event_desc kEvents[] = {
      {3, HMB_TRACE_ROLE_INSTANT, kNo, kNo, kNo, kNo, kNo, 0, "low", "%u", 1, kFields},
      {40000, HMB_TRACE_ROLE_INSTANT, kNo, kNo, kNo, kNo, kNo, 0, "high", "%u", 1, kFields},
      {65535, HMB_TRACE_ROLE_INSTANT, kNo, kNo, kNo, kNo, kNo, 0, "top", "%u", 1, kFields}};
  const Dictionary dict = Parsed(kEvents);
  ExportIds ids(1);
  const DictionaryPlan plans(dict, &ids);
  for (const auto& [id, name] : {std::pair<uint16_t, std::string_view>{3, "low"},
                                 {40000, "high"},
                                 {65535, "top"}}) {
    const RecordPlan* plan = plans.Find(id);
    ASSERT_NE(plan, nullptr) << id;
    EXPECT_EQ(plan->name(), name);
  }
  for (uint16_t id : {0, 2, 4, 4095, 4096, 39999, 65534})
    EXPECT_EQ(plans.Find(id), nullptr) << id;
}

TEST(RecordPlan, RoleFieldsReadOnlyIntegerFieldsInsideThePayload) {
  const Dictionary dict = Parsed(test::RealisticEvents());
  ExportIds ids(1);
  const DictionaryPlan plans(dict, &ids);
  const RecordPlan* end = plans.Find(test::kCmdEnd);
  ASSERT_NE(end, nullptr);
  EXPECT_TRUE(end->key.present());
  EXPECT_TRUE(end->latency.present());
  EXPECT_FALSE(end->value.present());
  std::vector<uint8_t> payload(12);
  payload[2] = 9;  // cid
  payload[8] = 0x34;
  payload[9] = 0x12;  // latency
  EXPECT_EQ(end->key.Value(payload), std::optional<uint64_t>(9));
  EXPECT_EQ(end->latency.Value(payload), std::optional<uint64_t>(0x1234));
  EXPECT_EQ(end->latency.Value(std::span<const uint8_t>(payload.data(), 11)), std::nullopt);
  EXPECT_EQ(end->value.Value(payload), std::nullopt);
  // A role naming a field that is not an integer reads as none.
  const RecordPlan* log = plans.Find(test::kLog);
  ASSERT_NE(log, nullptr);
  EXPECT_FALSE(RoleField(log->desc(), 1).present());  // msg, a STRING
  EXPECT_FALSE(RoleField(log->desc(), 7).present());  // past the fields
  EXPECT_TRUE(RoleField(log->desc(), 0).present());
}

}  // namespace
}  // namespace hmbtrace
