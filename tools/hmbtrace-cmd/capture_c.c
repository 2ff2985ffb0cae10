// SPDX-License-Identifier: GPL-2.0-only
/*
 * capture_c.c - libtracecmd behind the C interface of capture_c.h.
 *
 * Field reads are bounds-checked against the record: libtraceevent's
 * tep_get_field_raw() trusts a __data_loc word, and both the formats and
 * the records come from the file.
 */
#define _GNU_SOURCE
#include "capture_c.h"
#include "c_error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trace-cmd.h>

#define NOT_READABLE                                                    \
	"not a readable trace-cmd data file (truncated, corrupt, or not made by trace-cmd record); " \
	"copy it again, or record again with `trace-cmd record -B hmb -e hmb`"

struct hmb_capture {
	struct tracecmd_input *top;
	struct tracecmd_input **handles;	/* top, then the instances */
	int nr_handles;
	struct hmb_event_set events;
};

/*
 * libtracecmd 1.3.1 crashes (a double free in the error path of
 * tracecmd_buffer_instance_handle()) on a file cut short inside an
 * instance's buffer - `trace-cmd report` does too. So the instance buffers
 * are first opened in a child process: if it does not come back cleanly,
 * the file is refused instead. Returns 0 if the child opened them all.
 */
static int probe_instances(const char *path)
{
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 0;	/* cannot probe: go ahead unprotected */
	if (pid == 0) {
		struct tracecmd_input *top;
		int i, n;

		/* A sanitizer's report of the crash is not the user's business. */
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		tracecmd_set_loglevel(TEP_LOG_NONE);
		top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
		if (!top)
			_exit(2);
		n = tracecmd_buffer_instances(top);
		for (i = 0; i < n; i++) {
			struct tracecmd_input *h = tracecmd_buffer_instance_handle(top, i);

			if (!h)
				_exit(2);
			tracecmd_close(h);
		}
		tracecmd_close(top);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return 0;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

struct hmb_capture *hmb_capture_open(const char *path, char *err,
				     size_t err_len)
{
	struct hmb_capture *cap;
	struct stat st;
	int fd, n, i;

	/* Say why a file cannot be opened before libtracecmd says less. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		set_err(err, err_len, "%s", strerror(e));
		errno = e;	/* callers tell a missing file from others */
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		set_err(err, err_len, "is a directory");
		return NULL;
	}
	close(fd);

	if (probe_instances(path)) {
		set_err(err, err_len,
			NOT_READABLE);
		return NULL;
	}
	tracecmd_set_loglevel(TEP_LOG_NONE);
	cap = calloc(1, sizeof(*cap));
	if (!cap) {
		set_err(err, err_len, "out of memory");
		return NULL;
	}
	/* No plugins: this tool decodes hmb events itself. */
	cap->top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!cap->top) {
		set_err(err, err_len,
			NOT_READABLE);
		free(cap);
		return NULL;
	}
	hmb_event_set_init(&cap->events, tracecmd_get_tep(cap->top));
	n = tracecmd_buffer_instances(cap->top);
	if (n < 0)
		n = 0;
	cap->handles = calloc((size_t)n + 1, sizeof(*cap->handles));
	if (!cap->handles) {
		hmb_capture_close(cap);
		set_err(err, err_len, "out of memory");
		return NULL;
	}
	cap->handles[cap->nr_handles++] = cap->top;
	for (i = 0; i < n; i++) {
		struct tracecmd_input *h = tracecmd_buffer_instance_handle(cap->top, i);

		if (!h) {
			const char *name = tracecmd_buffer_instance_name(cap->top, i);

			set_err(err, err_len,
				"cannot read the buffer of instance \"%s\" (truncated or corrupt)",
				name ? name : "?");
			hmb_capture_close(cap);
			return NULL;
		}
		cap->handles[cap->nr_handles++] = h;
	}
	return cap;
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
	set->print = tep_find_event_by_name(tep, "ftrace", "print");
}

int hmb_event_set_has_hmb_events(const struct hmb_event_set *set)
{
	return set->record || set->lost || set->state || set->dict;
}

void hmb_capture_close(struct hmb_capture *cap)
{
	int i;

	if (!cap)
		return;
	/* Instance handles hold a reference on the top one: close them first. */
	for (i = cap->nr_handles - 1; i > 0; i--)
		tracecmd_close(cap->handles[i]);
	tracecmd_close(cap->top);
	free(cap->handles);
	free(cap);
}

int hmb_capture_has_hmb_events(const struct hmb_capture *cap)
{
	return hmb_event_set_has_hmb_events(&cap->events);
}

/* Reads an unsigned fixed-size field, checked against the record. */
static int read_num(struct tep_event *event, const struct tep_record *record,
		    const char *name, unsigned int min_size, unsigned int max_size,
		    unsigned long long *val)
{
	struct tep_format_field *f = tep_find_field(event, name);

	if (!f || (f->flags & TEP_FIELD_IS_DYNAMIC) || f->size < (int)min_size ||
	    f->size > (int)max_size || f->offset < 0 ||
	    (long long)f->offset + f->size > record->size)
		return -1;
	*val = tep_read_number(event->tep, (const char *)record->data + f->offset,
			       f->size);
	return 0;
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
static int read_dynamic(struct tep_event *event,
			const struct tep_record *record, const char *name,
			const uint8_t **data, uint32_t *len)
{
	struct tep_format_field *f = tep_find_field(event, name);
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
		if (read_num(event, record, name, lo, hi, &v)) {        \
			malformed(ev, event, "field " name " missing or out of the record"); \
			return 0;                                       \
		}                                                       \
		(dst) = v;                                              \
	} while (0)

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
	else if (cap->print && type == cap->print->id)
		event = cap->print;
	else
		return 0;

	if (event == cap->record) {
		ev->kind = HMB_CAPTURE_RECORD;
		NUM("seq", 8, 8, ev->seq);
		NUM("fw_ts", 8, 8, ev->fw_ts);
		NUM("dev", 2, 2, ev->dev);
		NUM("core", 2, 2, ev->core);
		NUM("event_id", 2, 2, ev->event_id);
		NUM("len", 2, 2, ev->len);
		if (read_dynamic(event, record, "payload", &ev->data, &ev->data_len))
			malformed(ev, event, "payload outside the record");
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
	return decode(set, record, ev);
}

struct walk {
	struct hmb_capture *cap;
	int (*cb)(const struct hmb_capture_event *ev, void *data);
	void *data;
	int stopped;
};

static int walk_one(struct tracecmd_input *handle, struct tep_record *record,
		    int cpu, void *data)
{
	struct walk *w = data;
	struct hmb_capture_event ev;

	(void)handle;
	if (!hmb_event_set_decode(&w->cap->events, record, cpu, &ev))
		return 0;
	if (w->cb(&ev, w->data)) {
		w->stopped = 1;
		return -1;
	}
	return 0;
}

int hmb_capture_iterate(struct hmb_capture *cap,
			int (*cb)(const struct hmb_capture_event *ev,
				  void *data),
			void *data, char *err, size_t err_len)
{
	struct walk w = { cap, cb, data, 0 };
	int ret;

	if (!cap->events.tep) {
		set_err(err, err_len, "no event formats in the file");
		return -1;
	}
	ret = tracecmd_iterate_events_multi(cap->handles, cap->nr_handles,
					    walk_one, &w);
	if (ret < 0 && !w.stopped) {
		set_err(err, err_len, "reading the events failed (truncated or corrupt)");
		return -1;
	}
	return 0;
}
