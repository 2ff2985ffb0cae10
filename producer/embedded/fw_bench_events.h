/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * fw_bench_events.h - the sample firmware's event ids, and its
 * declarations expanded into payload structs and emitters
 * (fw_trace_cmd_fetch() and the others).
 */
#ifndef FW_BENCH_EVENTS_H
#define FW_BENCH_EVENTS_H

enum fw_event_id {
	FW_EV_CMD_FETCH = 1,
	FW_EV_CMD_DONE = 2,
	FW_EV_NAND_OP = 3,
	FW_EV_MEDIA_DUMP = 4,
	FW_EV_QUEUE_DEPTH = 5,
};

#define HMB_TRACE_PREFIX fw_
#define HMB_TRACE_EVENTS "fw_bench_events.def"
#include "hmb_trace_declare.h"

#endif /* FW_BENCH_EVENTS_H */
