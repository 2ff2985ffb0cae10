// SPDX-License-Identifier: GPL-2.0-only
//
// stat's account of command causes (ABI 1.2 command attribution): per
// device and opcode, the split of firmware time into stages (p50, p90,
// p99) and, of the commands above the p99 latency, the share of their
// time each cause took.
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAUSES_CAUSE_STAT_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAUSES_CAUSE_STAT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "causes/command_paths.h"

namespace hmbtrace {

// The share of work (stages that are no delay) in the tail table.
inline constexpr const char kCauseWork[] = "(work)";

// Per opcode, the tail commands --json lists (slowest first); the others
// are counted in "slowest_truncated". The tail is 1 % of the commands plus
// ties, so this bounds only a capture of more than 50000 of one opcode.
inline constexpr size_t kMaxSlowest = 500;

// `hz(dev)`: the device's firmware clock rate, 0 if unknown (times are
// then printed in ticks). Empty when `paths` saw no attribution record.
std::string CauseStatText(const CommandPaths& paths, const std::function<uint64_t(uint16_t)>& hz);
// Lists at most |max_slowest| tail commands per opcode.
nlohmann::json CauseStatJson(const CommandPaths& paths,
                             const std::function<uint64_t(uint16_t)>& hz,
                             size_t max_slowest = kMaxSlowest);

// A duration for people: "1.580 ms", "72.0 us", or "<n> ticks" when the
// clock rate is unknown.
std::string CauseDuration(uint64_t ticks, uint64_t hz);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_CAUSES_CAUSE_STAT_H_
