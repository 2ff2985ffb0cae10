// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * hmb_trace_declare_freestanding.c - one call of each of the example's
 * emitters, so that the firmware build of them (meson.build, Cortex-R5,
 * checked by check-freestanding.sh with the producer and the example's
 * dictionary) shows what they need from outside: nothing.
 */
#include "hmb_trace_declare_example.h"

int hmb_trace_declare_freestanding(struct hmb_trace_producer *p, uint64_t ts,
				   const uint8_t *dump, uint32_t dump_len);

int hmb_trace_declare_freestanding(struct hmb_trace_producer *p, uint64_t ts,
				   const uint8_t *dump, uint32_t dump_len)
{
	int err = ex_trace_read_start(p, 0, ts, 1, 2, 0x1000);

	err |= ex_trace_read_done(p, 0, ts, 1, 2, 100);
	err |= ex_emit_cache(p, 0, EX_EV_L1_CACHE, ts, EX_CACHE_HIT, 0x40);
	err |= ex_trace_queue_depth(p, 0, ts, 3, 5);
	err |= ex_trace_media_error(p, 0, ts, EX_MEDIA_F_RETRY, "nand", dump,
				    dump_len);
	return err;
}
