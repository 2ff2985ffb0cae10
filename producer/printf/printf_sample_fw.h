/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/* printf_sample_fw.h - the sample firmware's printf sites. */
#ifndef PRINTF_SAMPLE_FW_H
#define PRINTF_SAMPLE_FW_H

#include "hmb_trace_producer.h"

int fw_gc_pick(struct hmb_trace_producer *p, uint64_t ts, uint32_t blk,
	       uint16_t valid);
int fw_temp(struct hmb_trace_producer *p, uint64_t ts, int8_t delta);
int fw_erase(struct hmb_trace_producer *p, uint64_t ts, uint32_t block,
	     uint64_t mask);
int fw_idle(struct hmb_trace_producer *p, uint64_t ts);

#endif /* PRINTF_SAMPLE_FW_H */
