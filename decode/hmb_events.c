// SPDX-License-Identifier: GPL-2.0-only
/*
 * hmb_events.c - decoding the hmb events from libtraceevent records, with
 * every field read checked against the record (see hmb_events.h).
 */
#define _GNU_SOURCE
#include "hmb_events.h"

#include <string.h>

#include <traceevent/event-parse.h>

/*
 * A fixed field as read_num_field() accepts it, of exactly `size` bytes:
 * its offset into *off and its end into *end (the largest so far).
 */
static int fast_field(const struct tep_format_field *f, int size, uint32_t *off, uint32_t *end)
{
	if (!f || (f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != size || f->offset < 0)
		return -1;
	*off = (uint32_t)f->offset;
	if (*off + (uint32_t)size > *end)
		*end = *off + (uint32_t)size;
	return 0;
}

/* The offsets of the fast lane (hmb_events.h), where the formats allow one. */
static void init_fast_lane(struct hmb_event_set *set)
{
	struct tep_format_field *type, *p = set->rec_payload;
	uint32_t end = 0;

	if (!set->native_order || !set->record || !tep_get_first_event(set->tep))
		return;
	/* Where tep_data_type() finds it: in the first event's format. */
	type = tep_find_common_field(tep_get_first_event(set->tep), "common_type");
	if (!type || type->offset < 0 ||
	    (type->size != 1 && type->size != 2 && type->size != 4 && type->size != 8))
		return;
	if (fast_field(set->rec_seq, 8, &set->off_seq, &end) ||
	    fast_field(set->rec_fw_ts, 8, &set->off_fw_ts, &end) ||
	    fast_field(set->rec_dev, 2, &set->off_dev, &end) ||
	    fast_field(set->rec_core, 2, &set->off_core, &end) ||
	    fast_field(set->rec_event_id, 2, &set->off_event_id, &end) ||
	    fast_field(set->rec_len, 2, &set->off_len, &end))
		goto type_only;
	/* As read_dynamic_field() accepts the payload's __data_loc word. */
	if (!p || !(p->flags & TEP_FIELD_IS_DYNAMIC) || p->size != 4 || p->offset < 0)
		goto type_only;
	set->off_payload = (uint32_t)p->offset;
	if (set->off_payload + 4 > end)
		end = set->off_payload + 4;
	set->payload_relative = (p->flags & TEP_FIELD_IS_RELATIVE) != 0;
	set->rec_min_size = end;
	set->rec_fast = 1;
type_only:
	set->type_offset = (uint32_t)type->offset;
	set->type_size = (uint32_t)type->size;
}

void hmb_event_set_init(struct hmb_event_set *set, struct tep_handle *tep)
{
	memset(set, 0, sizeof(*set));
	set->tep = tep;
	if (!tep)
		return;
	set->record = tep_find_event_by_name(tep, "hmb", "hmb_record");
	set->lost = tep_find_event_by_name(tep, "hmb", "hmb_lost");
	set->state = tep_find_event_by_name(tep, "hmb", "hmb_state");
	set->dict = tep_find_event_by_name(tep, "hmb", "hmb_dict");
	set->clock = tep_find_event_by_name(tep, "hmb", "hmb_clock");
	set->print = tep_find_event_by_name(tep, "ftrace", "print");
	set->native_order =
		tep_is_file_bigendian(tep) == tep_is_local_bigendian(tep);
	if (set->record) {
		set->rec_seq = tep_find_field(set->record, "seq");
		set->rec_fw_ts = tep_find_field(set->record, "fw_ts");
		set->rec_dev = tep_find_field(set->record, "dev");
		set->rec_core = tep_find_field(set->record, "core");
		set->rec_event_id = tep_find_field(set->record, "event_id");
		set->rec_len = tep_find_field(set->record, "len");
		set->rec_payload = tep_find_field(set->record, "payload");
	}
	init_fast_lane(set);
}

int hmb_event_set_has_hmb_events(const struct hmb_event_set *set)
{
	return set->record || set->lost || set->state || set->dict || set->clock;
}

int hmb_event_set_is_ours(const struct hmb_event_set *set, int type)
{
	return (set->record && type == set->record->id) ||
	       (set->lost && type == set->lost->id) ||
	       (set->state && type == set->state->id) ||
	       (set->dict && type == set->dict->id) ||
	       (set->clock && type == set->clock->id) ||
	       (set->print && type == set->print->id);
}

/*
 * A number of 1, 2, 4 or 8 bytes at p in this host's byte order (a file
 * of the host's order needs no tep_read_number()): 0, or -1 for another
 * size.
 */
static int native_number(const void *p, int size, unsigned long long *val)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		*val = u8;
		return 0;
	case 2:
		memcpy(&u16, p, 2);
		*val = u16;
		return 0;
	case 4:
		memcpy(&u32, p, 4);
		*val = u32;
		return 0;
	case 8:
		memcpy(&u64, p, 8);
		*val = u64;
		return 0;
	default:
		return -1;
	}
}

