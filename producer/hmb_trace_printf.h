/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * hmb_trace_printf.h - tokenized printf: a trace event in one line,
 *
 *   HMB_TRACE_PRINTF(p, core, ts, "gc: victim=%u valid=%u", blk, valid);
 *
 * Each call site is an event of its own. Its record carries only the id and
 * the arguments, packed at their own widths (a uint8_t takes one byte); the
 * format, the file, the line and each argument's width and signedness go to
 * one 256-byte struct hmb_trace_printf_site in the section ".hmb_trace_printf",
 * which is not loaded (no SHF_ALLOC: it is in the ELF, not in the image).
 * `hmbtrace-cmd dict FIRMWARE.elf -o dict.bin` builds the dictionary from
 * those sites: one event per site, its fields named after the conversions
 * ("victim=%u" makes a field "victim"), typed by the conversion and the
 * argument (%d %i signed, %u %x %X unsigned, of the argument's width; %x %X
 * display HEX). What the dictionary cannot express (%f, %s, %p, %c, a '*'
 * width, a floating-point argument, a conversion without an argument or
 * one argument too many) is an error of that build step naming the file
 * and line; a pointer argument and more than HMB_TRACE_PRINTF_MAX_ARGS
 * arguments do not compile.
 *
 * Ids: HMB_TRACE_PRINTF_BASE + __COUNTER__, so unique in one translation
 * unit. Every unit of a firmware that has printf sites defines its own
 * base (-DHMB_TRACE_PRINTF_BASE=0x8100, ...) above its declared events;
 * two sites of one id are an error of `hmbtrace-cmd dict` naming both.
 *
 * GNU C or C++ (__typeof__, statement expressions), no libc. Documentation:
 * Documentation/hmb-trace-abi.rst, "Tokenized printf".
 */
#ifndef HMB_TRACE_PRINTF_H
#define HMB_TRACE_PRINTF_H

#include "hmb_trace_producer.h"

#ifndef HMB_TRACE_PRINTF_BASE
#define HMB_TRACE_PRINTF_BASE	0x8000
#endif

#define HMB_TRACE_PRINTF_MAGIC		0x50424d48u	/* "HMBP" */
#define HMB_TRACE_PRINTF_MAX_ARGS	8
#define HMB_TRACE_PRINTF_FILE_LEN	128
#define HMB_TRACE_PRINTF_SITE_LEN	256
/* arg[i]: the width in bytes (1, 2, 4, 8), and these. */
#define HMB_TRACE_PRINTF_ARG_SIGNED	0x40
#define HMB_TRACE_PRINTF_ARG_NOT_INT	0x80
#define HMB_TRACE_PRINTF_ARG_SIZE	0x3f

/*
 * One call site, as `hmbtrace-cmd dict` reads it from the section (all
 * little-endian; 256 bytes, so the section is an array of them). @file
 * is NUL padded and need not be NUL terminated if full.
 */
struct hmb_trace_printf_site {
	uint32_t magic;			/* HMB_TRACE_PRINTF_MAGIC */
	uint16_t id;
	uint8_t nr_args;
	uint8_t reserved0;
	uint32_t line;
	uint8_t arg[HMB_TRACE_PRINTF_MAX_ARGS];
	char format[HMB_TRACE_FORMAT_LEN];
	char file[HMB_TRACE_PRINTF_FILE_LEN];
	uint8_t reserved1[12];
};

/*
 * The section's flags are spelled by us: what follows the name ends the
 * compiler's own ("a", allocated) in a comment of the assembler. A target
 * not listed defines HMB_TRACE_PRINTF_SECTION itself, or places the
 * section with its linker script as (INFO) or NOLOAD. Clang's integrated
 * assembler takes the whole string as the section's name, so with Clang
 * the name is plain and the link places it (INFO): hmb_trace_printf.ld,
 * an INSERT script for GNU ld, does.
 */
