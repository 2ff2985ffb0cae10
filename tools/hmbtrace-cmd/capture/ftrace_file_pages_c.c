// SPDX-License-Identifier: GPL-2.0-only
/*
 * ftrace_file_pages_c.c - each CPU's pages located in a trace.dat and read
 * by the page reader (ftrace_file_pages_c.h).
 */
#define _GNU_SOURCE
#include "capture/ftrace_file_pages_c.h"
#include "capture/c_error.h"
#include "capture/tracecmd_walk_c.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trace-cmd.h>

#include "capture/tracecmd_private_c.h"

/*
 * Whether the page at `page` of the file (len bytes of it) has a data event
 * at `offset` with timestamp `ts`: the check that the CPU's pages are where
 * the first record says.
 */
static int page_has_event(const struct ftrace_file_pages *fp, uint64_t page, uint64_t offset,
			  uint64_t ts)
{
	size_t len = fp->file_len - page < fp->page_size ? fp->file_len - page : fp->page_size;
	uint8_t *bytes = malloc(len);
	struct ftrace_page_reader r;
	struct ftrace_page_event ev;
	int found = 0;

	if (!bytes)
		return 0;
	if (!ftrace_file_pages_read(fp, page, bytes, len) &&
	    !ftrace_page_begin(&r, &fp->format, bytes, len)) {
		while (ftrace_page_next(&r, &ev) == 1) {
			if (ev.offset == offset) {
				found = ev.ts == ts;
				break;
			}
		}
	}
	free(bytes);
	return found;
}

/*
 * Locates CPU `i` of handle h. Returns 0, or 1 when its pages are not where
 * this reader expects them.
 */
static int locate_cpu(struct ftrace_file_pages *fp, struct tracecmd_input *h, int i,
		      struct ftrace_cpu_pages *out)
{
	struct tep_record *first, *last;
	uint64_t start, end, first_offset, first_ts, max;
	int64_t file_size;

	memset(out, 0, sizeof(*out));
	out->cpu = i;
	first = tracecmd_read_cpu_first(h, i);
	if (!first)
		return 0;	/* no records */
	first_offset = first->offset;
	first_ts = first->ts;
	out->cpu = first->cpu;
	tracecmd_free_record(first);
	last = tracecmd_read_cpu_last(h, i);
	if (!last)
		return 1;
	end = last->offset - last->offset % fp->page_size + fp->page_size;
	tracecmd_free_record(last);
	start = first_offset - first_offset % fp->page_size;
	file_size = tracecmd_get_cpu_file_size(h, i);
	max = file_size > 0 ? (uint64_t)file_size + fp->page_size - 1 : 0;
	if (end > fp->file_len)
		end = fp->file_len;
	if (start >= end || end - start > max)
		return 1;
	if (!page_has_event(fp, start, first_offset - start, first_ts))
		return 1;
	out->offset = start;
	out->size = end - start;
	return 0;
}

static int open_file(struct ftrace_file_pages *fp, const char *path, const struct stat *same_as,
		     char *err, size_t err_len)
{
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		set_err(err, err_len, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || st.st_size <= 0 ||
	    (same_as->st_ino && (st.st_dev != same_as->st_dev || st.st_ino != same_as->st_ino ||
				 st.st_size != same_as->st_size))) {
		close(fd);
		set_err(err, err_len, "the file changed while it was being read; read it again");
		return -1;
	}
	/* Each CPU's pages are read front to back. */
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	fp->fd = fd;
	fp->file_len = (uint64_t)st.st_size;
	return 0;
}

int ftrace_file_pages_read(const struct ftrace_file_pages *fp, uint64_t offset, uint8_t *dst,
			   size_t len)
{
	while (len) {
		ssize_t n = pread(fp->fd, dst, len, (off_t)offset);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		dst += n;
		len -= (size_t)n;
		offset += (uint64_t)n;
	}
	return 0;
}

int ftrace_file_pages_open(struct ftrace_file_pages *fp, const char *path,
			   struct hmb_tracecmd_file *f, char *err, size_t err_len)
{
	struct tracecmd_input *top = f->handles[0];
	struct tep_handle *tep = tracecmd_get_tep(top);
	int page_size = tracecmd_page_size(top);
	int b, i, ret;

	memset(fp, 0, sizeof(*fp));
	fp->fd = -1;
	/* Version 7's CPU data may be compressed and its CPUs renumbered. */
	if (tracecmd_get_in_file_version(top) != 6 || !tep || tep_is_old_format(tep))
		return 1;
	fp->format.long_size = (unsigned int)tep_get_header_page_size(tep);
	fp->format.big_endian = tep_is_file_bigendian(tep);
	if ((fp->format.long_size != 4 && fp->format.long_size != 8) ||
	    page_size <= (int)(8 + fp->format.long_size) || page_size > (1 << 27) + 16)
		return 1;
	fp->page_size = (uint32_t)page_size;
	if (open_file(fp, path, &f->st, err, err_len))
		return -1;
	/* From here on the handles' cursors move. */
	fp->nr_buffers = f->nr_handles;
	fp->nr_cpus = calloc((size_t)f->nr_handles, sizeof(*fp->nr_cpus));
	fp->cpus = calloc((size_t)f->nr_handles, sizeof(*fp->cpus));
	if (!fp->nr_cpus || !fp->cpus)
		goto err_nomem;
	for (b = 0; b < f->nr_handles; b++) {
		int n = tracecmd_cpus(f->handles[b]);

		if (n < 0 || n > 65536) {
			ret = 2;
			goto err_not_pages;
		}
		fp->cpus[b] = calloc(n ? (size_t)n : 1, sizeof(**fp->cpus));
		if (!fp->cpus[b])
			goto err_nomem;
		fp->nr_cpus[b] = n;
		for (i = 0; i < n; i++) {
			if (locate_cpu(fp, f->handles[b], i, &fp->cpus[b][i])) {
				ret = 2;
				goto err_not_pages;
			}
		}
	}
	return 0;

err_nomem:
	set_err(err, err_len, "out of memory");
	ret = -1;
err_not_pages:
	ftrace_file_pages_close(fp);
	return ret;
}

