// SPDX-License-Identifier: GPL-2.0-only
#include "export/record_plan.h"

#include <algorithm>

#include "capture/capture.h"
#include "causes/command_paths.h"

namespace hmbtrace {

std::string PayloadText(std::span<const uint8_t> bytes) {
  std::string_view s(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  while (!s.empty() && s.back() == '\0')
    s.remove_suffix(1);
  return Printable(s);
}

RoleField::RoleField(const EventDesc& desc, uint8_t index) {
  if (index != HMB_TRACE_NO_FIELD && index < desc.fields.size() &&
      desc.fields[index].is_integer())
    field_ = &desc.fields[index];
}

RecordPlan::RecordPlan(const EventDesc& desc, ExportIds* ids)
    : key(desc, desc.key_field),
      qid(desc, desc.qid_field),
      latency(desc, desc.latency_field),
      value(desc, desc.value_field),
      desc_(&desc),
      name_id_(ids->Next()) {
  fields_.reserve(desc.fields.size());
  for (const FieldDesc& f : desc.fields) {
    Field& p = fields_.emplace_back();
    p.desc = &f;
    p.name_id = ids->Next();
    if (!f.is_integer()) {
      p.kind = f.type == HMB_TRACE_TYPE_STRING ? Field::Kind::kText : Field::Kind::kBytes;
      continue;
    }
    p.kind = f.is_signed() ? Field::Kind::kInt : Field::Kind::kUint;
    if (f.display != HMB_TRACE_DISPLAY_ENUM || f.values.empty())
      continue;
    p.kind = Field::Kind::kEnum;
    p.first_value = static_cast<uint32_t>(values_.size());
    for (const ValueDesc& v : f.values)
      values_.push_back({v.value, v.name, ids->Next()});
    p.end_value = static_cast<uint32_t>(values_.size());
    // Stable: of two names of one value, the first stays first (the one a
    // search of the field's values in order finds).
    std::stable_sort(values_.begin() + p.first_value, values_.end(),
                     [](const EnumValue& a, const EnumValue& b) { return a.value < b.value; });
  }
}

const RecordPlan::EnumValue* RecordPlan::FindValue(const Field& f, uint64_t v) const {
  const auto first = values_.begin() + f.first_value;
  const auto last = values_.begin() + f.end_value;
  const auto it =
      std::lower_bound(first, last, v, [](const EnumValue& e, uint64_t x) { return e.value < x; });
  return it != last && it->value == v ? &*it : nullptr;
}

namespace {

// An argument made in place at the end of `args`, its other members
// their defaults. (Made on the stack and copied in, its narrow stores and
// the copy's 16-byte loads stalled store forwarding: 40 % of
// AppendFields()'s samples on one instruction.)
ExportArg& NewArg(std::vector<ExportArg>& args,
                  std::string_view name,
                  ExportArg::Type type,
                  uint32_t name_id) {
  ExportArg& a = args.emplace_back();
  a.name = name;
  a.type = type;
  a.name_id = name_id;
  return a;
}

}  // namespace

void RecordPlan::AppendFields(std::span<const uint8_t> payload, ExportEvent* e) const {
  std::vector<ExportArg>& args = e->args;
  for (const Field& f : fields_) {
    const FieldDesc& d = *f.desc;
    if (f.kind == Field::Kind::kText || f.kind == Field::Kind::kBytes) {
      if (d.offset > payload.size())
        continue;
      const size_t n = d.size ? std::min<size_t>(d.size, payload.size() - d.offset)
                              : payload.size() - d.offset;
      const auto bytes = payload.subspan(d.offset, n);
      const std::string& text = e->texts.emplace_back(
          f.kind == Field::Kind::kText ? PayloadText(bytes) : Hex(bytes));
      NewArg(args, d.name, ExportArg::Type::kString, f.name_id).s = text;
      continue;
    }
    const auto v = IntegerFieldValue(d, payload);
    if (!v)
      continue;
    if (f.kind == Field::Kind::kEnum) {
      if (const EnumValue* value = FindValue(f, *v)) {
        ExportArg& a = NewArg(args, d.name, ExportArg::Type::kString, f.name_id);
        a.interned_string = true;
        a.value_id = value->id;
        a.s = value->name;
        continue;
      }
    }
    if (d.is_signed())
      NewArg(args, d.name, ExportArg::Type::kInt, f.name_id).i = static_cast<int64_t>(*v);
    else
      NewArg(args, d.name, ExportArg::Type::kUint, f.name_id).u = *v;
  }
}

DictionaryPlan::DictionaryPlan(const Dictionary& dict, ExportIds* ids)
    : dict_(dict), attributing_(HasCommandAttribution(dict)) {
  plans_.reserve(dict.events().size());
  for (const EventDesc& e : dict.events()) {
    plans_.emplace_back(e, ids);
    if (e.id < kDirectIds) {
      if (e.id >= by_id_.size())
        by_id_.resize(e.id + 1u, 0);
      by_id_[e.id] = static_cast<uint32_t>(plans_.size());
    }
  }
}

const RecordPlan* DictionaryPlan::Find(uint16_t id) const {
  if (id < kDirectIds) {
    const uint32_t i = id < by_id_.size() ? by_id_[id] : 0;
    return i ? &plans_[i - 1] : nullptr;
  }
  const EventDesc* desc = dict_.Find(id);
  return desc ? &plans_[static_cast<size_t>(desc - dict_.events().data())] : nullptr;
}

}  // namespace hmbtrace
