/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hmb_events.h - the events of trace system "hmb" (and ftrace:print, for
 * trace_marker lines), decoded from libtraceevent records: the one place
 * that knows their field layout (kernel/hmb_trace/hmb_trace_events.h).
 * Used on a trace.dat (hmbtrace-cmd report, stat, export), on the live
 * instance (hmbtrace-cmd stream) and by plugin_hmb.so.
 *
 * Both the formats and the records are untrusted (a file, or the kernel's
 * copy of device data): every field is looked up in the event's format and
 * checked against the record's size before it is read, a __data_loc word
 * included (libtraceevent's tep_get_field_raw() trusts it). A record whose
 * fields are missing, too small or point outside the record is delivered
 * as HMB_CAPTURE_MALFORMED rather than read. Values and names of
 * hmb_lost.reason and hmb_state.state: hmb_trace_events_abi.h; the clock
 * fit of hmb_clock: clock/hmb_clock_fit.h.
 */
#ifndef HMBTRACE_DECODE_HMB_EVENTS_H_
#define HMBTRACE_DECODE_HMB_EVENTS_H_

#include <stddef.h>
#include <stdint.h>

#include "hmb_clock_fit.h"
#include "hmb_trace_events_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The events' array lengths, from their one source. */
#define HMB_CAPTURE_BUILD_ID_LEN HMB_TRACE_EV_BUILD_ID_LEN
#define HMB_CAPTURE_NAME_LEN HMB_TRACE_EV_NAME_LEN

enum hmb_capture_kind {
	HMB_CAPTURE_RECORD = 0,	/* hmb:hmb_record */
	HMB_CAPTURE_LOST,	/* hmb:hmb_lost */
	HMB_CAPTURE_STATE,	/* hmb:hmb_state */
	HMB_CAPTURE_DICT,	/* hmb:hmb_dict */
	HMB_CAPTURE_CLOCK,	/* hmb:hmb_clock */
	HMB_CAPTURE_MARKER,	/* ftrace:print (trace_marker) */
	HMB_CAPTURE_MALFORMED,	/* one of the above, failed a check */
};

/*
 * One event. Only the members of its kind are set; `data` points into
 * the library's record and is valid during the callback only.
 */
struct hmb_capture_event {
	enum hmb_capture_kind kind;
	uint64_t ts;		/* host ftrace timestamp, ns */
	int cpu;
	/* ring-buffer events ftrace dropped on this CPU before this one */
	uint64_t missed_events;
	uint16_t dev;
	uint16_t core;		/* RECORD, LOST */
	uint64_t seq;		/* RECORD */
	uint64_t fw_ts;		/* RECORD */
	uint16_t event_id;	/* RECORD */
	uint16_t len;		/* RECORD: payload length in the area */
	uint64_t count;		/* LOST */
	uint64_t at_seq;	/* LOST */
	uint8_t reason;		/* LOST */
	uint64_t clock_hz;	/* STATE */
	uint32_t producer_gen;	/* STATE, DICT, CLOCK */
	uint16_t nr_cores;	/* STATE */
	uint8_t state;		/* STATE */
	uint8_t build_id[HMB_CAPTURE_BUILD_ID_LEN]; /* STATE, DICT */
	char name[HMB_CAPTURE_NAME_LEN + 1];	/* STATE, NUL terminated */
	uint32_t total_len;	/* DICT */
	uint32_t offset;	/* DICT */
	struct hmb_clock_fit clock;	/* CLOCK */
	uint8_t clock_flags;	/* CLOCK: bit 0 stale (clock_set.h) */
	/*
	 * CLOCK: the host trace clock of the fit, HMB_TRACE_CLOCK_*;
	 * HMB_TRACE_CLOCK_LOCAL when the format has no "clock" field (a
	 * module before per-clock fits fitted to "local" only).
	 */
	uint8_t clock_id;
	/*
	 * Every kind: the formats define hmb:hmb_clock, so firmware time can
	 * be converted (a capture made before the module published fits has
	 * none, and its records are shown without converted time).
	 */
	uint8_t clock_format;
	/* RECORD: payload; DICT: chunk; MARKER: text (not NUL terminated) */
	const uint8_t *data;
	uint32_t data_len;
	/* MALFORMED: which event, and why */
	const char *malformed_event;
	const char *malformed_reason;
	/*
	 * RECORD of a retimed capture (struct hmb_retime_mark below): `ts` is
	 * the record's converted firmware time, or its drain time when
	 * retime_flags lacks HMB_RETIME_CONVERTED (retime_miss says why).
	 */
	uint8_t retimed;
	uint8_t retime_flags;
	uint8_t retime_miss;
	uint32_t retime_bound_ns;
	uint64_t drain_ts;	/* the ftrace time the module drained it at */
};

/*
 * A retimed capture (hmbtrace-cmd retime) gives each hmb_record its
 * converted firmware time as its ftrace timestamp, and appends this mark
 * to the record, after the payload and past every field the event's
 * format declares: libtraceevent, trace-cmd and KernelShark never read
 * it, and the readers of this library learn from it that the record was
 * retimed (so they do not convert it again) and when it was drained.
 *
 * The mark is the last HMB_RETIME_MARK_LEN bytes of the record, numbers in
 * the file's byte order:
 *
 *   0  u64 drain_ts   the record's ftrace timestamp before retiming
 *   8  u32 bound_ns   the conversion's error bound (saturated)
 *  12  u8  flags      HMB_RETIME_CONVERTED, HMB_RETIME_STALE
 *  13  u8  miss       why not converted (hmbtrace::ClockMiss)
 *  14  u16 magic      HMB_RETIME_MAGIC
 *
 * A record the kernel wrote ends at most 3 bytes of padding after its
 * payload, so a record holds a mark only if it has room for one past the
 * 4-byte aligned end of its payload, and the magic matches.
 */
#define HMB_RETIME_MARK_LEN 16
#define HMB_RETIME_MAGIC 0x7274
#define HMB_RETIME_CONVERTED 0x01
#define HMB_RETIME_STALE 0x02

struct hmb_retime_mark {
	uint64_t drain_ts;
	uint32_t bound_ns;
	uint8_t flags;
	uint8_t miss;
};

struct tep_handle;
struct tep_event;
struct tep_record;

/*
 * The events this tool reads, looked up once in a tep handle (a capture's,
 * or the live instance's formats: instance_c.c). Any may be NULL.
 */
struct tep_format_field;

struct hmb_event_set {
	struct tep_handle *tep;
	struct tep_event *record, *lost, *state, *dict, *clock, *print;
	/*
	 * hmb_record's fields, looked up once: a capture is mostly records,
	 * and a lookup by name per field per record was most of the decoding.
	 */
	struct tep_format_field *rec_seq, *rec_fw_ts, *rec_dev, *rec_core,
		*rec_event_id, *rec_len, *rec_payload;
	/* The file's byte order is the host's: numbers are loaded directly. */
	int native_order;
	/*
	 * The fast lane of hmb_event_set_decode_bytes(), resolved once from
	 * the formats: where common_type is (0 size: no fast lane), and
	 * hmb_record's fields where decode() reads them, each found with the
	 * size it requires (rec_fast: all of them). A record of at least
	 * rec_min_size bytes holds every fixed field.
	 */
	uint32_t type_offset, type_size;
	int rec_fast;
	uint32_t rec_min_size;
	uint32_t off_seq, off_fw_ts, off_dev, off_core, off_event_id, off_len, off_payload;
	int payload_relative;
};

void hmb_event_set_init(struct hmb_event_set *set, struct tep_handle *tep);
int hmb_event_set_has_hmb_events(const struct hmb_event_set *set);
/*
 * Whether events of type id `type` (tep_data_type()) are among the set's,
 * the ones hmb_event_set_decode() decodes: to skip the others cheaply.
 */
int hmb_event_set_is_ours(const struct hmb_event_set *set, int type);

/*
 * Decodes one ring-buffer record into ev, with the checks described above.
 * `cpu` is used when record->cpu is unset. Returns 0 if the record is not
 * one of the events of `set` (ev is then meaningless), 1 otherwise.
 */
int hmb_event_set_decode(const struct hmb_event_set *set,
			 const struct tep_record *record, int cpu,
			 struct hmb_capture_event *ev);

/*
 * The type id of an event of `size` bytes at `data` (a ring-buffer
 * event's data), as tep_data_type() reads it.
 */
int hmb_event_set_type(const struct hmb_event_set *set, const void *data, uint32_t size);

/*
 * hmb_event_set_decode() of the event of `size` bytes at `data`, read
 * from a page without a tep_record (capture/ftrace_page_c.h): the same
 * result for every input, a malformed one included. An hmb_record is
 * read at the offsets resolved once (struct hmb_event_set) and only its
 * members are written: ev must be zeroed before the first call and hold
 * what the previous call left (non-record kinds zero it again).
 */
int hmb_event_set_decode_bytes(const struct hmb_event_set *set, const void *data, uint32_t size,
			       uint64_t ts, int cpu, int64_t missed_events,
			       struct hmb_capture_event *ev);

/*
 * Writes `mark` into out[0..HMB_RETIME_MARK_LEN) in the byte order of the
 * set's file: the bytes to append to a retimed hmb_record (whose size, a
 * multiple of 4, then grows by HMB_RETIME_MARK_LEN).
 */
void hmb_retime_mark_encode(const struct hmb_event_set *set,
			    const struct hmb_retime_mark *mark,
			    uint8_t out[HMB_RETIME_MARK_LEN]);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_DECODE_HMB_EVENTS_H_ */
