// SPDX-License-Identifier: GPL-2.0-only
// dict_file.h: the dictionary file's header, bounded reads.
#include "dict/dict_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace hmbtrace {
namespace {

constexpr char kMagic[] = "HMBTDICT";
constexpr uint32_t kVersion = 1;
// A dictionary is at most 65535 events of a few KiB each: far below this.
constexpr uint64_t kMaxDictFileBytes = 1ull << 30;

void Put(std::vector<uint8_t>& b, size_t off, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; i++) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t Get(std::span<const uint8_t> b, size_t off, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++) v |= uint64_t{b[off + i]} << (8 * i);
  return v;
}

}  // namespace

std::string BuildIdHex(std::span<const uint8_t> id) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : id) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

std::vector<uint8_t> EncodeDictFile(const DictFile& f) {
  std::vector<uint8_t> b(kDictFileHeaderLen + f.dict.size(), 0);
  std::memcpy(b.data(), kMagic, 8);
  Put(b, 8, kVersion, 4);
  Put(b, 12, kDictFileHeaderLen, 4);
  std::memcpy(b.data() + 16, f.build_id.data(), kDictFileBuildIdLen);
  b[36] = kDictFileBuildIdLen;
  Put(b, 40, f.dict.size(), 4);
  std::copy(f.dict.begin(), f.dict.end(), b.begin() + kDictFileHeaderLen);
  return b;
}

Result<DictFile> DecodeDictFile(std::span<const uint8_t> bytes) {
  if (bytes.size() < kDictFileHeaderLen || std::memcmp(bytes.data(), kMagic, 8) != 0)
    return Status::Error("not a dictionary file (no HMBTDICT header; made by hmbtrace-cmd dict?)");
  const uint64_t version = Get(bytes, 8, 4), header_len = Get(bytes, 12, 4);
  if (version != kVersion)
    return Status::Error("dictionary file version " + std::to_string(version) + ", not 1");
  if (header_len < kDictFileHeaderLen || header_len % 8 || header_len > bytes.size())
    return Status::Error("dictionary file header_len " + std::to_string(header_len));
  const uint64_t dict_len = Get(bytes, 40, 4);
  if (dict_len > bytes.size() - header_len)
    return Status::Error("dictionary file cut short: " + std::to_string(dict_len) +
                         " bytes of dictionary announced, " +
                         std::to_string(bytes.size() - header_len) + " held");
  if (bytes[36] > kDictFileBuildIdLen)
    return Status::Error("dictionary file build_id_len " + std::to_string(bytes[36]));
  DictFile f;
  std::memcpy(f.build_id.data(), bytes.data() + 16, kDictFileBuildIdLen);
  f.dict.assign(bytes.begin() + header_len, bytes.begin() + header_len + dict_len);
  return f;
}

Result<std::vector<uint8_t>> ReadFileBounded(const std::string& path, uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": " + std::strerror(errno));
  std::vector<uint8_t> bytes;
  std::vector<char> buf(1 << 16);
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
    bytes.insert(bytes.end(), buf.data(), buf.data() + in.gcount());
    if (bytes.size() > max_bytes) return Status::Error(path + ": too large");
  }
  return bytes;
}

Result<DictFile> ReadDictFile(const std::string& path) {
  auto bytes = ReadFileBounded(path, kMaxDictFileBytes);
  if (!bytes.ok()) return bytes.status();
  auto f = DecodeDictFile(bytes.value());
  if (!f.ok()) return Status::Error(path + ": " + f.message());
  return f;
}

}  // namespace hmbtrace
