// SPDX-License-Identifier: GPL-2.0-only
//
// A dictionary file, as `hmbtrace-cmd dict` writes it and --dictionary
// reads it: the firmware's build id and the ABI's dictionary (header and
// entries), so that a decoder can refuse the file of another build.
//
//   offset  size  field
//   0       8     magic "HMBTDICT" (no NUL)
//   8       4     version, 1
//   12      4     header_len, 48 (the dictionary starts there)
//   16      20    build_id, zero padded
//   36      1     build_id_len (<= 20: how much of build_id the ELF had)
//   37      3     reserved, zero
//   40      4     dict_len: bytes of dictionary after the header
//   44      4     reserved, zero
//   48      ...   the dictionary (Documentation/hmb-trace-abi.rst)
//
// All little-endian. A firmware whose GNU build id is longer than 20 bytes
// is named by its first 20, as the trace area's build_id field holds it.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_DICT_FILE_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_DICT_FILE_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hmbtrace/status.h"

namespace hmbtrace {

inline constexpr size_t kDictFileHeaderLen = 48;
inline constexpr size_t kDictFileBuildIdLen = 20;

struct DictFile {
  std::array<uint8_t, kDictFileBuildIdLen> build_id{};
  std::vector<uint8_t> dict;
};

std::vector<uint8_t> EncodeDictFile(const DictFile& f);
// Checks the header and that dict_len bytes follow it; not the
// dictionary's own content (the decoder validates that, as for a trace).
Result<DictFile> DecodeDictFile(std::span<const uint8_t> bytes);
// The whole of `path`, refused ("PATH: too large") past `max_bytes`: a
// dictionary file or a firmware ELF, read before it is parsed.
Result<std::vector<uint8_t>> ReadFileBounded(const std::string& path, uint64_t max_bytes);
// Reads and decodes; errors name the path.
Result<DictFile> ReadDictFile(const std::string& path);

// Lower-case hex, as the tools print build ids.
std::string BuildIdHex(std::span<const uint8_t> id);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_DICT_FILE_H_
