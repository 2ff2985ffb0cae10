// SPDX-License-Identifier: GPL-2.0-only
/*
 * tracecmd_walk_c.c - opening a trace.dat and walking its events, behind
 * tracecmd_walk_c.h.
 */
#define _GNU_SOURCE
#include "capture/tracecmd_walk_c.h"
#include "capture/c_error.h"
#include "capture/ftrace_file_pages_c.h"
#include "capture/trace_dat_layout_c.h"
#include "capture/trace_pageout_c.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trace-cmd.h>

#include "capture/tracecmd_private_c.h"

#define NOT_READABLE                                                    \
	"not a readable trace-cmd data file (truncated, corrupt, or not made by trace-cmd record); " \
	"copy it again, or record again with `trace-cmd record -B hmb -e hmb`"

/*
 * An open of a capture by libtracecmd parses the file's copy of
 * /proc/kallsyms into its tep handle (tep_parse_kallsyms(), through the
 * PLT): 0.07 s of CPU and ~10 MB for a full kallsyms, at every open, for
 * symbols that no reader of captures uses (the hmb events and the
 * trace_marker lines they print carry no kernel address). While
 * hmb_tracecmd_open() opens, this definition, which the executable's takes
 * precedence over libtraceevent's (ELF symbol interposition), skips them;
 * any other caller gets libtraceevent's own (found with RTLD_NEXT).
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
	/*
	 * Timestamps as the kernel wrote them (trace-cmd report --raw-ts),
	 * read after open: libtracecmd corrects a timestamp when it reads its
	 * event, and the instances' handles copy this one's flags.
	 */
	if (handle)
		tracecmd_set_flag(handle, HMB_TRACECMD_FL_RAW_TS);
	return handle;
}

struct tracecmd_input *hmb_tracecmd_open_head(const char *path)
{
	struct tracecmd_input *handle;

	skip_kallsyms = 1;
	handle = tracecmd_open_head(path, TRACECMD_FL_LOAD_NO_PLUGINS);
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

int hmb_tracecmd_same_file(const struct stat *a, const struct stat *b)
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

