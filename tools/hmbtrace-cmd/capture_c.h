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
#ifndef HMBTRACE_CAPTURE_C_H_
#define HMBTRACE_CAPTURE_C_H_

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

/* Whether the file's formats define the hmb events at all. */
int hmb_capture_has_hmb_events(const struct hmb_capture *cap);

/*
 * Calls `cb` for every hmb and trace_marker event of every buffer (top and
 * instances), merged in host timestamp order. A non-zero return from `cb`
 * stops the walk. Returns 0, or -1 with a message in err.
 */
int hmb_capture_iterate(struct hmb_capture *cap,
			int (*cb)(const struct hmb_capture_event *ev,
				  void *data),
			void *data, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_CAPTURE_C_H_ */
