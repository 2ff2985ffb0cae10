/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tracecmd_walk_c.h - opening a trace.dat with libtracecmd and walking its
 * events: the one home of it for every reader of a capture (capture_c.c's
 * hmb events, ftrace_events_c.c's other events, nvme_host_c.c's host nvme
 * events), each of which only says what to do with one event.
 *
 * A walk is libtracecmd's merged iteration over some of the file's buffers
 * in host time order, with the pages passed given back behind it
 * (trace_pageout_c.h), a handler per event that may stop it, and one error
 * for a file that cannot be read to its end.
 *
 * C only: libtracecmd's header does not compile as C++ (capture_c.h).
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACECMD_WALK_C_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACECMD_WALK_C_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct tracecmd_input;
struct tep_record;

struct ftrace_file_pages;

/*
 * Set (to anything but "" or "0"), every walk goes through libtracecmd's
 * iteration, the reference the page walk is tested against.
 */
#define HMB_REFERENCE_WALK_ENV "HMBTRACE_REFERENCE_WALK"

/* An open capture: the top buffer and, if asked for, every instance's. */
struct hmb_tracecmd_file {
	/* [0] is the top buffer, then each instance in file order (instance i at i + 1) */
	struct tracecmd_input **handles;
	int nr_handles;
	/* The file when it was opened (zero when stat() failed: then the
	 * page-out only pages out, never drops). */
	struct stat st;
	/*
	 * Where each CPU's pages are, when the walks read them directly
	 * (ftrace_file_pages_c.h; opened with every instance); NULL: they
	 * go through libtracecmd's iteration (a compressed or version 7
	 * file, or HMB_REFERENCE_WALK_ENV).
	 */
	struct ftrace_file_pages *pages;
};

/*
 * tracecmd_open() as the readers of captures open a file: no plugins (this
 * tool decodes the events itself), no parsing of the file's kallsyms (no
 * reader resolves kernel addresses; tracecmd_walk_c.c), and timestamps as
 * the trace clock gave them, without the corrections trace-cmd report
 * applies (trace-cmd record --date, --ts-offset, --tsc2nsec, a guest's time
 * sync: what its --raw-ts leaves out). The module fits firmware time to
 * that clock (hmb_clock), so every conversion holds on it; a correction
 * would move the drain times and markers but not the converted firmware
 * times. retime copies the file's options, so a reader that applies them
 * moves every event of its output alike.
 */
struct tracecmd_input *hmb_tracecmd_open(const char *path);

/*
 * tracecmd_open_head() (the file's headers only, for a writer that copies
 * them: hmbtrace-cmd retime) without parsing its kallsyms either; the
 * copy takes their bytes from the file, not from the parsed symbols.
 */
struct tracecmd_input *hmb_tracecmd_open_head(const char *path);

/*
 * Opens `path` into *f: the top buffer, and with `instances` every
 * instance's too, once a child process has shown that opening them does
 * not crash libtracecmd (a file cut short inside an instance's buffer:
 * tracecmd_walk_c.c). With `same_as`, the file must still be that one
 * (same inode, size and modification time). Returns 0, or -1 with a
 * message in err (*f is then closed).
 */
int hmb_tracecmd_file_open(struct hmb_tracecmd_file *f, const char *path, int instances,
			   const struct stat *same_as, char *err, size_t err_len);
/* Whether a and b are the same file, unchanged: inode, size and modification time. */
int hmb_tracecmd_same_file(const struct stat *a, const struct stat *b);

/* Closes every handle (instances first: they hold the top one). */
void hmb_tracecmd_file_close(struct hmb_tracecmd_file *f);

/*
 * The trace clock `handle` was recorded with ("local", "mono", ...) into
 * dst, "" when the file does not say.
 */
void hmb_tracecmd_clock(struct tracecmd_input *handle, char *dst, size_t len);

/*
 * The trace clocks of an open file: of its top buffer into top, of its
 * "hmb" instance into hmb ("" without one, or when the file does not say).
 */
void hmb_tracecmd_file_clocks(const struct hmb_tracecmd_file *f, char *top, size_t top_len,
			      char *hmb, size_t hmb_len);

/*
 * Called for each event of a walk, with libtracecmd's cpu (counted across
 * the buffers walked). A non-zero return stops the walk.
 */
typedef int (*hmb_tracecmd_event_fn)(struct tracecmd_input *handle, struct tep_record *record,
				     int cpu, void *data);

/*
 * Walks the events of f->handles[0..nr) (nr <= f->nr_handles: the first
 * nr buffers) in host time order. Returns 0 when the walk ended or `fn`
 * stopped it, or -1 with a message in err when the events could not be
 * read.
 *
 * Read from the pages (f->pages), the events come in the order
 * libtracecmd's tracecmd_iterate_events_multi() gives: the earliest
 * timestamp first, a tie to the lowest cpu as it counts them (buffer by
 * buffer); `fn` gets a tep_record with what libtracecmd sets of one (ts,
 * offset, missed_events, size, record_size, data, cpu), valid during the
 * call. Malformed pages are skipped and said on stderr, once per walk.
 */
int hmb_tracecmd_walk(struct hmb_tracecmd_file *f, int nr, hmb_tracecmd_event_fn fn, void *data,
		      char *err, size_t err_len);
/*
 * One event of a walk read from the pages, without a tep_record: what
 * hmb_tracecmd_walk() would give `fn`, valid during the call.
 */
struct hmb_walk_event {
	int buffer;		/* 0: the top buffer, i + 1: instance i */
	int cpu;		/* as libtracecmd's records name it */
	int walk_cpu;		/* as hmb_tracecmd_walk() counts it */
	uint64_t ts;
	const uint8_t *data;
	uint32_t size;		/* of data, a multiple of 4 */
	int64_t missed_events;	/* 0, a count, or -1 (not stored) */
};
typedef int (*hmb_walk_event_fn)(const struct hmb_walk_event *ev, void *data);

/*
 * hmb_tracecmd_walk() for a reader of every event's bytes (the fast lane
 * of capture_c.c): the same events in the same order. Returns what
 * hmb_tracecmd_walk() does, or 1 without walking when f is not read by
 * pages (f->pages NULL: the caller walks with hmb_tracecmd_walk()).
 */
int hmb_tracecmd_walk_events(struct hmb_tracecmd_file *f, int nr, hmb_walk_event_fn fn,
			     void *data, char *err, size_t err_len);

/*
 * hmb_tracecmd_walk_events() for a walk that delivers few of the events
 * (the dictionary pass): each CPU's pages are read on their own, without
 * the merge, `want` is asked of every event in that order (buffer by
 * buffer, CPU by CPU), and the events it wants (a non-zero return) are
 * kept and then given to `fn` in the walk's order. That order is the one
 * of hmb_tracecmd_walk_events() as long as each CPU's timestamps do not
 * go back and no page is malformed, which the scan checks: otherwise it
 * returns 2 before calling `fn`, with the page errors as before it, and
 * the caller walks merged (`want` has then seen some events: undo what it
 * counted). Returns what hmb_tracecmd_walk_events() does otherwise.
 */
int hmb_tracecmd_scan_events(struct hmb_tracecmd_file *f, int nr, hmb_walk_event_fn want,
			     hmb_walk_event_fn fn, void *data, char *err, size_t err_len);

/* The same over buffer `buffer` alone (its cpus counted from 0). */
int hmb_tracecmd_walk_buffer(struct hmb_tracecmd_file *f, int buffer, hmb_tracecmd_event_fn fn,
			     void *data, char *err, size_t err_len);

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_TRACECMD_WALK_C_H_ */