	if (n <= 0 || (probed_valid && hmb_tracecmd_same_file(&probed, st)))
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

/* f->handles[0] is open: adds every instance's handle after it. */
static int open_instances(struct hmb_tracecmd_file *f, char *err, size_t err_len)
{
	struct tracecmd_input *top = f->handles[0];
	int n = tracecmd_buffer_instances(top), i;
	struct tracecmd_input **handles;

	if (n <= 0)
		return 0;
	handles = realloc(f->handles, ((size_t)n + 1) * sizeof(*handles));
	if (!handles) {
		set_err(err, err_len, "out of memory");
		return -1;
	}
	f->handles = handles;
	for (i = 0; i < n; i++) {
		struct tracecmd_input *h = tracecmd_buffer_instance_handle(top, i);

		if (!h) {
			const char *name = tracecmd_buffer_instance_name(top, i);

			set_err(err, err_len,
				"cannot read the buffer of instance \"%s\" (truncated or corrupt)",
				name ? name : "?");
			return -1;
		}
		f->handles[f->nr_handles++] = h;
	}
	return 0;
}

static int open_handles(struct hmb_tracecmd_file *f, const char *path, int instances,
			const struct stat *same_as, char *err, size_t err_len)
{
	struct tracecmd_input *top;

	memset(f, 0, sizeof(*f));
	if (stat(path, &f->st) != 0)
		memset(&f->st, 0, sizeof(f->st));
	if (same_as && !hmb_tracecmd_same_file(&f->st, same_as)) {
		set_err(err, err_len, "the file changed while it was being read; read it again");
		return -1;
	}
	tracecmd_set_loglevel(TEP_LOG_NONE);
	if (hmb_trace_dat_check_cpu_data(path, err, err_len))
		return -1; /* libtracecmd's open would crash (trace_dat_layout_c.h) */
	top = hmb_tracecmd_open(path);
	if (!top || (instances && probe_instances(top, &f->st))) {
		if (top)
			tracecmd_close(top);
		set_err(err, err_len, NOT_READABLE);
		return -1;
	}
	f->handles = malloc(sizeof(*f->handles));
	if (!f->handles) {
		tracecmd_close(top);
		set_err(err, err_len, "out of memory");
		return -1;
	}
	f->handles[f->nr_handles++] = top;
	if (instances && open_instances(f, err, err_len)) {
		hmb_tracecmd_file_close(f);
		return -1;
	}
	return 0;
}

static int reference_walk_forced(void)
{
	const char *v = getenv(HMB_REFERENCE_WALK_ENV);

	return v && *v && strcmp(v, "0") != 0;
}

/*
 * f is open: where its pages are, for the walks to read them. A file not
 * read by pages keeps f->pages NULL (opened again if locating them moved
 * the handles' cursors). 0, or -1 with a message in err (f closed).
 */
static int open_pages(struct hmb_tracecmd_file *f, const char *path, int instances, char *err,
		      size_t err_len)
{
	struct ftrace_file_pages *fp = calloc(1, sizeof(*fp));
	struct stat st = f->st;
	int ret;

	if (!fp)
		return 0;	/* the reference walk, which needs no more memory */
	ret = ftrace_file_pages_open(fp, path, f, err, err_len);
	if (ret == 0) {
		f->pages = fp;
		return 0;
	}
	free(fp);
	if (ret == 1)
		return 0;
	hmb_tracecmd_file_close(f);
	if (ret < 0)
		return -1;
	return open_handles(f, path, instances, st.st_ino ? &st : NULL, err, err_len);
}

int hmb_tracecmd_file_open(struct hmb_tracecmd_file *f, const char *path, int instances,
			   const struct stat *same_as, char *err, size_t err_len)
{
	if (open_handles(f, path, instances, same_as, err, err_len))
		return -1;
	if (reference_walk_forced())
		return 0;
	return open_pages(f, path, instances, err, err_len);
}

void hmb_tracecmd_file_close(struct hmb_tracecmd_file *f)
{
	int i;

	if (f->pages) {
		ftrace_file_pages_close(f->pages);
		free(f->pages);
		f->pages = NULL;
	}

	/* Instance handles hold a reference on the top one: close them first. */
	for (i = f->nr_handles - 1; i >= 0; i--)
		tracecmd_close(f->handles[i]);
	free(f->handles);
	f->handles = NULL;
	f->nr_handles = 0;
}

struct walk {
	hmb_tracecmd_event_fn fn;
	void *data;
	int stopped;
	/* The pages passed, given back behind the walk. */
	struct trace_pageout pageout;
};

static int walk_one(struct tracecmd_input *handle, struct tep_record *record, int cpu,
		    void *data)
{
	struct walk *w = data;

	trace_pageout_behind(&w->pageout, handle, record, cpu);
	if (w->fn(handle, record, cpu, w->data)) {
		w->stopped = 1;
		return -1;
	}
	return 0;
}

void hmb_tracecmd_clock(struct tracecmd_input *handle, char *dst, size_t len)
{
	const char *clock = tracecmd_get_trace_clock(handle);
	const char *open, *close;
	size_t n;

	dst[0] = '\0';
	if (!clock)
		return;
	/* "[boot]" or a whole "local global [boot] ..." line: the bracketed one. */
	open = strchr(clock, '[');
	close = open ? strchr(open, ']') : NULL;
	if (open && close) {
		clock = open + 1;
		n = (size_t)(close - clock);
	} else {
		n = strcspn(clock, " \n");
	}
	if (n >= len)
		n = len - 1;
	memcpy(dst, clock, n);
	dst[n] = '\0';
}

void hmb_tracecmd_file_clocks(const struct hmb_tracecmd_file *f, char *top, size_t top_len,
			      char *hmb, size_t hmb_len)
{
	int i;

	hmb_tracecmd_clock(f->handles[0], top, top_len);
	hmb[0] = '\0';
	for (i = 1; i < f->nr_handles; i++) {
		const char *name = tracecmd_buffer_instance_name(f->handles[0], i - 1);

		if (name && !strcmp(name, "hmb"))
			hmb_tracecmd_clock(f->handles[i], hmb, hmb_len);
	}
}

/* One CPU of a page walk: its cursor and its next event. */
struct page_walk_cpu {
	struct ftrace_cpu_cursor cursor;
	struct ftrace_page_event ev;
	int have;
};

/*
 * What page_walk() calls for each event: with the walk's cpu c (its
 * cursor tells the page, the event's offset in it and its buffer) and
 * its number `next` as hmb_tracecmd_walk() counts cpus.
 */
typedef int (*page_walk_emit_fn)(struct hmb_tracecmd_file *f, struct page_walk_cpu *c, int next,
				 void *data);

/* A caller of hmb_tracecmd_walk(): the event as libtracecmd's record. */
struct record_emit {
	hmb_tracecmd_event_fn fn;
	void *data;
};

static int emit_record(struct hmb_tracecmd_file *f, struct page_walk_cpu *c, int next, void *data)
{
	struct record_emit *e = data;
	struct tep_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.ts = c->ev.ts;
	rec.offset = c->cursor.page + c->ev.offset;
	rec.missed_events = c->ev.missed_events;
	rec.size = (int)c->ev.size;
	rec.record_size = (int)(c->ev.data - (c->cursor.page_bytes + c->ev.offset)) + rec.size;
	rec.data = (void *)c->ev.data;
	rec.cpu = f->pages->cpus[c->cursor.buffer][c->cursor.cpu_index].cpu;
	rec.ref_count = 1;
	return e->fn(f->handles[c->cursor.buffer], &rec, next, e->data);
}

/* A caller of hmb_tracecmd_walk_events(): the event's bytes. */
struct event_emit {
	hmb_walk_event_fn fn;
	void *data;
};

static int emit_event(struct hmb_tracecmd_file *f, struct page_walk_cpu *c, int next, void *data)
{
	struct event_emit *e = data;
	struct hmb_walk_event ev;

	ev.buffer = c->cursor.buffer;
	ev.cpu = f->pages->cpus[c->cursor.buffer][c->cursor.cpu_index].cpu;
	ev.walk_cpu = next;
	ev.ts = c->ev.ts;
	ev.data = c->ev.data;
	ev.size = c->ev.size;
	ev.missed_events = c->ev.missed_events;
	return e->fn(&ev, e->data);
}

/*
 * The walk over buffers [first, first + nr) read from their pages, in
 * tracecmd_iterate_events_multi()'s order: it picks the earliest next
 * record over every cpu (buffer by buffer, cpus counted across them) with
 * a strict "<", so a tie goes to the lowest; so does this. Inlined into
 * each caller, so that `emit` is a direct call there (once per event).
 */
static inline __attribute__((always_inline))
int page_walk(struct hmb_tracecmd_file *f, int first, int nr, page_walk_emit_fn emit, void *data,
	      char *err, size_t err_len)
{
	struct ftrace_file_pages *fp = f->pages;
	uint64_t errors_before = fp->page_errors;
	struct page_walk_cpu *cpus;
	int total = 0, n = 0, b, i;

	for (b = first; b < first + nr; b++)
		total += fp->nr_cpus[b];
	cpus = calloc(total ? (size_t)total : 1, sizeof(*cpus));
	if (!cpus) {
		set_err(err, err_len, "out of memory");
		return -1;
	}
	for (b = first; b < first + nr; b++) {
		for (i = 0; i < fp->nr_cpus[b]; i++, n++) {
			if (ftrace_cpu_cursor_init(&cpus[n].cursor, fp, b, i)) {
				n++;
				goto err_nomem;
			}
			cpus[n].have = ftrace_cpu_cursor_next(&cpus[n].cursor, &cpus[n].ev) == 1;
		}
	}
	for (;;) {
		struct page_walk_cpu *c;
		int next = -1, second = -1, stop = 0;

		/*
		 * The earliest (next) and the one after it (second), a tie
		 * to the lower cpu: next's events come while they stay
		 * before second's, without looking at every cpu again (a
		 * cpu's events come in runs).
		 */
		for (i = 0; i < n; i++) {
			if (!cpus[i].have)
				continue;
			if (next < 0 || cpus[i].ev.ts < cpus[next].ev.ts) {
				second = next;
				next = i;
			} else if (second < 0 || cpus[i].ev.ts < cpus[second].ev.ts) {
				second = i;
			}
		}
		if (next < 0)
			break;
		c = &cpus[next];
		do {
			if (emit(f, c, next, data)) {
				stop = 1;
				break;
			}
			c->have = ftrace_cpu_cursor_next(&c->cursor, &c->ev) == 1;
		} while (c->have && (second < 0 || c->ev.ts < cpus[second].ev.ts ||
				     (c->ev.ts == cpus[second].ev.ts && next < second)));
		if (stop)
			break;
	}
	for (i = 0; i < n; i++)
		ftrace_cpu_cursor_destroy(&cpus[i].cursor);
	free(cpus);
	if (fp->page_errors != errors_before) {
		char text[256];

		ftrace_page_error_text(fp, text, sizeof(text));
		fprintf(stderr, "hmbtrace-cmd: %s\n", text);
	}
	return 0;

err_nomem:
	for (i = 0; i < n; i++)
		ftrace_cpu_cursor_destroy(&cpus[i].cursor);
	free(cpus);
	set_err(err, err_len, "out of memory");
	return -1;
}

static int walk_range(struct hmb_tracecmd_file *f, int first, int nr, hmb_tracecmd_event_fn fn,
		      void *data, char *err, size_t err_len)
{
	struct walk w = { fn, data, 0, { 0 } };
	struct record_emit e = { fn, data };
	int ret;

	if (f->pages)
		return page_walk(f, first, nr, emit_record, &e, err, err_len);
	trace_pageout_init(&w.pageout, f->handles + first, nr, f->st.st_dev, f->st.st_ino);
	ret = tracecmd_iterate_events_multi(f->handles + first, nr, walk_one, &w);
	trace_pageout_flush(&w.pageout);
	trace_pageout_free(&w.pageout);
	if (ret < 0 && !w.stopped) {
		set_err(err, err_len, "reading the events failed (truncated or corrupt)");
		return -1;
	}
	return 0;
}

int hmb_tracecmd_walk(struct hmb_tracecmd_file *f, int nr, hmb_tracecmd_event_fn fn, void *data,
		      char *err, size_t err_len)
{
	if (nr > f->nr_handles)
		nr = f->nr_handles;
	return walk_range(f, 0, nr, fn, data, err, err_len);
}

int hmb_tracecmd_walk_events(struct hmb_tracecmd_file *f, int nr, hmb_walk_event_fn fn,
			     void *data, char *err, size_t err_len)
{
	struct event_emit e = { fn, data };

	if (!f->pages)
		return 1;
	if (nr > f->nr_handles)
		nr = f->nr_handles;
	return page_walk(f, 0, nr, emit_event, &e, err, err_len);
}

/* The events a scan keeps, their bytes copied into one arena. */
struct scan_kept {
	uint64_t ts;
	size_t index;		/* in scan order: the walk's order of a tie */
	size_t at;		/* of its bytes in the arena */
	uint32_t size;
	int buffer, cpu, walk_cpu;
	int64_t missed_events;
};

struct scan_keep {
	struct scan_kept *kept;
	size_t nr, cap;
	uint8_t *arena;
	size_t len, arena_cap;
};

/* Copies ev into s: 0, or -1 when out of memory. */
static int scan_keep(struct scan_keep *s, const struct hmb_walk_event *ev)
{
	size_t at = (s->len + 7) & ~(size_t)7;	/* each event 8-byte aligned */
	struct scan_kept *k;

	if (at < s->len || ev->size > SIZE_MAX - at)
		return -1;
	if (at + ev->size > s->arena_cap) {
		size_t cap = s->arena_cap ? s->arena_cap : 4096;
		uint8_t *arena;

		while (cap < at + ev->size) {
			if (cap > SIZE_MAX / 2)
				return -1;
			cap *= 2;
		}
		arena = realloc(s->arena, cap);
		if (!arena)
			return -1;
		s->arena = arena;
		s->arena_cap = cap;
	}
	if (s->nr == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;

		if (cap > SIZE_MAX / sizeof(*k))
			return -1;
		k = realloc(s->kept, cap * sizeof(*k));
		if (!k)
			return -1;
		s->kept = k;
		s->cap = cap;
	}
	if (ev->size)
		memcpy(s->arena + at, ev->data, ev->size);
	s->len = at + ev->size;
	k = &s->kept[s->nr];
	k->ts = ev->ts;
	k->index = s->nr++;
	k->at = at;
	k->size = ev->size;
	k->buffer = ev->buffer;
	k->cpu = ev->cpu;
	k->walk_cpu = ev->walk_cpu;
	k->missed_events = ev->missed_events;
	return 0;
}

/*
 * The merged walk's order of events whose CPUs' timestamps never go back:
 * by timestamp, a tie to the lower cpu (page_walk()'s strict "<"), and
 * within a cpu in file order. Scan order is cpu by cpu in file order, so
 * a tie is decided by it.
 */
static int scan_kept_cmp(const void *a, const void *b)
{
	const struct scan_kept *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Every cpu of buffers [0, nr) scanned on its own into s. 0; 2 when a
 * cpu's timestamps go back or a page is malformed (the merged walk's
 * order, or its first error, could differ); -1 when out of memory.
 */
static int scan_cpus(struct hmb_tracecmd_file *f, int nr, hmb_walk_event_fn want, void *data,
		     struct scan_keep *s)
{
	struct ftrace_file_pages *fp = f->pages;
	const uint64_t errors_before = fp->page_errors;
	int n = 0, b, i;

