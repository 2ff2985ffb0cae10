// SPDX-License-Identifier: GPL-2.0-only
//
// A dictionary's events resolved once for all the records of an export:
// per event its name, how each field becomes an argument (its kind, and
// for an ENUM field its named values sorted by value) and the integer
// fields its role names. ExportModel turns a record into arguments with
// its event's plan (RecordPlan::AppendFields) instead of looking each
// field up again record after record, as report does with FormatPlan
// (decode/format.h).
//
// Names and enum value names get an ExportArg/ExportEvent id (a name the
// model gives a string for the whole export, export_model.h), so that a
// writer resolves each once. A plan points into its Dictionary, which
// must outlive it and not change.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_RECORD_PLAN_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_RECORD_PLAN_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dictionary.h"
#include "export/export_model.h"
#include "format.h"

namespace hmbtrace {

// Bytes of a record or a marker as text: trailing NULs dropped, the rest
// Printable() (capture.h).
std::string PayloadText(std::span<const uint8_t> bytes);

// An integer field a role names (key, qid, latency, counter value).
class RoleField {
 public:
  RoleField() = default;
  // FieldValue()'s rules: none if `index` is HMB_TRACE_NO_FIELD, out of
  // range, or not an integer field.
  RoleField(const EventDesc& desc, uint8_t index);
  bool present() const { return field_ != nullptr; }
  // FieldValue(desc, index, payload).
  std::optional<uint64_t> Value(std::span<const uint8_t> payload) const {
    return field_ ? IntegerFieldValue(*field_, payload) : std::nullopt;
  }
  const FieldDesc* field() const { return field_; }

 private:
  const FieldDesc* field_ = nullptr;
};

class RecordPlan {
 public:
  RecordPlan(const EventDesc& desc, ExportIds* ids);

  const EventDesc& desc() const { return *desc_; }
  std::string_view name() const { return desc_->name; }
  uint32_t name_id() const { return name_id_; }

  RoleField key;
  RoleField qid;
  RoleField latency;
  RoleField value;

  // The arguments of a record's fields in `payload`, in field order: an
  // integer by its type (an ENUM field by its value's name when it has
  // one), a STRING as printable text up to its NULs, other bytes in hex;
  // a field whose bytes are not all in the payload left out (text and
  // bytes cut at its end instead).
  // Text made for them is kept in e->texts.
  void AppendFields(std::span<const uint8_t> payload, ExportEvent* e) const;

 private:
  struct EnumValue {
    uint64_t value = 0;
    std::string_view name;
    uint32_t id = 0;
  };
  struct Field {
    enum class Kind : uint8_t { kUint, kInt, kEnum, kText, kBytes };
    const FieldDesc* desc = nullptr;
    Kind kind = Kind::kUint;
    uint32_t name_id = 0;
    // kEnum: its values in values_[first_value, end_value), by value (the
    // first of the field's for a value it names twice).
    uint32_t first_value = 0;
    uint32_t end_value = 0;
  };
  const EnumValue* FindValue(const Field& f, uint64_t v) const;

  const EventDesc* desc_;
  uint32_t name_id_;
  std::vector<Field> fields_;
  std::vector<EnumValue> values_;
};

// The RecordPlans of one dictionary's events, made when it is first used.
class DictionaryPlan {
 public:
  DictionaryPlan(const Dictionary& dict, ExportIds* ids);
  // The plan of event `id`, or nullptr if the dictionary has none.
  const RecordPlan* Find(uint16_t id) const;
  // The dictionary has ABI 1.2 command attribution (causes/command_paths.h).
  bool attributing() const { return attributing_; }

 private:
  // Ids below this are looked up in a table; others by Dictionary::Find().
  static constexpr uint32_t kDirectIds = 4096;
  const Dictionary& dict_;
  std::vector<RecordPlan> plans_;      // in dictionary order
  std::vector<uint32_t> by_id_;        // id -> index in plans_ + 1; 0: none
  bool attributing_ = false;
};

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_RECORD_PLAN_H_
