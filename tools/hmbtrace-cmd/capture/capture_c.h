/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * capture_c.h - the C side of reading a trace.dat: libtracecmd's headers
 * include tracefs.h, which does not compile as C++ (1.6.4) and has no
 * extern "C", so every libtracecmd call lives in capture_c.c behind this
 * interface. C++ code uses capture.h.
 *
 * The file is untrusted input: its events are decoded with the checks of
 * decode/hmb_events.h.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_CAPTURE_C_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_CAPTURE_C_H_

#include <stddef.h>
#include <stdint.h>

#include "hmb_events.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hmb_capture;

/*
 * Opens `path`. On failure returns NULL and writes a message (without the
 * file name) into err; errno is ENOENT if the file does not exist.
 */
struct hmb_capture *hmb_capture_open(const char *path, char *err,
				     size_t err_len);
void hmb_capture_close(struct hmb_capture *cap);

/*
 * With `on`, hmb_capture_iterate() delivers only hmb_state and hmb_dict
 * events and skips the others before decoding them (the dictionary pass).
 */
void hmb_capture_set_metadata_only(struct hmb_capture *cap, int on);

/*
 * What the last hmb_capture_iterate() walked past: the events a full walk
 * delivers (hmb events and trace_marker lines; in a metadata-only walk
 * too, counted without being decoded), and the host time of the first
 * and last of them.
 */
struct hmb_capture_scan {
	uint64_t events;
	uint64_t first_ts;
	uint64_t last_ts;
};
void hmb_capture_get_scan(const struct hmb_capture *cap,
			  struct hmb_capture_scan *scan);

/*
 * With `tick` set, hmb_capture_iterate() calls it every `every` events it
 * walks (delivered or skipped), with the number walked in this walk and
 * the iterate call's data: progress for a walk that delivers few events.
 */
void hmb_capture_set_tick(struct hmb_capture *cap,
			  void (*tick)(uint64_t walked, void *data),
			  uint64_t every);

/* Whether the file's formats define the hmb events at all. */
int hmb_capture_has_hmb_events(const struct hmb_capture *cap);

/*
 * Calls `cb` for every hmb and trace_marker event of every buffer (top and
 * instances), merged in host timestamp order. A non-zero return from `cb`
 * stops the walk. Returns 0, or -1 with a message in err. Each call walks
 * the capture from its start again: one open serves several passes.
 */
int hmb_capture_iterate(struct hmb_capture *cap,
			int (*cb)(const struct hmb_capture_event *ev,
				  void *data),
			void *data, char *err, size_t err_len);

/*
 * Every record of every buffer, for a reader that copies the capture
 * (hmbtrace-cmd retime): with `raw` set, hmb_capture_iterate() calls it for
 * each record it walks instead of `cb`, with the record's hmb or
 * trace_marker event decoded in `ev`, or NULL for any other event.
 * The pointers are valid during the call. A non-zero return stops the walk.
 */
struct hmb_capture_raw {
	int buffer;		/* 0: the top buffer, i + 1: instance i */
	int cpu;		/* in its buffer */
	uint64_t ts;
	const void *data;
	uint32_t size;		/* of data, a multiple of 4 */
	uint64_t missed_events;	/* ftrace dropped this many before it */
};
void hmb_capture_set_raw(struct hmb_capture *cap,
			 int (*raw)(const struct hmb_capture_raw *rec,
				    const struct hmb_capture_event *ev, void *data));

/*
 * Whether the walks read the file's pages themselves (the fast lane), not
 * through libtracecmd's iteration (HMBTRACE_REFERENCE_WALK, a compressed
 * or version 7 file): the reference walk keeps every step of the old
 * path, for the tests that compare the two.
 */
int hmb_capture_read_by_pages(const struct hmb_capture *cap);

/*
 * The capture's libtracecmd handles (tracecmd_walk_c.h), every instance
 * open, ready for a walk from the first event, for another reader of the
 * same open (the host's nvme events, the trace clocks): opening the file is
 * the costly part of a short read. The next hmb_capture_iterate() starts
 * from the first event again. NULL with a message in err when the file
 * changed or cannot be opened again.
 */
struct hmb_tracecmd_file;
struct hmb_tracecmd_file *hmb_capture_tracecmd_file(struct hmb_capture *cap, char *err,
						    size_t err_len);

/*
 * The trace clocks of the capture: of its top buffer into top, of its
 * "hmb" instance into hmb ("" without one, or when the file does not say).
 */
void hmb_capture_clocks(const struct hmb_capture *cap, char *top, size_t top_len, char *hmb,
			size_t hmb_len);

/* The buffers of the capture: 0 is the top buffer, i + 1 instance i. */
int hmb_capture_nr_buffers(const struct hmb_capture *cap);
const char *hmb_capture_buffer_name(const struct hmb_capture *cap, int buffer); /* "" for top */
int hmb_capture_buffer_cpus(const struct hmb_capture *cap, int buffer);
/* The decoder of the capture's hmb events (its tep handle and byte order). */
const struct hmb_event_set *hmb_capture_events(const struct hmb_capture *cap);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_CAPTURE_C_H_ */
