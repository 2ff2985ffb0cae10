/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * hmb_trace_declare_example.h - what the firmware's code includes to emit
 * the example's events: their ids, and hmb_trace_declare_example.def
 * expanded into payload structs, enums and emitters (ex_trace_read_start()
 * and the others).
 */
#ifndef HMB_TRACE_DECLARE_EXAMPLE_H
#define HMB_TRACE_DECLARE_EXAMPLE_H

/* Event ids: 0 is reserved; an id is never reused. */
enum ex_event_id {
	EX_EV_READ_START = 1,
	EX_EV_READ_DONE = 2,
	EX_EV_L1_CACHE = 3,
	EX_EV_L2_CACHE = 4,
	EX_EV_QUEUE_DEPTH = 5,
	EX_EV_MEDIA_ERROR = 6,
};

#define EX_MEDIA_F_RETRY	0x01u
#define EX_MEDIA_F_SOFT_ECC	0x02u
#define EX_MEDIA_F_FATAL	0x04u

#define HMB_TRACE_PREFIX ex_
#define HMB_TRACE_EVENTS "hmb_trace_declare_example.def"
#include "hmb_trace_declare.h"

#endif /* HMB_TRACE_DECLARE_EXAMPLE_H */
