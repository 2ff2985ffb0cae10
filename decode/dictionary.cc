// SPDX-License-Identifier: GPL-2.0-only

#include "dictionary.h"

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace hmbtrace {
namespace {

constexpr size_t kHeaderLen = sizeof(hmb_trace_dict_header);
constexpr size_t kEventLen = sizeof(hmb_trace_dict_event);
constexpr size_t kFieldLen = sizeof(hmb_trace_dict_field);
constexpr size_t kValueLen = sizeof(hmb_trace_dict_value);

// The ABI header pins these too; the parser's arithmetic depends on them.
static_assert(kHeaderLen == 16);
static_assert(kEventLen == 144);
static_assert(kFieldLen == 32);
static_assert(kValueLen == 32);

// A record's payload length is a u16, so no field can end beyond this.
constexpr uint32_t kMaxPayload = 0xffff;

// The area is little-endian whatever the host is; these read the private
// copy at offsets the caller has already range-checked.
uint16_t Le16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}

uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

uint64_t Le64(const uint8_t* p) {
  return static_cast<uint64_t>(Le32(p)) | static_cast<uint64_t>(Le32(p + 4))
                                              << 32;
}

std::string Str(uint64_t v) {
  return std::to_string(v);
}

std::string Hex(uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[v & 0xf]);
    v >>= 4;
  } while (v);
  return "0x" + out;
}

// Width in bytes of an integer type, 0 for STRING/BYTES/unknown.
uint16_t IntegerWidth(uint8_t type) {
  switch (type) {
    case HMB_TRACE_TYPE_U8:
    case HMB_TRACE_TYPE_S8:
      return 1;
    case HMB_TRACE_TYPE_U16:
    case HMB_TRACE_TYPE_S16:
      return 2;
    case HMB_TRACE_TYPE_U32:
    case HMB_TRACE_TYPE_S32:
      return 4;
    case HMB_TRACE_TYPE_U64:
    case HMB_TRACE_TYPE_S64:
      return 8;
    default:
      return 0;
  }
}

// Walks the private copy once, front to back. Every read goes through an
// offset checked against total_len (itself checked against the copy).
class Parser {
 public:
  explicit Parser(std::span<const uint8_t> data) : data_(data) {}

  bool Run(std::vector<EventDesc>* events) {
    if (data_.size() < kHeaderLen) {
      return Fail("dictionary: " + Str(data_.size()) +
                  " bytes, shorter than its " + Str(kHeaderLen) +
                  "-byte header");
    }
    const uint8_t* h = data_.data();
    const uint32_t magic = Le32(h + offsetof(hmb_trace_dict_header, magic));
    const uint16_t version = Le16(h + offsetof(hmb_trace_dict_header, version));
    const uint16_t nr_events =
        Le16(h + offsetof(hmb_trace_dict_header, nr_events));
    total_len_ = Le32(h + offsetof(hmb_trace_dict_header, total_len));

    if (magic != HMB_TRACE_DICT_MAGIC)
      return Fail("dictionary: bad magic " + Hex(magic));
    if (version != HMB_TRACE_DICT_VERSION) {
      return Fail("dictionary: unsupported version " + Str(version) +
                  " (expected " + Str(HMB_TRACE_DICT_VERSION) + ")");
    }
    if (total_len_ < kHeaderLen) {
      return Fail("dictionary: total_len " + Str(total_len_) +
                  " is smaller than the header");
    }
    if (total_len_ > data_.size()) {
      return Fail("dictionary: total_len " + Str(total_len_) + " exceeds the " +
                  Str(data_.size()) + " bytes available");
    }
    // Cheap bound before reserving memory for a hostile nr_events.
    if (uint64_t{nr_events} * kEventLen > total_len_ - kHeaderLen) {
      return Fail("dictionary: " + Str(nr_events) +
                  " events cannot fit in total_len " + Str(total_len_));
    }

    events->clear();
    events->reserve(nr_events);
    size_t off = kHeaderLen;
    for (uint32_t i = 0; i < nr_events; i++) {
      EventDesc ev;
      uint32_t entry_len = 0;
      if (!ParseEvent(i, off, &ev, &entry_len))
        return false;
      events->push_back(std::move(ev));
      off += entry_len;
    }
    // Bytes between the last entry and total_len are ignored, like
    // reserved fields: a compatible ABI addition may put something there.
    return true;
  }