	for (b = 0; b < nr; b++) {
		for (i = 0; i < fp->nr_cpus[b]; i++, n++) {
			struct ftrace_cpu_cursor cursor;
			struct ftrace_page_event pe;
			uint64_t last = 0;
			int ret = 0;

			if (ftrace_cpu_cursor_init(&cursor, fp, b, i))
				return -1;
			while (!ret && ftrace_cpu_cursor_next(&cursor, &pe) == 1) {
				struct hmb_walk_event ev;

				if (pe.ts < last) {
					ret = 2;
					break;
				}
				last = pe.ts;
				ev.buffer = b;
				ev.cpu = fp->cpus[b][i].cpu;
				ev.walk_cpu = n;
				ev.ts = pe.ts;
				ev.data = pe.data;
				ev.size = pe.size;
				ev.missed_events = pe.missed_events;
				if (want(&ev, data) && scan_keep(s, &ev))
					ret = -1;
			}
			ftrace_cpu_cursor_destroy(&cursor);
			if (!ret && fp->page_errors != errors_before)
				ret = 2;
			if (ret)
				return ret;
		}
	}
	return 0;
}

int hmb_tracecmd_scan_events(struct hmb_tracecmd_file *f, int nr, hmb_walk_event_fn want,
			     hmb_walk_event_fn fn, void *data, char *err, size_t err_len)
{
	struct ftrace_file_pages *fp = f->pages;
	struct ftrace_page_errors_mark mark;
	struct scan_keep s = { 0 };
	size_t k;
	int ret;

	if (!fp)
		return 1;
	if (nr > f->nr_handles)
		nr = f->nr_handles;
	mark = ftrace_page_errors_mark(fp);
	ret = scan_cpus(f, nr, want, data, &s);
	if (ret == 2) {
		/* The merged walk counts and locates them again. */
		ftrace_page_errors_back(fp, &mark);
	} else if (ret < 0) {
		set_err(err, err_len, "out of memory");
	} else if (s.nr) {
		qsort(s.kept, s.nr, sizeof(*s.kept), scan_kept_cmp);
		for (k = 0; k < s.nr; k++) {
			const struct scan_kept *kept = &s.kept[k];
			struct hmb_walk_event ev;

			ev.buffer = kept->buffer;
			ev.cpu = kept->cpu;
			ev.walk_cpu = kept->walk_cpu;
			ev.ts = kept->ts;
			ev.data = s.arena + kept->at;
			ev.size = kept->size;
			ev.missed_events = kept->missed_events;
			if (fn(&ev, data))
				break;
		}
	}
	free(s.kept);
	free(s.arena);
	return ret;
}

int hmb_tracecmd_walk_buffer(struct hmb_tracecmd_file *f, int buffer, hmb_tracecmd_event_fn fn,
			     void *data, char *err, size_t err_len)
{
	if (buffer < 0 || buffer >= f->nr_handles)
		return 0;
	return walk_range(f, buffer, 1, fn, data, err, err_len);
}
