/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * capture_c.h - the C side of reading a trace.dat: libtracecmd's headers
 * include tracefs.h, which does not compile as C++ (1.6.4) and has no
 * extern "C", so every libtracecmd call lives in capture_c.c behind this
 * interface. C++ code uses capture.h.
 *
 * The file is untrusted input: the event formats it carries and every
 * record are checked here before a field is read, and a record whose
 * fields are missing, too small or point outside the record is delivered
 * as HMB_CAPTURE_MALFORMED rather than read.
 */
#ifndef HMBTRACE_CAPTURE_C_H_
#define HMBTRACE_CAPTURE_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HMB_CAPTURE_BUILD_ID_LEN 20
#define HMB_CAPTURE_NAME_LEN 32

enum hmb_capture_kind {
	HMB_CAPTURE_RECORD = 0,	/* hmb:hmb_record */
	HMB_CAPTURE_LOST,	/* hmb:hmb_lost */
	HMB_CAPTURE_STATE,	/* hmb:hmb_state */
	HMB_CAPTURE_DICT,	/* hmb:hmb_dict */
	HMB_CAPTURE_MARKER,	/* ftrace:print (trace_marker) */
	HMB_CAPTURE_MALFORMED,	/* one of the above, failed a check */
};

/*
 * One event. Only the members of its kind are set; `data` points into
 * the library's record and is valid during the callback only.
 */
struct hmb_capture_event {
	enum hmb_capture_kind kind;
	uint64_t ts;		/* host ftrace timestamp, ns */
	int cpu;
	/* ring-buffer events ftrace dropped on this CPU before this one */
	uint64_t missed_events;
	uint16_t dev;
	uint16_t core;		/* RECORD, LOST */
	uint64_t seq;		/* RECORD */
	uint64_t fw_ts;		/* RECORD */
	uint16_t event_id;	/* RECORD */
	uint16_t len;		/* RECORD: payload length in the area */
	uint64_t count;		/* LOST */
	uint64_t at_seq;	/* LOST */
	uint8_t reason;		/* LOST */
	uint64_t clock_hz;	/* STATE */
	uint32_t producer_gen;	/* STATE, DICT */
	uint16_t nr_cores;	/* STATE */
	uint8_t state;		/* STATE */
	uint8_t build_id[HMB_CAPTURE_BUILD_ID_LEN]; /* STATE, DICT */
	char name[HMB_CAPTURE_NAME_LEN + 1];	/* STATE, NUL terminated */
	uint32_t total_len;	/* DICT */
	uint32_t offset;	/* DICT */
	/* RECORD: payload; DICT: chunk; MARKER: text (not NUL terminated) */
	const uint8_t *data;
	uint32_t data_len;
	/* MALFORMED: which event, and why */
	const char *malformed_event;
	const char *malformed_reason;
};

struct hmb_capture;
struct tep_handle;
struct tep_event;
struct tep_record;

/*
 * The events this tool reads, looked up once in a tep handle (a capture's,
 * or the live instance's formats: instance_c.c). Any may be NULL.
 */
struct hmb_event_set {
	struct tep_handle *tep;
	struct tep_event *record, *lost, *state, *dict, *print;
};

void hmb_event_set_init(struct hmb_event_set *set, struct tep_handle *tep);
int hmb_event_set_has_hmb_events(const struct hmb_event_set *set);

/*
 * Decodes one ring-buffer record into ev, with the checks described above.
 * `cpu` is used when record->cpu is unset. Returns 0 if the record is not
 * one of the events of `set` (ev is then meaningless), 1 otherwise.
 */
int hmb_event_set_decode(const struct hmb_event_set *set,
			 const struct tep_record *record, int cpu,
			 struct hmb_capture_event *ev);

/*
 * Opens `path`. On failure returns NULL and writes a message (without the
 * file name) into err; errno is ENOENT if the file does not exist.
 */
struct hmb_capture *hmb_capture_open(const char *path, char *err,
				     size_t err_len);
void hmb_capture_close(struct hmb_capture *cap);

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
