/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Trace events of system "hmb": the module enables none; a tracer enables
 * them in the "hmb" trace instance (or any other), perf or BPF.
 * Payloads and the dictionary travel as raw bytes; decoding lives in user
 * space (plugin_hmb.so, hmbtrace-cmd), like nvme's trace.h.
 *
 * Every CPU buffer that carries hmb_record events also carries, at least
 * every dict_interval_ms, an hmb_state(attached) followed by the complete
 * dictionary as hmb_dict chunks, so that any capture longer than the
 * interval is self-describing.
 *
 * No __string fields: __assign_str() changed signature in v6.10.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM hmb

#ifndef HMB_TRACE_EVENTS_TYPES
#define HMB_TRACE_EVENTS_TYPES

/*
 * Array lengths (HMB_TRACE_EV_BUILD_ID_LEN, HMB_TRACE_EV_NAME_LEN) and
 * the values below: include/hmb_trace_events_abi.h.
 */

/* Largest payload copied into one hmb_record (the ring buffer page is 4 KiB). */
#define HMB_TRACE_EV_PAYLOAD_MAX	3072

/*
 * hmb_state.state and hmb_lost.reason values and names: one source,
 * include/hmb_trace_events_abi.h, expanded below.
 */
#include "hmb_trace_events_abi.h"

/*
 * hmb_record's reg/unreg: a tracer that enables it pins the module until
 * it disables it again (hmb_trace_main.c), so that its capture keeps the
 * event formats.
 */
int hmb_trace_record_reg(void);
void hmb_trace_record_unreg(void);

#endif /* HMB_TRACE_EVENTS_TYPES */

#if !defined(_HMB_TRACE_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _HMB_TRACE_EVENTS_H

#include <linux/string.h>
#include <linux/tracepoint.h>

#include "hmb_clock_fit.h"
#include "hmb_consumer.h"

/* The enumerators' values go into the format files' print fmt. */
#define HMB_TRACE_DEFINE_ENUM(e, v, n)	TRACE_DEFINE_ENUM(e);
HMB_LOST_REASON_LIST(HMB_TRACE_DEFINE_ENUM, HMB_ABI_NOSEP)
HMB_TRACE_EV_STATE_LIST(HMB_TRACE_DEFINE_ENUM, HMB_ABI_NOSEP)
HMB_TRACE_CLOCK_LIST(HMB_TRACE_DEFINE_ENUM, HMB_ABI_NOSEP)

#define HMB_TRACE_SYMBOL(e, v, n)	{ e, n }

#define hmb_trace_show_lost_reason(r)					\
	__print_symbolic(r, HMB_LOST_REASON_LIST(HMB_TRACE_SYMBOL, HMB_ABI_COMMA))

#define hmb_trace_show_clock(c)						\
	__print_symbolic(c, HMB_TRACE_CLOCK_LIST(HMB_TRACE_SYMBOL, HMB_ABI_COMMA))

#define hmb_trace_show_state(s)						\
	__print_symbolic(s, HMB_TRACE_EV_STATE_LIST(HMB_TRACE_SYMBOL, HMB_ABI_COMMA))

/*
 * hmb_record - one firmware record. @len is the payload length in the
 * area; @payload holds its first min(len, HMB_TRACE_EV_PAYLOAD_MAX) bytes.
 * Every event fires through its tracepoint: any instance that enables
 * it, perf and BPF get it. The first probe of hmb_record starts the
 * drains (hmb_trace_record_reg()); the benchmark module times the bare
 * tracepoint.
 */