  const std::string& error() const { return error_; }
  uint32_t total_len() const { return total_len_; }

 private:
  bool Fail(std::string msg) {
    error_ = std::move(msg);
    return false;
  }

  // Copies a fixed-size name field. The name must end with a NUL inside
  // the field and hold printable ASCII only: it is printed to terminals
  // and used as an identifier by tools, so control bytes from a device
  // must not get through.
  bool ReadName(const uint8_t* p,
                size_t cap,
                const std::string& what,
                bool allow_empty,
                std::string* out) {
    const uint8_t* end = std::find(p, p + cap, uint8_t{0});
    if (end == p + cap) {
      return Fail(what + " is not NUL-terminated within " + Str(cap) +
                  " bytes");
    }
    for (const uint8_t* c = p; c < end; c++) {
      if (*c < 0x20 || *c > 0x7e) {
        return Fail(what + " has non-printable byte " + Hex(*c) +
                    " at position " + Str(c - p));
      }
    }
    if (end == p && !allow_empty)
      return Fail(what + " is empty");
    out->assign(p, end);
    return true;
  }

  bool ParseEvent(uint32_t index,
                  size_t off,
                  EventDesc* ev,
                  uint32_t* entry_len_out) {
    std::string where = "event #" + Str(index);
    if (total_len_ - off < kEventLen) {
      return Fail(where + " at offset " + Str(off) +
                  ": 144-byte entry header runs past total_len " +
                  Str(total_len_));
    }
    const uint8_t* e = data_.data() + off;
    ev->id = Le16(e + offsetof(hmb_trace_dict_event, id));
    where += " (id " + Str(ev->id) + ")";
    if (ev->id == 0)
      return Fail(where + ": id 0 is reserved");

    const uint16_t nr_fields =
        Le16(e + offsetof(hmb_trace_dict_event, nr_fields));
    const uint32_t entry_len =
        Le32(e + offsetof(hmb_trace_dict_event, entry_len));
    if (entry_len % 8) {
      return Fail(where + ": entry_len " + Str(entry_len) +
                  " is not a multiple of 8");
    }
    if (entry_len < kEventLen) {
      return Fail(where + ": entry_len " + Str(entry_len) +
                  " is smaller than the " + Str(kEventLen) +
                  "-byte entry header");
    }
    if (entry_len > total_len_ - off) {
      return Fail(where + ": entry_len " + Str(entry_len) +
                  " runs past total_len (" + Str(total_len_ - off) +
                  " bytes left)");
    }
    const uint64_t fields_end = kEventLen + uint64_t{nr_fields} * kFieldLen;
    if (fields_end > entry_len) {
      return Fail(where + ": " + Str(nr_fields) + " fields need " +
                  Str(fields_end) + " bytes but entry_len is " +
                  Str(entry_len));
    }

    if (!ReadName(e + offsetof(hmb_trace_dict_event, name), HMB_TRACE_NAME_LEN,
                  where + ": name", false, &ev->name)) {
      return false;
    }
    where =
        "event #" + Str(index) + " (id " + Str(ev->id) + " '" + ev->name + "')";
    if (!ReadName(e + offsetof(hmb_trace_dict_event, format),
                  HMB_TRACE_FORMAT_LEN, where + ": format", true,
                  &ev->format)) {
      return false;
    }

    ev->role = e[offsetof(hmb_trace_dict_event, role)];
    if (ev->role > HMB_TRACE_ROLE_COUNTER)
      return Fail(where + ": unknown role " + Str(ev->role));
    ev->pair_id = Le16(e + offsetof(hmb_trace_dict_event, pair_id));
    ev->key_field = e[offsetof(hmb_trace_dict_event, key_field)];
    ev->latency_field = e[offsetof(hmb_trace_dict_event, latency_field)];
    ev->qid_field = e[offsetof(hmb_trace_dict_event, qid_field)];
    ev->cid_field = e[offsetof(hmb_trace_dict_event, cid_field)];
    ev->value_field = e[offsetof(hmb_trace_dict_event, value_field)];

    // Field headers first: they say how many value entries follow.
    ev->fields.resize(nr_fields);
    uint64_t values_end = fields_end;
    for (uint16_t f = 0; f < nr_fields; f++) {
      const uint8_t* fp = e + kEventLen + size_t{f} * kFieldLen;
      if (!ParseField(where, f, nr_fields, fp, &ev->fields[f]))
        return false;
      values_end +=
          uint64_t{Le16(fp + offsetof(hmb_trace_dict_field, nr_values))} *
          kValueLen;
    }
    if (values_end > entry_len) {
      return Fail(where + ": fields and their value names need " +
                  Str(values_end) + " bytes but entry_len is " +
                  Str(entry_len));
    }

    size_t voff = fields_end;
    for (uint16_t f = 0; f < nr_fields; f++) {
      FieldDesc& fd = ev->fields[f];
      const uint16_t nr_values =
          Le16(e + kEventLen + size_t{f} * kFieldLen +
               offsetof(hmb_trace_dict_field, nr_values));
      fd.values.resize(nr_values);
      for (uint16_t v = 0; v < nr_values; v++, voff += kValueLen) {
        const uint8_t* vp = e + voff;
        fd.values[v].value = Le64(vp + offsetof(hmb_trace_dict_value, value));
        if (!ReadName(vp + offsetof(hmb_trace_dict_value, name),
                      HMB_TRACE_VALUE_NAME_LEN,
                      where + ": field " + Str(f) + " '" + fd.name +
                          "': value " + Str(v) + " name",
                      false, &fd.values[v].name)) {
          return false;
        }
      }
    }

    ParseCmdTrailer(e, values_end, entry_len, ev);

    // Tools read these fields as integers (pairing, latency, counters).
    const std::pair<const char*, uint8_t> refs[] = {
        {"key_field", ev->key_field},     {"latency_field", ev->latency_field},
        {"qid_field", ev->qid_field},     {"cid_field", ev->cid_field},
        {"value_field", ev->value_field}, {"tag_field", ev->tag_field},
        {"resource_field", ev->resource_field},
    };
    for (const auto& [what, idx] : refs) {
      if (idx == HMB_TRACE_NO_FIELD)
        continue;
      if (idx >= nr_fields) {
        return Fail(where + ": " + what + " " + Str(idx) +
                    " is not a field (event has " + Str(nr_fields) + ")");
      }
      if (!ev->fields[idx].is_integer()) {
        return Fail(where + ": " + what + " " + Str(idx) + " '" +
                    ev->fields[idx].name + "' is not an integer field");
      }
    }

    *entry_len_out = entry_len;
    return true;
  }

