// SPDX-License-Identifier: GPL-2.0-only
// printf_dict.h: sites to dictionary events.
#include "dict/printf_dict.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <set>

#include "hmb_trace_abi.h"
#include "hmb_trace_printf.h"
#include "hmb_trace_producer.h"

namespace hmbtrace {
namespace {

static_assert(sizeof(hmb_trace_printf_site) == kPrintfSiteLen);
static_assert(offsetof(hmb_trace_printf_site, format) == 20);
static_assert(offsetof(hmb_trace_printf_site, file) == 20 + HMB_TRACE_FORMAT_LEN);

uint64_t Le(std::span<const uint8_t> b, size_t off, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v |= uint64_t{b[off + i]} << (8 * i);
  return v;
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// "victim" for "gc: victim=%u" at the '%'; empty if no word precedes.
std::string WordBefore(const std::string& f, size_t pct) {
  if (pct == 0 || (f[pct - 1] != '=' && f[pct - 1] != ':')) return {};
  size_t end = pct - 1, begin = end;
  while (begin > 0 && IsWordChar(f[begin - 1])) begin--;
  return f.substr(begin, end - begin);
}

// <file stem>_<line>, lower case, [a-z0-9_].
std::string EventName(const PrintfSite& s) {
  std::string stem = s.file.substr(s.file.find_last_of('/') == std::string::npos
                                       ? 0
                                       : s.file.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  for (char& c : stem) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (!IsWordChar(c)) c = '_';
  }
  return stem + "_" + std::to_string(s.line);
}

uint8_t IntType(unsigned size, bool is_signed) {
  switch (size) {
    case 1: return is_signed ? HMB_TRACE_TYPE_S8 : HMB_TRACE_TYPE_U8;
    case 2: return is_signed ? HMB_TRACE_TYPE_S16 : HMB_TRACE_TYPE_U16;
    case 4: return is_signed ? HMB_TRACE_TYPE_S32 : HMB_TRACE_TYPE_U32;
    case 8: return is_signed ? HMB_TRACE_TYPE_S64 : HMB_TRACE_TYPE_U64;
    default: return 0;
  }
}

// The event of one site, or why there is none (appended to `errors`).
bool MakeEvent(const PrintfSite& s, PrintfEvent* ev, std::string* errors) {
  auto fail = [&](const std::string& what) {
    *errors += s.Where() + ": " + what + " (\"" + s.format + "\")\n";
    return false;
  };
  ev->id = s.id;
  ev->format = s.format;
  ev->name = EventName(s);
  if (ev->name.size() >= HMB_TRACE_NAME_LEN)
    return fail("event name " + ev->name + " too long (at most " +
                std::to_string(HMB_TRACE_NAME_LEN - 1) + " characters)");
  std::set<std::string> names;
  uint32_t offset = 0;
  const std::string& f = s.format;
  for (size_t i = 0; i < f.size(); i++) {
    if (f[i] != '%') continue;
    const size_t pct = i++;
    if (i < f.size() && f[i] == '%') continue;
    while (i < f.size() && std::strchr("-+ 0#", f[i])) i++;
    while (i < f.size() && ((f[i] >= '0' && f[i] <= '9') || f[i] == '.')) i++;
    if (i < f.size() && f[i] == '*') return fail("a '*' width or precision takes no field");
    while (i < f.size() && std::strchr("hlLqjzt", f[i])) i++;
    if (i >= f.size()) return fail("a '%' at the end of the format");
    const char conv = f[i];
    if (!std::strchr("diuxX", conv))
      return fail(std::string("conversion %") + conv +
                  " cannot be expressed in the dictionary (only d i u x X)");
    const size_t n = ev->fields.size();
    if (n >= s.args.size())
      return fail("more conversions than the " + std::to_string(s.args.size()) + " arguments");
    const uint8_t a = s.args[n];
    const unsigned size = a & HMB_TRACE_PRINTF_ARG_SIZE;
    if (a & HMB_TRACE_PRINTF_ARG_NOT_INT)
      return fail("argument " + std::to_string(n + 1) + " is not an integer");
    const bool is_signed = conv == 'd' || conv == 'i';
    PrintfField fd;
    fd.type = IntType(size, is_signed);
    if (!fd.type)
      return fail("argument " + std::to_string(n + 1) + " is " + std::to_string(size) +
                  " bytes wide (1, 2, 4 or 8)");
    fd.name = WordBefore(f, pct);
    if (fd.name.empty() || fd.name.size() >= HMB_TRACE_FIELD_NAME_LEN || names.count(fd.name))
      fd.name = "arg" + std::to_string(n);
    names.insert(fd.name);
    fd.offset = static_cast<uint16_t>(offset);
    fd.size = static_cast<uint16_t>(size);
    fd.display = (conv == 'x' || conv == 'X') ? HMB_TRACE_DISPLAY_HEX : HMB_TRACE_DISPLAY_DEC;
    offset += size;
    ev->fields.push_back(fd);
  }
  if (ev->fields.size() != s.args.size())
    return fail(std::to_string(s.args.size()) + " arguments for " +
                std::to_string(ev->fields.size()) + " conversions");
  return true;
}

}  // namespace

Result<std::vector<PrintfSite>> ParsePrintfSites(std::span<const uint8_t> section) {
  if (section.size() % kPrintfSiteLen)
    return Status::Error(std::string(kPrintfSection) + " is " + std::to_string(section.size()) +
                         " bytes, not a multiple of " + std::to_string(kPrintfSiteLen));
  std::vector<PrintfSite> sites;
  for (size_t off = 0; off < section.size(); off += kPrintfSiteLen) {
    auto rec = section.subspan(off, kPrintfSiteLen);
    auto bad = [&](const std::string& what) {
      return Status::Error(std::string(kPrintfSection) + " at offset " + std::to_string(off) +
                           ": " + what);
    };
    if (Le(rec, offsetof(hmb_trace_printf_site, magic), 4) != HMB_TRACE_PRINTF_MAGIC)
      return bad("not a printf site (magic)");
    PrintfSite s;
    s.id = static_cast<uint16_t>(Le(rec, offsetof(hmb_trace_printf_site, id), 2));
    s.line = static_cast<uint32_t>(Le(rec, offsetof(hmb_trace_printf_site, line), 4));
    const uint8_t nr = rec[offsetof(hmb_trace_printf_site, nr_args)];
    if (nr > HMB_TRACE_PRINTF_MAX_ARGS) return bad(std::to_string(nr) + " arguments");
    const auto* args = rec.data() + offsetof(hmb_trace_printf_site, arg);
    s.args.assign(args, args + nr);
    const auto* fmt = reinterpret_cast<const char*>(rec.data() + offsetof(hmb_trace_printf_site, format));
    if (!memchr(fmt, 0, HMB_TRACE_FORMAT_LEN)) return bad("format not NUL terminated");
    s.format = fmt;
    const auto* file = reinterpret_cast<const char*>(rec.data() + offsetof(hmb_trace_printf_site, file));
    s.file.assign(file, strnlen(file, HMB_TRACE_PRINTF_FILE_LEN));
    if (s.id == 0) return bad(s.Where() + ": event id 0");
    sites.push_back(std::move(s));
  }
  return sites;
}

Result<std::vector<PrintfEvent>> MakePrintfEvents(const std::vector<PrintfSite>& sites) {
  std::string errors;
  std::map<uint16_t, const PrintfSite*> by_id;
  std::map<std::string, const PrintfSite*> by_name;
  std::vector<PrintfEvent> events;
  // In id order: the same dictionary whatever order the linker chose.
  std::vector<const PrintfSite*> order;
  for (const PrintfSite& s : sites) order.push_back(&s);
  std::stable_sort(order.begin(), order.end(),
                   [](const PrintfSite* a, const PrintfSite* b) { return a->id < b->id; });
  for (const PrintfSite* sp : order) {
    const PrintfSite& s = *sp;
    auto [it, fresh] = by_id.emplace(s.id, &s);
    if (!fresh) {
      if (!(*it->second == s))
        errors += s.Where() + ": id " + std::to_string(s.id) + " collides with " +
                  it->second->Where() + " (give the units different HMB_TRACE_PRINTF_BASE)\n";
      continue;
    }
    PrintfEvent ev;
    if (!MakeEvent(s, &ev, &errors)) continue;
    auto [nit, nfresh] = by_name.emplace(ev.name, &s);
    if (!nfresh) {
      errors += s.Where() + ": event name " + ev.name + " is also " + nit->second->Where() + "'s\n";
      continue;
    }
    events.push_back(std::move(ev));
  }
  if (sites.empty()) errors += std::string("no printf sites in ") + kPrintfSection + "\n";
  if (events.size() > 65535) errors += "more than 65535 printf sites\n";
  if (!errors.empty()) {
    errors.pop_back();
    return Status::Error(errors);
  }
  return events;
}

Result<std::vector<uint8_t>> SerializeDictionary(const std::vector<PrintfEvent>& events) {
  std::vector<std::vector<hmb_trace_field_desc>> fields(events.size());
  std::vector<hmb_trace_event_desc> descs(events.size());
  for (size_t i = 0; i < events.size(); i++) {
    const PrintfEvent& e = events[i];
    for (const PrintfField& f : e.fields)
      fields[i].push_back({f.name.c_str(), f.offset, f.size, f.type, f.display, 0, nullptr});
    hmb_trace_event_desc& d = descs[i];
    d = {};
    d.id = e.id;
    d.role = HMB_TRACE_ROLE_INSTANT;
    d.key_field = d.latency_field = d.qid_field = d.cid_field = d.value_field = HMB_TRACE_NO_FIELD;
    d.name = e.name.c_str();
    d.format = e.format.c_str();
    d.nr_fields = static_cast<uint16_t>(fields[i].size());
    d.fields = fields[i].data();
  }
  // The producer serialises it into a scratch area, as a firmware would.
  hmb_trace_producer_config cfg{};
  cfg.page_size = 4096;
  cfg.pages_per_core = 2;
  cfg.nr_cores = 1;
  cfg.clock_hz = 1;
  cfg.nr_events = static_cast<uint16_t>(descs.size());
  cfg.events = descs.data();
  const uint64_t area_len = hmb_trace_area_size(&cfg);
  if (!area_len) return Status::Error("the producer refuses these events as a dictionary");
  std::vector<uint64_t> area((area_len + 7) / 8);
  hmb_trace_producer producer;
  const int err = hmb_trace_producer_init(&producer, area.data(), area_len, &cfg);
  if (err) return Status::Error("the producer refuses the dictionary: error " + std::to_string(err));
  const auto* base = reinterpret_cast<const uint8_t*>(area.data());
  uint64_t dict_offset;
  uint32_t total_len;
  std::memcpy(&dict_offset, base + offsetof(hmb_trace_meta, dict_offset), sizeof(dict_offset));
  std::memcpy(&total_len, base + dict_offset + offsetof(hmb_trace_dict_header, total_len),
              sizeof(total_len));
  return std::vector<uint8_t>(base + dict_offset, base + dict_offset + total_len);
}

}  // namespace hmbtrace
