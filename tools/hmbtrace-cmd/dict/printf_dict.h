// SPDX-License-Identifier: GPL-2.0-only
//
// Tokenized printf (producer/hmb_trace_printf.h): the call sites a
// firmware's ".hmb_trace_printf" section lists, and the dictionary events
// they make. One event per site: id and format as the site has them, the
// name <file stem>_<line>, one field per conversion, named after the word
// before it ("victim=%u": "victim", else "argN"), typed by the conversion
// (%d %i signed, %u %x %X unsigned) at the argument's width, %x %X HEX.
// What the dictionary cannot express is an error naming the file and line
// of the site; every such error is reported, not only the first.

#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_PRINTF_DICT_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_PRINTF_DICT_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hmbtrace/status.h"

namespace hmbtrace {

inline constexpr char kPrintfSection[] = ".hmb_trace_printf";
inline constexpr size_t kPrintfSiteLen = 256;

struct PrintfSite {
  uint16_t id = 0;
  uint32_t line = 0;
  std::string file;
  std::string format;
  std::vector<uint8_t> args;  // HMB_TRACE_PRINTF_ARG_* bytes

  std::string Where() const { return file + ":" + std::to_string(line); }
  bool operator==(const PrintfSite&) const = default;
};

struct PrintfField {
  std::string name;
  uint16_t offset = 0;
  uint16_t size = 0;
  uint8_t type = 0;     // HMB_TRACE_TYPE_*
  uint8_t display = 0;  // HMB_TRACE_DISPLAY_*
};

struct PrintfEvent {
  uint16_t id = 0;
  std::string name;
  std::string format;
  std::vector<PrintfField> fields;
};

// The sites the section's bytes hold (an array of 256-byte records); an
// error names the offset of the first record that is not one.
Result<std::vector<PrintfSite>> ParsePrintfSites(std::span<const uint8_t> section);

// One event per site, in id order, sites of one id and identical content counted once
// (an inline function's site in several units); an id of two different
// sites, and every site the dictionary cannot express, are errors.
Result<std::vector<PrintfEvent>> MakePrintfEvents(const std::vector<PrintfSite>& sites);

// The events serialised by the reference producer: the ABI's dictionary
// (header and entries, total_len bytes).
Result<std::vector<uint8_t>> SerializeDictionary(const std::vector<PrintfEvent>& events);

}  // namespace hmbtrace

#endif  // HMBTRACE_TOOLS_HMBTRACE_CMD_DICT_PRINTF_DICT_H_
