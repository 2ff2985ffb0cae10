// SPDX-License-Identifier: GPL-2.0-only
// dictionary_override.h: --dictionary FILE.
#include "capture/dictionary_override.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include "dict/dict_file.h"
#include "hmb_trace_abi.h"

namespace hmbtrace {
namespace {

std::optional<DictionaryOverride>& Current() {
  static std::optional<DictionaryOverride> o;
  return o;
}

uint32_t Le(std::span<const uint8_t> b, size_t off, unsigned n) {
  uint32_t v = 0;
  for (unsigned i = 0; i < n; i++) v |= uint32_t{b[off + i]} << (8 * i);
  return v;
}

constexpr size_t kHeader = sizeof(hmb_trace_dict_header);
constexpr size_t kEventHeader = sizeof(hmb_trace_dict_event);

// The entries of a dictionary: (id, bytes), as far as they are well
// formed; nullopt if the header is not a dictionary's.
std::optional<std::vector<std::pair<uint16_t, std::span<const uint8_t>>>> Entries(
    std::span<const uint8_t> d) {
  if (d.size() < kHeader || Le(d, 0, 4) != HMB_TRACE_DICT_MAGIC) return std::nullopt;
  const size_t total = std::min<size_t>(Le(d, offsetof(hmb_trace_dict_header, total_len), 4),
                                        d.size());
  const uint32_t nr = Le(d, offsetof(hmb_trace_dict_header, nr_events), 2);
  std::vector<std::pair<uint16_t, std::span<const uint8_t>>> out;
  size_t off = kHeader;
  for (uint32_t i = 0; i < nr && off + kEventHeader <= total; i++) {
    const size_t len = Le(d, off + offsetof(hmb_trace_dict_event, entry_len), 4);
    if (len < kEventHeader || len > total - off) break;
    out.emplace_back(static_cast<uint16_t>(Le(d, off, 2)), d.subspan(off, len));
    off += len;
  }
  return out;
}

}  // namespace

Status SetDictionaryOverride(const std::string& path) {
  auto f = ReadDictFile(path);
  if (!f.ok()) return f.status();
  DictionaryOverride o;
  o.path = path;
  o.build_id = f->build_id;
  o.dict = std::move(f->dict);
  Current() = std::move(o);
  return {};
}

const DictionaryOverride* GetDictionaryOverride() {
  return Current() ? &*Current() : nullptr;
}

std::vector<uint8_t> MergeDictionaries(std::span<const uint8_t> trace,
                                       std::span<const uint8_t> extra) {
  auto base = Entries(trace);
  auto more = Entries(extra);
  if (!more) return {trace.begin(), trace.end()};
  std::vector<std::pair<uint16_t, std::span<const uint8_t>>> all;
  if (base) all = *base;
  std::set<uint16_t> ids;
  for (const auto& e : all) ids.insert(e.first);
  for (const auto& e : *more)
    if (!ids.count(e.first)) all.push_back(e);
  std::vector<uint8_t> out(kHeader, 0);
  for (const auto& e : all) out.insert(out.end(), e.second.begin(), e.second.end());
  auto put = [&](size_t off, uint32_t v, unsigned n) {
    for (unsigned i = 0; i < n; i++) out[off + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  put(offsetof(hmb_trace_dict_header, magic), HMB_TRACE_DICT_MAGIC, 4);
  put(offsetof(hmb_trace_dict_header, version), HMB_TRACE_DICT_VERSION, 2);
  put(offsetof(hmb_trace_dict_header, nr_events), static_cast<uint32_t>(all.size()), 2);
  put(offsetof(hmb_trace_dict_header, total_len), static_cast<uint32_t>(out.size()), 4);
  return out;
}

bool DictionaryMerger::Filter(const CaptureEvent& ev, const CaptureCallback& fn) {
  if (ev.kind == CaptureKind::kState) {
    const bool zero = std::all_of(ev.build_id.begin(), ev.build_id.end(),
                                  [](uint8_t b) { return b == 0; });
    if (!zero && ev.build_id != o_.build_id) {
      error_ = "dictionary file " + o_.path + " is of build id " + BuildIdHex(o_.build_id) +
               ", the trace's (dev " + std::to_string(ev.dev) + ", producer_gen " +
               std::to_string(ev.producer_gen) + ") is " + BuildIdHex(ev.build_id) +
               ": refused (a dictionary of another build decodes records wrongly)";
      return false;
    }
    return fn(ev);
  }
  if (ev.kind != CaptureKind::kDict) return fn(ev);
  // Chunks of one generation's dictionary, reassembled; a chunk that
  // does not fit its total_len is passed on for the decoder to refuse.
  if (ev.total_len < kHeader || ev.offset > ev.total_len ||
      ev.data.size() > ev.total_len - ev.offset)
    return fn(ev);
  Pending& p = pending_[{ev.dev, ev.producer_gen}];
  if (p.bytes.size() != ev.total_len) p = Pending{std::vector<uint8_t>(ev.total_len, 0),
                                                  std::vector<bool>(ev.total_len, false), 0};
  for (size_t i = 0; i < ev.data.size(); i++) {
    p.bytes[ev.offset + i] = ev.data[i];
    if (!p.have[ev.offset + i]) {
      p.have[ev.offset + i] = true;
      p.held++;
    }
  }
  if (p.held < p.bytes.size()) return true;
  const std::vector<uint8_t> merged = MergeDictionaries(p.bytes, o_.dict);
  pending_.erase({ev.dev, ev.producer_gen});
  CaptureEvent out = ev;
  out.offset = 0;
  out.total_len = static_cast<uint32_t>(merged.size());
  out.data = merged;
  return fn(out);
}

}  // namespace hmbtrace