void ftrace_file_pages_close(struct ftrace_file_pages *fp)
{
	int b;

	if (fp->cpus) {
		for (b = 0; b < fp->nr_buffers; b++)
			free(fp->cpus[b]);
	}
	free(fp->cpus);
	free(fp->nr_cpus);
	if (fp->fd >= 0)
		close(fp->fd);
	memset(fp, 0, sizeof(*fp));
	fp->fd = -1;
}

int ftrace_cpu_cursor_init(struct ftrace_cpu_cursor *c, struct ftrace_file_pages *fp,
			   int buffer, int cpu_index)
{
	const struct ftrace_cpu_pages *p = &fp->cpus[buffer][cpu_index];
	uint64_t pages = FTRACE_CURSOR_BYTES / fp->page_size;

	memset(c, 0, sizeof(*c));
	c->fp = fp;
	c->buffer = buffer;
	c->cpu_index = cpu_index;
	c->page = p->offset;
	c->end = p->offset + p->size;
	/* Whole pages, at least one; no more than the CPU has. */
	c->buf_cap = (size_t)(pages ? pages : 1) * fp->page_size;
	if (c->buf_cap > p->size)
		c->buf_cap = (size_t)p->size;
	if (!c->buf_cap)
		return 0;
	c->buf = malloc(c->buf_cap);
	return c->buf ? 0 : -1;
}

void ftrace_cpu_cursor_destroy(struct ftrace_cpu_cursor *c)
{
	free(c->buf);
	c->buf = NULL;
}

static void count_error(struct ftrace_cpu_cursor *c, uint64_t offset,
			enum ftrace_page_status status)
{
	struct ftrace_file_pages *fp = c->fp;

	if (!fp->page_errors++) {
		fp->first_error.buffer = c->buffer;
		fp->first_error.cpu = fp->cpus[c->buffer][c->cpu_index].cpu;
		fp->first_error.offset = offset;
		fp->first_error.status = status;
	}
}

/*
 * The page at c->page, len bytes of it, into c->page_bytes: from the
 * buffer, read ahead when it does not hold the page. 0, or -1.
 */
static int load_page(struct ftrace_cpu_cursor *c, size_t len)
{
	uint64_t want;

	if (c->page >= c->buf_offset && c->page + len <= c->buf_offset + c->buf_len) {
		c->page_bytes = c->buf + (c->page - c->buf_offset);
		return 0;
	}
	want = c->end - c->page < c->buf_cap ? c->end - c->page : c->buf_cap;
	if (want < len || ftrace_file_pages_read(c->fp, c->page, c->buf, (size_t)want)) {
		c->buf_len = 0;
		return -1;
	}
	c->buf_offset = c->page;
	c->buf_len = (size_t)want;
	c->page_bytes = c->buf;
	return 0;
}

int ftrace_cpu_cursor_next(struct ftrace_cpu_cursor *c, struct ftrace_page_event *ev)
{
	struct ftrace_file_pages *fp = c->fp;

	for (;;) {
		size_t len;

		if (c->in_page) {
			int ret = ftrace_page_next(&c->reader, ev);

			if (ret == 1)
				return 1;
			if (ret < 0)
				count_error(c, c->page + c->reader.error_offset, c->reader.status);
			c->in_page = 0;
			c->page += fp->page_size;
		}
		if (c->page >= c->end || !c->buf)
			return 0;
		len = c->end - c->page < fp->page_size ? (size_t)(c->end - c->page) : fp->page_size;
		if (load_page(c, len)) {
			/* Cut short under the reader: say so once, stop this CPU. */
			count_error(c, c->page, FTRACE_PAGE_SHORT_HEADER);
			c->page = c->end;
			return 0;
		}
		if (ftrace_page_begin(&c->reader, &fp->format, c->page_bytes, len)) {
			count_error(c, c->page + c->reader.error_offset, c->reader.status);
			c->page += fp->page_size;
			continue;
		}
		c->in_page = 1;
	}
}

void ftrace_page_error_text(const struct ftrace_file_pages *fp, char *dst, size_t len)
{
	const struct ftrace_page_error *e = &fp->first_error;

	if (!fp->page_errors) {
		set_err(dst, len, "no malformed page");
		return;
	}
	set_err(dst, len, "%llu malformed page%s skipped, the first in buffer %d cpu %d at file offset %llu: %s",
		(unsigned long long)fp->page_errors, fp->page_errors == 1 ? "" : "s", e->buffer,
		e->cpu, (unsigned long long)e->offset, ftrace_page_status_name(e->status));
}
