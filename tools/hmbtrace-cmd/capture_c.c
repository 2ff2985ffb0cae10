// SPDX-License-Identifier: GPL-2.0-only
/*
 * capture_c.c - libtracecmd behind the C interface of capture_c.h.
 *
 * Events are decoded, with bounds checks, by decode/hmb_events.c.
 */
#define _GNU_SOURCE
#include "capture_c.h"
#include "c_error.h"
#include "trace_pageout_c.h"

#include <dlfcn.h>
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
 * An open of a capture by libtracecmd parses the file's copy of
 * /proc/kallsyms into its tep handle (tep_parse_kallsyms(), through the
 * PLT): 0.07 s of CPU and ~10 MB for a full kallsyms, at every open, for
 * symbols that no reader of captures uses (the hmb events and the
 * trace_marker lines they print carry no kernel address). While
 * hmb_capture_open() opens, this definition, which the executable's takes
 * precedence over libtraceevent's (ELF symbol interposition), skips them;
 * any other caller gets libtraceevent's own (found with RTLD_NEXT).
 * hmb_tracecmd_open() is that open for other readers of a capture.
 */
static int skip_kallsyms;

int tep_parse_kallsyms(struct tep_handle *tep, const char *buf)
{
	static int (*next)(struct tep_handle *, const char *);

	if (skip_kallsyms)
		return 0;
	if (!next)
		next = (int (*)(struct tep_handle *, const char *))dlsym(RTLD_NEXT,
									  "tep_parse_kallsyms");
	return next ? next(tep, buf) : -1;
}

struct tracecmd_input *hmb_tracecmd_open(const char *path)
{
	struct tracecmd_input *handle;

	skip_kallsyms = 1;
	handle = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	skip_kallsyms = 0;
	return handle;
}

/*
 * libtracecmd 1.3.1 crashes (a double free in the error path of
 * tracecmd_buffer_instance_handle()) on a file cut short inside an
 * instance's buffer - `trace-cmd report` does too. So the instance buffers
 * are first opened in a child process: if it does not come back cleanly,
 * the file is refused instead. The child is forked once the parent has
 * opened the top buffer and inherits it (the costly part of an open is
 * parsing the file's kallsyms and formats: done once); it only opens the
 * instances. They share the file offset with the parent, which
 * tracecmd_buffer_instance_handle() saves and restores (a child that
 * crashes half way leaves it moved, but that file is refused). A file
 * with no instance needs no child, and a file already probed (same inode,
 * size and mtime) is not probed again (a subcommand that opens a capture
 * again, e.g. stat and its command join section).
 */