/* Reads an unsigned fixed-size field, checked against the record. */
static int read_num_field(int native_order, struct tep_event *event,
			  struct tep_format_field *f,
			  const struct tep_record *record, unsigned int min_size,
			  unsigned int max_size, unsigned long long *val)
{
	const char *p;

	if (!f || (f->flags & TEP_FIELD_IS_DYNAMIC) || f->size < (int)min_size ||
	    f->size > (int)max_size || f->offset < 0 ||
	    (long long)f->offset + f->size > record->size)
		return -1;
	p = (const char *)record->data + f->offset;
	/* The file's byte order: a plain load (tep_read_number's result). */
	if (native_order && native_number(p, f->size, val) == 0)
		return 0;
	*val = tep_read_number(event->tep, p, f->size);
	return 0;
}

static int read_num(int native_order, struct tep_event *event,
		    const struct tep_record *record, const char *name,
		    unsigned int min_size, unsigned int max_size,
		    unsigned long long *val)
{
	return read_num_field(native_order, event, tep_find_field(event, name),
			      record, min_size, max_size, val);
}

/* Copies a fixed array field of exactly `size` bytes. */
static int read_array(struct tep_event *event, const struct tep_record *record,
		      const char *name, void *out, unsigned int size)
{
	struct tep_format_field *f = tep_find_field(event, name);

	if (!f || (f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != (int)size ||
	    f->offset < 0 || (long long)f->offset + f->size > record->size)
		return -1;
	memcpy(out, (const char *)record->data + f->offset, size);
	return 0;
}

/* Locates a __data_loc array inside the record. */
static int read_dynamic_field(struct tep_event *event,
			      struct tep_format_field *f,
			      const struct tep_record *record,
			      const uint8_t **data, uint32_t *len)
{
	unsigned long long loc, off, n;

	if (!f || !(f->flags & TEP_FIELD_IS_DYNAMIC) || f->size != 4 ||
	    f->offset < 0 || (long long)f->offset + 4 > record->size)
		return -1;
	loc = tep_read_number(event->tep, (const char *)record->data + f->offset, 4);
	off = loc & 0xffff;
	n = loc >> 16;
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		off += (unsigned long long)f->offset + 4;
	if (off + n > (unsigned long long)record->size)
		return -1;
	*data = (const uint8_t *)record->data + off;
	*len = (uint32_t)n;
	return 0;
}

static int read_dynamic(struct tep_event *event,
			const struct tep_record *record, const char *name,
			const uint8_t **data, uint32_t *len)
{
	return read_dynamic_field(event, tep_find_field(event, name), record,
				  data, len);
}

static int read_string(struct tep_event *event, const struct tep_record *record,
		       const char *name, const uint8_t **data, uint32_t *len)
{
	struct tep_format_field *f = tep_find_field(event, name);
	const char *p;
	size_t max;

	if (!f)
		return -1;
	if (f->flags & TEP_FIELD_IS_DYNAMIC)
		return read_dynamic(event, record, name, data, len);
	if (f->offset < 0 || f->offset >= record->size)
		return -1;
	/* ftrace:print's buf is a char[] that runs to the end of the record. */
	p = (const char *)record->data + f->offset;
	max = (size_t)(record->size - f->offset);
	*data = (const uint8_t *)p;
	*len = (uint32_t)strnlen(p, max);
	return 0;
}

static void malformed(struct hmb_capture_event *ev, struct tep_event *event,
		      const char *why)
{
	ev->kind = HMB_CAPTURE_MALFORMED;
	ev->malformed_event = event->name;
	ev->malformed_reason = why;
}

#define NUM(name, lo, hi, dst)                                          \
	do {                                                            \
		if (read_num(cap->native_order, event, record, name, lo, hi, &v)) { \
			malformed(ev, event, "field " name " missing or out of the record"); \
			return 1;                                       \
		}                                                       \
		(dst) = v;                                              \
	} while (0)

#define FIELD(f, name, lo, hi, dst)                                     \
	do {                                                            \
		if (read_num_field(cap->native_order, event, f, record, lo, hi, &v)) { \
			malformed(ev, event, "field " name " missing or out of the record"); \
			return 1;                                       \
		}                                                       \
		(dst) = v;                                              \
	} while (0)

static uint64_t load_number(const struct hmb_event_set *set, const uint8_t *p, int size)
{
	unsigned long long v;

	if (set->native_order && native_number(p, size, &v) == 0)
		return v;
	return tep_read_number(set->tep, p, size);
}

/* The mark of a retimed record (hmb_events.h) of `size` bytes at `base`, after its payload. */
static void read_retime_mark_bytes(const struct hmb_event_set *set, const uint8_t *base,
				   size_t size, struct hmb_capture_event *ev)
{
	size_t end = (size_t)(ev->data - base) + ev->data_len;
	const uint8_t *m;

	end = (end + 3) & ~(size_t)3;
	if (size < end + HMB_RETIME_MARK_LEN)
		return;
	m = base + size - HMB_RETIME_MARK_LEN;
	if (load_number(set, m + 14, 2) != HMB_RETIME_MAGIC)
		return;
	ev->retimed = 1;
	ev->drain_ts = load_number(set, m, 8);
	ev->retime_bound_ns = (uint32_t)load_number(set, m + 8, 4);
	ev->retime_flags = m[12];
	ev->retime_miss = m[13];
}

static void read_retime_mark(const struct hmb_event_set *set,
			     const struct tep_record *record,
			     struct hmb_capture_event *ev)
{
	read_retime_mark_bytes(set, (const uint8_t *)record->data, (size_t)record->size, ev);
}

void hmb_retime_mark_encode(const struct hmb_event_set *set,
			    const struct hmb_retime_mark *mark,
			    uint8_t out[HMB_RETIME_MARK_LEN])
{
	/* tep_read_number() swaps when the file's order is not the host's: both ways. */
	uint64_t drain = mark->drain_ts;
	uint32_t bound = mark->bound_ns;
	uint16_t magic = HMB_RETIME_MAGIC;

	if (!set->native_order) {
		drain = tep_read_number(set->tep, &drain, 8);
		bound = (uint32_t)tep_read_number(set->tep, &bound, 4);
		magic = (uint16_t)tep_read_number(set->tep, &magic, 2);
	}
	memcpy(out, &drain, 8);
	memcpy(out + 8, &bound, 4);
	out[12] = mark->flags;
	out[13] = mark->miss;
	memcpy(out + 14, &magic, 2);
}

/* Fills ev from record; returns 0 if the event is not one of ours. */
static int decode(const struct hmb_event_set *cap, const struct tep_record *record,
		  struct hmb_capture_event *ev)
{
	struct tep_event *event = NULL;
	unsigned long long v;
	int type;

	type = tep_data_type(cap->tep, (struct tep_record *)record);
	if (cap->record && type == cap->record->id)
		event = cap->record;
	else if (cap->lost && type == cap->lost->id)
		event = cap->lost;
	else if (cap->state && type == cap->state->id)
		event = cap->state;
	else if (cap->dict && type == cap->dict->id)
		event = cap->dict;
	else if (cap->clock && type == cap->clock->id)
		event = cap->clock;
	else if (cap->print && type == cap->print->id)
		event = cap->print;
	else
		return 0;

	if (event == cap->record) {
		ev->kind = HMB_CAPTURE_RECORD;
		FIELD(cap->rec_seq, "seq", 8, 8, ev->seq);
		FIELD(cap->rec_fw_ts, "fw_ts", 8, 8, ev->fw_ts);
		FIELD(cap->rec_dev, "dev", 2, 2, ev->dev);
		FIELD(cap->rec_core, "core", 2, 2, ev->core);
		FIELD(cap->rec_event_id, "event_id", 2, 2, ev->event_id);
		FIELD(cap->rec_len, "len", 2, 2, ev->len);
		if (read_dynamic_field(event, cap->rec_payload, record, &ev->data,
				       &ev->data_len)) {
			malformed(ev, event, "payload outside the record");
			return 1;
		}
		read_retime_mark(cap, record, ev);
	} else if (event == cap->lost) {
		ev->kind = HMB_CAPTURE_LOST;
		NUM("count", 8, 8, ev->count);
		NUM("at_seq", 8, 8, ev->at_seq);
		NUM("dev", 2, 2, ev->dev);
		NUM("core", 2, 2, ev->core);
		NUM("reason", 1, 1, ev->reason);
	} else if (event == cap->state) {
		ev->kind = HMB_CAPTURE_STATE;
		NUM("clock_hz", 8, 8, ev->clock_hz);
		NUM("producer_gen", 4, 4, ev->producer_gen);
		NUM("dev", 2, 2, ev->dev);
		NUM("nr_cores", 2, 2, ev->nr_cores);
		NUM("state", 1, 1, ev->state);
		if (read_array(event, record, "build_id", ev->build_id,
			       HMB_CAPTURE_BUILD_ID_LEN) ||
		    read_array(event, record, "name", ev->name,
			       HMB_CAPTURE_NAME_LEN)) {
			malformed(ev, event, "build_id or name missing or out of the record");
			return 1;
		}
		ev->name[HMB_CAPTURE_NAME_LEN] = '\0';
	} else if (event == cap->dict) {
		ev->kind = HMB_CAPTURE_DICT;
		NUM("producer_gen", 4, 4, ev->producer_gen);
		NUM("total_len", 4, 4, ev->total_len);
		NUM("offset", 4, 4, ev->offset);
		NUM("dev", 2, 2, ev->dev);
		if (read_array(event, record, "build_id", ev->build_id,
			       HMB_CAPTURE_BUILD_ID_LEN)) {
			malformed(ev, event, "build_id missing or out of the record");
			return 1;
		}
		if (read_dynamic(event, record, "chunk", &ev->data, &ev->data_len))
			malformed(ev, event, "chunk outside the record");
	} else if (event == cap->clock) {
		ev->kind = HMB_CAPTURE_CLOCK;
		NUM("tick_ref", 8, 8, ev->clock.tick_ref);
		NUM("host_ref", 8, 8, ev->clock.host_ref);
		NUM("mult", 8, 8, ev->clock.mult);
		NUM("slope_err", 8, 8, ev->clock.slope_err);
		NUM("tick_first", 8, 8, ev->clock.tick_first);
		NUM("tick_last", 8, 8, ev->clock.tick_last);
		NUM("half_gap", 8, 8, ev->clock.half_gap);
		NUM("err_ns", 4, 4, ev->clock.err_ns);
		NUM("rtt_min_ns", 4, 4, ev->clock.rtt_min_ns);
		NUM("samples", 4, 4, ev->clock.samples);
		NUM("producer_gen", 4, 4, ev->producer_gen);
		NUM("dev", 2, 2, ev->dev);
		NUM("flags", 1, 1, ev->clock_flags);
		ev->clock_id = HMB_TRACE_CLOCK_LOCAL;
		if (tep_find_field(event, "clock"))
			NUM("clock", 1, 1, ev->clock_id);
	} else {
		ev->kind = HMB_CAPTURE_MARKER;
		if (read_string(event, record, "buf", &ev->data, &ev->data_len))
			malformed(ev, event, "buf missing or out of the record");
	}
	return 1;
}

int hmb_event_set_decode(const struct hmb_event_set *set,
			 const struct tep_record *record, int cpu,
			 struct hmb_capture_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	if (!set->tep || !record || !record->data || record->size < 0)
		return 0;
	ev->ts = record->ts;
	ev->cpu = record->cpu >= 0 ? record->cpu : cpu;
	ev->missed_events = record->missed_events > 0 ?
		(uint64_t)record->missed_events : 0;
	ev->clock_format = set->clock != NULL;
	return decode(set, record, ev);
}


int hmb_event_set_type(const struct hmb_event_set *set, const void *data, uint32_t size)
{
	const uint8_t *p = (const uint8_t *)data + set->type_offset;
	struct tep_record record;
	unsigned long long type;

	/* The fast lane reads only inside the event; tep_data_type() does not check. */
	if (set->type_size && set->type_offset + set->type_size <= size &&
	    native_number(p, (int)set->type_size, &type) == 0)
		return (int)type;
	memset(&record, 0, sizeof(record));
	record.data = (void *)data;
	record.size = (int)size;
	return tep_data_type(set->tep, &record);
}

/*
 * An hmb_record of at least rec_min_size bytes, in the file's (native)
 * order: decode()'s checks of the fixed fields hold by construction, the
 * payload's location is checked here. 1, or 0 when the payload is outside
 * the record (decode() then says so).
 */
static int decode_record_fast(const struct hmb_event_set *set, const uint8_t *d, uint32_t size,
			      struct hmb_capture_event *ev)
{
	uint32_t loc, off, n;
	uint16_t u16;

	memcpy(&loc, d + set->off_payload, 4);
	off = loc & 0xffff;
	n = loc >> 16;
	if (set->payload_relative)
		off += set->off_payload + 4;
	if ((uint64_t)off + n > size)
		return 0;
	ev->kind = HMB_CAPTURE_RECORD;
	memcpy(&ev->seq, d + set->off_seq, 8);
	memcpy(&ev->fw_ts, d + set->off_fw_ts, 8);
	memcpy(&u16, d + set->off_dev, 2);
	ev->dev = u16;
	memcpy(&u16, d + set->off_core, 2);
	ev->core = u16;
	memcpy(&u16, d + set->off_event_id, 2);
	ev->event_id = u16;
	memcpy(&u16, d + set->off_len, 2);
	ev->len = u16;
	ev->data = d + off;
	ev->data_len = n;
	ev->retimed = 0;
	ev->retime_flags = 0;
	ev->retime_miss = 0;
	ev->retime_bound_ns = 0;
	ev->drain_ts = 0;
	read_retime_mark_bytes(set, d, size, ev);
	return 1;
}

int hmb_event_set_decode_bytes(const struct hmb_event_set *set, const void *data, uint32_t size,
			       uint64_t ts, int cpu, int64_t missed_events,
			       struct hmb_capture_event *ev)
{
	struct tep_record record;

	/*
	 * Invariant (hmb_events.h): an ev of kind RECORD has every member
	 * of the other kinds zero, so a record needs only its own written.
	 */
	if (set->rec_fast && ev->kind == HMB_CAPTURE_RECORD && size >= set->rec_min_size &&
	    hmb_event_set_type(set, data, size) == set->record->id) {
		ev->ts = ts;
		ev->cpu = cpu;
		ev->missed_events = missed_events > 0 ? (uint64_t)missed_events : 0;
		ev->clock_format = set->clock != NULL;
		if (decode_record_fast(set, data, size, ev))
			return 1;
	}
	memset(&record, 0, sizeof(record));
	record.ts = ts;
	record.cpu = cpu;
	record.missed_events = missed_events;
	record.data = (void *)data;
	record.size = (int)size;
	return hmb_event_set_decode(set, &record, cpu, ev);
}
