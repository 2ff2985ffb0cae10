// SPDX-License-Identifier: GPL-2.0-only
//
// report --cmd's firmware part of a command (ABI 1.2 command attribution):
// its stages from fetch to completion in time order, a stage inside
// another indented under it, each wait with its cause ("waited 1.580 ms
// for die 4: gc_erase die=4 block=1187 ..."), and its main cause.
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAUSES_COMMAND_PATH_TEXT_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAUSES_COMMAND_PATH_TEXT_H_

#include <cstdint>
#include <string>

#include "causes/command_paths.h"

namespace hmbtrace {

// `hz`: the device's firmware clock rate, 0 if unknown (ticks then).
std::string CommandPathText(const CommandPath& c, uint64_t hz);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_CAUSES_COMMAND_PATH_TEXT_H_