TRACE_EVENT_FN(hmb_record,
	    TP_PROTO(u16 dev, const struct hmb_record *rec),
	    TP_ARGS(dev, rec),
	    TP_STRUCT__entry(__field(u64, seq)
			     __field(u64, fw_ts)
			     __field(u16, dev)
			     __field(u16, core)
			     __field(u16, event_id)
			     __field(u16, len)
			     __dynamic_array(u8, payload,
					     min_t(u16, rec->len,
						   HMB_TRACE_EV_PAYLOAD_MAX))),
	    TP_fast_assign(__entry->seq = rec->seq;
			   __entry->fw_ts = rec->ts;
			   __entry->dev = dev;
			   __entry->core = rec->core;
			   __entry->event_id = rec->event_id;
			   __entry->len = rec->len;
			   memcpy(__get_dynamic_array(payload), rec->payload,
				  min_t(u16, rec->len,
					HMB_TRACE_EV_PAYLOAD_MAX));),
	    TP_printk("dev=%u core=%u seq=%llu fw_ts=%llu event_id=%u len=%u payload=%s",
		      __entry->dev, __entry->core, __entry->seq,
		      __entry->fw_ts, __entry->event_id, __entry->len,
		      __print_hex(__get_dynamic_array(payload),
				  __get_dynamic_array_len(payload))),
	    hmb_trace_record_reg, hmb_trace_record_unreg
);

/* hmb_lost - @count records of @core before sequence @at_seq are gone. */
TRACE_EVENT(hmb_lost,
	    TP_PROTO(u16 dev, u16 core, u64 count, u8 reason, u64 at_seq),
	    TP_ARGS(dev, core, count, reason, at_seq),
	    TP_STRUCT__entry(__field(u64, count)
			     __field(u64, at_seq)
			     __field(u16, dev)
			     __field(u16, core)
			     __field(u8, reason)),
	    TP_fast_assign(__entry->count = count;
			   __entry->at_seq = at_seq;
			   __entry->dev = dev;
			   __entry->core = core;
			   __entry->reason = reason;),
	    TP_printk("dev=%u core=%u count=%llu reason=%s at_seq=%llu",
		      __entry->dev, __entry->core, __entry->count,
		      hmb_trace_show_lost_reason(__entry->reason),
		      __entry->at_seq)
);

/*
 * hmb_state - the area's state, with the geometry of @producer_gen.
 * @name is the area's identity (its status directory under
 * /sys/class/hmb_trace/), NUL padded.
 */
TRACE_EVENT(hmb_state,
	    TP_PROTO(u16 dev, u8 state, const struct hmb_geometry *geo,
		     const char *name),
	    TP_ARGS(dev, state, geo, name),
	    TP_STRUCT__entry(__field(u64, clock_hz)
			     __field(u32, producer_gen)
			     __field(u16, dev)
			     __field(u16, nr_cores)
			     __field(u8, state)
			     __array(u8, build_id, HMB_TRACE_EV_BUILD_ID_LEN)
			     __array(char, name, HMB_TRACE_EV_NAME_LEN)),
	    TP_fast_assign(__entry->clock_hz = geo->clock_hz;
			   __entry->producer_gen = geo->producer_gen;
			   __entry->dev = dev;
			   __entry->nr_cores = geo->nr_cores;
			   __entry->state = state;
			   memcpy(__entry->build_id, geo->build_id,
				  HMB_TRACE_EV_BUILD_ID_LEN);
			   strscpy_pad(__entry->name, name,
				       HMB_TRACE_EV_NAME_LEN);),
	    TP_printk("dev=%u name=%s state=%s producer_gen=%u build_id=%s nr_cores=%u clock_hz=%llu",
		      __entry->dev, __entry->name,
		      hmb_trace_show_state(__entry->state),
		      __entry->producer_gen,
		      __print_hex_str(__entry->build_id,
				      HMB_TRACE_EV_BUILD_ID_LEN),
		      __entry->nr_cores, __entry->clock_hz)
);

/*
 * hmb_dict - bytes [offset, offset + len) of the raw dictionary of
 * @producer_gen, which is @total_len bytes long (header included).
 */
