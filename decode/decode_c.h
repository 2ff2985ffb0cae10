/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * decode_c.h - C interface to the hmbtrace decode library, for the
 * libtraceevent plugin (plugin_hmb.so) and other C users.
 *
 * A struct hmb_dict is immutable once parsed: it may be shared between
 * threads for formatting. Strings it returns live until hmb_dict_free().
 */
#ifndef HMBTRACE_DECODE_C_H
#define HMBTRACE_DECODE_C_H

#include <stddef.h>
#include <stdint.h>

#include "hmb_clock_fit.h"
#include "hmb_trace_events_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hmb_dict;

/**
 * hmb_dict_parse() - parse a firmware event dictionary.
 * @buf: struct hmb_trace_dict_header and its entries (untrusted; read once).
 * @len: bytes at @buf; may exceed the dictionary's total_len.
 * @err: if not NULL, receives a NUL-terminated message, truncated to
 *       @errlen bytes, on failure; an empty string on success.
 * Return: a dictionary to release with hmb_dict_free(), or NULL.
 */
struct hmb_dict *hmb_dict_parse(const void *buf, size_t len, char *err,
				size_t errlen);

/** hmb_dict_free() - release a dictionary; NULL is ignored. */
void hmb_dict_free(struct hmb_dict *dict);

/**
 * hmb_dict_format() - render one record with its event's format.
 * @id: the record's event id; unknown ids render as a hex dump.
 * @payload/@len: the record payload (untrusted; never read past @len).
 * @out/@outlen: like snprintf: at most @outlen bytes including the NUL are
 *       written; @out may be NULL when @outlen is 0.
 * Return: the length of the full text (excluding the NUL), so a result
 * >= @outlen means it was truncated; -1 if @dict is NULL or @payload is
 * NULL with a non-zero @len.
 */
int hmb_dict_format(const struct hmb_dict *dict, uint16_t id,
		    const void *payload, size_t len, char *out, size_t outlen);

/** hmb_dict_event_name() - the event's name, or NULL if @id is unknown. */
const char *hmb_dict_event_name(const struct hmb_dict *dict, uint16_t id);

/** hmb_dict_nr_events() - number of events in the dictionary. */
size_t hmb_dict_nr_events(const struct hmb_dict *dict);

/**
 * hmb_dict_event_id() - id of the @index-th event in dictionary order,
 * for iterating; 0 (never a valid id) if @index is out of range.
 */
uint16_t hmb_dict_event_id(const struct hmb_dict *dict, size_t index);

/*
 * struct hmb_dict_set - the dictionaries a trace carries and the rule that
 * picks the one for a record (decode/dictionary_set.h: reassembly of
 * hmb_dict chunks with its bounds, and the generation of a record from
 * the hmb_state events of its dev on its CPU). Fed in trace order.
 */
struct hmb_dict_set;

/* One hmb_dict event; @build_id points to HMB_DICT_BUILD_ID_LEN bytes. */
#define HMB_DICT_BUILD_ID_LEN HMB_TRACE_EV_BUILD_ID_LEN
struct hmb_dict_chunk {
	uint16_t dev;
	uint32_t producer_gen;
	const uint8_t *build_id;
	uint32_t total_len;
	uint32_t offset;
	const uint8_t *data;
	uint32_t len;
};

/* What an event changed (hmb_dict_set_add_chunk/_state). */
enum hmb_dict_set_result {
	HMB_DICT_SET_NOTHING = 0,	/* accepted; nothing to say */
	HMB_DICT_SET_COMPLETE = 1,	/* a dictionary became usable */
	HMB_DICT_SET_PROBLEM = 2,	/* rejected, or a build_id mismatch */
};

/** hmb_dict_set_alloc() - an empty set, or NULL when out of memory. */
struct hmb_dict_set *hmb_dict_set_alloc(void);
/** hmb_dict_set_free() - release a set and its dictionaries; NULL is ignored. */
void hmb_dict_set_free(struct hmb_dict_set *set);

/**
 * hmb_dict_set_use_file() - read a dictionary file (`hmbtrace-cmd dict`;
 * decode/dictionary_file.h) whose entries complete every dictionary of
 * the set whose build id is the file's; a generation of another build id
 * is decoded without it, and its hmb_state and completion messages say so
 * with both ids. Call before the first chunk.
 * @path: the file; read at most 16 MiB (bounded, untrusted).
 * @err/@errlen: receives, NUL-terminated, an error naming @path, or "".
 * Return: the number of events in the file, or -1 (the set is unchanged).
 */
int hmb_dict_set_use_file(struct hmb_dict_set *set, const char *path,
			  char *err, size_t errlen);

/**
 * hmb_dict_set_add_chunk() - feed one hmb_dict event.
 * @msg/@msglen: receives, NUL-terminated, what happened: for COMPLETE
 *       "dictionary complete: N events" (plus a build_id mismatch, if
 *       any), for PROBLEM the reason; empty for NOTHING.
 * Return: an enum hmb_dict_set_result.
 */
int hmb_dict_set_add_chunk(struct hmb_dict_set *set,
			   const struct hmb_dict_chunk *chunk, char *msg,
			   size_t msglen);

/**
 * hmb_dict_set_add_state() - feed one hmb_state event seen on @cpu;
 * @build_id points to HMB_DICT_BUILD_ID_LEN bytes. Return and @msg as
 * for hmb_dict_set_add_chunk().
 */
