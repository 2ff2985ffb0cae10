// SPDX-License-Identifier: GPL-2.0-only
/*
 * capture_c.c - libtracecmd behind the C interface of capture_c.h.
 *
 * Events are decoded, with bounds checks, by decode/hmb_events.c.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trace-cmd.h>

/*
 * Exported by libtracecmd 1.3.1 (nm -D) but declared only in its private
 * header, which Debian does not ship; libtracecmd 1.5 has the public
 * tracecmd_iterate_reset() for it. With time 0 it puts every CPU of a
 * handle back on its first record (the first page, nothing skipped), so a
 * second walk needs no second open (an open parses the file's kallsyms
 * and event formats again).
 */
void tracecmd_set_all_cpus_to_timestamp(struct tracecmd_input *handle,
					unsigned long long time);

#define NOT_READABLE                                                    \
	"not a readable trace-cmd data file (truncated, corrupt, or not made by trace-cmd record); " \
	"copy it again, or record again with `trace-cmd record -B hmb -e hmb`"

/* Pages of a CPU further back than this are given back (see walk_one). */
#define PAGEOUT_MAX_CPUS 1024
#define TRACE_PAGE 4096u

struct hmb_capture {
	struct tracecmd_input *top;
	struct tracecmd_input **handles;	/* top, then the instances */
	int nr_handles;
	struct hmb_event_set events;
	int metadata_only;
	int walked_once;	/* a walk has moved the handles: rewind first */
	struct hmb_capture_scan scan;	/* of the last walk */
	void (*tick)(uint64_t walked, void *data);
	uint64_t tick_every;
	uint64_t walked;	/* records of this walk */
	/* Per handle and CPU: the trace page the last record was on. */
	uintptr_t *last_page;
};

/*
 * libtracecmd 1.3.1 crashes (a double free in the error path of
 * tracecmd_buffer_instance_handle()) on a file cut short inside an
 * instance's buffer - `trace-cmd report` does too. So the instance buffers
 * are first opened in a child process: if it does not come back cleanly,
 * the file is refused instead. The child runs while the parent opens the
 * file's top buffer (each open parses the file's kallsyms, the costly part
 * of an open), and a file already probed (same inode, size and mtime) is
 * not probed again (a subcommand that opens a capture again, e.g. stat
 * and its command join section).
 */
struct probe {
	pid_t pid;	/* 0: no child (already probed, or fork failed) */
};

static struct stat probed;	/* the last file that passed */
static int probed_valid;

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static struct probe probe_start(const char *path, const struct stat *st)
{
	struct probe p = { 0 };
	int fd;

	if (probed_valid && same_file(&probed, st))
		return p;
	p.pid = fork();
	if (p.pid < 0) {
		p.pid = 0;	/* cannot probe: go ahead unprotected */
		return p;
	}
	if (p.pid == 0) {
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
	return p;
}

/* Returns 0 if the child opened every buffer (or there was no child). */
static int probe_wait(struct probe p, const struct stat *st)
{
	int status;

	if (!p.pid)
		return 0;
	while (waitpid(p.pid, &status, 0) < 0) {
		if (errno != EINTR)
			return 0;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	probed = *st;
	probed_valid = 1;
	return 0;
}

struct hmb_capture *hmb_capture_open(const char *path, char *err,
				     size_t err_len)
{
	struct hmb_capture *cap;
	struct probe probe;
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
	if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
		int e = errno;

		close(fd);
		set_err(err, err_len, "%s",
			S_ISDIR(st.st_mode) ? "is a directory" : strerror(e));
		return NULL;
	}
	close(fd);

	probe = probe_start(path, &st);
	tracecmd_set_loglevel(TEP_LOG_NONE);
	cap = calloc(1, sizeof(*cap));
	if (!cap) {
		probe_wait(probe, &st);
		set_err(err, err_len, "out of memory");
		return NULL;
	}
	/* No plugins: this tool decodes hmb events itself. */
	cap->top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (probe_wait(probe, &st) || !cap->top) {
		set_err(err, err_len,
			NOT_READABLE);
		if (cap->top)
			tracecmd_close(cap->top);
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
	/* Without it, only the paging out is lost. */
	cap->last_page = calloc((size_t)cap->nr_handles * PAGEOUT_MAX_CPUS,
				sizeof(*cap->last_page));
	return cap;
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
	free(cap->last_page);
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
	int stopped;
};

void hmb_capture_set_metadata_only(struct hmb_capture *cap, int on)
{
	cap->metadata_only = on;
}

/*
 * libtracecmd maps a file's pages in large pieces and keeps a piece mapped
 * while any page in it is in use, so a walk over a long capture would keep
 * most of the file resident. Pages a CPU has moved past are not read again
 * by the walk: they are given back to the page cache (MADV_PAGEOUT only
 * drops clean file pages and never changes what the memory reads, so this
 * is safe whatever libtracecmd does with the page later).
 */
static void page_out_behind(struct hmb_capture *cap,
			    struct tracecmd_input *handle,
			    const struct tep_record *record, int cpu)
{
	uintptr_t page = (uintptr_t)record->data & ~(uintptr_t)(TRACE_PAGE - 1);
	uintptr_t *last;
	int h;

	if (!cap->last_page || cpu < 0 || cpu >= PAGEOUT_MAX_CPUS)
		return;
	for (h = 0; h < cap->nr_handles && cap->handles[h] != handle; h++)
		;
	if (h == cap->nr_handles)
		return;
	last = &cap->last_page[(size_t)h * PAGEOUT_MAX_CPUS + (size_t)cpu];
	if (*last && *last != page)
		madvise((void *)*last, TRACE_PAGE, MADV_PAGEOUT);
	*last = page;
}

static void scan_event(struct hmb_capture *cap, uint64_t ts)
{
	if (!cap->scan.events++)
		cap->scan.first_ts = ts;
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

static int walk_one(struct tracecmd_input *handle, struct tep_record *record,
		    int cpu, void *data)
{
	struct walk *w = data;
	struct hmb_capture *cap = w->cap;
	struct hmb_capture_event ev;

	page_out_behind(cap, handle, record, cpu);
	if (cap->tick && ++cap->walked % cap->tick_every == 0)
		cap->tick(cap->walked, w->data);
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
	if (cap->walked_once) {
		int i;

		for (i = 0; i < cap->nr_handles; i++)
			tracecmd_set_all_cpus_to_timestamp(cap->handles[i], 0);
		if (cap->last_page)
			memset(cap->last_page, 0,
			       (size_t)cap->nr_handles * PAGEOUT_MAX_CPUS *
			       sizeof(*cap->last_page));
	}
	cap->walked_once = 1;
	cap->walked = 0;
	memset(&cap->scan, 0, sizeof(cap->scan));
	ret = tracecmd_iterate_events_multi(cap->handles, cap->nr_handles,
					    walk_one, &w);
	if (ret < 0 && !w.stopped) {
		set_err(err, err_len, "reading the events failed (truncated or corrupt)");
		return -1;
	}
	return 0;
}
