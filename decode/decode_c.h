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

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_DECODE_C_H */
