// SPDX-License-Identifier: GPL-2.0-only
//
// hmbtrace-cmd marker: one line into the hmb instance's trace_marker, so
// that it lands in the same timeline as the firmware records (report and
// stream print it as MARKER).

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_MARKER_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_MARKER_H_

#include <string>
#include <vector>

#include "hmbtrace/status.h"

namespace hmbtrace {

// The words joined by single spaces, newlines replaced by spaces, with
// one trailing newline: exactly one trace_marker line.
std::string MarkerLine(const std::vector<std::string>& words);

// Writes the line; an error with the fix if the instance or
// tracefs is missing or the write fails.
Status WriteMarker(const std::string& tracefs_dir, const std::vector<std::string>& words);

int RunMarker(const std::string& tracefs_dir, const std::vector<std::string>& words);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_MARKER_H_
