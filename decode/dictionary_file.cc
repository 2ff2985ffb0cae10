// SPDX-License-Identifier: GPL-2.0-only
// dictionary_file.h: the dictionary file's header; merging a file into a trace's
// dictionary.
#include "dictionary_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <utility>

#include "hmb_trace_abi.h"

namespace hmbtrace {
namespace {

constexpr char kMagic[] = "HMBTDICT";
constexpr uint32_t kVersion = 1;
constexpr size_t kHeader = sizeof(hmb_trace_dict_header);
constexpr size_t kEventHeader = sizeof(hmb_trace_dict_event);

uint64_t Le(std::span<const uint8_t> b, size_t off, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= uint64_t{b[off + i]} << (8 * i);
  return v;
}

void Put(std::vector<uint8_t>& b, size_t off, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}

using Entry = std::pair<uint16_t, std::span<const uint8_t>>;

// The entries of a dictionary, as far as they are well formed; nullopt if
// the header is not a dictionary's.
std::optional<std::vector<Entry>> Entries(std::span<const uint8_t> d) {
  if (d.size() < kHeader || Le(d, offsetof(hmb_trace_dict_header, magic), 4) !=
                                HMB_TRACE_DICT_MAGIC)
    return std::nullopt;
  const size_t total =
      std::min<size_t>(Le(d, offsetof(hmb_trace_dict_header, total_len), 4), d.size());
  const uint64_t nr = Le(d, offsetof(hmb_trace_dict_header, nr_events), 2);
  std::vector<Entry> out;
  size_t off = kHeader;
  for (uint64_t i = 0; i < nr && off + kEventHeader <= total; i++) {
    const size_t len = Le(d, off + offsetof(hmb_trace_dict_event, entry_len), 4);
    if (len < kEventHeader || len > total - off)
      break;
    out.emplace_back(static_cast<uint16_t>(Le(d, off + offsetof(hmb_trace_dict_event, id), 2)),
                     d.subspan(off, len));
    off += len;
  }
  return out;
}

}  // namespace

bool ReadFileBounded(const std::string& path,
                     uint64_t max_bytes,
                     std::vector<uint8_t>* out,
                     std::string* error) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  out->clear();
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    out->insert(out->end(), buf, buf + n);
    if (out->size() > max_bytes)
      break;
  }
  const bool read_error = std::ferror(f);
  std::fclose(f);
  if (read_error) {
    *error = path + ": read error";
    return false;
  }
  if (out->size() > max_bytes) {
    *error = path + ": too large (over " + std::to_string(max_bytes) + " bytes)";
    return false;
  }
  return true;
}

bool ParseDictFile(std::span<const uint8_t> bytes,
                   std::array<uint8_t, kDictFileBuildIdLen>* build_id,
                   std::span<const uint8_t>* dict,
                   std::string* error) {
  if (bytes.size() < kDictFileHeaderLen || std::memcmp(bytes.data(), kMagic, 8) != 0) {
    *error = "not a dictionary file (no HMBTDICT header; made by hmbtrace-cmd dict?)";
    return false;
  }
  const uint64_t version = Le(bytes, 8, 4), header_len = Le(bytes, 12, 4);
  if (version != kVersion) {
    *error = "dictionary file version " + std::to_string(version) + ", not 1";
    return false;
  }
  if (header_len < kDictFileHeaderLen || header_len % 8 || header_len > bytes.size()) {
    *error = "dictionary file header_len " + std::to_string(header_len);
    return false;
  }
  const uint64_t dict_len = Le(bytes, 40, 4);
  if (dict_len > bytes.size() - header_len) {
    *error = "dictionary file cut short: " + std::to_string(dict_len) +
             " bytes of dictionary announced, " + std::to_string(bytes.size() - header_len) +
             " held";
    return false;
  }
  if (bytes[36] > kDictFileBuildIdLen) {
    *error = "dictionary file build_id_len " + std::to_string(bytes[36]);
    return false;
  }
  std::memcpy(build_id->data(), bytes.data() + 16, kDictFileBuildIdLen);
  *dict = bytes.subspan(header_len, dict_len);
  return true;
}

std::vector<uint8_t> EncodeDictFileBytes(std::span<const uint8_t> build_id,
                                         std::span<const uint8_t> dict) {
  std::vector<uint8_t> b(kDictFileHeaderLen + dict.size(), 0);
  std::memcpy(b.data(), kMagic, 8);
  Put(b, 8, kVersion, 4);
  Put(b, 12, kDictFileHeaderLen, 4);
  std::memcpy(b.data() + 16, build_id.data(), std::min(build_id.size(), kDictFileBuildIdLen));
  b[36] = kDictFileBuildIdLen;
  Put(b, 40, dict.size(), 4);
  std::copy(dict.begin(), dict.end(), b.begin() + kDictFileHeaderLen);
  return b;
}

std::vector<uint8_t> MergeDictionaries(std::span<const uint8_t> trace,
                                       std::span<const uint8_t> extra) {
  auto base = Entries(trace);
  auto more = Entries(extra);
  if (!more)
    return {trace.begin(), trace.end()};
  std::vector<Entry> all;
  if (base)
    all = *base;
  std::set<uint16_t> ids;
  for (const auto& e : all)
    ids.insert(e.first);
  for (const auto& e : *more)
    if (ids.insert(e.first).second)
      all.push_back(e);
  std::vector<uint8_t> out(kHeader, 0);
  for (const auto& e : all)
    out.insert(out.end(), e.second.begin(), e.second.end());
  Put(out, offsetof(hmb_trace_dict_header, magic), HMB_TRACE_DICT_MAGIC, 4);
  Put(out, offsetof(hmb_trace_dict_header, version), HMB_TRACE_DICT_VERSION, 2);
  Put(out, offsetof(hmb_trace_dict_header, nr_events), all.size(), 2);
  Put(out, offsetof(hmb_trace_dict_header, total_len), out.size(), 4);
  return out;
}

}  // namespace hmbtrace
