// SPDX-License-Identifier: GPL-2.0-only
/*
 * ftrace_page_c.c - one ftrace ring-buffer page, parsed with every read
 * bounds-checked (ftrace_page_c.h).
 */
#include "capture/ftrace_page_c.h"

#include <string.h>

/* Reads copy out (the page is file bytes: no alignment is promised). */
static uint32_t load_u32(const uint8_t *p, int big_endian)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	if (big_endian != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		v = __builtin_bswap32(v);
	return v;
}

static uint64_t load_u64(const uint8_t *p, int big_endian)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	if (big_endian != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		v = __builtin_bswap64(v);
	return v;
}

static uint64_t load_long(const uint8_t *p, const struct ftrace_page_format *f)
{
	return f->long_size == 8 ? load_u64(p, f->big_endian) : load_u32(p, f->big_endian);
}

const char *ftrace_page_status_name(enum ftrace_page_status status)
{
	static const char *const names[FTRACE_PAGE_NR_STATUS] = {
		[FTRACE_PAGE_OK] = "ok",
		[FTRACE_PAGE_BAD_FORMAT] = "a header_page format this reader does not know",
		[FTRACE_PAGE_SHORT_HEADER] = "a page shorter than its header",
		[FTRACE_PAGE_COMMIT_PAST_END] = "commit past the page's end",
		[FTRACE_PAGE_MISSED_PAST_END] = "the missed-events count past the page's end",
		[FTRACE_PAGE_HEADER_PAST_COMMIT] = "an event header past commit",
		[FTRACE_PAGE_BAD_LENGTH] = "an event length below its own size",
		[FTRACE_PAGE_DATA_PAST_COMMIT] = "an event's data past commit",
		[FTRACE_PAGE_EMPTY_DATA] = "a data event of no bytes",
	};

	if ((unsigned int)status >= FTRACE_PAGE_NR_STATUS)
		return "unknown";
	return names[status];
}

static int fail(struct ftrace_page_reader *r, enum ftrace_page_status status, size_t offset)
{
	r->status = status;
	r->error_offset = (uint32_t)offset;
	return -1;
}

int ftrace_page_begin(struct ftrace_page_reader *r, const struct ftrace_page_format *format,
		      const uint8_t *page, size_t len)
{
	uint64_t commit;

	memset(r, 0, sizeof(*r));
	r->page = page;
	r->len = len;
	r->format = *format;
	if (format->long_size != 4 && format->long_size != 8)
		return fail(r, FTRACE_PAGE_BAD_FORMAT, 0);
	r->data_start = 8 + format->long_size;
	if (len < r->data_start)
		return fail(r, FTRACE_PAGE_SHORT_HEADER, 0);
	r->ts = load_u64(page, format->big_endian);
	commit = load_long(page + 8, format);
	r->commit = (uint32_t)commit & FTRACE_PAGE_COMMIT_MASK;
	if (r->commit > len - r->data_start)
		return fail(r, FTRACE_PAGE_COMMIT_PAST_END, 8);
	if (commit & FTRACE_PAGE_MISSED_EVENTS) {
		if (commit & FTRACE_PAGE_MISSED_STORED) {
			size_t at = (size_t)r->data_start + r->commit;

			if (len - at < format->long_size)
				return fail(r, FTRACE_PAGE_MISSED_PAST_END, at);
			/* A count, not a size: kept as kbuffer keeps it (long long). */
			r->missed = (int64_t)load_long(page + at, format);
		} else {
			r->missed = -1;
		}
	}
	return 0;
}

int ftrace_page_next(struct ftrace_page_reader *r, struct ftrace_page_event *ev)
{
	const struct ftrace_page_format *f = &r->format;
	const uint8_t *data = r->page + r->data_start;

	if (r->status != FTRACE_PAGE_OK)
		return -1;
	/* Invariant: r->next <= r->commit, and commit bytes follow data_start. */
	while (r->next < r->commit) {
		uint32_t at = r->next, left = r->commit - at, word, type_len, delta, len;

		if (left < 4)
			return fail(r, FTRACE_PAGE_HEADER_PAST_COMMIT, r->data_start + at);
		word = load_u32(data + at, f->big_endian);
		if (f->big_endian) {
			type_len = word >> 27;
			delta = word & ((1u << 27) - 1);
		} else {
			type_len = word & 31;
			delta = word >> 5;
		}
		if (type_len == 0 || type_len >= FTRACE_PAGE_TYPE_PADDING) {
			/* Each of these has a second word. */
			if (left < 8)
				return fail(r, FTRACE_PAGE_HEADER_PAST_COMMIT, r->data_start + at);
			len = load_u32(data + at + 4, f->big_endian);
		} else {
			len = 0;
		}
		switch (type_len) {
		case FTRACE_PAGE_TYPE_PADDING:
			/* Its length counts the bytes after its header. */
			r->ts += delta;
			if (len > left - 4)
				return fail(r, FTRACE_PAGE_DATA_PAST_COMMIT, r->data_start + at);
			r->next = at + 4 + len;
			continue;
		case FTRACE_PAGE_TYPE_TIME_EXTEND:
			r->ts += ((uint64_t)len << FTRACE_PAGE_TS_SHIFT) + delta;
			r->next = at + 8;
			continue;
		case FTRACE_PAGE_TYPE_TIME_STAMP:
			/* The stamp lacks the 5 top bits: those of the running time. */
			r->ts = (((uint64_t)len << FTRACE_PAGE_TS_SHIFT) + delta) |
				(r->ts & (0xf8ull << 56));
			r->next = at + 8;
			continue;
		case 0:
			if (len < 4)
				return fail(r, FTRACE_PAGE_BAD_LENGTH, r->data_start + at + 4);
			/* Rounded up as kbuffer rounds it (len - 4 + 3 cannot wrap). */
			len = (len - 4 + 3) & ~3u;
			if (len > left - 8)
				return fail(r, FTRACE_PAGE_DATA_PAST_COMMIT, r->data_start + at);
			ev->data = data + at + 8;
			r->next = at + 8 + len;
			break;
		default:
			len = type_len * 4;
			if (len > left - 4)
				return fail(r, FTRACE_PAGE_DATA_PAST_COMMIT, r->data_start + at);
			ev->data = data + at + 4;
			r->next = at + 4 + len;
			break;
		}
		if (!len)
			return fail(r, FTRACE_PAGE_EMPTY_DATA, r->data_start + at);
		r->ts += delta;
		ev->ts = r->ts;
		ev->size = len;
		ev->offset = r->data_start + at;
		ev->missed_events = at == 0 ? r->missed : 0;
		return 1;
	}
	return 0;
}
