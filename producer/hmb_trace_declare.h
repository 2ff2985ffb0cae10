/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * hmb_trace_declare.h - declare each trace event once; get its payload
 * struct, its dictionary entry and a typed emitter from that declaration.
 *
 * In the manner of the kernel's TRACE_EVENT(): the declarations live in a
 * file of their own (no include guard) that this header includes once per
 * pass, the macros below meaning in each pass something else:
 *
 *   my_events.def    HMB_TRACE_ENUM / HMB_TRACE_VALUES / HMB_TRACE_EVENT /
 *                    HMB_TRACE_EVENT_CLASS / HMB_TRACE_DEFINE_EVENT
 *   my_events.h      #define HMB_TRACE_PREFIX my_
 *                    #define HMB_TRACE_EVENTS "my_events.def"
 *                    #include "hmb_trace_declare.h"
 *   one .c file      #define HMB_TRACE_CREATE_DICTIONARY
 *                    #include "my_events.h"
 *
 * Every includer gets the enums, one packed payload struct per event class
 * (struct my_<class>) and static inline emitters: my_emit_<class>(p, core,
 * id, ts, fields...) for every class, my_trace_<event>(p, core, ts,
 * fields...) for every HMB_TRACE_EVENT. The one file that defines
 * HMB_TRACE_CREATE_DICTIONARY also gets the value-name tables, the field
 * tables and the event table my_events[] / my_nr_events for
 * hmb_trace_producer_config, all const (ROM). A field name, an event name
 * or a format string too long for the dictionary, a role that names no
 * field of the event, are compile-time errors there (a value name too
 * long is refused by hmb_trace_producer_init()).
 * Documentation/hmb-trace-abi.rst, "Declaring events", has a complete
 * example; producer/hmb_trace_declare_example.def is that example, compiled
 * by the unit tests.
 *
 * Freestanding C99 (no libc), also valid C++11. Payloads are stored in the
 * CPU's byte order, which the ABI requires to be little-endian.
 */
#ifndef HMB_TRACE_DECLARE_H
#define HMB_TRACE_DECLARE_H

#include "hmb_trace_producer.h"

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
	__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "hmb_trace_declare.h stores payloads in CPU byte order: little-endian only"
#endif

/* The payload layout is the fields in order, no padding (ABI: unaligned). */
#ifndef HMB_TRACE_PACKED
#define HMB_TRACE_PACKED __attribute__((__packed__))
#endif

/*
 * How the emitters are compiled. By default each call site gets the
 * append's fast path inlined (hmb_trace_reserve(), hmb_trace_commit()):
 * no call, the arguments stored straight into the record. A firmware that
 * prefers smaller call sites over fewer instructions defines it as
 * "static inline" (the compiler then keeps one copy per event and unit).
 */
#ifndef HMB_TRACE_EMITTER
#define HMB_TRACE_EMITTER HMB_TRACE_INLINE
#endif

/* ---- What a declaration file writes ---- */

/*
 * Fields, in payload order, after an event's format. @type is u8, u16,
 * u32, u64, s8, s16, s32 or s64; @display DEC or HEX.
 *   hmb_field(type, name, display)  an integer
 *   hmb_enum(type, name, table)     an integer named by a value table
 *   hmb_flags(type, name, table)    a bit set named by a value table
 *   hmb_string(name, len)           char[len], NUL padded (emitter: a C string)
 *   hmb_bytes(name)                 the rest of the record, last field only
 *                                   (emitter: pointer and name##_len)
 * Each becomes a tuple (kind, C type, TYPE, name, DISPLAY, extra) that the
 * passes below take apart; the type is pasted here, before any macro of
 * the includer's (a "#define u8 ...") can rewrite it.
 */
