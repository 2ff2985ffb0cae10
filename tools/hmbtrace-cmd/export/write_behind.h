// SPDX-License-Identifier: GPL-2.0-only
//
// Writing a long trace without filling the page cache with it.
//
// An export of 10 M records writes 0.8-1.8 GB. Written the usual way, all
// of it sits in the page cache as dirty pages until the kernel writes it
// back, and every page the copy lands on must first be found free: on the
// virtual machines these tools run on, that made writing the file cost
// 4-6 s of system time per GB, more than producing it (measured: 6 GB of
// plain write() took 19 s of system time; written behind, as below, 2.8 s).
//
// A write-behind file writes back each piece of kPiece bytes as soon as it
// is complete (sync_file_range, SYNC_FILE_RANGE_WRITE: no waiting), and
// kLag pieces later waits for that piece to be on disk and drops it from
// the page cache (POSIX_FADV_DONTNEED): the file keeps at most about
// (kLag + 1) * kPiece bytes in the cache, the same pages are used again,
// and the disk has kLag pieces to catch up before the writer waits.
// What is not a regular file (a pipe, /dev/null) is written plainly.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_WRITE_BEHIND_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_WRITE_BEHIND_H_

#include <cstddef>
#include <cstdio>
#include <string>

namespace hmbtrace {

inline constexpr size_t kWriteBehindPiece = 8u << 20;
inline constexpr size_t kWriteBehindLag = 4;

// Creates (truncates) `path` for writing, as fopen(path, "wb") does, and
// returns a stdio stream on it that writes behind; NULL with errno set if
// the file cannot be opened. fclose() closes it; a write error shows in
// ferror(), as for any stream.
std::FILE* OpenWriteBehind(const std::string& path);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_EXPORT_WRITE_BEHIND_H_
