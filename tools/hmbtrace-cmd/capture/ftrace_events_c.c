// SPDX-License-Identifier: GPL-2.0-only
/*
 * ftrace_events_c.c - the non-hmb ftrace events of a trace.dat and its
 * trace clocks, behind ftrace_events_c.h.
 */
#define _GNU_SOURCE
#include "capture/ftrace_events_c.h"
#include "capture/c_error.h"
#include "capture/tracecmd_walk_c.h"
#include "capture/ftrace_file_pages_c.h"
#include "hmb_events.h"

#include <stdlib.h>
#include <string.h>

#include <trace-cmd.h>

#include "capture/tracecmd_private_c.h"

struct ftrace_walk {
	struct tep_handle *tep;
	struct tep_event *print;
	int (*cb)(const struct hmb_ftrace_event *ev, void *data);
	void *data;
	struct hmb_ftrace_info *info;
	struct hmb_ftrace_field fields[HMB_FTRACE_MAX_FIELDS];
	char hex[HMB_FTRACE_MAX_FIELDS][2 * 64 + 1];
};

/*
 * Where a field's bytes are in the record: [*at, *at + *len), inside it.
 * Dynamic fields (__data_loc) hold (len << 16 | offset) of their data.
 */
static int field_bytes(struct tep_handle *tep, const struct tep_format_field *f,
		       const struct tep_record *rec, size_t *at, size_t *len)
{
	size_t size = (size_t)rec->size;
	unsigned long long loc;
	size_t off;

	if (f->offset < 0 || f->size < 0 || (size_t)f->offset > size)
		return -1;
	off = (size_t)f->offset;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		if (f->size != 4 || off + 4 > size)
			return -1;
		loc = tep_read_number(tep, (const char *)rec->data + off, 4);
		*at = loc & 0xffff;
		*len = (loc >> 16) & 0xffff;
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			*at += off + 4;
		return *at > size || *len > size - *at ? -1 : 0;
	}
	/* A char buf[] of size 0 runs to the end of the record. */
	*at = off;
	*len = f->size ? (size_t)f->size : size - off;
	return *len > size - off ? -1 : 0;
}

/* Up to the first NUL, at most HMB_FTRACE_MAX_STR bytes. */
static size_t text_len(const char *s, size_t len, struct hmb_ftrace_info *info)
{
	const char *nul = memchr(s, '\0', len);

	if (nul)
		return (size_t)(nul - s);
	if (len > HMB_FTRACE_MAX_STR) {
		info->fields_cut++;
		return HMB_FTRACE_MAX_STR;
	}
	return len;
}

static int one_field(struct ftrace_walk *w, const struct tep_format_field *f,
		     const struct tep_record *rec, struct hmb_ftrace_field *out, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	const char *p;
	size_t at, len, i;

	if (field_bytes(w->tep, f, rec, &at, &len))
		return -1;
	p = (const char *)rec->data + at;
	memset(out, 0, sizeof(*out));
	out->name = f->name;
	if (f->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC)) {
		if (f->flags & TEP_FIELD_IS_STRING) {
			out->kind = HMB_FTRACE_STR;
			out->str = p;
			out->str_len = text_len(p, len, w->info);
			return 0;
		}
	}
	if (!(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) &&
	    (len == 1 || len == 2 || len == 4 || len == 8)) {
		unsigned long long v = tep_read_number(w->tep, p, (int)len);

		if (f->flags & TEP_FIELD_IS_SIGNED) {
			out->kind = HMB_FTRACE_INT;
			if (len < 8 && (v >> (len * 8 - 1)) & 1)
				v |= ~0ULL << (len * 8);
			out->i = (int64_t)v;
		} else {
			out->kind = HMB_FTRACE_UINT;
			out->u = v;
		}
		return 0;
	}
	/* Anything else (arrays, odd sizes): its bytes in hex, at most 64. */
	if (len > 64) {
		w->info->fields_cut++;
		len = 64;
	}
	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[(unsigned char)p[i] >> 4];
		hex[2 * i + 1] = digits[(unsigned char)p[i] & 15];
	}
	out->kind = HMB_FTRACE_STR;
	out->str = hex;
	out->str_len = 2 * len;
	return 0;
}