#ifndef HMB_TRACE_PRINTF_SECTION
#if defined(__clang__)
#define HMB_TRACE_PRINTF_SECTION ".hmb_trace_printf"
#elif defined(__x86_64__) || defined(__i386__)
#define HMB_TRACE_PRINTF_SECTION ".hmb_trace_printf,\"\",@progbits #"
#elif defined(__arm__)
#define HMB_TRACE_PRINTF_SECTION ".hmb_trace_printf,\"\",%progbits @"
#elif defined(__aarch64__) || defined(__riscv)
#define HMB_TRACE_PRINTF_SECTION ".hmb_trace_printf,\"\",%progbits //"
#else
#error "define HMB_TRACE_PRINTF_SECTION: a non-loaded .hmb_trace_printf"
#endif
#endif

/*
 * The sites are an array of 256-byte records: no sanitizer may pad them
 * (Clang's AddressSanitizer puts a red zone after each global; GCC's
 * leaves globals of a named section alone and has no such attribute for
 * variables).
 */
#if defined(__clang__)
#define HMB_PF_NO_SANITIZE	__attribute__((no_sanitize("address")))
#else
#define HMB_PF_NO_SANITIZE
#endif

#if defined(__cplusplus)
#define HMB_PF_ASSERT(cond, msg)	static_assert(cond, msg)
#else
#define HMB_PF_ASSERT(cond, msg)	_Static_assert(cond, msg)
#endif
#define HMB_PF_TYPEOF(x)		__typeof__(x)

/* An argument's descriptor byte: a constant expression. */
#define HMB_PF_ARG(x)							\
	(uint8_t)(sizeof(x) |						\
		  ((HMB_PF_TYPEOF(x))-1 / 2 == 0 ?			\
		   HMB_TRACE_PRINTF_ARG_SIGNED : 0) |			\
		  ((HMB_PF_TYPEOF(x))1 / 2 != 0 ?			\
		   HMB_TRACE_PRINTF_ARG_NOT_INT : 0))

/* Store @v's low @n bytes little-endian at @dst; return the byte after. */
static inline uint8_t *hmb_pf_put(uint8_t *dst, uint64_t v, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		dst[i] = (uint8_t)(v >> (8 * i));
	return dst + n;
}

/*
 * The append with its fast path inlined, as hmb_trace_declare.h's
 * emitters do it: the arguments are packed (evaluated once, whether or not
 * the record is refused) into @buf, whose @len is a constant the copy
 * into the record is unrolled for.
 */
HMB_TRACE_INLINE int
hmb_pf_emit(struct hmb_trace_producer *p, uint16_t core, uint16_t id,
	    uint64_t ts, const uint8_t *buf, uint32_t len)
{
	struct hmb_trace_append a;
	int err = hmb_trace_reserve(p, core, id, ts, len, 0, &a);

	if (err)
		return err;
	__builtin_memcpy(hmb_trace_payload(&a), buf, len);
	return hmb_trace_commit(p, core, &a);
}

#define HMB_PF_SIZE(x)	+ sizeof(x)
#define HMB_PF_DESC(x)	HMB_PF_ARG(x),
#define HMB_PF_STORE(x)	hmb_pf_c = hmb_pf_put(hmb_pf_c, (uint64_t)(x), \
					      (uint32_t)sizeof(x));

/*
 * HMB_TRACE_PRINTF(p, core, ts, format, args...) - emit a record of this
 * call site's event on @core at firmware time @ts; evaluates to what
 * hmb_trace_emit() returns. @format is a string literal of at most
 * HMB_TRACE_FORMAT_LEN - 1 characters; each argument an integer (or enum)
 * expression, evaluated once.
 */
#define HMB_TRACE_PRINTF(p, core, ts, ...)				\
	HMB_PF_EMIT(p, core, ts, HMB_TRACE_PRINTF_BASE + __COUNTER__,	\
		    HMB_PF_NARGS(__VA_ARGS__), __VA_ARGS__, ~)

