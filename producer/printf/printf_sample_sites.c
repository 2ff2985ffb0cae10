// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * printf_sample_sites.c - the sample firmware's printf sites, one
 * function each, as a firmware's code would have them.
 */
#include "hmb_trace_printf.h"
#include "printf_sample_fw.h"

int fw_gc_pick(struct hmb_trace_producer *p, uint64_t ts, uint32_t blk,
	       uint16_t valid)
{
	return HMB_TRACE_PRINTF(p, 0, ts, "gc: victim=%u valid=%u", blk, valid);
}

int fw_temp(struct hmb_trace_producer *p, uint64_t ts, int8_t delta)
{
	return HMB_TRACE_PRINTF(p, 0, ts, "thermal: delta=%d", delta);
}

int fw_erase(struct hmb_trace_producer *p, uint64_t ts, uint32_t block,
	     uint64_t mask)
{
	/*
	 * One line: a site is named by its __LINE__, which is a call's
	 * first line with GCC and its last with Clang.
	 */
	return HMB_TRACE_PRINTF(p, 0, ts, "erase block=%#x mask %llx", block, mask);
}

int fw_idle(struct hmb_trace_producer *p, uint64_t ts)
{
	return HMB_TRACE_PRINTF(p, 0, ts, "idle");
}
