/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * fwsim_events.h - hmb-fwsim's trace events: the event-id registry, and
 * what fwsim_events.def declares (producer/hmb_trace_declare.h): the value
 * enums, one packed little-endian payload struct per event class (struct
 * fw_cmd_fetch, struct fw_nand_op, ...), the emitters fw_trace_<event>()
 * and fw_emit_<class>(), and the table fw_events[] / fw_nr_events.
 *
 * The reference SSD (mock/qemu-nvme) compiles the same files into the
 * device. fw_events_unittest says that they publish the dictionary of the
 * hand-written tables they replace (testdata/fw_events.[ch]), byte for byte.
 */
#ifndef FWSIM_EVENTS_H
#define FWSIM_EVENTS_H

#include "hmb_trace_producer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The event-id registry. 0 is reserved by the ABI; ids are never reused. */
enum fw_event_id {
	FW_EV_CMD_FETCH = 1,
	FW_EV_CMD_COMPLETE = 2,
	FW_EV_NAND_READ = 3,
	FW_EV_NAND_PROGRAM = 4,
	FW_EV_NAND_ERASE = 5,
	FW_EV_GC_BEGIN = 6,
	FW_EV_GC_END = 7,
	FW_EV_THERMAL = 8,
	FW_EV_ERROR = 9,
	FW_EV_LOG = 10,
	FW_EV_HMB_ECHO = 11,
	FW_EV_NR_IDS		/* one past the highest id */
};

/* The workload produces ids 1 .. FW_EV_WORKLOAD_END - 1; hmb_echo only on request. */
#define FW_EV_WORKLOAD_END	FW_EV_HMB_ECHO

#define FW_ERROR_CONTEXT_MAX	32u	/* error: bytes of context at most */
#define FW_LOG_MSG_LEN		56u	/* log: message bytes, NUL padded */

#ifdef __cplusplus
}
#endif

#define HMB_TRACE_PREFIX fw_
#define HMB_TRACE_EVENTS "fwsim_events.def"
#include "hmb_trace_declare.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The table entry for @id, or NULL. */
const struct hmb_trace_event_desc *fw_event_by_id(uint16_t id);

#ifdef __cplusplus
}
#endif

#endif /* FWSIM_EVENTS_H */