/* The site record, then the emit, for @id and @k arguments (then a ~). */
#define HMB_PF_EMIT(p, core, ts, id, k, fmt, ...)			\
	__extension__ ({						\
		static const struct hmb_trace_printf_site		\
		__attribute__((section(HMB_TRACE_PRINTF_SECTION), used, \
			       aligned(8))) HMB_PF_NO_SANITIZE		\
		hmb_pf_site = {						\
			HMB_TRACE_PRINTF_MAGIC, (uint16_t)(id), (k), 0, \
			__LINE__,					\
			{ HMB_PF_EACH(k, HMB_PF_DESC, __VA_ARGS__) 0 },	\
			fmt, __FILE__, { 0 } };				\
		uint8_t hmb_pf_buf[1 HMB_PF_EACH(k, HMB_PF_SIZE, __VA_ARGS__)]; \
		uint8_t *hmb_pf_c = hmb_pf_buf;				\
									\
		HMB_PF_ASSERT((k) <= HMB_TRACE_PRINTF_MAX_ARGS,		\
			      "HMB_TRACE_PRINTF: more than 8 arguments"); \
		HMB_PF_ASSERT(sizeof(fmt) <= HMB_TRACE_FORMAT_LEN,	\
			      "HMB_TRACE_PRINTF: format too long");	\
		HMB_PF_ASSERT((id) > 0 && (id) <= 0xffff,		\
			      "HMB_TRACE_PRINTF: id out of 1..65535");	\
		(void)hmb_pf_site;					\
		HMB_PF_EACH(k, HMB_PF_STORE, __VA_ARGS__)		\
		(void)hmb_pf_c;						\
		hmb_pf_emit((p), (core), (uint16_t)(id), (ts), hmb_pf_buf, \
			    (uint32_t)(0 HMB_PF_EACH(k, HMB_PF_SIZE, __VA_ARGS__))); \
	})

/* The number of arguments after the format: 0..15. */
#define HMB_PF_NARGS(...) HMB_PF_NARGS_(__VA_ARGS__, 15, 14, 13, 12, 11, \
	10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, ~)
#define HMB_PF_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, \
	a13, a14, a15, a16, n, ...) n

/*
 * m(x) for the first @k arguments (k <= 8; more take 8, and the assert
 * above says why the site does not compile).
 */
#define HMB_PF_EACH(k, m, ...)	HMB_PF_CAT(HMB_PF_EACH_, k)(m, __VA_ARGS__)
#define HMB_PF_CAT(a, b)	HMB_PF_CAT_(a, b)
#define HMB_PF_CAT_(a, b)	a##b
#define HMB_PF_EACH_0(m, ...)
#define HMB_PF_EACH_1(m, x, ...)	m(x)
#define HMB_PF_EACH_2(m, x, ...)	m(x) HMB_PF_EACH_1(m, __VA_ARGS__)
#define HMB_PF_EACH_3(m, x, ...)	m(x) HMB_PF_EACH_2(m, __VA_ARGS__)
#define HMB_PF_EACH_4(m, x, ...)	m(x) HMB_PF_EACH_3(m, __VA_ARGS__)
#define HMB_PF_EACH_5(m, x, ...)	m(x) HMB_PF_EACH_4(m, __VA_ARGS__)
#define HMB_PF_EACH_6(m, x, ...)	m(x) HMB_PF_EACH_5(m, __VA_ARGS__)
#define HMB_PF_EACH_7(m, x, ...)	m(x) HMB_PF_EACH_6(m, __VA_ARGS__)
#define HMB_PF_EACH_8(m, x, ...)	m(x) HMB_PF_EACH_7(m, __VA_ARGS__)
#define HMB_PF_EACH_9	HMB_PF_EACH_8
#define HMB_PF_EACH_10	HMB_PF_EACH_8
#define HMB_PF_EACH_11	HMB_PF_EACH_8
#define HMB_PF_EACH_12	HMB_PF_EACH_8
#define HMB_PF_EACH_13	HMB_PF_EACH_8
#define HMB_PF_EACH_14	HMB_PF_EACH_8
#define HMB_PF_EACH_15	HMB_PF_EACH_8

#endif /* HMB_TRACE_PRINTF_H */
