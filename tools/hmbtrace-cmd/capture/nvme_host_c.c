// SPDX-License-Identifier: GPL-2.0-only
/*
 * nvme_host_c.c - nvme:nvme_setup_cmd / nvme:nvme_complete_rq from a
 * trace.dat, behind nvme_host_c.h.
 */
#define _GNU_SOURCE
#include "capture/nvme_host_c.h"
#include "capture/tracecmd_walk_c.h"

#include <stdio.h>
#include <string.h>

#include <trace-cmd.h>

struct nvme_walk {
	struct tep_event *setup;
	struct tep_event *complete;
	int (*cb)(const struct hmb_nvme_host_event *ev, void *data);
	void *data;
	uint64_t malformed;
	uint64_t seen;		/* nvme events of the buffer walked, good or not */
};

/* An unsigned or signed integer field of 1..8 bytes inside the record. */
static int field(struct tep_event *event, const struct tep_record *record,
		 const char *name, unsigned long long *val)
{
	struct tep_format_field *f = tep_find_field(event, name);

	if (!f || (f->flags & TEP_FIELD_IS_DYNAMIC) || f->size < 1 || f->size > 8 ||
	    f->offset < 0 || (long long)f->offset + f->size > record->size)
		return -1;
	*val = tep_read_number(event->tep, (const char *)record->data + f->offset,
			       f->size);
	return 0;
}

static int nvme_one(struct tracecmd_input *handle, struct tep_record *record,
		    int cpu, void *data)
{
	struct nvme_walk *w = data;
	struct tep_handle *tep = tracecmd_get_tep(handle);
	struct hmb_nvme_host_event ev;
	unsigned long long ctrl, qid, cid, v;
	struct tep_event *event;
	int type;

	type = tep_data_type(tep, record);
	if (w->setup && type == w->setup->id)
		event = w->setup;
	else if (w->complete && type == w->complete->id)
		event = w->complete;
	else
		return 0;
	w->seen++;
	memset(&ev, 0, sizeof(ev));
	ev.ts = record->ts;
	ev.cpu = cpu;
	if (field(event, record, "ctrl_id", &ctrl) || field(event, record, "qid", &qid) ||
	    field(event, record, "cid", &cid) || qid > 0xffff || cid > 0xffff) {
		w->malformed++;
		return 0;
	}
	ev.ctrl = (uint32_t)ctrl;
	ev.qid = (uint16_t)qid;
	ev.cid = (uint16_t)cid;
	if (event == w->setup) {
		ev.kind = HMB_NVME_SETUP;
		if (field(event, record, "opcode", &v)) {
			w->malformed++;
			return 0;
		}
		ev.opcode = (uint8_t)v;
		if (!field(event, record, "nsid", &v))
			ev.nsid = (uint32_t)v;
	} else {
		ev.kind = HMB_NVME_COMPLETE;
		if (field(event, record, "status", &v)) {
			w->malformed++;
			return 0;
		}
		ev.status = (uint16_t)v;
	}
	return w->cb(&ev, w->data);
}

/*
 * Walks the buffers of f from `first` on, one by one, up to the first that
 * has nvme events; that one into *src. 0, or what hmb_tracecmd_walk() returns.
 */
static int read_buffers(struct hmb_tracecmd_file *f, int first, struct nvme_walk *w,
			struct hmb_nvme_host_source *src, char *err, size_t err_len)
{
	int ret = 0, i;

	for (i = first; i < f->nr_handles; i++) {
		w->seen = 0;
		ret = hmb_tracecmd_walk_buffer(f, i, nvme_one, w, err, err_len);
		if (ret || w->seen)
			break;
	}
	if (!ret && w->seen && src) {
		const char *name = i ? tracecmd_buffer_instance_name(f->handles[0], i - 1) : "";

		snprintf(src->instance, sizeof(src->instance), "%s", name ? name : "?");
		hmb_tracecmd_clock(f->handles[i], src->clock, sizeof(src->clock));
	}
	return ret;
}

/* The nvme events' formats in f's tep handle, into w: 0, or 1 without them. */
static int find_formats(struct hmb_tracecmd_file *f, struct nvme_walk *w)
{
	struct tep_handle *tep = tracecmd_get_tep(f->handles[0]);

	w->setup = tep ? tep_find_event_by_name(tep, "nvme", "nvme_setup_cmd") : NULL;
	w->complete = tep ? tep_find_event_by_name(tep, "nvme", "nvme_complete_rq") : NULL;
	return w->setup && w->complete ? 0 : 1;
}

/* The end of a read that walked with w and returned ret. */
static int read_done(const struct nvme_walk *w, int ret, uint64_t *malformed,
		     struct hmb_nvme_host_source *src)
{
	if (malformed)
		*malformed = w->malformed;
	if (ret)
		return ret;
	/* Recorded, but no command was issued: the top buffer's (none). */
	if (!w->seen && src)
		snprintf(src->clock, sizeof(src->clock), "%s", "");
	return 0;
}

int hmb_nvme_host_read(const char *path,
		       int (*cb)(const struct hmb_nvme_host_event *ev, void *data),
		       void *data, uint64_t *malformed, struct hmb_nvme_host_source *src,
		       char *err, size_t err_len)
{
	struct nvme_walk w = { 0 };
	struct hmb_tracecmd_file file;
	int ret, instances = 0;

	if (malformed)
		*malformed = 0;
	if (src)
		memset(src, 0, sizeof(*src));
	w.cb = cb;
	w.data = data;
again:
	/*
	 * The top buffer first, alone: `hmbtrace-cmd record` puts the nvme
	 * events there, and the hmb instance's records are not walked again.
	 * Only if it has none are the instances opened and walked, one by
	 * one, up to the first that has some.
	 */
	if (hmb_tracecmd_file_open(&file, path, instances, NULL, err, err_len))
		return -1;
	if (find_formats(&file, &w)) {
		hmb_tracecmd_file_close(&file);
		return 1;
	}
	ret = read_buffers(&file, instances, &w, src, err, err_len);
	hmb_tracecmd_file_close(&file);
	if (!ret && !w.seen && !instances) {
		instances = 1;
		goto again;
	}
	return read_done(&w, ret, malformed, src);
}

int hmb_nvme_host_read_file(struct hmb_tracecmd_file *f,
			    int (*cb)(const struct hmb_nvme_host_event *ev, void *data),
			    void *data, uint64_t *malformed, struct hmb_nvme_host_source *src,
			    char *err, size_t err_len)
{
	struct nvme_walk w = { 0 };
	int ret;

	if (malformed)
		*malformed = 0;
	if (src)
		memset(src, 0, sizeof(*src));
	if (find_formats(f, &w))
		return 1;
	w.cb = cb;
	w.data = data;
	ret = read_buffers(f, 0, &w, src, err, err_len);
	return read_done(&w, ret, malformed, src);
}