int hmb_dict_set_add_state(struct hmb_dict_set *set, uint16_t dev, int cpu,
			   uint8_t state, uint32_t producer_gen,
			   const uint8_t *build_id, char *msg, size_t msglen);

/**
 * hmb_dict_set_lookup() - the dictionary that decodes a record of @dev
 * delivered on @cpu, or NULL (not known yet, or ambiguous). Valid until
 * the set is freed.
 */
const struct hmb_dict *hmb_dict_set_lookup(const struct hmb_dict_set *set,
					   uint16_t dev, int cpu);

/**
 * hmb_dict_set_file_used() - whether the dictionary hmb_dict_set_lookup()
 * gives took the file of hmb_dict_set_use_file() (not refused for its
 * build id).
 */
int hmb_dict_set_file_used(const struct hmb_dict_set *set, uint16_t dev,
			   int cpu);

/**
 * hmb_dict_set_generation() - the producer generation a record of @dev
 * delivered on @cpu belongs to (the rule of hmb_dict_set_lookup()), or 0
 * if it is not known: which clock fit converts its firmware time.
 */
uint32_t hmb_dict_set_generation(const struct hmb_dict_set *set,
				 uint16_t dev, int cpu);

/*
 * struct hmb_clock_set - firmware time on the host clock
 * (decode/clock_set.h): per (dev, producer_gen) the latest hmb_clock fit
 * seen, fed in trace order, and the text a record's converted time prints
 * as. Bounded: 256 devs, 16 generations per dev.
 */
struct hmb_clock_set;

/** hmb_clock_set_alloc() - an empty set, or NULL when out of memory. */
struct hmb_clock_set *hmb_clock_set_alloc(void);
/** hmb_clock_set_free() - release a set; NULL is ignored. */
void hmb_clock_set_free(struct hmb_clock_set *set);

/* What hmb_clock_set_add_fit() did with a fit. */
enum hmb_clock_set_result {
	HMB_CLOCK_SET_USED = 0,		/* now the fit of its (dev, producer_gen) */
	HMB_CLOCK_SET_REFUSED = 1,	/* unusable numbers; the previous fit stays */
	HMB_CLOCK_SET_OTHER_CLOCK = 2,	/* a fit to another trace clock: skipped */
};

/**
 * hmb_clock_set_trace_clock() - the trace clock records are converted to
 * (the capture's; "local" until told), before the first fit.
 * @name: its trace_clock name, e.g. "mono"; NULL or "" is "local"
 * @text/@textlen: receives, NUL-terminated, why the module fits no time
 *       to that clock and what to do, or "".
 * Return: 0, or -1 if no fit can be for that clock (records are then not
 * converted: fw_time=? (no clock fit for the capture's trace clock)).
 */
int hmb_clock_set_trace_clock(struct hmb_clock_set *set, const char *name,
			      char *text, size_t textlen);

/**
 * hmb_clock_set_add_fit() - feed one hmb_clock event.
 * @flags: hmb_clock.flags (bit 0: stale).
 * @clock: hmb_clock.clock (HMB_TRACE_CLOCK_*): a fit to another clock than
 *       hmb_clock_set_trace_clock()'s is skipped.
 * @text/@textlen: receives, NUL-terminated and truncated to @textlen, the
 *       event made readable (offset, rate against the clock_hz of the
 *       generation's hmb_state, bound, samples, stale), and for a refused
 *       fit why, in brackets.
 * Return: an enum hmb_clock_set_result.
 */
int hmb_clock_set_add_fit(struct hmb_clock_set *set, uint16_t dev,
			  uint32_t producer_gen, const struct hmb_clock_fit *fit,
			  uint8_t flags, uint8_t clock, char *text,
			  size_t textlen);

/**
 * hmb_clock_set_add_state() - feed the clock rate an hmb_state states for
 * (@dev, @producer_gen); ppm in the fits' text are against it.
 */
void hmb_clock_set_add_state(struct hmb_clock_set *set, uint16_t dev,
			     uint32_t producer_gen, uint64_t clock_hz);

/**
 * hmb_clock_set_record_time() - the converted time of a record of @dev,
 * generation @producer_gen (0: unknown), as it prints after the record:
 * "fw_time=<s>.<ns> ±<bound>" (" (stale fit)" when converted with a stale
 * fit), or "fw_time=? (<why not>)".
 * @out/@outlen: as for hmb_dict_format().
 * Return: 1 if converted, 0 if not, -1 for a NULL @set.
 */
int hmb_clock_set_record_time(const struct hmb_clock_set *set, uint16_t dev,
			      uint32_t producer_gen, uint64_t fw_ts, char *out,
			      size_t outlen);

/**
 * hmb_retimed_record_time() - what prints after a record of a retimed
 * capture (@ev->retimed; hmb_events.h) instead of its converted time: its
 * timestamp already is that time, so it is not converted again: "retimed
 * ±<bound> drain=+<delay>", or "fw_time=? (<why not>), at its drain time".
 * @out/@outlen: as for hmb_dict_format().
 * Return: 1 if the record was converted, 0 if not, -1 out of memory.
 */
int hmb_retimed_record_time(uint64_t ts, uint8_t retime_flags, uint8_t retime_miss,
			    uint32_t bound_ns, uint64_t drain_ts, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_DECODE_C_H */
