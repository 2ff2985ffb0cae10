// SPDX-License-Identifier: GPL-2.0-only
/*
 * capture_c.c - libtracecmd behind the C interface of capture_c.h.
 *
 * Events are decoded, with bounds checks, by decode/hmb_events.c; the
 * file is opened and walked by tracecmd_walk_c.c.
 */
#define _GNU_SOURCE
#include "capture/capture_c.h"
#include "capture/c_error.h"
#include "capture/ftrace_file_pages_c.h"
#include "capture/tracecmd_walk_c.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trace-cmd.h>

#include "capture/tracecmd_private_c.h"

struct hmb_capture {
	struct hmb_tracecmd_file file;	/* top, then the instances */
	struct hmb_event_set events;
	int metadata_only;
	int walked_once;	/* a walk has moved the handles: open them again */
	char *path;
	struct stat st;	/* of the file when it was opened */
	struct hmb_capture_scan scan;	/* of the last walk */
	void (*tick)(uint64_t walked, void *data);
	uint64_t tick_every;
	uint64_t walked;	/* records of this walk */
	int (*raw)(const struct hmb_capture_raw *rec,
		   const struct hmb_capture_event *ev, void *data);
};

/*
 * Every buffer; with `same_as`, only if the file is still that one. 0, or
 * -1 with a message in err.
 */
static int open_handles(struct hmb_capture *cap, const struct stat *same_as, char *err,
			size_t err_len)
{
	if (hmb_tracecmd_file_open(&cap->file, cap->path, 1, same_as, err, err_len))
		return -1;
	hmb_event_set_init(&cap->events, tracecmd_get_tep(cap->file.handles[0]));
	return 0;
}

struct hmb_capture *hmb_capture_open(const char *path, char *err,
				     size_t err_len)
{
	struct hmb_capture *cap;
	struct stat st;
	int fd;

	/* Say why a file cannot be opened before libtracecmd says less. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		set_err(err, err_len, "%s", strerror(e));
		errno = e;	/* callers tell a missing file from others */
		return NULL;
	}
	if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
		int e = errno;

		close(fd);
		set_err(err, err_len, "%s",
			S_ISDIR(st.st_mode) ? "is a directory" : strerror(e));
		return NULL;
	}
	close(fd);

	cap = calloc(1, sizeof(*cap));
	if (!cap) {
		set_err(err, err_len, "out of memory");
		return NULL;
	}
	cap->st = st;
	cap->path = strdup(path);
	if (!cap->path) {
		free(cap);
		set_err(err, err_len, "out of memory");
		return NULL;
	}
	if (open_handles(cap, NULL, err, err_len)) {
		hmb_capture_close(cap);
		return NULL;
	}
	return cap;
}

void hmb_capture_close(struct hmb_capture *cap)
{
	if (!cap)
		return;
	hmb_tracecmd_file_close(&cap->file);
	free(cap->path);
	free(cap);
}

int hmb_capture_has_hmb_events(const struct hmb_capture *cap)
{
	return hmb_event_set_has_hmb_events(&cap->events);
}

struct walk {
	struct hmb_capture *cap;
	int (*cb)(const struct hmb_capture_event *ev, void *data);
	void *data;
};

void hmb_capture_set_metadata_only(struct hmb_capture *cap, int on)
{
	cap->metadata_only = on;
}

static void scan_event(struct hmb_capture *cap, uint64_t ts)
{
	if (!cap->scan.events++)
		cap->scan.first_ts = ts;
	cap->scan.last_ts = ts;
}

/* scan_event() for events met out of the walk's order (scan_want()). */
static void scan_event_unordered(struct hmb_capture *cap, uint64_t ts)
{
	if (!cap->scan.events++) {
		cap->scan.first_ts = ts;
		cap->scan.last_ts = ts;
		return;
	}
	if (ts < cap->scan.first_ts)
		cap->scan.first_ts = ts;
	if (ts > cap->scan.last_ts)
		cap->scan.last_ts = ts;
}

void hmb_capture_get_scan(const struct hmb_capture *cap,
			  struct hmb_capture_scan *scan)
{
	*scan = cap->scan;
}

void hmb_capture_set_tick(struct hmb_capture *cap,
			  void (*tick)(uint64_t walked, void *data),
			  uint64_t every)
{
	cap->tick = tick;
	cap->tick_every = every ? every : 1;
}

static int walk_raw(struct walk *w, struct tracecmd_input *handle, struct tep_record *record)
{
	struct hmb_capture *cap = w->cap;
	struct hmb_capture_raw raw = { 0 };
	struct hmb_capture_event ev;
	int decoded, i;

	if (!record->data || record->size < 0)
		return 0;
	for (i = 0; i < cap->file.nr_handles && cap->file.handles[i] != handle; i++)
		;
	raw.buffer = i;
	raw.cpu = record->cpu;
	raw.ts = record->ts;
	raw.data = record->data;
	raw.size = (uint32_t)record->size;
	raw.missed_events = record->missed_events > 0 ? (uint64_t)record->missed_events : 0;
	decoded = hmb_event_set_decode(&cap->events, record, record->cpu, &ev);
	if (decoded)
		scan_event(cap, ev.ts);
	return cap->raw(&raw, decoded ? &ev : NULL, w->data);
}

