/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ftrace_file_pages_c.h - where each CPU's ring-buffer pages lie in a
 * trace.dat, and a cursor over one CPU's events read from them by the page
 * reader (ftrace_page_c.h): the per-event walk without libtracecmd.
 *
 * libtracecmd still opens the file (options, instances, formats:
 * tracecmd_walk_c.h); for each buffer and CPU it is asked where its first
 * and last records are (tracecmd_read_cpu_first/last(): a record's offset
 * is a file offset, its page the one that holds it) and how many bytes of
 * data the CPU has (tracecmd_get_cpu_file_size()). The pages between are
 * read in large reads, FTRACE_CURSOR_BYTES at a time into each cursor's
 * buffer: memory bounded by the number of CPUs, not the file's length. (A
 * mapping of the file was tried first: in this machine's VM, faulting its
 * pages in cost more than the parsing, and again on every pass.)
 *
 * Only uncompressed version 6 files are read so: a compressed capture
 * (trace.dat version 7 compresses its CPU data) has no pages in the file
 * to read, and version 7's CPU numbering is libtracecmd's own; for those
 * ftrace_file_pages_open() says "not by pages" and the reader keeps
 * libtracecmd's walk.
 *
 * A page that the page reader finds malformed is counted and skipped, and
 * the first one is located (buffer, CPU, file offset) for the message.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_FILE_PAGES_C_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_FILE_PAGES_C_H_

#include <stddef.h>
#include <stdint.h>

#include "capture/ftrace_page_c.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hmb_tracecmd_file;

/* One CPU of one buffer: pages [offset, offset + size) of the file. */
struct ftrace_cpu_pages {
	uint64_t offset;	/* of the page of its first record */
	uint64_t size;		/* to the end of the page of its last; 0: no records */
	int cpu;		/* as libtracecmd's records name it */
};

/* A malformed page, where it is. */
struct ftrace_page_error {
	int buffer;		/* 0: the top buffer, i + 1: instance i */
	int cpu;
	uint64_t offset;	/* in the file, of what was wrong */
	enum ftrace_page_status status;
};

struct ftrace_file_pages {
	int fd;			/* the file, read-only; -1 when closed */
	uint64_t file_len;
	struct ftrace_page_format format;
	uint32_t page_size;
	int nr_buffers;
	int *nr_cpus;			/* [buffer] */
	struct ftrace_cpu_pages **cpus;	/* [buffer][cpu index] */
	/* Malformed pages met by the cursors, and the first of them. */
	uint64_t page_errors;
	struct ftrace_page_error first_error;
};

/*
 * The page errors met so far, kept before a scan that only looks at the
 * pages (the walk after it reads them again and reports what it meets):
 * ftrace_page_errors_back() takes back what the scan counted.
 */
struct ftrace_page_errors_mark {
	uint64_t count;
	struct ftrace_page_error first;
};

static inline struct ftrace_page_errors_mark
ftrace_page_errors_mark(const struct ftrace_file_pages *fp)
{
	struct ftrace_page_errors_mark m = { fp->page_errors, fp->first_error };

	return m;
}

static inline void ftrace_page_errors_back(struct ftrace_file_pages *fp,
					   const struct ftrace_page_errors_mark *m)
{
	fp->page_errors = m->count;
	fp->first_error = m->first;
}

/*
 * Locates the pages of every CPU of f->handles[0..f->nr_handles) and opens
 * `path` (the file f was opened from) for reading them. Returns 0; when this file is not
 * read by pages (*fp is then empty, and the caller walks with
 * libtracecmd), 1 if the handles are untouched (compressed, another
 * version), 2 if their CPU cursors have moved (pages not where the records
 * say: a libtracecmd walk needs the file opened again); -1 with a message
 * in err. On 0 too the cursors have moved.
 */
int ftrace_file_pages_open(struct ftrace_file_pages *fp, const char *path,
			   struct hmb_tracecmd_file *f, char *err, size_t err_len);
void ftrace_file_pages_close(struct ftrace_file_pages *fp);

/*
 * Reads `len` bytes at file offset `offset` into dst: 0, or -1 (a short
 * read: the file is shorter than its CPU data says).
 */
int ftrace_file_pages_read(const struct ftrace_file_pages *fp, uint64_t offset, uint8_t *dst,
			   size_t len);

/*
 * Bytes a cursor reads at a time: whole pages of up to this much. Small
 * enough to stay in a core's L2 cache between the kernel's copy and the walk.
 */
#define FTRACE_CURSOR_BYTES (1u << 18)

/* The events of one CPU of one buffer, in file order. */
struct ftrace_cpu_cursor {
	struct ftrace_file_pages *fp;
	int buffer;
	int cpu_index;
	uint64_t page;		/* file offset of the page being read */
	uint64_t end;
	uint8_t *buf;		/* file bytes [buf_offset, buf_offset + buf_len) */
	size_t buf_cap;
	uint64_t buf_offset;
	size_t buf_len;
	const uint8_t *page_bytes;	/* the page being read, in buf */
	struct ftrace_page_reader reader;
	int in_page;
};

/* 0, or -1 when out of memory. */
int ftrace_cpu_cursor_init(struct ftrace_cpu_cursor *c, struct ftrace_file_pages *fp,
			   int buffer, int cpu_index);
/*
 * The next event into *ev (its data valid until the next call): 1, or 0
 * when the CPU has no more. Malformed pages, and pages that cannot be
 * read, are counted in fp and skipped.
 */
int ftrace_cpu_cursor_next(struct ftrace_cpu_cursor *c, struct ftrace_page_event *ev);
void ftrace_cpu_cursor_destroy(struct ftrace_cpu_cursor *c);

/* "instance \"hmb\" cpu 1, file offset 12345: commit past the page's end" */
void ftrace_page_error_text(const struct ftrace_file_pages *fp, char *dst, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_FTRACE_FILE_PAGES_C_H_ */
