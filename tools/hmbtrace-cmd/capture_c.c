// SPDX-License-Identifier: GPL-2.0-only
/*
 * capture_c.c - libtracecmd behind the C interface of capture_c.h.
 *
 * Events are decoded, with bounds checks, by decode/hmb_events.c.
 */
#define _GNU_SOURCE
#include "capture_c.h"
#include "c_error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trace-cmd.h>

#define NOT_READABLE                                                    \
	"not a readable trace-cmd data file (truncated, corrupt, or not made by trace-cmd record); " \
	"copy it again, or record again with `trace-cmd record -B hmb -e hmb`"

struct hmb_capture {
	struct tracecmd_input *top;
	struct tracecmd_input **handles;	/* top, then the instances */
	int nr_handles;
	struct hmb_event_set events;
};

/*
 * libtracecmd 1.3.1 crashes (a double free in the error path of
 * tracecmd_buffer_instance_handle()) on a file cut short inside an
 * instance's buffer - `trace-cmd report` does too. So the instance buffers
 * are first opened in a child process: if it does not come back cleanly,
 * the file is refused instead. Returns 0 if the child opened them all.
 */
static int probe_instances(const char *path)
{
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 0;	/* cannot probe: go ahead unprotected */
	if (pid == 0) {
		struct tracecmd_input *top;
		int i, n;

		/* A sanitizer's report of the crash is not the user's business. */
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		tracecmd_set_loglevel(TEP_LOG_NONE);
		top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
		if (!top)
			_exit(2);
		n = tracecmd_buffer_instances(top);
		for (i = 0; i < n; i++) {
			struct tracecmd_input *h = tracecmd_buffer_instance_handle(top, i);

			if (!h)
				_exit(2);
			tracecmd_close(h);
		}
		tracecmd_close(top);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return 0;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

struct hmb_capture *hmb_capture_open(const char *path, char *err,
				     size_t err_len)
{
	struct hmb_capture *cap;
	struct stat st;
	int fd, n, i;

	/* Say why a file cannot be opened before libtracecmd says less. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		set_err(err, err_len, "%s", strerror(e));
		errno = e;	/* callers tell a missing file from others */
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		set_err(err, err_len, "is a directory");
		return NULL;
	}
	close(fd);

	if (probe_instances(path)) {
		set_err(err, err_len,
			NOT_READABLE);
		return NULL;
	}
	tracecmd_set_loglevel(TEP_LOG_NONE);
	cap = calloc(1, sizeof(*cap));
	if (!cap) {
		set_err(err, err_len, "out of memory");
		return NULL;
	}
	/* No plugins: this tool decodes hmb events itself. */
	cap->top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!cap->top) {
		set_err(err, err_len,
			NOT_READABLE);
		free(cap);
		return NULL;
	}
	hmb_event_set_init(&cap->events, tracecmd_get_tep(cap->top));
	n = tracecmd_buffer_instances(cap->top);
	if (n < 0)
		n = 0;
	cap->handles = calloc((size_t)n + 1, sizeof(*cap->handles));
	if (!cap->handles) {
		hmb_capture_close(cap);
		set_err(err, err_len, "out of memory");
		return NULL;
	}
	cap->handles[cap->nr_handles++] = cap->top;
	for (i = 0; i < n; i++) {
		struct tracecmd_input *h = tracecmd_buffer_instance_handle(cap->top, i);

		if (!h) {
			const char *name = tracecmd_buffer_instance_name(cap->top, i);

			set_err(err, err_len,
				"cannot read the buffer of instance \"%s\" (truncated or corrupt)",
				name ? name : "?");
			hmb_capture_close(cap);
			return NULL;
		}
		cap->handles[cap->nr_handles++] = h;
	}
	return cap;
}

void hmb_capture_close(struct hmb_capture *cap)
{
	int i;

	if (!cap)
		return;
	/* Instance handles hold a reference on the top one: close them first. */
	for (i = cap->nr_handles - 1; i > 0; i--)
		tracecmd_close(cap->handles[i]);
	tracecmd_close(cap->top);
	free(cap->handles);
	free(cap);
}

int hmb_capture_has_hmb_events(const struct hmb_capture *cap)
{
	return hmb_event_set_has_hmb_events(&cap->events);
}

struct walk {
	struct hmb_capture *cap;
	int (*cb)(const struct hmb_capture_event *ev, void *data);
	void *data;
	int stopped;
};

static int walk_one(struct tracecmd_input *handle, struct tep_record *record,
		    int cpu, void *data)
{
	struct walk *w = data;
	struct hmb_capture_event ev;

	(void)handle;
	if (!hmb_event_set_decode(&w->cap->events, record, cpu, &ev))
		return 0;
	if (w->cb(&ev, w->data)) {
		w->stopped = 1;
		return -1;
	}
	return 0;
}

int hmb_capture_iterate(struct hmb_capture *cap,
			int (*cb)(const struct hmb_capture_event *ev,
				  void *data),
			void *data, char *err, size_t err_len)
{
	struct walk w = { cap, cb, data, 0 };
	int ret;

	if (!cap->events.tep) {
		set_err(err, err_len, "no event formats in the file");
		return -1;
	}
	ret = tracecmd_iterate_events_multi(cap->handles, cap->nr_handles,
					    walk_one, &w);
	if (ret < 0 && !w.stopped) {
		set_err(err, err_len, "reading the events failed (truncated or corrupt)");
		return -1;
	}
	return 0;
}
