// SPDX-License-Identifier: GPL-2.0-only
//
// The little of an ELF file that `hmbtrace-cmd dict` needs: a section's
// bytes and flags by name, and the GNU build id. The file is user input
// (a firmware image may be cut short or damaged): the parser is a pure
// function over the bytes, every offset and count from the file is
// bounded by the bytes held before it is used, and any problem is an
// error naming the offset and what was wrong. ELF32 and ELF64,
// little-endian only (the trace ABI is little-endian).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_ELF_FILE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_ELF_FILE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hmbtrace/status.h"

namespace hmbtrace {

struct ElfSection {
  std::string name;
  uint32_t type = 0;
  uint64_t flags = 0;  // SHF_*
  std::span<const uint8_t> bytes;  // empty for SHT_NOBITS
};

struct ElfFile {
  bool is64 = false;
  std::vector<ElfSection> sections;
  std::vector<uint8_t> build_id;  // NT_GNU_BUILD_ID's descriptor; empty if none

  const ElfSection* Find(std::string_view name) const;
};

inline constexpr uint64_t kElfShfAlloc = 0x2;

// Parses `bytes` (which must outlive the result: sections point into it).
Result<ElfFile> ParseElf(std::span<const uint8_t> bytes);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_ELF_FILE_H_