  // ABI 1.2: struct hmb_trace_dict_cmd at the 8-byte aligned end of the
  // value names, if entry_len leaves room for it and its type says so.
  // Anything else there is a later addition this reader does not know.
  static void ParseCmdTrailer(const uint8_t* e,
                              uint64_t values_end,
                              uint32_t entry_len,
                              EventDesc* ev) {
    const uint64_t at = (values_end + 7) & ~uint64_t{7};
    if (at + sizeof(hmb_trace_dict_cmd) > entry_len)
      return;
    const uint8_t* c = e + at;
    if (Le16(c + offsetof(hmb_trace_dict_cmd, type)) != HMB_TRACE_DICT_EXT_CMD ||
        Le16(c + offsetof(hmb_trace_dict_cmd, len)) < sizeof(hmb_trace_dict_cmd))
      return;
    const uint8_t kind = c[offsetof(hmb_trace_dict_cmd, kind)];
    if (kind == HMB_TRACE_CMD_NONE || kind > HMB_TRACE_CMD_KIND_MAX)
      return;
    ev->cmd_kind = kind;
    ev->tag_field = c[offsetof(hmb_trace_dict_cmd, tag_field)];
    ev->resource_field = c[offsetof(hmb_trace_dict_cmd, resource_field)];
  }

