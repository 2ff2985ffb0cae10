/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * causes_events.h - the die model's event ids, and causes_events.def
 * expanded into payload structs and emitters (cz_trace_die_wait() ...).
 */
#ifndef CAUSES_EVENTS_H
#define CAUSES_EVENTS_H

#include "hmb_trace_producer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The event-id registry. 0 is reserved by the ABI; ids are never reused. */
enum cz_event_id {
	CZ_EV_CMD_FETCH = 1,
	CZ_EV_CMD_COMPLETE = 2,
	CZ_EV_FTL_LOOKUP = 3,
	CZ_EV_XFER = 4,
	CZ_EV_WRITE_BUFFER = 5,
	CZ_EV_NAND_READ = 6,
	CZ_EV_READ_RETRY = 7,
	CZ_EV_DIE_WAIT = 8,
	CZ_EV_POWER_WAIT = 9,
	CZ_EV_GC_ERASE = 10,
	CZ_EV_THERMAL_THROTTLE = 11,
};

#ifdef __cplusplus
}
#endif

#define HMB_TRACE_PREFIX cz_
#define HMB_TRACE_EVENTS "causes_events.def"
#include "hmb_trace_declare.h"

#endif /* CAUSES_EVENTS_H */
