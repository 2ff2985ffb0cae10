/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_pages_testutil.h - every event of every CPU of every buffer of a
 * capture, read two ways for the tests to compare: by libtracecmd's own
 * per-CPU reads (the reference), and by the page reader over the pages
 * ftrace_file_pages_c.h locates.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_PAGES_TESTUTIL_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_PAGES_TESTUTIL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ftrace_test_event {
	int buffer;
	int cpu;		/* as the record names it */
	uint64_t ts;
	int common_type;	/* tep_data_type() of it */
	const void *data;	/* valid during the call */
	uint32_t size;
	int64_t missed_events;
};
typedef void (*ftrace_test_event_fn)(const struct ftrace_test_event *ev, void *data);

/* By libtracecmd: tracecmd_read_cpu_first()/tracecmd_read_data(). 0, or -1. */
int ftrace_test_read_by_tracecmd(const char *path, ftrace_test_event_fn fn, void *data);
struct ftrace_page_error;

/*
 * By pages: 0; 1 if the file is not read by pages; -1 on an error.
 * *page_errors: the malformed pages met; *first (if not NULL) the first.
 */
int ftrace_test_read_by_pages(const char *path, ftrace_test_event_fn fn, void *data,
			      uint64_t *page_errors, struct ftrace_page_error *first);

/*
 * The file offset of the second page of the first CPU that has three or
 * more (neither its first nor its last: those locate the CPU), and the
 * page size: 0, or -1.
 */
int ftrace_test_middle_page(const char *path, uint64_t *offset, uint32_t *page_size);

/*
 * Whether a capture opened as every reader opens it (hmb_tracecmd_file_open)
 * is walked from its pages: 1, 0 (libtracecmd's walk), or -1.
 */
int ftrace_test_walk_reads_pages(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_PAGES_TESTUTIL_H_ */