  bool ParseField(const std::string& event_where,
                  uint16_t index,
                  uint16_t nr_fields,
                  const uint8_t* fp,
                  FieldDesc* fd) {
    std::string where = event_where + ": field " + Str(index);
    if (!ReadName(fp + offsetof(hmb_trace_dict_field, name),
                  HMB_TRACE_FIELD_NAME_LEN, where + " name", true, &fd->name)) {
      return false;
    }
    where += " '" + fd->name + "'";
    fd->offset = Le16(fp + offsetof(hmb_trace_dict_field, offset));
    fd->size = Le16(fp + offsetof(hmb_trace_dict_field, size));
    fd->type = fp[offsetof(hmb_trace_dict_field, type)];
    fd->display = fp[offsetof(hmb_trace_dict_field, display)];

    if (fd->type < HMB_TRACE_TYPE_U8 || fd->type > HMB_TRACE_TYPE_BYTES)
      return Fail(where + ": unknown type " + Str(fd->type));
    if (fd->display > HMB_TRACE_DISPLAY_FLAGS)
      return Fail(where + ": unknown display " + Str(fd->display));

    if (fd->size == 0) {
      // Only a trailing BYTES field may be open-ended ("rest of payload").
      if (fd->type != HMB_TRACE_TYPE_BYTES)
        return Fail(where + ": size 0 on a non-BYTES field");
      if (index + 1 != nr_fields)
        return Fail(where + ": size-0 BYTES field is not the last field");
    }
    const uint16_t width = IntegerWidth(fd->type);
    if (width && fd->size != width) {
      return Fail(where + ": size " + Str(fd->size) +
                  " does not match its integer type (" + Str(width) +
                  " bytes)");
    }
    if (uint32_t{fd->offset} + fd->size > kMaxPayload) {
      return Fail(where + ": offset " + Str(fd->offset) + " + size " +
                  Str(fd->size) + " exceeds the largest payload (" +
                  Str(kMaxPayload) + " bytes)");
    }
    if ((fd->display == HMB_TRACE_DISPLAY_ENUM ||
         fd->display == HMB_TRACE_DISPLAY_FLAGS) &&
        !width) {
      return Fail(where + ": ENUM/FLAGS display on a non-integer field");
    }
    return true;
  }

  std::span<const uint8_t> data_;
  uint32_t total_len_ = 0;
  std::string error_;
};

}  // namespace

std::optional<Dictionary> Dictionary::Parse(std::span<const uint8_t> bytes,
                                            std::string* error) {
  // Device memory may change while we read it: take one snapshot and parse
  // only that, so every check holds for the bytes actually used.
  const std::vector<uint8_t> copy(bytes.begin(), bytes.end());
  Dictionary dict;
  Parser parser(copy);
  if (!parser.Run(&dict.events_)) {
    if (error)
      *error = parser.error();
    return std::nullopt;
  }
  dict.total_len_ = parser.total_len();

  dict.by_id_.reserve(dict.events_.size());
  for (uint32_t i = 0; i < dict.events_.size(); i++)
    dict.by_id_.emplace_back(dict.events_[i].id, i);
  std::sort(dict.by_id_.begin(), dict.by_id_.end());
  for (size_t i = 1; i < dict.by_id_.size(); i++) {
    if (dict.by_id_[i].first == dict.by_id_[i - 1].first) {
      if (error) {
        const auto [id, first] = dict.by_id_[i - 1];
        const uint32_t second = dict.by_id_[i].second;
        *error = "event #" + Str(second) + " (id " + Str(id) + " '" +
                 dict.events_[second].name +
                 "'): duplicate id, already used "
                 "by event #" +
                 Str(first) + " '" + dict.events_[first].name + "'";
      }
      return std::nullopt;
    }
  }
  return dict;
}

const EventDesc* Dictionary::Find(uint16_t id) const {
  auto it = std::lower_bound(by_id_.begin(), by_id_.end(), id,
                             [](const std::pair<uint16_t, uint32_t>& e,
                                uint16_t key) { return e.first < key; });
  if (it == by_id_.end() || it->first != id)
    return nullptr;
  return &events_[it->second];
}

}  // namespace hmbtrace