#define hmb_field(type, name, display) \
	(SCALAR, HMB_DECL_CTYPE_##type, HMB_DECL_TYPE_##type, name, \
	 HMB_TRACE_DISPLAY_##display, 0)
#define hmb_enum(type, name, table) \
	(NAMED, HMB_DECL_CTYPE_##type, HMB_DECL_TYPE_##type, name, \
	 HMB_TRACE_DISPLAY_ENUM, table)
#define hmb_flags(type, name, table) \
	(NAMED, HMB_DECL_CTYPE_##type, HMB_DECL_TYPE_##type, name, \
	 HMB_TRACE_DISPLAY_FLAGS, table)
#define hmb_string(name, len) \
	(STRING, char, HMB_TRACE_TYPE_STRING, name, HMB_TRACE_DISPLAY_DEC, len)
#define hmb_bytes(name) \
	(BYTES, uint8_t, HMB_TRACE_TYPE_BYTES, name, HMB_TRACE_DISPLAY_HEX, 0)

/*
 * Roles: what tools make of an event (ABI "Roles"), naming its fields;
 * "none" where a role has no such field. In the tuple: role, pair_id,
 * key, latency, qid, cid, value, and the command attribution of ABI 1.2
 * (ABI "Command attribution"): kind, tag, resource.
 */
#define HMB_TRACE_INSTANT(latency) \
	(HMB_TRACE_ROLE_INSTANT, 0, none, latency, none, none, none, \
	 HMB_TRACE_CMD_NONE, none, none)
#define HMB_TRACE_BEGIN(pair_id, key) \
	(HMB_TRACE_ROLE_BEGIN, pair_id, key, none, none, none, none, \
	 HMB_TRACE_CMD_NONE, none, none)
#define HMB_TRACE_END(pair_id, key, latency) \
	(HMB_TRACE_ROLE_END, pair_id, key, latency, none, none, none, \
	 HMB_TRACE_CMD_NONE, none, none)
#define HMB_TRACE_COUNTER(value) \
	(HMB_TRACE_ROLE_COUNTER, 0, none, none, none, none, value, \
	 HMB_TRACE_CMD_NONE, none, none)
/* An NVMe command's span: the key is the command id (with the queue id). */
#define HMB_TRACE_CMD_BEGIN(pair_id, qid, cid) \
	(HMB_TRACE_ROLE_BEGIN, pair_id, cid, none, qid, cid, none, \
	 HMB_TRACE_CMD_NONE, none, none)
#define HMB_TRACE_CMD_END(pair_id, qid, cid, latency) \
	(HMB_TRACE_ROLE_END, pair_id, cid, latency, qid, cid, none, \
	 HMB_TRACE_CMD_NONE, none, none)
/* Everything spelled out, for what the shorthands above do not say. */
#define HMB_TRACE_ROLE(role, pair_id, key, latency, qid, cid, value) \
	(HMB_TRACE_ROLE_##role, pair_id, key, latency, qid, cid, value, \
	 HMB_TRACE_CMD_NONE, none, none)

/*
 * Command attribution (ABI 1.2). A command's span that also binds the
 * firmware's own tag to its qid and cid, from this record until the
 * command's END:
 */
#define HMB_TRACE_CMD_BEGIN_TAG(pair_id, qid, cid, tag) \
	(HMB_TRACE_ROLE_BEGIN, pair_id, cid, none, qid, cid, none, \
	 HMB_TRACE_CMD_BIND, tag, none)
/*
 * One record per stage, written when the stage ends, latency = its
 * length in ticks; the command is named by its tag (bound earlier) or, with
 * HMB_TRACE_CMD(), by qid and cid. A STAGE is work for the command, a WAIT
 * waits for the resource whose number is in the field named @resource (the
 * field's name is the resource's kind: "die"), a REWORK is work done again
 * (a read retry) and is its own cause; an ACTIVITY is background work that
 * holds a resource (garbage collection erasing on a die).
 */
#define HMB_TRACE_STAGE(tag, latency) \
	(HMB_TRACE_ROLE_INSTANT, 0, none, latency, none, none, none, \
	 HMB_TRACE_CMD_STAGE, tag, none)
#define HMB_TRACE_WAIT(tag, resource, latency) \
	(HMB_TRACE_ROLE_INSTANT, 0, none, latency, none, none, none, \
	 HMB_TRACE_CMD_WAIT, tag, resource)
#define HMB_TRACE_REWORK(tag, latency) \
	(HMB_TRACE_ROLE_INSTANT, 0, none, latency, none, none, none, \
	 HMB_TRACE_CMD_REWORK, tag, none)
#define HMB_TRACE_ACTIVITY(resource, latency) \
	(HMB_TRACE_ROLE_INSTANT, 0, none, latency, none, none, none, \
	 HMB_TRACE_CMD_ACTIVITY, none, resource)
/* Everything spelled out: a span (BEGIN/END) stage, a stage by qid/cid. */
#define HMB_TRACE_CMD(role, pair_id, key, latency, qid, cid, kind, tag, \
		      resource) \
	(HMB_TRACE_ROLE_##role, pair_id, key, latency, qid, cid, none, \
	 HMB_TRACE_CMD_##kind, tag, resource)

/* ---- Machinery ---- */

#define HMB_DECL_CTYPE_u8	uint8_t
#define HMB_DECL_CTYPE_u16	uint16_t
#define HMB_DECL_CTYPE_u32	uint32_t
#define HMB_DECL_CTYPE_u64	uint64_t
#define HMB_DECL_CTYPE_s8	int8_t
#define HMB_DECL_CTYPE_s16	int16_t
#define HMB_DECL_CTYPE_s32	int32_t
#define HMB_DECL_CTYPE_s64	int64_t
#define HMB_DECL_TYPE_u8	HMB_TRACE_TYPE_U8
#define HMB_DECL_TYPE_u16	HMB_TRACE_TYPE_U16
#define HMB_DECL_TYPE_u32	HMB_TRACE_TYPE_U32
#define HMB_DECL_TYPE_u64	HMB_TRACE_TYPE_U64
#define HMB_DECL_TYPE_s8	HMB_TRACE_TYPE_S8
#define HMB_DECL_TYPE_s16	HMB_TRACE_TYPE_S16
#define HMB_DECL_TYPE_s32	HMB_TRACE_TYPE_S32
#define HMB_DECL_TYPE_s64	HMB_TRACE_TYPE_S64

#define HMB_DECL_CAT(a, b)	HMB_DECL_CAT_(a, b)
#define HMB_DECL_CAT_(a, b)	a##b
/* my_<x> for HMB_TRACE_PREFIX my_. */
#define HMB_DECL_NAME(x)	HMB_DECL_CAT(HMB_TRACE_PREFIX, x)
#define HMB_DECL_UNTUPLE(...)	__VA_ARGS__
/* m applied to the tuple's elements: m(a, b) for args (a, b). */
#define HMB_DECL_CALL(m, args)	m args

/*
 * HMB_DECL_EACH(m, d, x1, x2, ...) - m(d, x1) m(d, x2) ...: up to 32
 * fields an event.
 */
#define HMB_DECL_EACH(m, d, ...) \
	HMB_DECL_EACH_CAT(HMB_DECL_EACH_, HMB_DECL_NARGS(__VA_ARGS__))(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_CAT(a, b)	HMB_DECL_EACH_CAT_(a, b)
#define HMB_DECL_EACH_CAT_(a, b) a##b
#define HMB_DECL_NARGS(...) HMB_DECL_NARGS_(__VA_ARGS__, 32, 31, 30, 29, 28, \
	27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, \
	9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define HMB_DECL_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, \
	a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, \
	a27, a28, a29, a30, a31, a32, n, ...) n
#define HMB_DECL_EACH_1(m, d, x)	m(d, x)
#define HMB_DECL_EACH_2(m, d, x, ...)	m(d, x) HMB_DECL_EACH_1(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_3(m, d, x, ...)	m(d, x) HMB_DECL_EACH_2(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_4(m, d, x, ...)	m(d, x) HMB_DECL_EACH_3(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_5(m, d, x, ...)	m(d, x) HMB_DECL_EACH_4(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_6(m, d, x, ...)	m(d, x) HMB_DECL_EACH_5(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_7(m, d, x, ...)	m(d, x) HMB_DECL_EACH_6(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_8(m, d, x, ...)	m(d, x) HMB_DECL_EACH_7(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_9(m, d, x, ...)	m(d, x) HMB_DECL_EACH_8(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_10(m, d, x, ...)	m(d, x) HMB_DECL_EACH_9(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_11(m, d, x, ...)	m(d, x) HMB_DECL_EACH_10(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_12(m, d, x, ...)	m(d, x) HMB_DECL_EACH_11(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_13(m, d, x, ...)	m(d, x) HMB_DECL_EACH_12(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_14(m, d, x, ...)	m(d, x) HMB_DECL_EACH_13(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_15(m, d, x, ...)	m(d, x) HMB_DECL_EACH_14(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_16(m, d, x, ...)	m(d, x) HMB_DECL_EACH_15(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_17(m, d, x, ...)	m(d, x) HMB_DECL_EACH_16(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_18(m, d, x, ...)	m(d, x) HMB_DECL_EACH_17(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_19(m, d, x, ...)	m(d, x) HMB_DECL_EACH_18(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_20(m, d, x, ...)	m(d, x) HMB_DECL_EACH_19(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_21(m, d, x, ...)	m(d, x) HMB_DECL_EACH_20(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_22(m, d, x, ...)	m(d, x) HMB_DECL_EACH_21(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_23(m, d, x, ...)	m(d, x) HMB_DECL_EACH_22(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_24(m, d, x, ...)	m(d, x) HMB_DECL_EACH_23(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_25(m, d, x, ...)	m(d, x) HMB_DECL_EACH_24(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_26(m, d, x, ...)	m(d, x) HMB_DECL_EACH_25(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_27(m, d, x, ...)	m(d, x) HMB_DECL_EACH_26(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_28(m, d, x, ...)	m(d, x) HMB_DECL_EACH_27(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_29(m, d, x, ...)	m(d, x) HMB_DECL_EACH_28(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_30(m, d, x, ...)	m(d, x) HMB_DECL_EACH_29(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_31(m, d, x, ...)	m(d, x) HMB_DECL_EACH_30(m, d, __VA_ARGS__)
#define HMB_DECL_EACH_32(m, d, x, ...)	m(d, x) HMB_DECL_EACH_31(m, d, __VA_ARGS__)

/* Per field tuple: m_<kind>(d, ctype, TYPE, name, DISPLAY, extra). */
#define HMB_DECL_FIELD(m, d, t)	HMB_DECL_CALL(HMB_DECL_FIELD_, (m, d, HMB_DECL_UNTUPLE t))
#define HMB_DECL_FIELD_(m, d, kind, ct, ty, n, dp, x) m##_##kind(d, ct, ty, n, dp, x)

/* Pass: payload struct members. The BYTES tail is not one. */
#define HMB_DECL_MEMBER(d, t)	HMB_DECL_FIELD(HMB_DECL_MEMBER, d, t)
#define HMB_DECL_MEMBER_SCALAR(d, ct, ty, n, dp, x)	ct n;
#define HMB_DECL_MEMBER_NAMED(d, ct, ty, n, dp, x)	ct n;
#define HMB_DECL_MEMBER_STRING(d, ct, ty, n, dp, x)	char n[x];
#define HMB_DECL_MEMBER_BYTES(d, ct, ty, n, dp, x)

/* Pass: the emitter's parameters, each after a comma. */
#define HMB_DECL_PARAM(d, t)	HMB_DECL_FIELD(HMB_DECL_PARAM, d, t)
#define HMB_DECL_PARAM_SCALAR(d, ct, ty, n, dp, x)	, ct n
#define HMB_DECL_PARAM_NAMED(d, ct, ty, n, dp, x)	, ct n
#define HMB_DECL_PARAM_STRING(d, ct, ty, n, dp, x)	, const char *n
#define HMB_DECL_PARAM_BYTES(d, ct, ty, n, dp, x)	, const void *n, uint32_t n##_len

/* Pass: the same names as arguments. */
#define HMB_DECL_ARG(d, t)	HMB_DECL_FIELD(HMB_DECL_ARG, d, t)
#define HMB_DECL_ARG_SCALAR(d, ct, ty, n, dp, x)	, n
#define HMB_DECL_ARG_NAMED(d, ct, ty, n, dp, x)		, n
#define HMB_DECL_ARG_STRING(d, ct, ty, n, dp, x)	, n
#define HMB_DECL_ARG_BYTES(d, ct, ty, n, dp, x)		, n, n##_len

/* Pass: the emitter's body, packing the arguments into hmb_decl_pl. */
#define HMB_DECL_STORE(d, t)	HMB_DECL_FIELD(HMB_DECL_STORE, d, t)
#define HMB_DECL_STORE_SCALAR(d, ct, ty, n, dp, x)	hmb_decl_pl.n = n;
#define HMB_DECL_STORE_NAMED(d, ct, ty, n, dp, x)	hmb_decl_pl.n = n;
#define HMB_DECL_STORE_STRING(d, ct, ty, n, dp, x) \
	hmb_decl_put_string(hmb_decl_pl.n, n, (uint32_t)sizeof(hmb_decl_pl.n));
#define HMB_DECL_STORE_BYTES(d, ct, ty, n, dp, x) \
	hmb_decl_var = n; hmb_decl_var_len = n##_len;

/*
 * Pass (dictionary): the index struct, one char per field in field order
 * and "none" last, so that offsetof() of a member is its field index: a
 * role names its fields and the compiler finds them (a misspelt name does
 * not compile).
 */
#define HMB_DECL_INDEX(d, t)	HMB_DECL_FIELD(HMB_DECL_INDEX, d, t)
#define HMB_DECL_INDEX_SCALAR(d, ct, ty, n, dp, x)	char n;
#define HMB_DECL_INDEX_NAMED(d, ct, ty, n, dp, x)	char n;
#define HMB_DECL_INDEX_STRING(d, ct, ty, n, dp, x)	char n;
#define HMB_DECL_INDEX_BYTES(d, ct, ty, n, dp, x)	char n;

/* Pass (dictionary): struct hmb_trace_field_desc initialisers. */
#define HMB_DECL_DESC(cls, t)	HMB_DECL_FIELD(HMB_DECL_DESC, cls, t)
#define HMB_DECL_DESC_SCALAR(cls, ct, ty, n, dp, x) \
	{ #n, (uint16_t)offsetof(struct HMB_DECL_NAME(cls), n), \
	  (uint16_t)sizeof(((struct HMB_DECL_NAME(cls) *)0)->n), ty, dp, 0, 0 },
#define HMB_DECL_DESC_STRING	HMB_DECL_DESC_SCALAR
#define HMB_DECL_DESC_NAMED(cls, ct, ty, n, dp, x) \
	{ #n, (uint16_t)offsetof(struct HMB_DECL_NAME(cls), n), \
	  (uint16_t)sizeof(((struct HMB_DECL_NAME(cls) *)0)->n), ty, dp, \
	  HMB_DECL_LEN(HMB_DECL_NAME(values_##x)), HMB_DECL_NAME(values_##x) },
#define HMB_DECL_DESC_BYTES(cls, ct, ty, n, dp, x) \
	{ #n, (uint16_t)sizeof(struct HMB_DECL_NAME(cls)), 0, ty, dp, 0, 0 },

/* Pass (dictionary): compile-time checks of a field. */
#define HMB_DECL_CHECK(cls, t)	HMB_DECL_FIELD(HMB_DECL_CHECK, cls, t)
#define HMB_DECL_CHECK_SCALAR(cls, ct, ty, n, dp, x) \
	HMB_DECL_ASSERT(sizeof(#n) <= HMB_TRACE_FIELD_NAME_LEN, \
			"field name too long: " #n)
#define HMB_DECL_CHECK_NAMED	HMB_DECL_CHECK_SCALAR
#define HMB_DECL_CHECK_STRING	HMB_DECL_CHECK_SCALAR
#define HMB_DECL_CHECK_BYTES(cls, ct, ty, n, dp, x) \
	HMB_DECL_CHECK_SCALAR(cls, ct, ty, n, dp, x) \
	HMB_DECL_ASSERT(offsetof(struct HMB_DECL_NAME(index_##cls), n) + 1 == \
			offsetof(struct HMB_DECL_NAME(index_##cls), none), \
			"hmb_bytes() must be the last field: " #n)

#define HMB_DECL_LEN(a)	((uint16_t)(sizeof(a) / sizeof((a)[0])))

/* A value table no field names is not an error. */
#if defined(__GNUC__)
#define HMB_DECL_MAYBE_UNUSED	__attribute__((__unused__))
#else
#define HMB_DECL_MAYBE_UNUSED
#endif

/* Field @f's index in class @cls, HMB_TRACE_NO_FIELD for "none". */
#define HMB_DECL_IDX(cls, f) \
	((uint8_t)(offsetof(struct HMB_DECL_NAME(index_##cls), f) == \
		   offsetof(struct HMB_DECL_NAME(index_##cls), none) ? \
		   HMB_TRACE_NO_FIELD : \
		   offsetof(struct HMB_DECL_NAME(index_##cls), f)))

#if defined(__cplusplus) && __cplusplus >= 201103L
#define HMB_DECL_ASSERT(cond, msg)	static_assert(cond, msg);
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define HMB_DECL_ASSERT(cond, msg)	_Static_assert(cond, msg);
#else
/* C99: an array of negative size; repeating the declaration is allowed. */
#define HMB_DECL_ASSERT(cond, msg) \
	extern char hmb_decl_assert[(cond) ? 1 : -1];
#endif

/* The events table entry of event @name of class @cls. */
#define HMB_DECL_EVENT_DESC(cls, name, id, fmt, role, pair, key, lat, qid, \
			    cid, val, kind, tag, res) \
	{ (id), (role), HMB_DECL_IDX(cls, key), HMB_DECL_IDX(cls, lat), \
	  HMB_DECL_IDX(cls, qid), HMB_DECL_IDX(cls, cid), \
	  HMB_DECL_IDX(cls, val), (pair), #name, fmt, \
	  HMB_DECL_LEN(HMB_DECL_NAME(fields_##cls)), HMB_DECL_NAME(fields_##cls) },

/* The command attribution table's entry of event @name of class @cls. */
#define HMB_DECL_CMD_DESC(cls, name, id, role, pair, key, lat, qid, cid, val, \
			  kind, tag, res) \
	{ (id), (kind), HMB_DECL_IDX(cls, tag), HMB_DECL_IDX(cls, res) },

#define HMB_DECL_EVENT_CHECK(cls, name, id, role, pair, key, lat, qid, cid, val, \
			     kind, tag, res) \
	HMB_DECL_ASSERT((kind != HMB_TRACE_CMD_WAIT && \
			 kind != HMB_TRACE_CMD_ACTIVITY) || \
			HMB_DECL_IDX(cls, res) != HMB_TRACE_NO_FIELD, \
			"a WAIT or ACTIVITY needs a resource: " #name) \
	HMB_DECL_ASSERT(kind != HMB_TRACE_CMD_BIND || \
			(HMB_DECL_IDX(cls, tag) != HMB_TRACE_NO_FIELD && \
			 HMB_DECL_IDX(cls, qid) != HMB_TRACE_NO_FIELD && \
			 HMB_DECL_IDX(cls, cid) != HMB_TRACE_NO_FIELD), \
			"a BIND needs a tag, a qid and a cid: " #name) \
	HMB_DECL_ASSERT(sizeof(#name) <= HMB_TRACE_NAME_LEN, \
			"event name too long: " #name) \
	HMB_DECL_ASSERT((role != HMB_TRACE_ROLE_BEGIN && \
			 role != HMB_TRACE_ROLE_END) || \
			HMB_DECL_IDX(cls, key) != HMB_TRACE_NO_FIELD, \
			"a BEGIN or END event needs a key: " #name) \
	HMB_DECL_ASSERT(role != HMB_TRACE_ROLE_COUNTER || \
			HMB_DECL_IDX(cls, val) != HMB_TRACE_NO_FIELD, \
			"a COUNTER event needs a value: " #name)

/*
 * The declaration macros mean what pass HMB_DECL_PASS is: 1 (in every
 * includer) enums, payload structs and emitters; 2 (in the file that
 * creates the dictionary) value tables, index structs, checks and field
 * tables; 3 the events table.
 */
#define HMB_DECL_PASS_CAT(a, b)	HMB_DECL_PASS_CAT_(a, b)
#define HMB_DECL_PASS_CAT_(a, b) a##b
#define HMB_DECL_IN_PASS(m)	HMB_DECL_PASS_CAT(m, HMB_DECL_PASS)
#define hmb_value(e, v, n)	HMB_DECL_IN_PASS(HMB_DECL_VALUE_)(e, v, n)
#define hmb_name(v, n)		HMB_DECL_IN_PASS(HMB_DECL_VNAME_)(v, n)
/* The values are juxtaposed hmb_value()s; each pass takes them variadic. */
#define HMB_TRACE_ENUM(type, values) \
	HMB_DECL_IN_PASS(HMB_DECL_ENUM_)(type, values)
#define HMB_TRACE_VALUES(table, values) \
	HMB_DECL_IN_PASS(HMB_DECL_VALUES_)(table, values)
#define HMB_TRACE_EVENT_CLASS(cls, format, ...) \
	HMB_DECL_IN_PASS(HMB_DECL_CLASS_)(cls, format, __VA_ARGS__)
#define HMB_TRACE_DEFINE_EVENT(cls, name, id, role) \
	HMB_DECL_IN_PASS(HMB_DECL_DEFINE_)(cls, name, id, role)
#define HMB_TRACE_EVENT(name, id, role, format, ...) \
	HMB_DECL_IN_PASS(HMB_DECL_EVENT_)(name, id, role, format, __VA_ARGS__)

/* Pass 1: enums, payload structs, emitters. */
#define HMB_DECL_VALUE_1(e, v, n)	e = (v),
#define HMB_DECL_VNAME_1(v, n)
#define HMB_DECL_ENUM_1(type, ...)	enum type { __VA_ARGS__ };
#define HMB_DECL_VALUES_1(table, ...)
#define HMB_DECL_CLASS_1(cls, format, ...)				\
	struct HMB_TRACE_PACKED HMB_DECL_NAME(cls) {			\
		HMB_DECL_EACH(HMB_DECL_MEMBER, ~, __VA_ARGS__)		\
	};								\
	HMB_TRACE_EMITTER int HMB_DECL_NAME(emit_##cls)(			\
		struct hmb_trace_producer *hmb_decl_p, uint16_t hmb_decl_core, \
		uint16_t hmb_decl_id, uint64_t hmb_decl_ts		\
		HMB_DECL_EACH(HMB_DECL_PARAM, ~, __VA_ARGS__))		\
	{								\
		struct HMB_DECL_NAME(cls) hmb_decl_pl;			\
		const void *hmb_decl_var = 0;				\
		uint32_t hmb_decl_var_len = 0;				\
		struct hmb_trace_append hmb_decl_a;			\
		int hmb_decl_err;					\
									\
		HMB_DECL_EACH(HMB_DECL_STORE, ~, __VA_ARGS__)		\
		hmb_decl_err = hmb_trace_reserve(hmb_decl_p, hmb_decl_core, \
			hmb_decl_id, hmb_decl_ts,			\
			(uint32_t)sizeof(hmb_decl_pl), hmb_decl_var_len, \
			&hmb_decl_a);					\
		if (hmb_decl_err)					\
			return hmb_decl_err;				\
		/* The local struct's bytes, stored straight into the record. */ \
		__builtin_memcpy(hmb_trace_payload(&hmb_decl_a), &hmb_decl_pl, \
				 sizeof(hmb_decl_pl));			\
		if (hmb_decl_var_len)					\
			hmb_trace_copy(hmb_trace_payload(&hmb_decl_a) +	\
				       sizeof(hmb_decl_pl), hmb_decl_var, \
				       hmb_decl_var_len);		\
		return hmb_trace_commit(hmb_decl_p, hmb_decl_core, &hmb_decl_a); \
	}
#define HMB_DECL_DEFINE_1(cls, name, id, role)
#define HMB_DECL_EVENT_1(name, id, role, format, ...)			\
	HMB_DECL_CLASS_1(name, format, __VA_ARGS__)			\
	HMB_TRACE_EMITTER int HMB_DECL_NAME(trace_##name)(			\
		struct hmb_trace_producer *hmb_decl_p, uint16_t hmb_decl_core, \
		uint64_t hmb_decl_ts					\
		HMB_DECL_EACH(HMB_DECL_PARAM, ~, __VA_ARGS__))		\
	{								\
		return HMB_DECL_NAME(emit_##name)(hmb_decl_p, hmb_decl_core, \
			(id), hmb_decl_ts				\
			HMB_DECL_EACH(HMB_DECL_ARG, ~, __VA_ARGS__));	\
	}

/* Pass 2: value tables; per class its index struct, checks, fields. */
#define HMB_DECL_VALUE_2(e, v, n)	{ (e), n },
#define HMB_DECL_VNAME_2(v, n)		{ (v), n },
#define HMB_DECL_ENUM_2			HMB_DECL_VALUES_2
#define HMB_DECL_VALUES_2(table, ...)					\
	static const struct hmb_trace_value_desc HMB_DECL_MAYBE_UNUSED	\
	HMB_DECL_NAME(values_##table)[] = { __VA_ARGS__ };
#define HMB_DECL_FIELDS(cls, format, ...)				\
	HMB_DECL_ASSERT(sizeof(format) <= HMB_TRACE_FORMAT_LEN,		\
			"format too long: " #cls)			\
	struct HMB_DECL_NAME(index_##cls) {				\
		HMB_DECL_EACH(HMB_DECL_INDEX, ~, __VA_ARGS__)		\
		char none;						\
	};								\
	HMB_DECL_EACH(HMB_DECL_CHECK, cls, __VA_ARGS__)			\
	static const struct hmb_trace_field_desc HMB_DECL_NAME(fields_##cls)[] = { \
		HMB_DECL_EACH(HMB_DECL_DESC, cls, __VA_ARGS__)		\
	};
/* A class's events find its format by name; an event's is a literal. */
#define HMB_DECL_CLASS_2(cls, format, ...)				\
	HMB_DECL_FIELDS(cls, format, __VA_ARGS__)			\
	static const char HMB_DECL_NAME(format_##cls)[] = format;
#define HMB_DECL_DEFINE_2(cls, name, id, role)				\
	HMB_DECL_CALL(HMB_DECL_EVENT_CHECK, (cls, name, id, HMB_DECL_UNTUPLE role))
#define HMB_DECL_EVENT_2(name, id, role, format, ...)			\
	HMB_DECL_FIELDS(name, format, __VA_ARGS__)			\
	HMB_DECL_DEFINE_2(name, name, id, role)

/* Pass 3: the events table's entries. */
#define HMB_DECL_VALUE_3(e, v, n)
#define HMB_DECL_VNAME_3(v, n)
#define HMB_DECL_ENUM_3(type, ...)
#define HMB_DECL_VALUES_3(table, ...)
#define HMB_DECL_CLASS_3(cls, format, ...)
#define HMB_DECL_DEFINE_3(cls, name, id, role)				\
	HMB_DECL_CALL(HMB_DECL_EVENT_DESC, (cls, name, id,		\
		HMB_DECL_NAME(format_##cls), HMB_DECL_UNTUPLE role))
#define HMB_DECL_EVENT_3(name, id, role, format, ...)			\
	HMB_DECL_CALL(HMB_DECL_EVENT_DESC, (name, name, id, format,	\
		HMB_DECL_UNTUPLE role))

/* Pass 4: the command attribution table's entries (ABI 1.2). */
#define HMB_DECL_VALUE_4(e, v, n)
#define HMB_DECL_VNAME_4(v, n)
#define HMB_DECL_ENUM_4(type, ...)
#define HMB_DECL_VALUES_4(table, ...)
#define HMB_DECL_CLASS_4(cls, format, ...)
#define HMB_DECL_DEFINE_4(cls, name, id, role)				\
	HMB_DECL_CALL(HMB_DECL_CMD_DESC, (cls, name, id, HMB_DECL_UNTUPLE role))
#define HMB_DECL_EVENT_4(name, id, role, format, ...)			\
	HMB_DECL_CALL(HMB_DECL_CMD_DESC, (name, name, id, HMB_DECL_UNTUPLE role))

/* Copy a C string into a char[cap] field: at most cap - 1 bytes, NUL padded. */
static inline void hmb_decl_put_string(char *dst, const char *src,
				       uint32_t cap)
{
	uint32_t i = 0;

	if (src)
		for (; i + 1 < cap && src[i]; i++)
			dst[i] = src[i];
	for (; i < cap; i++)
		dst[i] = 0;
}

#endif /* HMB_TRACE_DECLARE_H */

/* ---- Expanding the includer's declarations (every inclusion) ---- */

#ifndef HMB_TRACE_EVENTS
#error "define HMB_TRACE_EVENTS as the file that declares the events"
#endif
#ifndef HMB_TRACE_PREFIX
#error "define HMB_TRACE_PREFIX, the prefix of the names the declarations make"
#endif

#ifdef __cplusplus
extern "C" {
#endif
#define HMB_DECL_PASS 1
#include HMB_TRACE_EVENTS
#undef HMB_DECL_PASS
/* The dictionary, in declaration order: hmb_trace_producer_config.events. */
extern const struct hmb_trace_event_desc HMB_DECL_NAME(events)[];
extern const uint16_t HMB_DECL_NAME(nr_events);
/* Their command attribution (ABI 1.2): hmb_trace_producer_config.cmds. */
extern const struct hmb_trace_cmd_desc HMB_DECL_NAME(cmds)[];
extern const uint16_t HMB_DECL_NAME(nr_cmds);

#ifdef HMB_TRACE_CREATE_DICTIONARY
#define HMB_DECL_PASS 2
#include HMB_TRACE_EVENTS
#undef HMB_DECL_PASS
const struct hmb_trace_event_desc HMB_DECL_NAME(events)[] = {
#define HMB_DECL_PASS 3
#include HMB_TRACE_EVENTS
#undef HMB_DECL_PASS
};
const uint16_t HMB_DECL_NAME(nr_events) =
	HMB_DECL_LEN(HMB_DECL_NAME(events));
const struct hmb_trace_cmd_desc HMB_DECL_NAME(cmds)[] = {
#define HMB_DECL_PASS 4
#include HMB_TRACE_EVENTS
#undef HMB_DECL_PASS
};
const uint16_t HMB_DECL_NAME(nr_cmds) = HMB_DECL_LEN(HMB_DECL_NAME(cmds));
#undef HMB_TRACE_CREATE_DICTIONARY
#endif /* HMB_TRACE_CREATE_DICTIONARY */
#ifdef __cplusplus
}
#endif

#undef HMB_TRACE_EVENTS
#undef HMB_TRACE_PREFIX
