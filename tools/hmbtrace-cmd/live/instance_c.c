// SPDX-License-Identifier: GPL-2.0-only
/*
 * instance_c.c - libtracefs behind the C interface of instance_c.h.
 *
 * Reading: each CPU's per_cpu/cpuN/trace_pipe_raw is opened O_NONBLOCK and
 * read with read(2), one ring-buffer page at a time; a read consumes what
 * it returns, partial pages included. tracefs_cpu_read() is not used: its
 * non-blocking mode first asks select(2), and from Linux 6.1 poll on
 * trace_pipe_raw only reports input once the buffer is buffer_percent
 * (default 50%) full, so a slow stream would look empty for minutes.
 * Pages are parsed with libtraceevent's kbuffer and the records decoded by
 * capture_c.c (the same checked decoder as for trace.dat files).
 */
#define _GNU_SOURCE
#include "live/instance_c.h"
#include "capture/c_error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <tracefs.h>

struct hmb_instance_cpu {
	int cpu;
	int fd;
};

struct hmb_instance {
	char *tracing_dir;
	char *dir;
	struct tracefs_instance *tfs;
	/* stream */
	struct tep_handle *tep;
	struct hmb_event_set events;
	struct kbuffer *kbuf;
	void *page;
	size_t page_size;
	struct hmb_instance_cpu *cpus;
	int nr_cpus;
};

