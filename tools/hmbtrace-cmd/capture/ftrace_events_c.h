/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_events_c.h - the ftrace events of a trace.dat that are not the hmb
 * system's (trace_marker lines, nvme, sched, whatever was recorded), of
 * every buffer, in host time order, with their fields; and the trace clock
 * each buffer was recorded with. Read with libtracecmd (C only: see
 * capture_c.h). Every field is read with bounds checks against its record.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_EVENTS_C_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_EVENTS_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hmb_ftrace_field_kind { HMB_FTRACE_UINT, HMB_FTRACE_INT, HMB_FTRACE_STR };

struct hmb_ftrace_field {
	const char *name;
	enum hmb_ftrace_field_kind kind;
	uint64_t u;
	int64_t i;
	const char *str;	/* STR: not NUL-terminated */
	size_t str_len;
};

/* At most this many fields of an event are delivered; the rest are counted. */
#define HMB_FTRACE_MAX_FIELDS 32
/* Longest string or hex dump of an array field delivered (bytes). */
#define HMB_FTRACE_MAX_STR 1024

struct hmb_ftrace_event {
	uint64_t ts;		/* ftrace time, ns, on its buffer's trace clock */
	int cpu;
	int pid;
	const char *system;
	const char *name;
	int is_print;		/* ftrace:print (trace_marker): ip and buf */
	uint64_t ip;
	const char *buf;	/* not NUL-terminated */
	size_t buf_len;
	const struct hmb_ftrace_field *fields;	/* the others: their own fields */
	size_t nr_fields;
};

struct hmb_ftrace_info {
	/* The trace clock of the top buffer and of the "hmb" instance ("" if
	 * the file does not say or has no such instance), e.g. "local". */
	char top_clock[32];
	char hmb_clock[32];
	uint64_t events;	/* delivered */
	uint64_t fields_cut;	/* fields past HMB_FTRACE_MAX_FIELDS, strings cut */
	uint64_t malformed;	/* events whose fields did not fit their record */
};

/*
 * Reads the trace clocks of `path` into *info, and, if cb is not NULL,
 * calls it for each event not of the hmb system, in host time order (a
 * non-zero return stops). The event and its strings are valid during the
 * call. Returns 0, or -1 with a message in err.
 */
int hmb_ftrace_read(const char *path,
		    int (*cb)(const struct hmb_ftrace_event *ev, void *data),
		    void *data, struct hmb_ftrace_info *info, char *err, size_t err_len);

/*
 * hmb_ftrace_read() from a file already open with every instance
 * (tracecmd_walk_c.h; its walks start from the first event): one open
 * serves this read and the caller's. Read by pages, the CPUs are first
 * scanned for such events, and only the buffers that hold some are
 * walked (none in a capture of the hmb events alone).
 */
struct hmb_tracecmd_file;
int hmb_ftrace_read_file(struct hmb_tracecmd_file *f,
			 int (*cb)(const struct hmb_ftrace_event *ev, void *data),
			 void *data, struct hmb_ftrace_info *info, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_EVENTS_C_H_ */
