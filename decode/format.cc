// SPDX-License-Identifier: GPL-2.0-only

#include "format.h"

#include <bit>
#include <charconv>
#include <cstring>
#include <string_view>

namespace hmbtrace {
namespace {

// Formats come from the device: "%999999999d" must not allocate a gigabyte.
// Real formats use widths of a few columns.
constexpr size_t kMaxWidth = 256;

constexpr char kHexLower[] = "0123456789abcdef";
constexpr char kHexUpper[] = "0123456789ABCDEF";

using Spec = FormatSpec;

// Reads a decimal number, saturating at kMaxWidth.
size_t ParseNumber(std::string_view fmt, size_t* pos) {
  size_t n = 0;
  while (*pos < fmt.size() && fmt[*pos] >= '0' && fmt[*pos] <= '9') {
    n = n * 10 + static_cast<size_t>(fmt[*pos] - '0');
    if (n > kMaxWidth)
      n = kMaxWidth;
    (*pos)++;
  }
  return n;
}

// Parses the specification starting at fmt[start] == '%'. Returns the
// number of characters it spans (at least 1).
size_t ParseSpec(std::string_view fmt, size_t start, Spec* spec) {
  size_t pos = start + 1;
  for (; pos < fmt.size(); pos++) {
    const char c = fmt[pos];
    if (c == '-')
      spec->left = true;
    else if (c == '+')
      spec->plus = true;
    else if (c == ' ')
      spec->space = true;
    else if (c == '0')
      spec->zero = true;
    else if (c == '#')
      spec->alt = true;
    else
      break;
  }
  spec->width = ParseNumber(fmt, &pos);
  if (pos < fmt.size() && fmt[pos] == '.') {
    pos++;
    spec->has_precision = true;
    spec->precision = ParseNumber(fmt, &pos);
  }
  // Length modifiers are skipped (a switch: this runs for every field of
  // every record a reader prints).
  for (; pos < fmt.size(); pos++) {
    switch (fmt[pos]) {
      case 'h': case 'l': case 'L': case 'q': case 'j': case 'z': case 't':
        continue;
      default:
        break;
    }
    break;
  }
  if (pos >= fmt.size())
    return pos - start;
  switch (fmt[pos]) {
    case 'd': case 'i': case 'u': case 'x': case 'X': case 's': case '%':
      spec->conv = fmt[pos];
      break;
    default:
      break;
  }
  return pos + 1 - start;
}

// Applies precision (maximum characters) and width as printf's %s does.
std::string PadString(std::string s, const Spec& spec) {
  if (spec.has_precision && s.size() > spec.precision)
    s.resize(spec.precision);
  if (s.size() < spec.width) {
    const std::string pad(spec.width - s.size(), ' ');
    s = spec.left ? s + pad : pad + s;
  }
  return s;
}

// Applies precision (minimum digits), the '0' flag and width as printf's
// integer conversions do. `sign` and `prefix` stay left of zero padding.
std::string PadNumber(std::string_view sign,
                      std::string_view prefix,
                      std::string digits,
                      const Spec& spec) {
  if (spec.has_precision) {
    if (spec.precision == 0 && digits == "0")
      digits.clear();
    if (digits.size() < spec.precision)
      digits.insert(0, spec.precision - digits.size(), '0');
  }
  std::string head(sign);
  head += prefix;
  const size_t len = head.size() + digits.size();
  if (len >= spec.width)
    return head + digits;
  const size_t pad = spec.width - len;
  if (spec.left)
    return head + digits + std::string(pad, ' ');
  if (spec.zero && !spec.has_precision)
    return head + std::string(pad, '0') + digits;
  return std::string(pad, ' ') + head + digits;
}

std::string Digits(uint64_t v, unsigned base, const char* alphabet) {
  char buf[24];
  size_t n = sizeof(buf);
  do {
    buf[--n] = alphabet[v % base];
    v /= base;
  } while (v);
  return std::string(buf + n, sizeof(buf) - n);
}

std::string HexNumber(uint64_t v) {
  return "0x" + Digits(v, 16, kHexLower);
}

std::string HexBytes(std::span<const uint8_t> bytes) {
  return Hex(bytes);
}

// Up to the first NUL; the result is safe to print on a terminal.
std::string EscapeString(std::span<const uint8_t> bytes) {
  std::string out;
  for (const uint8_t b : bytes) {
    if (b == 0)
      break;
    if (b == '\\') {
      out += "\\\\";
    } else if (b < 0x20 || b > 0x7e) {
      out += "\\x";
      out += kHexLower[b >> 4];
      out += kHexLower[b & 0xf];
    } else {
      out += static_cast<char>(b);
    }
  }
  return out;
}

using format_internal::FieldBytes;
using format_internal::LoadLe;
using format_internal::SignExtend;

std::string EnumName(const FieldDesc& field, uint64_t v) {
  for (const ValueDesc& value : field.values) {
    if (value.value == v)
      return value.name;
  }
  return HexNumber(v);
}

std::string FlagNames(const FieldDesc& field, uint64_t v) {
  if (v == 0) {
    for (const ValueDesc& value : field.values) {
      if (value.value == 0)
        return value.name;
    }
    return "0";
  }
  std::string out;
  uint64_t left = v;
  for (const ValueDesc& value : field.values) {
    // A mask names a combination of bits; it matches only if all are set.
    if (value.value == 0 || (v & value.value) != value.value)
      continue;
    if (!out.empty())
      out += '|';
    out += value.name;
    left &= ~value.value;
  }
  if (left) {
    if (!out.empty())
      out += '|';
    out += HexNumber(left);
  }
  return out;
}

// Decimal of an integer field's value, signed iff its type is.
std::string Decimal(const FieldDesc& field, uint64_t raw, const Spec& spec) {
  std::string_view sign;
  uint64_t magnitude = raw;
  if (field.is_signed()) {
    const uint64_t v = SignExtend(raw, field.size);
    if (v >> 63) {
      sign = "-";
      magnitude = 0 - v;  // well defined for INT64_MIN too
    }
  }
  if (sign.empty() && (spec.conv == 'd' || spec.conv == 'i'))
    sign = spec.plus ? "+" : spec.space ? " " : "";
  return PadNumber(sign, "", Digits(magnitude, 10, kHexLower), spec);
}

std::string RenderField(const FieldDesc& field,
                        std::span<const uint8_t> payload,
                        const Spec& spec) {
  const auto bytes = FieldBytes(field, payload);
  if (!bytes)
    return "<truncated>";
  if (field.type == HMB_TRACE_TYPE_STRING)
    return PadString(EscapeString(*bytes), spec);
  if (field.type == HMB_TRACE_TYPE_BYTES)
    return PadString(HexBytes(*bytes), spec);

  const uint64_t raw = LoadLe(*bytes);
  if (field.display == HMB_TRACE_DISPLAY_ENUM)
    return PadString(EnumName(field, raw), spec);
  if (field.display == HMB_TRACE_DISPLAY_FLAGS)
    return PadString(FlagNames(field, raw), spec);
  switch (spec.conv) {
    case 'x':
    case 'X': {
      const bool upper = spec.conv == 'X';
      std::string_view prefix;
      if (spec.alt && raw)
        prefix = upper ? "0X" : "0x";
      return PadNumber("", prefix,
                       Digits(raw, 16, upper ? kHexUpper : kHexLower), spec);
    }
    case 's':
      if (field.display == HMB_TRACE_DISPLAY_HEX)
        return PadString(HexNumber(raw), spec);
      return PadString(Decimal(field, raw, Spec{}), spec);
    default:  // d i u
      return Decimal(field, raw, spec);
  }
}

}  // namespace

namespace {

// The common conversions, written straight into `out`: what RenderField()
// gives, without its strings. "%u" / "%d" / "%i" / "%x" with no flag, width
// or precision of an integer field shown in decimal (or hex for %x), and an
// ENUM field's name with no width or precision.
// False if the conversion is not that plain.
bool AppendPlainInteger(std::string* out,
                        const FieldDesc& field,
                        std::span<const uint8_t> payload,
                        const Spec& spec) {
  if (field.display == HMB_TRACE_DISPLAY_ENUM && !spec.width && !spec.has_precision &&
      field.type != HMB_TRACE_TYPE_STRING && field.type != HMB_TRACE_TYPE_BYTES) {
    // RenderField()'s EnumName() with nothing to pad, for any conversion.
    const auto bytes = FieldBytes(field, payload);
    if (!bytes) {
      *out += "<truncated>";
      return true;
    }
    const uint64_t v = LoadLe(*bytes);
    for (const ValueDesc& value : field.values) {
      if (value.value == v) {
        *out += value.name;
        return true;
      }
    }
    *out += HexNumber(v);
    return true;
  }
  if (spec.left || spec.plus || spec.space || spec.zero || spec.alt || spec.width ||
      spec.has_precision || !field.is_integer() || field.display != HMB_TRACE_DISPLAY_DEC)
    return false;
  const bool hex = spec.conv == 'x';
  if (!hex && spec.conv != 'u' && spec.conv != 'd' && spec.conv != 'i')
    return false;
  const auto bytes = FieldBytes(field, payload);
  if (!bytes) {
    *out += "<truncated>";
    return true;
  }
  uint64_t v = LoadLe(*bytes);
  char buf[24];
  if (hex) {
    size_t n = sizeof(buf);
    do {
      buf[--n] = kHexLower[v & 0xf];
      v >>= 4;
    } while (v);
    out->append(buf + n, sizeof(buf) - n);
    return true;
  }
  char* p = buf;
  if (field.is_signed()) {
    const uint64_t s = SignExtend(v, field.size);
    if (s >> 63) {
      *p++ = '-';
      v = 0 - s;
    }
  }
  p = std::to_chars(p, buf + sizeof(buf), v).ptr;  // two digits a step
  out->append(buf, static_cast<size_t>(p - buf));
  return true;
}

}  // namespace

namespace {

// A field's conversion, appended.
void AppendConversion(std::string* out,
                      const FieldDesc& field,
                      std::span<const uint8_t> payload,
                      const Spec& spec) {
  if (!AppendPlainInteger(out, field, payload, spec))
    *out += RenderField(field, payload, spec);
}

// Walks `event`'s format: text that does not depend on the payload to
// `text(string_view)`, each conversion of a field to `field(field, spec)`.
// The one reading of a format, for AppendFormatEvent() and FormatPlan.
template <typename Text, typename Field>
void WalkFormat(const EventDesc& event, Text&& text, Field&& field) {
  const std::string_view fmt = event.format;
  size_t next_field = 0;
  size_t pos = 0;
  while (pos < fmt.size()) {
    size_t pct = pos;  // formats are short: a loop, not memchr
    while (pct < fmt.size() && fmt[pct] != '%')
      pct++;
    text(fmt.substr(pos, pct - pos));
    if (pct == fmt.size())
      break;
    Spec spec;
    const size_t len = ParseSpec(fmt, pct, &spec);
    if (spec.conv == '%') {
      text("%");
    } else if (spec.conv == 0) {
      text(fmt.substr(pct, len));
    } else if (next_field < event.fields.size()) {
      field(event.fields[next_field++], spec);
    } else {
      text("<?>");
    }
    pos = pct + len;
  }
}

}  // namespace

void AppendFormatEvent(std::string* out,
                       const EventDesc& event,
                       std::span<const uint8_t> payload) {
  WalkFormat(
      event, [out](std::string_view text) { out->append(text); },
      [out, payload](const FieldDesc& field, const Spec& spec) {
        AppendConversion(out, field, payload, spec);
      });
}

FormatPlan::FormatPlan(const EventDesc& event) {
  steps_.emplace_back();
  WalkFormat(
      event, [this](std::string_view text) { steps_.back().text.append(text); },
      [this](const FieldDesc& field, const Spec& spec) {
        steps_.back().field = &field;
        steps_.back().spec = spec;
        steps_.emplace_back();
      });
}

void FormatPlan::Append(std::string* out, std::span<const uint8_t> payload) const {
  for (const Step& step : steps_) {
    out->append(step.text);
    if (step.field)
      AppendConversion(out, *step.field, payload, step.spec);
  }
}

std::string FormatEvent(const EventDesc& event,
                        std::span<const uint8_t> payload) {
  std::string out;
  AppendFormatEvent(&out, event, payload);
  return out;
}

std::string FormatRecord(const Dictionary& dict,
                         uint16_t event_id,
                         std::span<const uint8_t> payload) {
  if (const EventDesc* event = dict.Find(event_id))
    return FormatEvent(*event, payload);
  std::string out = "unknown event " + std::to_string(event_id) +
                    " len=" + std::to_string(payload.size()) + " data=";
  if (payload.size() > kUnknownEventHexBytes) {
    out += HexBytes(payload.first(kUnknownEventHexBytes));
    out += "...";
  } else {
    out += HexBytes(payload);
  }
  return out;
}

std::string RecordText(const Dictionary* dict,
                       uint16_t event_id,
                       std::span<const uint8_t> payload) {
  std::string out;
  AppendRecordText(&out, dict, event_id, payload);
  return out;
}

void AppendRecordText(std::string* out,
                      const Dictionary* dict,
                      uint16_t event_id,
                      std::span<const uint8_t> payload) {
  if (const EventDesc* event = dict ? dict->Find(event_id) : nullptr) {
    *out += event->name;
    *out += ": ";
    AppendFormatEvent(out, *event, payload);
    return;
  }
  *out += "event_id=" + std::to_string(event_id) +
          (dict ? " (not in the dictionary)" : " (no dictionary yet)");
}

std::string Hex(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const uint8_t b : bytes) {
    out += kHexLower[b >> 4];
    out += kHexLower[b & 0xf];
  }
  return out;
}

}  // namespace hmbtrace
