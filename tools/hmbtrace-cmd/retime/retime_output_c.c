// SPDX-License-Identifier: GPL-2.0-only
/*
 * retime_output_c.c - libtracecmd's writer behind retime_output_c.h.
 *
 * libtracecmd exports its writer but declares it only in trace-cmd's
 * private header: capture/tracecmd_private_c.h declares what is used.
 */
#define _GNU_SOURCE
#include "retime/retime_output_c.h"
#include "capture/c_error.h"
#include "capture/tracecmd_walk_c.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trace-cmd.h>
#include <tracefs.h>

#include "capture/tracecmd_private_c.h"

/* libtracecmd 3.1's, in trace-cmd's private header as the rest. */
unsigned long tracecmd_get_out_file_version(struct tracecmd_output *handle);

static int max_cpus(const struct retime_output_buffer *buffers, int nr)
{
	int i, max = 0;

	for (i = 0; i < nr; i++)
		if (buffers[i].cpus > max)
			max = buffers[i].cpus;
	return max;
}

int retime_input_file_version(const char *in)
{
	struct tracecmd_input *ih = hmb_tracecmd_open_head(in);
	int version;

	if (!ih)
		return -1;
	version = (int)tracecmd_get_in_file_version(ih);
	tracecmd_close(ih);
	return version;
}

/*
 * The page size libtracecmd aligns a buffer's CPU data to
 * (trace-output.c's out_write_cpu_data() and get_trace_page_size(), 3.1):
 * the input's page size for the top buffer; for an instance, the
 * sub-buffer size its header_page declares on this machine's tracefs, or
 * the user page size when it has none. Repeated here because the layout
 * of a version 6 file depends on it.
 */
static long lib_page_size(struct tracecmd_input *ih, const char *name)
{
	struct tracefs_instance *instance;
	struct tep_handle *tep = NULL;
	char *buff = NULL;
	long psize;
	int size;

	if (!*name)
		return tracecmd_page_size(ih);
	psize = getpagesize();
	instance = tracefs_instance_alloc(tracefs_tracing_dir(), name);
	if (!instance)
		return psize;
	buff = tracefs_instance_file_read(instance, "events/header_page", &size);
	if (buff) {
		tep = tep_alloc();
		if (tep && !tep_parse_header_page(tep, buff, size, sizeof(long long)))
			psize = tep_get_sub_buffer_size(tep);
	}
	tracefs_instance_free(instance);
	tep_free(tep);
	free(buff);
	return psize;
}

