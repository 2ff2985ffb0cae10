// SPDX-License-Identifier: GPL-2.0-only
//
// The dictionary file (its format: decode/dictionary_file.h), read and
// written by hmbtrace-cmd: dict writes it, --dictionary reads it.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_DICT_FILE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_DICT_FILE_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dictionary_file.h"
#include "hmbtrace/status.h"

namespace hmbtrace {

struct DictFile {
  std::array<uint8_t, kDictFileBuildIdLen> build_id{};
  std::vector<uint8_t> dict;
};

std::vector<uint8_t> EncodeDictFile(const DictFile& f);
// Checks the header and that dict_len bytes follow it; not the
// dictionary's own content (the decoder validates that, as for a trace).
Result<DictFile> DecodeDictFile(std::span<const uint8_t> bytes);
// ReadFileBounded() (dictionary_file.h) as a Result.
Result<std::vector<uint8_t>> ReadFile(const std::string& path, uint64_t max_bytes);
// Reads and decodes; errors name the path.
Result<DictFile> ReadDictFile(const std::string& path);

// Lower-case hex, as the tools print build ids.
std::string BuildIdHex(std::span<const uint8_t> id);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_DICT_FILE_H_
