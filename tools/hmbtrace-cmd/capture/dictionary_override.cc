// SPDX-License-Identifier: GPL-2.0-only
// dictionary_override.h: --dictionary FILE.
#include "capture/dictionary_override.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include "dict/dict_file.h"
#include "dictionary_file.h"
#include "dictionary_set.h"
#include "hmb_trace_abi.h"

namespace hmbtrace {
namespace {

std::optional<DictionaryOverride>& Current() {
  static std::optional<DictionaryOverride> o;
  return o;
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

bool DictionaryMerger::Filter(const CaptureEvent& ev, const CaptureCallback& fn) {
  if (ev.kind == CaptureKind::kState) {
    error_ = DictionaryFileRefusal(o_.path, o_.build_id, ev.dev, ev.producer_gen, ev.build_id);
    return error_.empty() && fn(ev);
  }
  if (ev.kind != CaptureKind::kDict) return fn(ev);
  // Chunks of one generation's dictionary, reassembled; a chunk that
  // does not fit its total_len is passed on for the decoder to refuse.
  if (ev.total_len < sizeof(hmb_trace_dict_header) || ev.offset > ev.total_len ||
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
