// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace_dat_layout_c.c - the CPU data of a version 6 trace.dat against the
 * file's size, behind trace_dat_layout_c.h.
 */
#define _GNU_SOURCE
#include "capture/trace_dat_layout_c.h"
#include "capture/c_error.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* trace-cmd's option ids (trace-cmd-dat(5)): the end of the list, an instance. */
#define OPTION_DONE 0
#define OPTION_BUFFER 3
/* Longer names than these are not a header this knows. */
#define MAX_NAME 256
/* Instances followed (trace-cmd record -B: a few). */
#define MAX_BUFFERS 16

struct dat {
	int fd;
	uint64_t size; /* the file's */
	uint64_t pos;
	int big_endian;
	int broken; /* ran past the end, or a read failed */
};

static int take(struct dat *d, void *buf, uint64_t n)
{
	if (d->broken || n > d->size || d->pos > d->size - n ||
	    pread(d->fd, buf, n, (off_t)d->pos) != (ssize_t)n) {
		d->broken = 1;
		return -1;
	}
	d->pos += n;
	return 0;
}

static void skip(struct dat *d, uint64_t n)
{
	if (d->broken || n > d->size || d->pos > d->size - n)
		d->broken = 1;
	else
		d->pos += n;
}

static uint64_t number(struct dat *d, unsigned int bytes)
{
	unsigned char b[8];
	uint64_t v = 0;
	unsigned int i;

	if (take(d, b, bytes))
		return 0;
	for (i = 0; i < bytes; i++)
		v |= (uint64_t)b[d->big_endian ? bytes - 1 - i : i] << (8 * i);
	return v;
}

/* Whether the next bytes are `s` with its NUL (`n` bytes in all). */
static int expect(struct dat *d, const char *s, size_t n)
{
	char buf[16];

	return n <= sizeof(buf) && !take(d, buf, n) && memcmp(buf, s, n) == 0;
}

static int skip_string(struct dat *d)
{
	char c;
	int n;

	for (n = 0; n < MAX_NAME; n++) {
		if (take(d, &c, 1))
			return -1;
		if (!c)
			return 0;
	}
	d->broken = 1;
	return -1;
}

/* Skips `count` blocks, each after its size of `size_bytes` bytes. */
static void skip_sized(struct dat *d, uint64_t count, unsigned int size_bytes)
{
	while (count-- && !d->broken)
		skip(d, number(d, size_bytes));
}

/*
 * The flyrecord section at d->pos ("flyrecord" then an offset and a size
 * per CPU): -1 with `err` when a CPU's data ends past the file's end.
 */
static int check_flyrecord(struct dat *d, uint32_t cpus, const char *buffer, char *err,
			   size_t err_len)
{
	uint32_t cpu;

	if (!expect(d, "flyrecord", 10))
		return 0; /* latency data, or not a layout this knows */
	for (cpu = 0; cpu < cpus; cpu++) {
		const uint64_t offset = number(d, 8), size = number(d, 8);

		if (d->broken)
			return 0;
		if (offset > d->size || size > d->size - offset) {
			set_err(err, err_len,
				"the file is cut short: the data of CPU %u of %s ends at byte %llu, but the file has %llu "
				"bytes (copied before trace-cmd finished writing it?); copy it again, or "
				"record again",
				cpu, buffer, (unsigned long long)offset + size,
				(unsigned long long)d->size);
			return -1;
		}
	}
	return 0;
}

int hmb_trace_dat_check_cpu_data(const char *path, char *err, size_t err_len)
{
	static const char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g', '6', 0 };
	struct dat d = { .fd = -1 };
	char head[sizeof(magic)];
	unsigned char endian;
	struct {
		uint64_t offset;
		char name[MAX_NAME];
	} buffers[MAX_BUFFERS];
	unsigned int nr_buffers = 0, i;
	uint32_t cpus;
	struct stat st;
	int ret = 0;

	d.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d.fd < 0)
		return 0; /* libtracecmd says why */
	if (fstat(d.fd, &st) || !S_ISREG(st.st_mode))
		goto out;
	d.size = (uint64_t)st.st_size;
	/* Version 6 only: a 7's sections are found by their own headers. */
	if (take(&d, head, sizeof(head)) || memcmp(head, magic, sizeof(magic)) ||
	    take(&d, &endian, 1) || endian > 1)
		goto out;
	d.big_endian = endian;
	skip(&d, 1 + 4); /* the size of a long, the page size */
	if (!expect(&d, "header_page", 12))
		goto out;
	skip(&d, number(&d, 8));
	if (!expect(&d, "header_event", 13))
		goto out;
	skip(&d, number(&d, 8));
	skip_sized(&d, number(&d, 4), 8); /* ftrace's event formats */
	for (uint64_t systems = number(&d, 4); systems-- && !d.broken;) {
		if (skip_string(&d))
			goto out;
		skip_sized(&d, number(&d, 4), 8);
	}
	skip(&d, number(&d, 4)); /* kallsyms */
	skip(&d, number(&d, 4)); /* printk formats */
	skip(&d, number(&d, 8)); /* saved command lines */
	cpus = (uint32_t)number(&d, 4);
	if (d.broken || !expect(&d, "options  ", 10))
		goto out;
	for (;;) {
		const uint16_t id = (uint16_t)number(&d, 2);
		uint32_t size;

		if (d.broken || id == OPTION_DONE)
			break;
		size = (uint32_t)number(&d, 4);
		if (id == OPTION_BUFFER && size > 8 && nr_buffers < MAX_BUFFERS) {
			/* Its data's offset, then its name. */
			const uint32_t name = size - 8 < MAX_NAME ? size - 8 : MAX_NAME - 1;

			buffers[nr_buffers].offset = number(&d, 8);
			memset(buffers[nr_buffers].name, 0, MAX_NAME);
			take(&d, buffers[nr_buffers].name, name);
			skip(&d, size - 8 - name);
			nr_buffers++;
		} else {
			skip(&d, size);
		}
	}
	if (d.broken)
		goto out;
	ret = check_flyrecord(&d, cpus, "the top buffer", err, err_len);
	for (i = 0; !ret && i < nr_buffers; i++) {
		char what[MAX_NAME + 16];
		char *c;

		for (c = buffers[i].name; *c; c++)
			if (*c < 0x20 || *c > 0x7e)
				*c = '?'; /* the file's bytes, shown plainly */
		snprintf(what, sizeof(what), "instance \"%s\"", buffers[i].name);
		d.pos = buffers[i].offset;
		d.broken = d.pos > d.size;
		ret = check_flyrecord(&d, cpus, what, err, err_len);
	}
out:
	close(d.fd);
	return ret;
}
