/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kbuffer_testutil.h - one ring-buffer page read back by libtraceevent's
 * kbuffer (the reader libtracecmd uses), for the page writer's tests.
 * kbuffer.h has no extern "C": it is used from kbuffer_testutil.c only.
 */
#ifndef HMBTRACE_RETIME_KBUFFER_TESTUTIL_H_
#define HMBTRACE_RETIME_KBUFFER_TESTUTIL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kbuffer_test_event {
	uint64_t ts;
	uint32_t size;
	const uint8_t *data;	/* into the page */
};

/*
 * The events of `page` (at most `max`), as kbuffer reads them; *missed:
 * what kbuffer_missed_events() says of the page. Returns the number of
 * events, or -1 if kbuffer cannot load the page.
 */
int kbuffer_test_read_page(void *page, int long_size, int big_endian,
			   struct kbuffer_test_event *events, int max, int64_t *missed);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_RETIME_KBUFFER_TESTUTIL_H_ */