static int walk_one(struct tracecmd_input *handle, struct tep_record *record,
		    int cpu, void *data)
{
	struct walk *w = data;
	struct hmb_capture *cap = w->cap;
	struct hmb_capture_event ev;

	if (cap->tick && ++cap->walked % cap->tick_every == 0)
		cap->tick(cap->walked, w->data);
	if (cap->raw)
		return walk_raw(w, handle, record);
	if (cap->metadata_only) {
		/*
		 * The dictionary pass: only hmb_state and hmb_dict are
		 * decoded; the others are counted as a full walk would
		 * deliver them (hmb_event_set_decode()'s conditions).
		 */
		int type;

		if (!record->data || record->size < 0)
			return 0;
		type = tep_data_type(cap->events.tep, record);
		if (!hmb_event_set_is_ours(&cap->events, type))
			return 0;
		scan_event(cap, record->ts);
		if (!(cap->events.state && type == cap->events.state->id) &&
		    !(cap->events.dict && type == cap->events.dict->id))
			return 0;
		if (!hmb_event_set_decode(&cap->events, record, cpu, &ev))
			return 0;
	} else {
		if (!hmb_event_set_decode(&cap->events, record, cpu, &ev))
			return 0;
		scan_event(cap, ev.ts);
	}
	return w->cb(&ev, w->data);
}

/*
 * The fast lane of a walk read from the pages (tracecmd_walk_c.h): each
 * event decoded from its bytes (hmb_event_set_decode_bytes()) into one
 * hmb_capture_event kept across the walk. What walk_one() and walk_raw()
 * do with a tep_record, the same events delivered the same way.
 */
struct fast_walk {
	struct walk w;
	struct hmb_capture_event ev;	/* zeroed, then what the last decode left */
};

static int fast_raw(struct fast_walk *fw, const struct hmb_walk_event *e, int cpu)
{
	struct hmb_capture *cap = fw->w.cap;
	struct hmb_capture_raw raw;
	int decoded;

	raw.buffer = e->buffer;
	raw.cpu = e->cpu;
	raw.ts = e->ts;
	raw.data = e->data;
	raw.size = e->size;
	raw.missed_events = e->missed_events > 0 ? (uint64_t)e->missed_events : 0;
	decoded = hmb_event_set_decode_bytes(&cap->events, e->data, e->size, e->ts, cpu,
					     e->missed_events, &fw->ev);
	if (decoded)
		scan_event(cap, fw->ev.ts);
	return cap->raw(&raw, decoded ? &fw->ev : NULL, fw->w.data);
}

static int fast_one(const struct hmb_walk_event *e, void *data)
{
	struct fast_walk *fw = data;
	struct hmb_capture *cap = fw->w.cap;
	const struct hmb_event_set *set = &cap->events;
	/* hmb_event_set_decode(): the record's cpu unless libtracecmd left it unset */
	int cpu = e->cpu >= 0 ? e->cpu : e->walk_cpu;

	if (cap->tick && ++cap->walked % cap->tick_every == 0)
		cap->tick(cap->walked, fw->w.data);
	if (cap->raw)
		return fast_raw(fw, e, cpu);
	if (cap->metadata_only) {
		/* As walk_one(): only hmb_state and hmb_dict are decoded. */
		int type = hmb_event_set_type(set, e->data, e->size);

		if (!hmb_event_set_is_ours(set, type))
			return 0;
		scan_event(cap, e->ts);
		if (!(set->state && type == set->state->id) &&
		    !(set->dict && type == set->dict->id))
			return 0;
	}
	if (!hmb_event_set_decode_bytes(set, e->data, e->size, e->ts, cpu, e->missed_events,
					&fw->ev))
		return 0;
	if (!cap->metadata_only)
		scan_event(cap, fw->ev.ts);
	return fw->w.cb(&fw->ev, fw->w.data);
}

/*
 * The dictionary pass read by hmb_tracecmd_scan_events(): what fast_one()
 * does in a metadata-only walk, split into what it asks of every event
 * (scan_want(), in scan order: the scan's first and last timestamps are
 * its least and greatest, which the merged walk meets first and last) and
 * the decoding of the few it keeps (scan_deliver(), in the walk's order).
 */
static int scan_want(const struct hmb_walk_event *e, void *data)
{
	struct fast_walk *fw = data;
	struct hmb_capture *cap = fw->w.cap;
	const struct hmb_event_set *set = &cap->events;
	int type;

	if (cap->tick && ++cap->walked % cap->tick_every == 0)
		cap->tick(cap->walked, fw->w.data);
	type = hmb_event_set_type(set, e->data, e->size);
	if (!hmb_event_set_is_ours(set, type))
		return 0;
	scan_event_unordered(cap, e->ts);
	return (set->state && type == set->state->id) || (set->dict && type == set->dict->id);
}

