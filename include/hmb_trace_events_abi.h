/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * hmb_trace_events_abi.h - the values and names that the events of trace
 * system "hmb" carry (kernel/hmb_trace/hmb_trace_events.h), for every
 * decoder of them.
 *
 * This is the one source of the hmb_lost reasons, the hmb_state
 * states, the hmb_clock flags and clocks, and of the names of the consumer's
 * error counters and broken reasons (the module's sysfs errors/<name>
 * files and broken_reason values, hmb-read's and hmbtrace-cmd's words). The module's TRACE_DEFINE_ENUM lines and __print_symbolic
 * tables, the consumer core's loss accounting and sysfs names, the
 * libtraceevent plugin and hmbtrace-cmd all expand the lists below, so
 * that a value and its name cannot disagree between them; the e2e
 * verifiers read the names back from the event format files. Values are
 * ABI: a new reason or state is appended, never renumbered.
 *
 * Each list is an X-macro: X(enumerator, value, "name"), entries joined
 * by SEP, so that a list can expand into an enum, an array initialiser,
 * or the {value, "name"} pairs of __print_symbolic (which must not end
 * with a comma).
 *
 * Freestanding: no includes, usable from the kernel and user space.
 */
#ifndef HMB_TRACE_EVENTS_ABI_H
#define HMB_TRACE_EVENTS_ABI_H

/*
 * Array lengths of the events' fields: hmb_state.build_id (the area's
 * HMB_TRACE_BUILD_ID_LEN) and hmb_state.name / hmb_dict's area name.
 * Plain decimal literals: the event format files print them verbatim
 * (__stringify), and every decoder reads them back from there.
 */
#define HMB_TRACE_EV_BUILD_ID_LEN	20
#define HMB_TRACE_EV_NAME_LEN		32

/* hmb_lost.reason: why records were lost. */
#define HMB_LOST_REASON_LIST(X, SEP)					\
	X(HMB_LOST_OVERWRITTEN, 0, "overwritten")	/* producer reused the page before it was read */ \
	SEP X(HMB_LOST_TORN, 1, "torn")		/* page overwritten while it was copied */ \
	SEP X(HMB_LOST_INVALID, 2, "invalid")	/* page or record failed validation */ \
	SEP X(HMB_LOST_RESET, 3, "reset")	/* not yet read when the firmware reset */

/* hmb_state.state: what happened to the area. */
#define HMB_TRACE_EV_STATE_LIST(X, SEP)					\
	X(HMB_TRACE_EV_ATTACHED, 0, "attached")	/* area valid; dictionary follows */ \
	SEP X(HMB_TRACE_EV_RESET, 1, "reset")	/* producer re-initialised; dictionary follows */ \
	SEP X(HMB_TRACE_EV_PRODUCER_INIT, 2, "producer_init") /* producer is (re)initialising */ \
	SEP X(HMB_TRACE_EV_BROKEN, 3, "broken")	/* meta page invalid: nothing is read */ \
	SEP X(HMB_TRACE_EV_DETACHED, 4, "detached") /* area unregistered (device gone, unload) */ \
	SEP X(HMB_TRACE_EV_IMPLAUSIBLE, 5, "implausible") /* a value from the area was impossible: counted, not charged */

/*
 * Invalid input the consumer counted, by kind: hmb_consumer.errors[] and
 * sysfs errors/<name>.
 */
#define HMB_AREA_ERROR_LIST(X, SEP)					\
	X(HMB_ERR_BAD_MAGIC, 0, "bad_magic")	/* meta magic or ABI major mismatch */ \
	SEP X(HMB_ERR_BAD_GEOMETRY, 1, "bad_geometry") /* page size, cores, offsets out of range */ \
	SEP X(HMB_ERR_BAD_PAGE_HEADER, 2, "bad_page_header") /* commit/bytes/records inconsistent */ \
	SEP X(HMB_ERR_BAD_RECORD, 3, "bad_record") /* record length/event id out of range */ \
	SEP X(HMB_ERR_SEQ_BACKWARDS, 4, "seq_backwards") /* a page's first_seq ran backwards */ \
	SEP X(HMB_ERR_PAGE_BACKWARDS, 5, "page_backwards") /* a page_seq ran backwards */ \
	SEP X(HMB_ERR_IMPLAUSIBLE, 6, "implausible") /* a loss or page beyond what can be */ \
	SEP X(HMB_ERR_BAD_GENERATION, 7, "bad_generation") /* generation back, or re-init without */

/* Why the consumer refuses the meta page: sysfs broken_reason. */
#define HMB_BROKEN_REASON_LIST(X, SEP)					\
	X(HMB_BROKEN_NONE, 0, "none")					\
	SEP X(HMB_BROKEN_BAD_MAGIC, 1, "bad_magic") /* the meta page is not a trace area */ \
	SEP X(HMB_BROKEN_BAD_ABI, 2, "bad_abi_version") /* trace area of another ABI major */ \
	SEP X(HMB_BROKEN_BAD_STATE, 3, "bad_state") /* state neither INIT nor READY */ \
	SEP X(HMB_BROKEN_BAD_GEOMETRY, 4, "bad_geometry") /* layout fails validation */ \
	SEP X(HMB_BROKEN_GEN_BACKWARDS, 5, "generation_backwards") /* producer_gen went back: not re-read */ \
	SEP X(HMB_BROKEN_UNMAPPED, 6, "unmapped") /* the meta page is not mapped */

