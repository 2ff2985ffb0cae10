/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_page_c.h - one ftrace ring-buffer page (sub-buffer) of a capture,
 * parsed straight from its bytes: a pure, bounds-checked reader with no
 * library behind it, for the walks that read a capture at the speed of the
 * file (issue 36) and for its fuzz target.
 *
 * A page, as the capture's header_page format describes it (the kernel's
 * struct buffer_data_page):
 *
 *   offset 0            u64   timestamp   time of the page's first event
 *   offset 8            long  commit      bytes of data, and two flags:
 *                                           bit 31 events were missed before
 *                                                  this page
 *                                           bit 30 their count is stored as a
 *                                                  long right after the data
 *                                           bits 0..26 the byte count
 *   offset 8 + long     data  events, back to back, each a 4-byte header:
 *                                           bits 0..4  type_len
 *                                           bits 5..31 time_delta
 *                             (big-endian files: type_len in the top 5 bits)
 *
 *   type_len 0       data; its length (+ 4) in the next u32, data after it
 *   type_len 1..28   data of type_len * 4 bytes right after the header
 *   type_len 29      padding (a discarded event): its length in the next u32
 *   type_len 30      time extend: delta + (next u32 << 27) added to the time
 *   type_len 31      absolute time: (next u32 << 27) + delta replaces the
 *                    time's low 59 bits
 *
 * Every event adds its time_delta to the running time. The reader gives
 * what libtraceevent's kbuffer gives libtracecmd on a well-formed page, so
 * that a walk over it is the same walk: an event's size is its data
 * length rounded up to 4, and the missed events of a page are reported
 * with its first event only if that event is the first thing on the page
 * (kbuffer_missed_events(): a time extend before it hides them), -1 when
 * the kernel had no room to store the count.
 *
 * Where kbuffer trusts the page, this reader checks it: every read is
 * inside the page's bytes and every event inside its commit. A malformed
 * page ends with one status naming what was wrong and where (its offset in
 * the page); the events before it stand. C, usable from C++.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_PAGE_C_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_PAGE_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* commit's bits (kernel/trace/ring_buffer.c: RB_MISSED_EVENTS, RB_MISSED_STORED) */
#define FTRACE_PAGE_MISSED_EVENTS (1u << 31)
#define FTRACE_PAGE_MISSED_STORED (1u << 30)
#define FTRACE_PAGE_COMMIT_MASK ((1u << 27) - 1)

#define FTRACE_PAGE_TYPE_PADDING 29
#define FTRACE_PAGE_TYPE_TIME_EXTEND 30
#define FTRACE_PAGE_TYPE_TIME_STAMP 31
#define FTRACE_PAGE_TS_SHIFT 27

/* How the capture lays a page out (its header_page format and byte order). */
struct ftrace_page_format {
	unsigned int long_size;	/* of commit and of the stored missed count: 4 or 8 */
	int big_endian;		/* the file's byte order */
};

/* One status per kind of malformed page. */
enum ftrace_page_status {
	FTRACE_PAGE_OK = 0,
	FTRACE_PAGE_BAD_FORMAT,		/* long_size neither 4 nor 8 */
	FTRACE_PAGE_SHORT_HEADER,	/* fewer bytes than the page header */
	FTRACE_PAGE_COMMIT_PAST_END,	/* commit counts bytes past the page */
	FTRACE_PAGE_MISSED_PAST_END,	/* the stored missed count past the page */
	FTRACE_PAGE_HEADER_PAST_COMMIT,	/* an event's header or length word past commit */
	FTRACE_PAGE_BAD_LENGTH,		/* a type_len 0 length word below 4 */
	FTRACE_PAGE_DATA_PAST_COMMIT,	/* an event's data past commit */
	FTRACE_PAGE_EMPTY_DATA,		/* a data event of no bytes (no common_type) */
	FTRACE_PAGE_NR_STATUS,
};

/* "ok", "commit past the page's end", ... */
const char *ftrace_page_status_name(enum ftrace_page_status status);

/* One data event of a page; data points into the page. */
struct ftrace_page_event {
	uint64_t ts;
	const uint8_t *data;
	uint32_t size;		/* of data: a multiple of 4, at least 4 */
	uint32_t offset;	/* of its header in the page */
	int64_t missed_events;	/* before it: 0, a count, or -1 (not stored) */
};

/* A cursor over one page. */
struct ftrace_page_reader {
	const uint8_t *page;
	size_t len;		/* bytes of the page that can be read */
	struct ftrace_page_format format;
	uint32_t data_start;	/* 8 + long_size */
	uint32_t commit;	/* bytes of data */
	uint64_t ts;		/* the running time */
	uint32_t next;		/* the next event's offset from data_start */
	int64_t missed;		/* of the page: 0, a count, or -1 */
	enum ftrace_page_status status;
	uint32_t error_offset;	/* in the page, of what status names */
};

/*
 * Starts reading the page of `len` bytes at `page` (a page of the file, or
 * what is left of it at the file's end). Returns 0, or -1 with r->status
 * and r->error_offset set (then ftrace_page_next() gives nothing).
 */
int ftrace_page_begin(struct ftrace_page_reader *r, const struct ftrace_page_format *format,
		      const uint8_t *page, size_t len);

/*
 * The next data event into *ev (time extends, absolute time stamps and
 * padding are taken into the time and skipped). Returns 1 with an event,
 * 0 at the end of the page, -1 on a malformed page (r->status,
 * r->error_offset; every later call returns -1 too).
 */
int ftrace_page_next(struct ftrace_page_reader *r, struct ftrace_page_event *ev);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_PAGE_C_H_ */