TRACE_EVENT(hmb_dict,
	    TP_PROTO(u16 dev, u32 producer_gen, const u8 *build_id,
		     u32 total_len, u32 offset, const u8 *data, u16 len),
	    TP_ARGS(dev, producer_gen, build_id, total_len, offset, data, len),
	    TP_STRUCT__entry(__field(u32, producer_gen)
			     __field(u32, total_len)
			     __field(u32, offset)
			     __field(u16, dev)
			     __array(u8, build_id, HMB_TRACE_EV_BUILD_ID_LEN)
			     __dynamic_array(u8, chunk, len)),
	    TP_fast_assign(__entry->producer_gen = producer_gen;
			   __entry->total_len = total_len;
			   __entry->offset = offset;
			   __entry->dev = dev;
			   memcpy(__entry->build_id, build_id,
				  HMB_TRACE_EV_BUILD_ID_LEN);
			   memcpy(__get_dynamic_array(chunk), data, len);),
	    TP_printk("dev=%u producer_gen=%u build_id=%s total_len=%u offset=%u len=%u",
		      __entry->dev, __entry->producer_gen,
		      __print_hex_str(__entry->build_id,
				      HMB_TRACE_EV_BUILD_ID_LEN),
		      __entry->total_len, __entry->offset,
		      __get_dynamic_array_len(chunk))
);

/*
 * hmb_clock - a fit of the firmware clock of @dev, generation
 * @producer_gen, to the host's trace clock @clock (HMB_TRACE_CLOCK_*, by
 * its trace_clock name; one fit per clock, hmb_trace_clock.c): host ns =
 * host_ref + (fw_ts - tick_ref) * mult / 2^32, within err_ns + slope_err *
 * distance / 2^32 (distance: half_gap ticks inside [tick_first,
 * tick_last], the distance to it outside); clock/hmb_clock_fit.h.
 * @flags: HMB_CLOCK_FL_*. A capture converts with the fits of its own
 * trace clock; an hmb_clock without @clock (a module before it) is for
 * "local".
 */
TRACE_EVENT(hmb_clock,
	    TP_PROTO(u16 dev, u32 producer_gen, u8 clock,
		     const struct hmb_clock_fit *f, u8 flags),
	    TP_ARGS(dev, producer_gen, clock, f, flags),
	    TP_STRUCT__entry(__field(u64, tick_ref)
			     __field(u64, host_ref)
			     __field(u64, mult)
			     __field(u64, slope_err)
			     __field(u64, tick_first)
			     __field(u64, tick_last)
			     __field(u64, half_gap)
			     __field(u32, err_ns)
			     __field(u32, rtt_min_ns)
			     __field(u32, samples)
			     __field(u32, producer_gen)
			     __field(u16, dev)
			     __field(u8, flags)
			     __field(u8, clock)),
	    TP_fast_assign(__entry->tick_ref = f->tick_ref;
			   __entry->host_ref = f->host_ref;
			   __entry->mult = f->mult;
			   __entry->slope_err = f->slope_err;
			   __entry->tick_first = f->tick_first;
			   __entry->tick_last = f->tick_last;
			   __entry->half_gap = f->half_gap;
			   __entry->err_ns = f->err_ns;
			   __entry->rtt_min_ns = f->rtt_min_ns;
			   __entry->samples = f->samples;
			   __entry->producer_gen = producer_gen;
			   __entry->dev = dev;
			   __entry->flags = flags;
			   __entry->clock = clock;),
	    TP_printk("dev=%u producer_gen=%u clock=%s tick_ref=%llu host_ref=%llu mult=%llu slope_err=%llu tick_first=%llu tick_last=%llu half_gap=%llu err_ns=%u rtt_min_ns=%u samples=%u flags=%s",
		      __entry->dev, __entry->producer_gen,
		      hmb_trace_show_clock(__entry->clock), __entry->tick_ref,
		      __entry->host_ref, __entry->mult, __entry->slope_err,
		      __entry->tick_first, __entry->tick_last,
		      __entry->half_gap, __entry->err_ns, __entry->rtt_min_ns,
		      __entry->samples,
		      __print_flags(__entry->flags, "|",
				    { HMB_CLOCK_FL_STALE, "stale" }))
);

#endif /* _HMB_TRACE_EVENTS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE hmb_trace_events
#include <trace/define_trace.h>