/*
 * hmb_clock.flags: the fit is stale (sync requests stopped being answered:
 * it is the last good one, re-published, and its bound grows with the
 * distance from its window as always).
 */
#define HMB_CLOCK_FL_STALE	0x01

/*
 * hmb_clock.clock: the host trace clock a fit maps firmware time to, by
 * the name ftrace gives it in trace_clock (and trace-cmd in a trace.dat's
 * clock option). The module keeps one fit per clock below, because it
 * cannot learn which clock a capture uses (Documentation/design.rst,
 * decision 7); a converter uses the fits of the capture's own clock and
 * converts with none when the capture's clock is not listed ("counter",
 * "uptime", "x86-tsc": not nanoseconds). An hmb_clock without this field
 * (a module before it) is a fit to "local".
 */
#define HMB_TRACE_CLOCK_LIST(X, SEP)					\
	X(HMB_TRACE_CLOCK_LOCAL, 0, "local")	/* trace_clock_local(), read on one CPU */ \
	SEP X(HMB_TRACE_CLOCK_GLOBAL, 1, "global") /* trace_clock_global() */ \
	SEP X(HMB_TRACE_CLOCK_MONO, 2, "mono")	/* ktime_get_mono_fast_ns() */ \
	SEP X(HMB_TRACE_CLOCK_MONO_RAW, 3, "mono_raw") /* ktime_get_raw_fast_ns() */ \
	SEP X(HMB_TRACE_CLOCK_BOOT, 4, "boot")	/* ktime_get_boot_fast_ns() */ \
	SEP X(HMB_TRACE_CLOCK_TAI, 5, "tai")	/* ktime_get_tai_fast_ns() */ \
	SEP X(HMB_TRACE_CLOCK_PERF, 6, "perf")	/* trace_clock(): local_clock() */

/* Helpers for expanding the lists. */
#define HMB_ABI_COMMA ,
#define HMB_ABI_NOSEP
#define HMB_ABI_ENUMERATOR(e, v, n)	e = v
#define HMB_ABI_NAME(e, v, n)		n
#define HMB_ABI_PLUS_ONE(e, v, n)	+1

/* Why records were lost; indexes the consumer's per-core lost[] counters. */
enum hmb_lost_reason {
	HMB_LOST_REASON_LIST(HMB_ABI_ENUMERATOR, HMB_ABI_COMMA),
	HMB_LOST_NR = 0 HMB_LOST_REASON_LIST(HMB_ABI_PLUS_ONE, HMB_ABI_NOSEP)
};

/* Kinds of invalid input; indexes the consumer's errors[] counters. */
enum hmb_consumer_error {
	HMB_AREA_ERROR_LIST(HMB_ABI_ENUMERATOR, HMB_ABI_COMMA),
	HMB_ERR_NR = 0 HMB_AREA_ERROR_LIST(HMB_ABI_PLUS_ONE, HMB_ABI_NOSEP)
};

/* Why the meta page is refused (HMB_BROKEN_NONE: it is not). */
enum hmb_consumer_broken_reason {
	HMB_BROKEN_REASON_LIST(HMB_ABI_ENUMERATOR, HMB_ABI_COMMA),
	HMB_BROKEN_NR = 0 HMB_BROKEN_REASON_LIST(HMB_ABI_PLUS_ONE, HMB_ABI_NOSEP)
};

/* hmb_state.state values. */
enum hmb_trace_ev_state {
	HMB_TRACE_EV_STATE_LIST(HMB_ABI_ENUMERATOR, HMB_ABI_COMMA),
	HMB_TRACE_EV_STATE_NR = 0 HMB_TRACE_EV_STATE_LIST(HMB_ABI_PLUS_ONE, HMB_ABI_NOSEP)
};

/* hmb_clock.clock values. */
enum hmb_trace_clock_id {
	HMB_TRACE_CLOCK_LIST(HMB_ABI_ENUMERATOR, HMB_ABI_COMMA),
	HMB_TRACE_CLOCK_NR = 0 HMB_TRACE_CLOCK_LIST(HMB_ABI_PLUS_ONE, HMB_ABI_NOSEP)
};

/*
 * HMB_ABI_NAMES(LIST) - the names in value order, for an array that a
 * value indexes (valid in C and C++; the values of each list run 0, 1, ...
 * in list order, which tests/abi/abi_layout.h asserts):
 * static const char *const names[] = { HMB_ABI_NAMES(HMB_LOST_REASON_LIST) };
 */
#define HMB_ABI_NAMES(LIST)	LIST(HMB_ABI_NAME, HMB_ABI_COMMA)

#endif /* HMB_TRACE_EVENTS_ABI_H */
