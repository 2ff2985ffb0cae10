// SPDX-License-Identifier: GPL-2.0-only
// dict_file.h: the dictionary file read and written, bounded reads.
#include "dict/dict_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace hmbtrace {

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
  return EncodeDictFileBytes(f.build_id, f.dict);
}

Result<DictFile> DecodeDictFile(std::span<const uint8_t> bytes) {
  DictFile f;
  std::span<const uint8_t> dict;
  std::string error;
  if (!ParseDictFile(bytes, &f.build_id, &dict, &error)) return Status::Error(error);
  f.dict.assign(dict.begin(), dict.end());
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
