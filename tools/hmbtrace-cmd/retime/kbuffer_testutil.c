// SPDX-License-Identifier: GPL-2.0-only
#include "retime/kbuffer_testutil.h"

#include <traceevent/kbuffer.h>

int kbuffer_test_read_page(void *page, int long_size, int big_endian,
			   struct kbuffer_test_event *events, int max, int64_t *missed)
{
	struct kbuffer *kbuf = kbuffer_alloc(long_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
					     big_endian ? KBUFFER_ENDIAN_BIG :
							  KBUFFER_ENDIAN_LITTLE);
	unsigned long long ts;
	void *data;
	int n = 0;

	if (!kbuf)
		return -1;
	if (kbuffer_load_subbuffer(kbuf, page) < 0) {
		kbuffer_free(kbuf);
		return -1;
	}
	*missed = kbuffer_missed_events(kbuf);
	for (data = kbuffer_read_event(kbuf, &ts); data && n < max;
	     data = kbuffer_next_event(kbuf, &ts)) {
		events[n].ts = ts;
		events[n].size = (uint32_t)kbuffer_event_size(kbuf);
		events[n].data = data;
		n++;
	}
	kbuffer_free(kbuf);
	return n;
}
