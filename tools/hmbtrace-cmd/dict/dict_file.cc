// SPDX-License-Identifier: GPL-2.0-only
// dict_file.h: the dictionary file read and written, bounded reads.
#include "dict/dict_file.h"

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

Result<std::vector<uint8_t>> ReadFile(const std::string& path, uint64_t max_bytes) {
  std::vector<uint8_t> bytes;
  std::string error;
  if (!ReadFileBounded(path, max_bytes, &bytes, &error)) return Status::Error(error);
  return bytes;
}

Result<DictFile> ReadDictFile(const std::string& path) {
  auto bytes = ReadFile(path, kMaxDictFileBytes);
  if (!bytes.ok()) return bytes.status();
  auto f = DecodeDictFile(bytes.value());
  if (!f.ok()) return Status::Error(path + ": " + f.message());
  return f;
}

}  // namespace hmbtrace
