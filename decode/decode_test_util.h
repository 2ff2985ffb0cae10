// SPDX-License-Identifier: GPL-2.0-only
//
// Test helpers: dictionaries serialised by the real firmware producer, so
// the tests and the fuzz seed exercise exactly the bytes a device writes.

#ifndef HMBTRACE_DECODE_DECODE_TEST_UTIL_H_
#define HMBTRACE_DECODE_DECODE_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hmb_trace_producer.h"

namespace hmbtrace::test {

// Ids of the events in RealisticEvents().
enum RealisticId : uint16_t {
  kCmdBegin = 1,
  kCmdEnd = 2,
  kFreeBlocks = 3,
  kLog = 4,
  kTemps = 5,
};

// A firmware-like event set: an NVMe command BEGIN/END pair with ENUM and
// FLAGS fields, a COUNTER, a log message with a STRING and a trailing
// BYTES field, and signed integers of every width.
std::span<const hmb_trace_event_desc> RealisticEvents();

// Runs hmb_trace_producer_init() with `events` and returns the dictionary
// it wrote at dict_offset: exactly total_len bytes, or the whole dict_len
// region if `whole_region`. Empty if the producer refused the config.
// `cmds`: their ABI 1.2 command attribution (hmb_trace_producer_config.cmds).
std::vector<uint8_t> ProduceDictionary(
    std::span<const hmb_trace_event_desc> events,
    bool whole_region = false,
    std::span<const hmb_trace_cmd_desc> cmds = {});

// Little-endian stores into a serialised dictionary, for corrupting it.
void Put8(std::vector<uint8_t>& bytes, size_t off, uint8_t v);
void Put16(std::vector<uint8_t>& bytes, size_t off, uint16_t v);
void Put32(std::vector<uint8_t>& bytes, size_t off, uint32_t v);

}  // namespace hmbtrace::test

#endif  // HMBTRACE_DECODE_DECODE_TEST_UTIL_H_
