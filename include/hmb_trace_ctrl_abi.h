/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * hmb_trace_ctrl_abi.h - the control channel: what the host asks of the
 * firmware (start/stop tracing, event mask, ring mode, clock sync, echo),
 * and the mock's mailbox that carries it.
 *
 * The host never writes the HMB (the NVMe specification forbids it while the
 * HMB is enabled), so requests travel another way: on real hardware as
 * vendor-specific admin commands (kernel/patches, with nvme-pci), in the
 * mock as this mailbox, a small host-writable memory that is not part of
 * the trace area (its own ivshmem-plain device), polled by the firmware.
 * The operations and their semantics are the same on both; see
 * Documentation/hmb-trace-abi.rst, "Control channel".
 *
 *   mailbox offset 0        HMB_CTRL_RSP_OFFSET      HMB_CTRL_MAILBOX_SIZE
 *   +-----------------------+------------------------+
 *   | request (host writes) | response (device writes)|
 *   +-----------------------+------------------------+
 *
 * One request at a time. The host writes op and args, then (release) a new
 * seq; the device acts when it sees a seq it has not answered, then writes
 * status and vals, then (release) rsp.seq = that seq. The host waits for
 * rsp.seq == seq with a timeout: no answer is an error, never a hang. Each
 * side writes only its own half. Little-endian, fixed-width fields.
 *
 * seq 0 is never a request: the host writes seq = 0 before it rewrites op
 * and args, so a device that was still copying an older request sees seq
 * change under it and drops that copy. A firmware reset (a new
 * generation) restores the defaults: producing, every event on, overwrite.
 */
#ifndef HMB_TRACE_CTRL_ABI_H
#define HMB_TRACE_CTRL_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#define HMB_CTRL_MAGIC		0x43424d48u	/* "HMBC" little-endian */
#define HMB_CTRL_VERSION	1u
#define HMB_CTRL_MAILBOX_SIZE	4096u
#define HMB_CTRL_RSP_OFFSET	2048u

/* Operations (hmb_ctrl_request.op). */
#define HMB_CTRL_OP_NOP		0u	/* answered, nothing done: is anyone there? */
#define HMB_CTRL_OP_START	1u	/* produce records (the default after init) */
#define HMB_CTRL_OP_STOP	2u	/* produce none until START */
/*
 * arg[0]: first event id (a multiple of 64); arg[1]: bit i set = produce
 * event id arg[0] + i. Ids outside the 64 are unchanged; all are on after
 * init. Filtering at the source: masked events cost the firmware nothing
 * and lose nothing (they are not produced, so not counted as lost).
 */
#define HMB_CTRL_OP_EVENT_MASK	3u
/*
 * arg[0]: HMB_CTRL_RING_OVERWRITE or HMB_CTRL_RING_STOP (when full). With
 * the freeze (ABI 1.1), STOP is the freeze with reason RING_FULL and N = 0;
 * OVERWRITE also re-arms a RING_FULL freeze. Without it: UNSUPPORTED.
 */
#define HMB_CTRL_OP_RING_MODE	4u
/*
 * Clock sync: the device latches its trace clock (the clock of fw_ts, at
 * clock_hz) as soon as it reads the request and answers val[0] = that
 * tick. The host brackets the request with its own clock (t0 before the
 * request's seq is written, t1 after the answer is seen): the tick was
 * taken somewhere in [t0, t1].
 */
#define HMB_CTRL_OP_SYNC	5u
/*
 * Echo: the device emits one record of its dictionary's "hmb_echo" event
 * (payload: u64 cookie = arg[0]) on core arg[1], stamped like any record,
 * and answers val[0] = its fw_ts, val[1] = its seq. A probe of causality:
 * the record's converted time must lie between host events before the
 * request and after the answer.
 */
#define HMB_CTRL_OP_ECHO	6u
/*
 * The freeze (ABI 1.1, meta flag HMB_TRACE_META_FREEZE): arg[0] latency
 * threshold in ns (0: no latency trigger), arg[1] N, the records each core
 * writes after a trigger before it stops. Arms the freeze; answers
 * val[0] = the threshold in firmware ticks, val[1] = N as applied.
 */
#define HMB_CTRL_OP_FREEZE_CONFIG 7u
/*
 * Re-arm: clear a freeze (TRIGGERED or FROZEN), overwrite again. Answers
 * val[0] = the freeze word before. OK also when not frozen.
 */
#define HMB_CTRL_OP_FREEZE_REARM 8u
/* Freeze now, reason HOST (arg[0] is stored as freeze_detail). */
#define HMB_CTRL_OP_FREEZE_NOW	9u
#define HMB_CTRL_OP_NR		10u

#define HMB_CTRL_RING_OVERWRITE	0u
#define HMB_CTRL_RING_STOP	1u

/* hmb_ctrl_response.status */
#define HMB_CTRL_OK		0u
#define HMB_CTRL_UNSUPPORTED	1u	/* op unknown to this firmware */
#define HMB_CTRL_INVALID	2u	/* bad argument */

struct hmb_ctrl_request {
	uint32_t magic;		/* HMB_CTRL_MAGIC */
	uint16_t version;	/* HMB_CTRL_VERSION */
	uint16_t op;		/* HMB_CTRL_OP_* */
	uint64_t seq;		/* written last; a new value is a new request */
	uint64_t arg[4];
};

struct hmb_ctrl_response {
	uint32_t magic;		/* HMB_CTRL_MAGIC once the device serves */
	uint16_t version;	/* HMB_CTRL_VERSION */
	uint16_t status;	/* HMB_CTRL_OK, ... */
	uint64_t seq;		/* the request answered; written last */
	uint64_t val[4];
};

#endif /* HMB_TRACE_CTRL_ABI_H */