static int ftrace_one(struct tracecmd_input *handle, struct tep_record *rec, int cpu,
		      void *data)
{
	struct ftrace_walk *w = data;
	struct hmb_ftrace_event ev;
	struct tep_format_field *f;
	struct tep_event *event;
	size_t n = 0;

	(void)handle;
	(void)cpu;	/* rec->cpu: the callback's cpu counts across buffers */
	event = tep_find_event_by_record(w->tep, rec);
	if (!event || !event->system || !strcmp(event->system, "hmb"))
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.ts = rec->ts;
	ev.cpu = rec->cpu;
	ev.pid = tep_data_pid(w->tep, rec);
	ev.system = event->system;
	ev.name = event->name;
	if (event == w->print) {
		struct tep_format_field *ip = tep_find_field(event, "ip");
		struct tep_format_field *buf = tep_find_field(event, "buf");
		size_t at, len;

		if (!ip || !buf || one_field(w, ip, rec, &w->fields[0], w->hex[0]) ||
		    w->fields[0].kind != HMB_FTRACE_UINT || field_bytes(w->tep, buf, rec, &at, &len)) {
			w->info->malformed++;
			return 0;
		}
		ev.is_print = 1;
		ev.ip = w->fields[0].u;
		ev.buf = (const char *)rec->data + at;
		ev.buf_len = text_len(ev.buf, len, w->info);
	} else {
		for (f = event->format.fields; f; f = f->next) {
			if (n == HMB_FTRACE_MAX_FIELDS) {
				w->info->fields_cut++;
				continue;
			}
			if (one_field(w, f, rec, &w->fields[n], w->hex[n])) {
				w->info->malformed++;
				return 0;
			}
			n++;
		}
		ev.fields = w->fields;
		ev.nr_fields = n;
	}
	w->info->events++;
	return w->cb(&ev, w->data);
}

/* Whether ftrace_one() delivers the events of type `type`. */
static int delivered_type(struct tep_handle *tep, int type)
{
	struct tep_event *event = tep_find_event(tep, type);

	return event && event->system && strcmp(event->system, "hmb") != 0;
}

/* What scan_buffers() found: which buffers a walk has to go over. */
enum ftrace_scan { FTRACE_SCAN_NONE, FTRACE_SCAN_ONE, FTRACE_SCAN_ALL };

/*
 * Whether CPU `cpu_index` of buffer `buffer` holds an event ftrace_one()
 * delivers: its events' types read from the pages, one CPU at a time (no
 * merge, no record), up to the first such event.
 */
static int cpu_delivers(struct ftrace_file_pages *fp, const struct hmb_event_set *set,
			int buffer, int cpu_index, int *last_type, int *last_delivered)
{
	struct ftrace_cpu_cursor c;
	struct ftrace_page_event ev;
	int hit = 0, type;

	if (ftrace_cpu_cursor_init(&c, fp, buffer, cpu_index))
		return 1;	/* out of memory: the walk says it */
	while (!hit && ftrace_cpu_cursor_next(&c, &ev) == 1) {
		/* tep_data_type()'s answer, read in place where it can be. */
		type = hmb_event_set_type(set, ev.data, ev.size);
		if (type != *last_type) {
			*last_type = type;
			*last_delivered = delivered_type(set->tep, type);
		}
		hit = *last_delivered;
	}
	ftrace_cpu_cursor_destroy(&c);
	return hit;
}

/*
 * Which buffers of f hold the events ftrace_one() delivers: none, one
 * (*buffer), or more (every buffer is walked, as without pages). A capture
 * of `trace-cmd record -B hmb -e hmb` has none, and the merged walk of
 * every record would deliver nothing. A walk over the buffers that hold
 * them alone delivers the same events in the same order: the merge's
 * next event is the earliest of the CPUs' next ones, and a CPU that
 * delivers nothing never changes which of the others' goes first. A page
 * that cannot be read makes it "every buffer": the walk says so on stderr,
 * as it always did (the scan's count of such pages is taken back).
 */
