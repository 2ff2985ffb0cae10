// SPDX-License-Identifier: GPL-2.0-only
//
// A dictionary file, as `hmbtrace-cmd dict` writes it: the dictionary of a
// firmware that keeps (part of) it out of its image (tokenized printf,
// producer/hmb_trace_printf.h), with the firmware's build id, so that a
// decoder can refuse the file of another build. Read by hmbtrace-cmd
// (--dictionary) and plugin_hmb.so (-O hmb:dictionary=FILE) alike.
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
//
// How a file joins a trace's dictionary: the entries of the file whose id
// the trace's dictionary of that generation lacks are appended to it (an
// id the trace has keeps the trace's entry); a generation whose build id
// is not the file's (a zero build id says nothing) does not take the
// file, and the decoder says so with both ids.

#ifndef HMBTRACE_DECODE_DICTIONARY_FILE_H_
#define HMBTRACE_DECODE_DICTIONARY_FILE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hmbtrace {

inline constexpr size_t kDictFileHeaderLen = 48;
inline constexpr size_t kDictFileBuildIdLen = 20;
// A file larger than this is refused before it is read further: a
// dictionary of the trace is at most 1 MiB (dictionary_set.h), and a file
// adds to it.
inline constexpr uint64_t kMaxDictFileBytes = 16ull << 20;

// The whole file at `path` into `out`; false, with `error` naming the
// file and the reason (cannot open, a read error, "too large (over N
// bytes)"), if it cannot be read or holds more than `max_bytes`: a
// dictionary file or a firmware ELF, read before it is parsed. At most
// max_bytes + 64 KiB are ever held.
bool ReadFileBounded(const std::string& path,
                     uint64_t max_bytes,
                     std::vector<uint8_t>* out,
                     std::string* error);

// The header of `bytes` checked, and that dict_len bytes follow it; not
// the dictionary's own content (Dictionary::Parse validates that, as for a
// trace's). On success `dict` points into `bytes`; on failure `error` says
// why (without the file's name) and false is returned.
bool ParseDictFile(std::span<const uint8_t> bytes,
                   std::array<uint8_t, kDictFileBuildIdLen>* build_id,
                   std::span<const uint8_t>* dict,
                   std::string* error);

// The bytes of a dictionary file with this header.
std::vector<uint8_t> EncodeDictFileBytes(std::span<const uint8_t> build_id,
                                         std::span<const uint8_t> dict);

// The trace's dictionary `trace` (header and entries) with the entries of
// `extra` whose id it does not have appended; `extra` alone if `trace` is
// not a dictionary, `trace` unchanged if `extra` is not. Every length read
// is bounded by the bytes held.
std::vector<uint8_t> MergeDictionaries(std::span<const uint8_t> trace,
                                       std::span<const uint8_t> extra);

}  // namespace hmbtrace

#endif  // HMBTRACE_DECODE_DICTIONARY_FILE_H_