static struct stat probed;	/* the last file that passed */
static int probed_valid;

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Returns 0 if a child opened every instance buffer of `top` (or none was needed). */
static int probe_instances(struct tracecmd_input *top, const struct stat *st)
{
	int n = tracecmd_buffer_instances(top);
	int status;
	pid_t pid;

	if (n <= 0 || (probed_valid && same_file(&probed, st)))
		return 0;
	fflush(NULL);	/* nothing buffered is written twice */
	pid = fork();
	if (pid < 0)
		return 0;	/* cannot probe: go ahead unprotected */
	if (pid == 0) {
		int fd, i;

		/* A sanitizer's report of the crash is not the user's business. */
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		for (i = 0; i < n; i++) {
			struct tracecmd_input *h = tracecmd_buffer_instance_handle(top, i);

			if (!h)
				_exit(2);
			tracecmd_close(h);
		}
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return 0;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	probed = *st;
	probed_valid = 1;
	return 0;
}

int hmb_tracecmd_open_instances(struct tracecmd_input *top, struct tracecmd_input ***handles,
				int *nr, char *err, size_t err_len)
{
	int n = tracecmd_buffer_instances(top), i;

	if (n < 0)
		n = 0;
	*nr = 0;
	*handles = calloc((size_t)n + 1, sizeof(**handles));
	if (!*handles) {
		set_err(err, err_len, "out of memory");
		return -1;
	}
	(*handles)[(*nr)++] = top;
	for (i = 0; i < n; i++) {
		struct tracecmd_input *h = tracecmd_buffer_instance_handle(top, i);

		if (!h) {
			const char *name = tracecmd_buffer_instance_name(top, i);

			set_err(err, err_len,
				"cannot read the buffer of instance \"%s\" (truncated or corrupt)",
				name ? name : "?");
			return -1;
		}
		(*handles)[(*nr)++] = h;
	}
	return 0;
}

void hmb_tracecmd_close_all(struct tracecmd_input **handles, int nr)
{
	int i;

	/* Instance handles hold a reference on the top one: close them first. */
	for (i = nr - 1; i >= 0; i--)
		tracecmd_close(handles[i]);
	free(handles);
}

static void close_handles(struct hmb_capture *cap)
{
	if (cap->handles)
		hmb_tracecmd_close_all(cap->handles, cap->nr_handles);
	else if (cap->top)
		tracecmd_close(cap->top);
	cap->top = NULL;
	cap->handles = NULL;
	cap->nr_handles = 0;
}

/* The top buffer and every instance's; 0, or -1 with a message in err. */
static int open_handles(struct hmb_capture *cap, char *err, size_t err_len)
{
	/* No plugins: this tool decodes hmb events itself. */
	cap->top = hmb_tracecmd_open(cap->path);
	if (!cap->top || probe_instances(cap->top, &cap->st)) {
		set_err(err, err_len, NOT_READABLE);
		return -1;
	}
	hmb_event_set_init(&cap->events, tracecmd_get_tep(cap->top));
	return hmb_tracecmd_open_instances(cap->top, &cap->handles, &cap->nr_handles, err,
					   err_len);
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

	tracecmd_set_loglevel(TEP_LOG_NONE);
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
	if (open_handles(cap, err, err_len)) {
		hmb_capture_close(cap);
		return NULL;
	}
	return cap;
}

void hmb_capture_close(struct hmb_capture *cap)
{
	if (!cap)
		return;
	close_handles(cap);
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
	int stopped;
	/* The pages passed, given back behind the walk (trace_pageout_c.h). */
	struct trace_pageout pageout;
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
	for (i = 0; i < cap->nr_handles && cap->handles[i] != handle; i++)
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
	if (cap->raw(&raw, decoded ? &ev : NULL, w->data)) {
		w->stopped = 1;
		return -1;
	}
	return 0;
}

static int walk_one(struct tracecmd_input *handle, struct tep_record *record,
		    int cpu, void *data)
{
	struct walk *w = data;
	struct hmb_capture *cap = w->cap;
	struct hmb_capture_event ev;

	trace_pageout_behind(&w->pageout, handle, record, cpu);
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
	struct walk w = { cap, cb, data, 0, { 0 } };
	int ret;

	if (!cap->events.tep) {
		set_err(err, err_len, "no event formats in the file");
		return -1;
	}
	if (cap->walked_once) {
		/*
		 * Another pass: the file is opened again (cheap without
		 * kallsyms). libtracecmd 1.3.1 has no public rewind, and its
		 * tracecmd_set_all_cpus_to_timestamp(h, 0) left every CPU of
		 * a trace-cmd 3.1 (file version 7) capture at its end.
		 */
		struct stat now;

		if (stat(cap->path, &now) != 0 || !same_file(&now, &cap->st)) {
			set_err(err, err_len,
				"the file changed while it was being read; read it again");
			return -1;
		}
		close_handles(cap);
		if (open_handles(cap, err, err_len))
			return -1;
	}
	cap->walked_once = 1;
	cap->walked = 0;
	memset(&cap->scan, 0, sizeof(cap->scan));
	/* Per walk: the handles are opened again for each. */
	trace_pageout_init(&w.pageout, cap->handles, cap->nr_handles,
			   cap->st.st_dev, cap->st.st_ino);
	ret = tracecmd_iterate_events_multi(cap->handles, cap->nr_handles,
					    walk_one, &w);
	trace_pageout_flush(&w.pageout);
	trace_pageout_free(&w.pageout);
	if (ret < 0 && !w.stopped) {
		set_err(err, err_len, "reading the events failed (truncated or corrupt)");
		return -1;
	}
	return 0;
}

void hmb_capture_set_raw(struct hmb_capture *cap,
			 int (*raw)(const struct hmb_capture_raw *rec,
				    const struct hmb_capture_event *ev, void *data))
{
	cap->raw = raw;
}

int hmb_capture_nr_buffers(const struct hmb_capture *cap)
{
	return cap->nr_handles;
}

const char *hmb_capture_buffer_name(const struct hmb_capture *cap, int buffer)
{
	const char *name;

	if (buffer <= 0 || buffer >= cap->nr_handles)
		return "";
	name = tracecmd_buffer_instance_name(cap->top, buffer - 1);
	return name ? name : "";
}

/* Not declared by trace-cmd.h 1.3.1; exported by libtracecmd.so.1 (trace-cmd-private.h). */
int tracecmd_cpus(struct tracecmd_input *handle);

int hmb_capture_buffer_cpus(const struct hmb_capture *cap, int buffer)
{
	if (buffer < 0 || buffer >= cap->nr_handles)
		return 0;
	return tracecmd_cpus(cap->handles[buffer]);
}

const struct hmb_event_set *hmb_capture_events(const struct hmb_capture *cap)
{
	return &cap->events;
}