/* The descriptor libtracecmd's output handle writes `path` through. */
static int handle_fd(const char *path)
{
	struct stat want, st;
	long max = sysconf(_SC_OPEN_MAX);
	int fd;

	if (stat(path, &want) != 0)
		return -1;
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		if (fstat(fd, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino &&
		    (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR)
			return fd;
	return -1;
}

int retime_copy_range(int in, long long from, int out, long long to, long long size)
{
	static char buf[1 << 20];
	loff_t in_off = from, out_off = to;
	long long done = 0;
	ssize_t n;

	/* In the kernel where the file systems allow. */
	while (done < size) {
		n = copy_file_range(in, &in_off, out, &out_off, (size_t)(size - done), 0);
		if (n <= 0)
			break;
		done += n;
	}
	while (done < size) {
		size_t want = size - done < (long long)sizeof(buf) ? (size_t)(size - done) : sizeof(buf);

		n = pread(in, buf, want, (off_t)(from + done));
		if (n <= 0)
			return -1;
		if (pwrite(out, buf, (size_t)n, (off_t)(to + done)) != n)
			return -1;
		done += n;
	}
	return 0;
}

static uint64_t file_u64(int big_endian, uint64_t v)
{
	return big_endian == (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) ? v : __builtin_bswap64(v);
}

/*
 * A version 6 file's buffer as libtracecmd writes it, its CPU data copied
 * here in large pieces instead of its 8 KiB read/write loop: libtracecmd
 * writes the section ("flyrecord", each CPU's offset and size, the
 * instance's option pointing at it, the clock) for empty CPU files, then
 * each CPU's pages go where it would have put them (page aligned, one
 * after the other) and its offset and size are set.
 *
 * The section, for empty CPU files: where it starts in *start, and where
 * its first CPU's data goes (libtracecmd's offset of every CPU) in *data.
 */
static int write_v6_section(struct tracecmd_output *oh, int fd,
			    const struct retime_output_buffer *b, int top, char **empty,
			    off_t *start, off_t *data, long page)
{
	int ret;

	*start = lseek(fd, 0, SEEK_CUR);
	if (*start < 0 || page <= 0)
		return -1;
	ret = top ? tracecmd_write_cpu_data(oh, b->cpus, empty, NULL) :
		    tracecmd_append_buffer_cpu_data(oh, b->name, b->cpus, empty);
	if (ret < 0)
		return -1;
	*data = lseek(fd, 0, SEEK_CUR);
	if (*data < 0)
		return -1;
	*data = (*data + page - 1) & ~(off_t)(page - 1);
	return 0;
}

static int set_v6_entry(struct tracecmd_input *ih, int fd, off_t start, int cpu, off_t at,
			off_t size)
{
	const int big_endian = tep_is_file_bigendian(tracecmd_get_tep(ih));
	uint64_t entry[2];

	entry[0] = file_u64(big_endian, (uint64_t)at);
	entry[1] = file_u64(big_endian, (uint64_t)size);
	return pwrite(fd, entry, sizeof(entry), start + 10 + 16 * (off_t)cpu) == sizeof(entry) ?
		       0 : -1;
}

/* CPUs from..cpus of `b` after `at` (where the previous one ended). */
static int write_v6_data(struct tracecmd_input *ih, int fd, const struct retime_output_buffer *b,
			 off_t start, int from, off_t at, long page)
{
	int i, ret;

	for (i = from; i < b->cpus; i++) {
		struct stat st;
		int cpu_fd;

		at = (at + page - 1) & ~(off_t)(page - 1);
		cpu_fd = open(b->cpu_files[i], O_RDONLY);
		if (cpu_fd < 0)
			return -1;
		ret = fstat(cpu_fd, &st) == 0 ? retime_copy_range(cpu_fd, 0, fd, at, st.st_size) : -1;
		close(cpu_fd);
		if (ret || set_v6_entry(ih, fd, start, i, at, st.st_size))
			return -1;
		at += st.st_size;
	}
	return lseek(fd, 0, SEEK_END) < 0 ? -1 : 0;
}

static int write_v6_buffer(struct tracecmd_output *oh, struct tracecmd_input *ih, int fd,
			   const struct retime_output_buffer *b, int top, char **empty)
{
	const long page = lib_page_size(ih, b->name);
	off_t start, at;

	if (write_v6_section(oh, fd, b, top, empty, &start, &at, page))
		return -1;
	return write_v6_data(ih, fd, b, start, 0, at, page);
}

static char **empty_files(const struct retime_output_buffer *buffers, int nr)
{
	char **empty = calloc((size_t)max_cpus(buffers, nr) + 1, sizeof(*empty));
	int i;

	for (i = 0; empty && i <= max_cpus(buffers, nr); i++)
		empty[i] = (char *)"/dev/null";
	return empty;
}

static void buffer_err(char *err, size_t err_len, const struct retime_output_buffer *buffers,
		       int i)
{
	set_err(err, err_len, "could not write the data of %s%s%s (%s)",
		i ? "instance \"" : "the top buffer", i ? buffers[i].name : "", i ? "\"" : "",
		strerror(errno));
}

/*
 * `out` begun as a copy of `ih`: headers, formats, kallsyms, printk,
 * cmdlines, CPU count and options unchanged, its trace clock the input's.
 * NULL if libtracecmd cannot write them.
 */
static struct tracecmd_output *copy_headers(struct tracecmd_input *ih, const char *out,
					    int file_version)
{
	struct tracecmd_output *oh;
	const char *clock;

	oh = tracecmd_copy(ih, out, TRACECMD_FILE_OPTIONS, file_version, NULL);
	if (!oh)
		return NULL;
	tracecmd_set_quiet(oh, true);
	clock = tracecmd_get_trace_clock(ih);
	if (clock)
		tracecmd_set_out_clock(oh, clock);
	return oh;
}

static int output_write(const char *in, const char *out, int file_version,
			const struct retime_output_buffer *buffers, int nr,
			char *err, size_t err_len, int copy_here)
{
	struct tracecmd_output *oh = NULL;
	struct tracecmd_input *ih;
	int i, ret = -1;

	tracecmd_set_loglevel(TEP_LOG_NONE);
	ih = hmb_tracecmd_open_head(in);
	if (!ih) {
		set_err(err, err_len, "cannot read the headers of the input again");
		return -1;
	}
	if (tracecmd_get_file_state(ih) == TRACECMD_FILE_CPU_LATENCY || nr < 1) {
		set_err(err, err_len, "a latency trace has no per-CPU buffers to retime");
		goto out;
	}
	oh = copy_headers(ih, out, file_version);
	if (!oh) {
		set_err(err, err_len, "libtracecmd could not write the headers (file version %d)",
			file_version);
		goto out;
	}
	if (copy_here && tracecmd_get_out_file_version(oh) == 6) {
		char **empty = empty_files(buffers, nr);
		int fd = handle_fd(out);

		for (i = 0; empty && fd >= 0 && i < nr; i++)
			if (write_v6_buffer(oh, ih, fd, &buffers[i], i == 0, empty) < 0)
				break;
		free(empty);
		if (i < nr || fd < 0 || !empty) {
			buffer_err(err, err_len, buffers, i < nr ? i : 0);
			goto out;
		}
		ret = 0;
		goto out;
	}
	if (tracecmd_write_cpu_data(oh, buffers[0].cpus, buffers[0].cpu_files, NULL) < 0) {
		set_err(err, err_len, "libtracecmd could not write the top buffer's data");
		goto out;
	}
	for (i = 1; i < nr; i++) {
		if (tracecmd_append_buffer_cpu_data(oh, buffers[i].name, buffers[i].cpus,
						    buffers[i].cpu_files) < 0) {
			set_err(err, err_len,
				"libtracecmd could not write the data of instance \"%s\"",
				buffers[i].name);
			goto out;
		}
	}
	ret = 0;
out:
	if (oh)
		tracecmd_output_close(oh);
	tracecmd_close(ih);
	if (ret)
		unlink(out);
	return ret;
}

int retime_output_write(const char *in, const char *out, int file_version,
			const struct retime_output_buffer *buffers, int nr,
			char *err, size_t err_len)
{
	return output_write(in, out, file_version, buffers, nr, err, err_len, 1);
}

int retime_output_write_by_libtracecmd(const char *in, const char *out, int file_version,
				       const struct retime_output_buffer *buffers, int nr,
				       char *err, size_t err_len)
{
	return output_write(in, out, file_version, buffers, nr, err, err_len, 0);
}

struct retime_output {
	struct tracecmd_input *ih;
	struct tracecmd_output *oh;
	int fd;		/* libtracecmd's, of out */
	int buffer;	/* of the direct CPU, and the CPU in it */
	int cpu;
	off_t start;	/* of that buffer's section */
	off_t at;	/* where the direct CPU's pages go */
	long page;
	char **empty;
	char *out;
};

void retime_output_abort(struct retime_output *o)
{
	if (!o)
		return;
	if (o->oh)
		tracecmd_output_close(o->oh);
	if (o->ih)
		tracecmd_close(o->ih);
	if (o->out)
		unlink(o->out);
	free(o->empty);
	free(o->out);
	free(o);
}

struct retime_output *retime_output_begin(const char *in, const char *out, int file_version,
					  const struct retime_output_buffer *buffers, int nr,
					  int buffer, int cpu)
{
	struct retime_output *o;
	int i;

	if (buffer < 0 || buffer >= nr || cpu < 0 || cpu >= buffers[buffer].cpus)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->buffer = buffer;
	o->cpu = cpu;
	tracecmd_set_loglevel(TEP_LOG_NONE);
	o->ih = hmb_tracecmd_open_head(in);
	if (!o->ih || tracecmd_get_file_state(o->ih) == TRACECMD_FILE_CPU_LATENCY)
		goto fail;
	o->out = strdup(out);
	if (!o->out)
		goto fail;
	o->oh = copy_headers(o->ih, out, file_version);
	if (!o->oh || tracecmd_get_out_file_version(o->oh) != 6)
		goto fail;
	o->fd = handle_fd(out);
	o->empty = empty_files(buffers, nr);
	if (o->fd < 0 || !o->empty)
		goto fail;
	/* The buffers before the direct CPU's, and the CPUs before it, are empty. */
	for (i = 0; i < buffer; i++)
		if (write_v6_buffer(o->oh, o->ih, o->fd, &buffers[i], i == 0, o->empty) < 0)
			goto fail;
	o->page = lib_page_size(o->ih, buffers[buffer].name);
	if (write_v6_section(o->oh, o->fd, &buffers[buffer], buffer == 0, o->empty, &o->start,
			     &o->at, o->page))
		goto fail;
	return o;
fail:
	retime_output_abort(o);
	return NULL;
}

long long retime_output_direct_offset(const struct retime_output *o)
{
	return o->at;
}

int retime_output_finish(struct retime_output *o, const struct retime_output_buffer *buffers,
			 int nr, long long direct_size, char *err, size_t err_len)
{
	const struct retime_output_buffer *b = &buffers[o->buffer];
	int i;

	if (direct_size < 0 || set_v6_entry(o->ih, o->fd, o->start, o->cpu, o->at, direct_size) ||
	    write_v6_data(o->ih, o->fd, b, o->start, o->cpu + 1, o->at + direct_size, o->page)) {
		buffer_err(err, err_len, buffers, o->buffer);
		retime_output_abort(o);
		return -1;
	}
	for (i = o->buffer + 1; i < nr; i++)
		if (write_v6_buffer(o->oh, o->ih, o->fd, &buffers[i], 0, o->empty) < 0) {
			buffer_err(err, err_len, buffers, i);
			retime_output_abort(o);
			return -1;
		}
	tracecmd_output_close(o->oh);
	o->oh = NULL;
	free(o->out);
	o->out = NULL;
	retime_output_abort(o);
	return 0;
}

int retime_input_first_cpu_with_data(struct hmb_tracecmd_file *f, const int *cpus, int nr,
				     int *buffer, int *cpu)
{
	int b, c;

	if (f->nr_handles != nr)
		return -1;
	for (b = 0; b < nr; b++) {
		struct tracecmd_input *handle = f->handles[b];

		/* A latency trace has no per-CPU data (nor cpu_data to ask). */
		if (!handle || tracecmd_get_file_state(handle) != TRACECMD_FILE_CPU_FLYRECORD ||
		    tracecmd_cpus(handle) != cpus[b])
			return -1;
		for (c = 0; c < cpus[b]; c++) {
			const int64_t size = tracecmd_get_cpu_file_size(handle, c);

			if (size < 0)
				return -1;
			if (size > 0) {
				*buffer = b;
				*cpu = c;
				return 0;
			}
		}
	}
	return -1;
}

int retime_input_file_version_open(struct hmb_tracecmd_file *f)
{
	if (f->nr_handles < 1 || !f->handles[0])
		return -1;
	return (int)tracecmd_get_in_file_version(f->handles[0]);
}
