/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * instance_c.h - the C side of the live "hmb" trace instance: every
 * libtracefs call of hmbtrace-cmd lives in instance_c.c behind this
 * interface, because tracefs.h 1.6.4 does not compile as C++ and has no
 * extern "C". C++ code uses instance.h.
 *
 * The tracing directory is always passed in (never the library's default),
 * so that tests run on a fake tree in a temporary directory.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_INSTANCE_C_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_INSTANCE_C_H_

#include <stddef.h>

#include "capture/capture_c.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hmb_instance;

/*
 * Opens TRACING_DIR/instances/hmb. Returns NULL, with a message in err, if
 * the directory does not exist (errno ENOENT) or cannot be used.
 */
struct hmb_instance *hmb_instance_open(const char *tracing_dir, char *err,
				       size_t err_len);
void hmb_instance_close(struct hmb_instance *inst);

/* The instance's directory (TRACING_DIR/instances/hmb). */
const char *hmb_instance_dir(const struct hmb_instance *inst);

/*
 * Writes `len` bytes to the instance's trace_marker in one write(2), so
 * that they become one ftrace:print event. Returns 0 or -1 with err set.
 */
int hmb_instance_write_marker(struct hmb_instance *inst, const char *text,
			      size_t len, char *err, size_t err_len);

/*
 * Live reading. hmb_instance_stream_start() loads the formats of the hmb
 * and ftrace events from TRACING_DIR/events and opens
 * per_cpu/cpuN/trace_pipe_raw of every CPU of the instance, non-blocking.
 * Returns 0, or -1 with err set.
 */
int hmb_instance_stream_start(struct hmb_instance *inst, char *err,
			      size_t err_len);
/* Whether the loaded formats define any hmb event. */
int hmb_instance_has_hmb_events(const struct hmb_instance *inst);
int hmb_instance_nr_cpus(const struct hmb_instance *inst);
/* The CPU number of the i-th per-CPU buffer. */
int hmb_instance_cpu(const struct hmb_instance *inst, int i);

/*
 * Reads one ring-buffer page (sub-buffer) of the i-th CPU, consuming it,
 * and calls cb for each hmb and trace_marker event on it, in order. Returns
 * 1 if a page was read, 0 if the buffer was empty, -1 on error (err set).
 * A non-zero return from cb stops the page's walk (the rest of the page
 * is lost to this reader).
 */
int hmb_instance_read_cpu(struct hmb_instance *inst, int i,
			  int (*cb)(const struct hmb_capture_event *ev,
				    void *data),
			  void *data, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_LIVE_INSTANCE_C_H_ */
