// SPDX-License-Identifier: GPL-2.0-only
//
// `hmbtrace-cmd dump info`: what a crash dump holds, for a person: its
// header, per core the sequence span and how it is accounted for
// (end_seq - start_seq == records + skipped + sum(lost)), the host's
// commands in flight (INFLIGHT) with the firmware records of the dump that
// name the same qid and cid, and every problem the parser found.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_INFO_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_INFO_H_

#include <cstdint>
#include <string>

#include "dump/dump_file.h"

namespace hmbtrace {

// CLOCK_REALTIME ns as "2026-12-04 14:53:42.123456789 UTC".
std::string UtcTime(uint64_t real_ns);
// The same for a file name: "20261204T145342Z".
std::string UtcFileTime(uint64_t real_ns);

std::string DumpInfoText(const Dump& dump);

// Prints `path`'s info to stdout. Exit code: 0, 1 if the dump cannot be
// read or a problem was found (refused entries, the identity broken).
int RunDumpInfo(const std::string& path);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DUMP_DUMP_INFO_H_