struct hmb_instance *hmb_instance_open(const char *tracing_dir, char *err,
				       size_t err_len)
{
	struct hmb_instance *inst;
	struct stat st;

	inst = calloc(1, sizeof(*inst));
	if (!inst) {
		set_err(err, err_len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	inst->tracing_dir = strdup(tracing_dir);
	if (!inst->tracing_dir ||
	    asprintf(&inst->dir, "%s/instances/hmb", tracing_dir) < 0) {
		inst->dir = NULL;
		hmb_instance_close(inst);
		set_err(err, err_len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	/*
	 * tracefs_instance_exists() ignores the tracing dir it is not given:
	 * check the directory here.
	 */
	if (stat(inst->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		int e = errno ? errno : ENOTDIR;

		set_err(err, err_len, "%s: %s", inst->dir, strerror(e));
		hmb_instance_close(inst);
		errno = e;
		return NULL;
	}
	inst->tfs = tracefs_instance_alloc(tracing_dir, "hmb");
	if (!inst->tfs) {
		int e = errno;

		set_err(err, err_len, "%s: libtracefs cannot use it: %s",
			inst->dir, strerror(e));
		hmb_instance_close(inst);
		errno = e;
		return NULL;
	}
	return inst;
}

void hmb_instance_close(struct hmb_instance *inst)
{
	int i;

	if (!inst)
		return;
	for (i = 0; i < inst->nr_cpus; i++)
		close(inst->cpus[i].fd);
	free(inst->cpus);
	free(inst->page);
	if (inst->kbuf)
		kbuffer_free(inst->kbuf);
	if (inst->tep)
		tep_free(inst->tep);
	tracefs_instance_free(inst->tfs);
	free(inst->dir);
	free(inst->tracing_dir);
	free(inst);
}

const char *hmb_instance_dir(const struct hmb_instance *inst)
{
	return inst->dir;
}

int hmb_instance_write_marker(struct hmb_instance *inst, const char *text,
			      size_t len, char *err, size_t err_len)
{
	ssize_t n;
	int fd;

	fd = tracefs_instance_file_open(inst->tfs, "trace_marker",
					O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		set_err(err, err_len, "%s/trace_marker: %s", inst->dir,
			strerror(errno));
		return -1;
	}
	n = write(fd, text, len);
	if (n < 0 || (size_t)n != len) {
		set_err(err, err_len, "%s/trace_marker: %s", inst->dir,
			n < 0 ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	if (close(fd) != 0) {
		set_err(err, err_len, "%s/trace_marker: %s", inst->dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct hmb_instance_cpu *x = a, *y = b;

	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* Every per_cpu/cpuN of the instance, sorted by N; fds not opened yet. */
static int list_cpus(struct hmb_instance *inst, char *err, size_t err_len)
{
	struct dirent *de;
	char *path;
	DIR *d;
	int cap = 0;

	if (asprintf(&path, "%s/per_cpu", inst->dir) < 0) {
		set_err(err, err_len, "out of memory");
		return -1;
	}
	d = opendir(path);
	if (!d) {
		set_err(err, err_len, "%s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	free(path);
	while ((de = readdir(d))) {
		char *end;
		long cpu;

		if (strncmp(de->d_name, "cpu", 3) || !de->d_name[3])
			continue;
		errno = 0;
		cpu = strtol(de->d_name + 3, &end, 10);
		if (*end || errno || cpu < 0 || cpu > 65535)
			continue;
		if (inst->nr_cpus == cap) {
			struct hmb_instance_cpu *c;

			cap = cap ? cap * 2 : 8;
			c = realloc(inst->cpus, (size_t)cap * sizeof(*c));
			if (!c) {
				closedir(d);
				set_err(err, err_len, "out of memory");
				return -1;
			}
			inst->cpus = c;
		}
		inst->cpus[inst->nr_cpus].cpu = (int)cpu;
		inst->cpus[inst->nr_cpus].fd = -1;
		inst->nr_cpus++;
	}
	closedir(d);
	if (!inst->nr_cpus) {
		set_err(err, err_len, "%s/per_cpu: no cpuN directories", inst->dir);
		return -1;
	}
	qsort(inst->cpus, (size_t)inst->nr_cpus, sizeof(*inst->cpus), cmp_cpu);
	return 0;
}

/* Reads a whole (tracefs) file; its size is unknown until read. */
static char *read_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *b = cap < (1u << 24) ? realloc(buf, cap * 2) : NULL;

			if (!b) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = b;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
}

/* Parses events/<system>/<event>/format; 0 if parsed. */
static int parse_format(struct tep_handle *tep, const char *tracing_dir,
			const char *system, const char *event)
{
	char *path, *buf;
	size_t len;
	int ret;

	if (asprintf(&path, "%s/events/%s/%s/format", tracing_dir, system,
		     event) < 0)
		return -1;
	buf = read_file(path, &len);
	free(path);
	if (!buf)
		return -1;
	ret = tep_parse_event(tep, buf, len, system) == TEP_ERRNO__SUCCESS ?
		0 : -1;
	free(buf);
	return ret;
}

/*
 * The formats of every hmb event and of ftrace:print, and the ring-buffer
 * page header. Not tracefs_local_events_system(): it also reads
 * /proc/kallsyms (seconds in a TCG guest) and the formats of every system.
 */
static struct tep_handle *load_formats(const char *tracing_dir, char *err,
				       size_t err_len)
{
	struct tep_handle *tep = tep_alloc();
	struct dirent *de;
	char *path, *buf;
	size_t len;
	DIR *d;

	if (!tep) {
		set_err(err, err_len, "out of memory");
		return NULL;
	}
	if (asprintf(&path, "%s/events/header_page", tracing_dir) < 0)
		goto err_mem;
	buf = read_file(path, &len);
	if (!buf) {
		set_err(err, err_len, "%s: %s", path, strerror(errno));
		free(path);
		goto err;
	}
	free(path);
	tep_parse_header_page(tep, buf, (unsigned long)len, (int)sizeof(long));
	free(buf);

	if (asprintf(&path, "%s/events/hmb", tracing_dir) < 0)
		goto err_mem;
	d = opendir(path);
	if (!d) {
		set_err(err, err_len, "%s: %s (hmb_trace.ko is not loaded?)",
			path, strerror(errno));
		free(path);
		goto err;
	}
	free(path);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		/* "enable" and "filter" are files: no format, skipped. */
		parse_format(tep, tracing_dir, "hmb", de->d_name);
	}
	closedir(d);
	/* trace_marker lines; without it they are just not shown. */
	parse_format(tep, tracing_dir, "ftrace", "print");
	return tep;

err_mem:
	set_err(err, err_len, "out of memory");
err:
	tep_free(tep);
	return NULL;
}

int hmb_instance_stream_start(struct hmb_instance *inst, char *err,
			      size_t err_len)
{
	long page_size = sysconf(_SC_PAGESIZE);
	int i;

	if (inst->tep) {
		set_err(err, err_len, "already started");
		return -1;
	}
	inst->tep = load_formats(inst->tracing_dir, err, err_len);
	if (!inst->tep)
		return -1;
	hmb_event_set_init(&inst->events, inst->tep);
	inst->page_size = page_size > 0 ? (size_t)page_size : 4096;
	inst->page = malloc(inst->page_size);
	inst->kbuf = kbuffer_alloc(sizeof(long) == 8 ? KBUFFER_LSIZE_8 :
				   KBUFFER_LSIZE_4,
				   tep_is_bigendian() ? KBUFFER_ENDIAN_BIG :
				   KBUFFER_ENDIAN_LITTLE);
	if (!inst->page || !inst->kbuf) {
		set_err(err, err_len, "out of memory");
		return -1;
	}
	if (list_cpus(inst, err, err_len))
		return -1;
	for (i = 0; i < inst->nr_cpus; i++) {
		char *path;

		if (asprintf(&path, "%s/per_cpu/cpu%d/trace_pipe_raw", inst->dir,
			     inst->cpus[i].cpu) < 0) {
			set_err(err, err_len, "out of memory");
			return -1;
		}
		inst->cpus[i].fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (inst->cpus[i].fd < 0) {
			set_err(err, err_len, "%s: %s", path, strerror(errno));
			free(path);
			return -1;
		}
		free(path);
	}
	return 0;
}

int hmb_instance_has_hmb_events(const struct hmb_instance *inst)
{
	return hmb_event_set_has_hmb_events(&inst->events);
}

int hmb_instance_nr_cpus(const struct hmb_instance *inst)
{
	return inst->nr_cpus;
}

int hmb_instance_cpu(const struct hmb_instance *inst, int i)
{
	return i >= 0 && i < inst->nr_cpus ? inst->cpus[i].cpu : -1;
}

int hmb_instance_read_cpu(struct hmb_instance *inst, int i,
			  int (*cb)(const struct hmb_capture_event *ev,
				    void *data),
			  void *data, char *err, size_t err_len)
{
	struct hmb_capture_event ev;
	unsigned long long ts;
	long long missed;
	ssize_t n;
	void *rec;

	if (i < 0 || i >= inst->nr_cpus || inst->cpus[i].fd < 0) {
		set_err(err, err_len, "no such CPU buffer");
		return -1;
	}
	n = read(inst->cpus[i].fd, inst->page, inst->page_size);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		set_err(err, err_len, "%s/per_cpu/cpu%d/trace_pipe_raw: %s",
			inst->dir, inst->cpus[i].cpu, strerror(errno));
		return -1;
	}
	if (n == 0)
		return 0;
	/* The kernel hands out whole pages; zero what a short read left. */
	if ((size_t)n < inst->page_size)
		memset((char *)inst->page + n, 0, inst->page_size - (size_t)n);
	if (kbuffer_load_subbuffer(inst->kbuf, inst->page) < 0) {
		set_err(err, err_len, "CPU %d: unreadable ring-buffer page",
			inst->cpus[i].cpu);
		return -1;
	}
	missed = kbuffer_missed_events(inst->kbuf);
	for (rec = kbuffer_read_event(inst->kbuf, &ts); rec;
	     rec = kbuffer_next_event(inst->kbuf, &ts)) {
		struct tep_record record;

		memset(&record, 0, sizeof(record));
		record.ts = ts;
		record.cpu = inst->cpus[i].cpu;
		record.data = rec;
		record.size = kbuffer_event_size(inst->kbuf);
		/* -1: ftrace lost events here, how many it does not say. */
		record.missed_events = missed < 0 ? 1 : missed;
		missed = 0;
		if (!hmb_event_set_decode(&inst->events, &record,
					  inst->cpus[i].cpu, &ev))
			continue;
		if (cb(&ev, data))
			break;
	}
	return 1;
}