static int scan_deliver(const struct hmb_walk_event *e, void *data)
{
	struct fast_walk *fw = data;
	struct hmb_capture *cap = fw->w.cap;
	int cpu = e->cpu >= 0 ? e->cpu : e->walk_cpu;

	if (!hmb_event_set_decode_bytes(&cap->events, e->data, e->size, e->ts, cpu,
					e->missed_events, &fw->ev))
		return 0;
	return fw->w.cb(&fw->ev, fw->w.data);
}

/*
 * cap's handles ready for a walk from the first event: 0, or -1 with a
 * message in err.
 */
static int rewind_handles(struct hmb_capture *cap, char *err, size_t err_len)
{
	if (cap->walked_once && cap->file.pages) {
		/*
		 * Another pass over the pages: the page walk keeps no
		 * position in the handles, so the file stays open; it is
		 * counted afresh, as when it was opened again (below).
		 */
		struct stat st;

		if (stat(cap->path, &st) != 0 || !hmb_tracecmd_same_file(&st, &cap->st)) {
			set_err(err, err_len, "the file changed while it was being read; read it again");
			return -1;
		}
		cap->file.pages->page_errors = 0;
		memset(&cap->file.pages->first_error, 0, sizeof(cap->file.pages->first_error));
	} else if (cap->walked_once) {
		/*
		 * Another pass: the file is opened again (cheap without
		 * kallsyms). libtracecmd 1.3.1 has no public rewind, and its
		 * tracecmd_set_all_cpus_to_timestamp(h, 0) left every CPU of
		 * a trace-cmd 3.1 (file version 7) capture at its end.
		 */
		hmb_tracecmd_file_close(&cap->file);
		if (open_handles(cap, &cap->st, err, err_len))
			return -1;
	}
	cap->walked_once = 1;
	return 0;
}

struct hmb_tracecmd_file *hmb_capture_tracecmd_file(struct hmb_capture *cap, char *err,
						    size_t err_len)
{
	return rewind_handles(cap, err, err_len) ? NULL : &cap->file;
}

int hmb_capture_iterate(struct hmb_capture *cap,
			int (*cb)(const struct hmb_capture_event *ev,
				  void *data),
			void *data, char *err, size_t err_len)
{
	struct walk w = { cap, cb, data };

	if (!cap->events.tep) {
		set_err(err, err_len, "no event formats in the file");
		return -1;
	}
	if (rewind_handles(cap, err, err_len))
		return -1;
	cap->walked = 0;
	memset(&cap->scan, 0, sizeof(cap->scan));
	if (cap->file.pages) {
		struct fast_walk *fw = calloc(1, sizeof(*fw));
		int ret;

		if (!fw) {
			set_err(err, err_len, "out of memory");
			return -1;
		}
		fw->w = w;
		if (cap->metadata_only && !cap->raw) {
			/* Few events wanted: the CPUs scanned, not merged. */
			ret = hmb_tracecmd_scan_events(&cap->file, cap->file.nr_handles, scan_want,
						       scan_deliver, fw, err, err_len);
			if (ret != 2) {
				free(fw);
				return ret;
			}
			/* Not in the walk's order by itself: walk merged, afresh. */
			cap->walked = 0;
			memset(&cap->scan, 0, sizeof(cap->scan));
		}
		ret = hmb_tracecmd_walk_events(&cap->file, cap->file.nr_handles, fast_one, fw, err,
					       err_len);
		free(fw);
		return ret;
	}
	return hmb_tracecmd_walk(&cap->file, cap->file.nr_handles, walk_one, &w, err, err_len);
}

void hmb_capture_set_raw(struct hmb_capture *cap,
			 int (*raw)(const struct hmb_capture_raw *rec,
				    const struct hmb_capture_event *ev, void *data))
{
	cap->raw = raw;
}

void hmb_capture_clocks(const struct hmb_capture *cap, char *top, size_t top_len, char *hmb,
			size_t hmb_len)
{
	hmb_tracecmd_file_clocks(&cap->file, top, top_len, hmb, hmb_len);
}

int hmb_capture_read_by_pages(const struct hmb_capture *cap)
{
	return cap->file.pages != NULL;
}

int hmb_capture_nr_buffers(const struct hmb_capture *cap)
{
	return cap->file.nr_handles;
}

const char *hmb_capture_buffer_name(const struct hmb_capture *cap, int buffer)
{
	const char *name;

	if (buffer <= 0 || buffer >= cap->file.nr_handles)
		return "";
	name = tracecmd_buffer_instance_name(cap->file.handles[0], buffer - 1);
	return name ? name : "";
}

int hmb_capture_buffer_cpus(const struct hmb_capture *cap, int buffer)
{
	if (buffer < 0 || buffer >= cap->file.nr_handles)
		return 0;
	return tracecmd_cpus(cap->file.handles[buffer]);
}

const struct hmb_event_set *hmb_capture_events(const struct hmb_capture *cap)
{
	return &cap->events;
}
