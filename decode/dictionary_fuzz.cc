// SPDX-License-Identifier: GPL-2.0-only
//
// libFuzzer target: the input is a dictionary (possibly followed by more
// bytes). Whatever parses is then used to format a record of every event,
// with payloads cut from the bytes after the dictionary, so the formatter
// meets fields that are in, partly in and out of the payload.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "decode_c.h"
#include "dictionary.h"
#include "format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  std::string error;
  const auto dict = hmbtrace::Dictionary::Parse(input, &error);
  if (!dict) {
    if (error.empty()) {
      __builtin_trap();  // every failure must say why
    }
    return 0;
  }
  if (dict->total_len() > size)
    __builtin_trap();

  const std::span<const uint8_t> rest = input.subspan(dict->total_len());
  for (const hmbtrace::EventDesc& event : dict->events()) {
    if (dict->Find(event.id) != &event)
      __builtin_trap();
    for (const size_t len : {rest.size(), rest.size() / 2, size_t{0}}) {
      const auto payload = rest.first(len);
      hmbtrace::FormatRecord(*dict, event.id, payload);
      for (size_t f = 0; f <= event.fields.size(); f++)
        hmbtrace::FieldValue(event, f, payload);
    }
  }
  hmbtrace::FormatRecord(*dict, 0, rest);

  // The C API over the same bytes, into a deliberately small buffer.
  if (hmb_dict* c = hmb_dict_parse(data, size, nullptr, 0)) {
    char out[16];
    for (const hmbtrace::EventDesc& event : dict->events())
      hmb_dict_format(c, event.id, rest.data(), rest.size(), out, sizeof(out));
    hmb_dict_free(c);
  } else {
    __builtin_trap();  // both APIs must agree
  }
  return 0;
}