static enum ftrace_scan scan_buffers(struct hmb_tracecmd_file *f, struct tep_handle *tep,
				     int *buffer)
{
	struct ftrace_file_pages *fp = f->pages;
	struct hmb_event_set set;
	const struct ftrace_page_errors_mark mark = ftrace_page_errors_mark(fp);
	enum ftrace_scan ret = FTRACE_SCAN_NONE;
	int last_type = -1, last_delivered = 0, b, i;

	if (fp->nr_buffers != f->nr_handles)
		return FTRACE_SCAN_ALL;
	hmb_event_set_init(&set, tep);
	for (b = 0; b < fp->nr_buffers && ret != FTRACE_SCAN_ALL; b++) {
		for (i = 0; i < fp->nr_cpus[b]; i++) {
			if (!cpu_delivers(fp, &set, b, i, &last_type, &last_delivered))
				continue;
			ret = ret == FTRACE_SCAN_NONE ? FTRACE_SCAN_ONE : FTRACE_SCAN_ALL;
			*buffer = b;
			break;
		}
	}
	if (fp->page_errors != mark.count)
		ret = FTRACE_SCAN_ALL;
	ftrace_page_errors_back(fp, &mark);
	return ret;
}

/* The events of f that ftrace_one() delivers, walked. */
static int walk_delivered(struct hmb_tracecmd_file *f, struct ftrace_walk *w, char *err,
			  size_t err_len)
{
	int buffer = 0;

	if (!f->pages)
		return hmb_tracecmd_walk(f, f->nr_handles, ftrace_one, w, err, err_len);
	switch (scan_buffers(f, w->tep, &buffer)) {
	case FTRACE_SCAN_NONE:
		return 0;
	case FTRACE_SCAN_ONE:
		return hmb_tracecmd_walk_buffer(f, buffer, ftrace_one, w, err, err_len);
	case FTRACE_SCAN_ALL:
		break;
	}
	return hmb_tracecmd_walk(f, f->nr_handles, ftrace_one, w, err, err_len);
}

int hmb_ftrace_read_file(struct hmb_tracecmd_file *f,
			 int (*cb)(const struct hmb_ftrace_event *ev, void *data),
			 void *data, struct hmb_ftrace_info *info, char *err, size_t err_len)
{
	struct ftrace_walk *w;
	int ret = 0;

	memset(info, 0, sizeof(*info));
	hmb_tracecmd_file_clocks(f, info->top_clock, sizeof(info->top_clock), info->hmb_clock,
				 sizeof(info->hmb_clock));
	if (!cb)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w) {
		set_err(err, err_len, "out of memory");
		return -1;
	}
	w->tep = tracecmd_get_tep(f->handles[0]);
	w->print = w->tep ? tep_find_event_by_name(w->tep, "ftrace", "print") : NULL;
	w->cb = cb;
	w->data = data;
	w->info = info;
	if (!w->tep) {
		set_err(err, err_len, "no event formats in the file");
		ret = -1;
	} else {
		ret = walk_delivered(f, w, err, err_len);
	}
	free(w);
	return ret;
}

int hmb_ftrace_read(const char *path,
		    int (*cb)(const struct hmb_ftrace_event *ev, void *data),
		    void *data, struct hmb_ftrace_info *info, char *err, size_t err_len)
{
	struct hmb_tracecmd_file file;
	int ret;

	memset(info, 0, sizeof(*info));
	/* No kallsyms: fields go out raw. */
	if (hmb_tracecmd_file_open(&file, path, 1, NULL, err, err_len))
		return -1;
	ret = hmb_ftrace_read_file(&file, cb, data, info, err, err_len);
	hmb_tracecmd_file_close(&file);
	return ret;
}
