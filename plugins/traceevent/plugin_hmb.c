// SPDX-License-Identifier: GPL-2.0-only
/*
 * plugin_hmb.c - libtraceevent plugin for the events of system "hmb"
 * (kernel/hmb_trace/hmb_trace_events.h), so that trace-cmd report and
 * KernelShark print firmware records decoded with the firmware's own
 * event dictionary.
 *
 * The dictionary travels in the trace as hmb_dict chunks of up to 1 KiB:
 *
 *   hmb_state(dev, producer_gen, build_id)      attach / reset / periodic
 *   hmb_dict(dev, gen, total_len, offset=0)    ┐
 *   hmb_dict(dev, gen, total_len, offset=1024) │ reassembled here, per dev,
 *   ...                                        ┘ into one buffer of total_len
 *   hmb_record(dev, core, seq, event_id, payload)  decoded with the complete
 *                                                  dictionary of the dev's
 *                                                  current producer_gen
 *
 * hmb_record carries no producer_gen: a dev's current generation is the one
 * of its latest hmb_state(attached|reset), or of its latest complete
 * dictionary when no hmb_state was seen. The module emits hmb_state and
 * the dictionary after a reset before the new generation's records. Until
 * the dictionary of the current generation is complete, a record prints as
 * the kernel prints it: event_id and a hex payload.
 *
 * Every field is read from the event record, which is untrusted: each read
 * is checked against the record's size, chunk offsets against total_len,
 * and total_len is capped at HMB_PLUGIN_DICT_MAX. The state lives per
 * tep_handle and is freed by tep_plugin_unloader().
 *
 * Decoding is the shared decode library (decode/decode_c.h), so this
 * plugin and hmbtrace-cmd print a record identically.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "decode_c.h"

#define HMB_PLUGIN_EXPORT __attribute__((visibility("default")))

/* Largest dictionary reassembled; an hmb_dict claiming more is refused. */
#define HMB_PLUGIN_DICT_MAX	(1u << 20)
/*
 * Bounds on what a crafted trace can make the plugin hold: devs tracked
 * (the module numbers areas from 0), and bytes of all dictionaries being
 * reassembled at once.
 */
#define HMB_PLUGIN_DEVS_MAX	256
#define HMB_PLUGIN_ASSEMBLY_MAX	(8u << 20)
/* Sizes of the fixed arrays of hmb_state and hmb_dict. */
#define HMB_PLUGIN_BUILD_ID_LEN	20
#define HMB_PLUGIN_NAME_LEN	32
/* Longest decoded text taken from hmb_dict_format(); longer is cut. */
#define HMB_PLUGIN_TEXT_MAX	4096

/* hmb_state.state values (enum hmb_trace_ev_state, ABI for decoders). */
enum {
	HMB_STATE_ATTACHED = 0,
	HMB_STATE_RESET = 1,
	HMB_STATE_PRODUCER_INIT = 2,
	HMB_STATE_BROKEN = 3,
	HMB_STATE_DETACHED = 4,
};

static const char *const hmb_state_names[] = {
	[HMB_STATE_ATTACHED] = "attached",
	[HMB_STATE_RESET] = "reset",
	[HMB_STATE_PRODUCER_INIT] = "producer_init",
	[HMB_STATE_BROKEN] = "broken",
	[HMB_STATE_DETACHED] = "detached",
};

/*
 * A dictionary being reassembled. Invariant: buf and have are both NULL
 * (idle) or sized for total_len bytes / bits; covered counts the bits set
 * in have, so covered == total_len means every byte arrived.
 */
struct hmb_assembly {
	uint32_t producer_gen;
	uint32_t total_len;
	uint32_t covered;
	uint8_t build_id[HMB_PLUGIN_BUILD_ID_LEN];
	uint8_t *buf;
	uint8_t *have;		/* one bit per byte of buf */
};

/* What is known about one dev (one trace area). */
struct hmb_dev {
	struct hmb_dev *next;
	uint16_t dev;
	/* Current generation: records are decoded only with its dictionary. */
	bool have_gen;
	uint32_t gen;
	/* build_id of the latest hmb_state, for state_gen. */
	bool have_state;
	uint32_t state_gen;
	uint8_t state_build_id[HMB_PLUGIN_BUILD_ID_LEN];
	/* Latest complete dictionary; dict is NULL if it did not parse. */
	bool have_dict;
	uint32_t dict_gen;
	uint8_t dict_build_id[HMB_PLUGIN_BUILD_ID_LEN];
	struct hmb_dict *dict;
	struct hmb_assembly asm_;
};

/* The plugin's state for one tep_handle; the handlers' context. */
struct hmb_plugin {
	struct hmb_plugin *next;
	struct tep_handle *tep;
	struct hmb_dev *devs;
	unsigned int nr_devs;
	/* Sum of total_len over the devs' assemblies in progress. */
	unsigned long long assembly_bytes;
};

/* All loaded instances, so that the unloader finds its tep's state. */
static struct hmb_plugin *hmb_plugins;

static struct tep_plugin_option hmb_plugin_options[] = {
	{
		.name = "hex",
		.plugin_alias = "hmb",
		.description = "also print the raw payload of decoded hmb_record events as hex",
		.set = 0,
	},
	{ .name = NULL },
};

static struct tep_plugin_option *hmb_opt_hex = &hmb_plugin_options[0];

/* ---- bounds-checked field access ---------------------------------------- */

/* An integer field, if the record holds all of its bytes. */
static bool hmb_field_u64(struct tep_event *event, struct tep_record *record,
			  const char *name, unsigned long long *val)
{
	struct tep_format_field *f = tep_find_field(event, name);

	if (!f || f->size <= 0 || f->size > 8 || f->offset < 0 ||
	    record->size < 0 ||
	    (unsigned int)f->offset + (unsigned int)f->size >
		    (unsigned int)record->size)
		return false;
	return tep_read_number_field(f, record->data, val) == 0;
}

/*
 * A fixed or dynamic (__data_loc) array field, if every byte of it lies
 * inside the record. Unlike tep_get_field_raw(), the data_loc word is
 * checked: it comes from the kernel's copy of device data and its length
 * from a device-controlled value.
 */
static bool hmb_field_array(struct tep_event *event, struct tep_record *record,
			    const char *name, const uint8_t **data,
			    unsigned int *len)
{
	struct tep_format_field *f = tep_find_field(event, name);
	unsigned long long size = record->size < 0 ? 0 : record->size;
	unsigned long long off, n;

	if (!f || f->offset < 0 || f->size < 0 ||
	    (unsigned long long)f->offset + f->size > size)
		return false;
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		unsigned long long loc;

		if (f->size != 4 || tep_read_number_field(f, record->data,
							  &loc))
			return false;
		off = loc & 0xffff;
		n = loc >> 16;
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			off += (unsigned long long)f->offset + f->size;
	} else {
		off = f->offset;
		n = f->size;
	}
	if (off > size || n > size - off)
		return false;
	*data = (const uint8_t *)record->data + off;
	*len = (unsigned int)n;
	return true;
}

/* ---- state ---------------------------------------------------------------- */

static struct hmb_dev *hmb_dev_get(struct hmb_plugin *p, uint16_t dev)
{
	struct hmb_dev *d;

	for (d = p->devs; d; d = d->next)
		if (d->dev == dev)
			return d;
	if (p->nr_devs >= HMB_PLUGIN_DEVS_MAX)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->dev = dev;
	d->next = p->devs;
	p->devs = d;
	p->nr_devs++;
	return d;
}

static void hmb_assembly_reset(struct hmb_plugin *p, struct hmb_assembly *a)
{
	if (a->buf)
		p->assembly_bytes -= a->total_len;
	free(a->buf);
	free(a->have);
	memset(a, 0, sizeof(*a));
}

static void hmb_dev_free_all(struct hmb_plugin *p)
{
	struct hmb_dev *d = p->devs;

	while (d) {
		struct hmb_dev *next = d->next;

		hmb_assembly_reset(p, &d->asm_);
		hmb_dict_free(d->dict);
		free(d);
		d = next;
	}
}

/* The dictionary to decode @d's records with, or NULL. */
static const struct hmb_dict *hmb_dev_dict(const struct hmb_dev *d)
{
	if (!d || !d->have_dict || !d->dict || !d->have_gen ||
	    d->dict_gen != d->gen)
		return NULL;
	return d->dict;
}

/* ---- printing helpers ----------------------------------------------------- */

static void hmb_print_hex(struct trace_seq *s, const uint8_t *p,
			  unsigned int len, const char *sep)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		trace_seq_printf(s, "%s%02x", i ? sep : "", p[i]);
}

/* ---- hmb_record ----------------------------------------------------------- */

static int hmb_record_handler(struct trace_seq *s, struct tep_record *record,
			      struct tep_event *event, void *context)
{
	struct hmb_plugin *p = context;
	unsigned long long seq, fw_ts, dev, core, id, len;
	const uint8_t *payload = NULL;
	unsigned int plen = 0;
	const struct hmb_dict *dict;
	struct hmb_dev *d = NULL;
	char stack_text[256];
	char *text = stack_text;
	const char *name;
	int n;

	if (!hmb_field_u64(event, record, "seq", &seq) ||
	    !hmb_field_u64(event, record, "fw_ts", &fw_ts) ||
	    !hmb_field_u64(event, record, "dev", &dev) ||
	    !hmb_field_u64(event, record, "core", &core) ||
	    !hmb_field_u64(event, record, "event_id", &id) ||
	    !hmb_field_u64(event, record, "len", &len) ||
	    !hmb_field_array(event, record, "payload", &payload, &plen)) {
		trace_seq_printf(s, "[hmb: malformed hmb_record, %d bytes]",
				 record->size);
		return 0;
	}

	trace_seq_printf(s, "dev=%llu core=%llu seq=%llu fw_ts=%llu ", dev,
			 core, seq, fw_ts);

	/* Look up only: a record alone never allocates state. */
	for (d = p ? p->devs : NULL; d; d = d->next)
		if (d->dev == dev)
			break;
	dict = hmb_dev_dict(d);
	if (!dict)
		goto raw;

	n = hmb_dict_format(dict, (uint16_t)id, payload, plen, stack_text,
			    sizeof(stack_text));
	if (n < 0)
		goto raw;
	if ((size_t)n >= sizeof(stack_text)) {
		size_t want = (size_t)n + 1;

		if (want > HMB_PLUGIN_TEXT_MAX)
			want = HMB_PLUGIN_TEXT_MAX;
		text = malloc(want);
		if (!text) {
			text = stack_text;
		} else if (hmb_dict_format(dict, (uint16_t)id, payload, plen,
					   text, want) < 0) {
			free(text);
			goto raw;
		}
	}
	name = hmb_dict_event_name(dict, (uint16_t)id);
	if (name)
		trace_seq_printf(s, "%s: %s", name, text);
	else
		trace_seq_puts(s, text);  /* "unknown event <id> ..." */
	if (text != stack_text)
		free(text);
	if (len != plen)
		trace_seq_printf(s, " [payload cut: len=%llu, %u bytes kept]",
				 len, plen);
	if (hmb_opt_hex->set) {
		trace_seq_puts(s, " payload=");
		hmb_print_hex(s, payload, plen, "");
	}
	return 0;

raw:
	/* As the kernel's print fmt renders it (__print_hex). */
	trace_seq_printf(s, "event_id=%llu len=%llu payload=", id, len);
	hmb_print_hex(s, payload, plen, " ");
	return 0;
}

/* ---- hmb_state ------------------------------------------------------------ */

static void hmb_print_name(struct trace_seq *s, const uint8_t *name,
			   unsigned int len)
{
	unsigned int i;

	for (i = 0; i < len && name[i]; i++) {
		if (name[i] >= 0x20 && name[i] < 0x7f && name[i] != '\\')
			trace_seq_putc(s, name[i]);
		else
			trace_seq_printf(s, "\\x%02x", name[i]);
	}
}

static int hmb_state_handler(struct trace_seq *s, struct tep_record *record,
			     struct tep_event *event, void *context)
{
	struct hmb_plugin *p = context;
	unsigned long long dev, state, gen, nr_cores, clock_hz;
	const uint8_t *build_id, *name;
	unsigned int build_id_len, name_len;
	struct hmb_dev *d;

	if (!hmb_field_u64(event, record, "dev", &dev) ||
	    !hmb_field_u64(event, record, "state", &state) ||
	    !hmb_field_u64(event, record, "producer_gen", &gen) ||
	    !hmb_field_u64(event, record, "nr_cores", &nr_cores) ||
	    !hmb_field_u64(event, record, "clock_hz", &clock_hz) ||
	    !hmb_field_array(event, record, "build_id", &build_id,
			     &build_id_len) ||
	    build_id_len != HMB_PLUGIN_BUILD_ID_LEN ||
	    !hmb_field_array(event, record, "name", &name, &name_len)) {
		trace_seq_printf(s, "[hmb: malformed hmb_state, %d bytes]",
				 record->size);
		return 0;
	}

	trace_seq_printf(s, "dev=%llu name=", dev);
	hmb_print_name(s, name, name_len);
	if (state < sizeof(hmb_state_names) / sizeof(hmb_state_names[0]))
		trace_seq_printf(s, " state=%s", hmb_state_names[state]);
	else
		trace_seq_printf(s, " state=%llu", state);
	trace_seq_printf(s, " producer_gen=%llu build_id=", gen);
	hmb_print_hex(s, build_id, build_id_len, "");
	trace_seq_printf(s, " nr_cores=%llu clock_hz=%llu", nr_cores,
			 clock_hz);

	/* Only attached and reset describe a valid generation. */
	if (state != HMB_STATE_ATTACHED && state != HMB_STATE_RESET)
		return 0;
	d = p ? hmb_dev_get(p, (uint16_t)dev) : NULL;
	if (!d)
		return 0;
	d->have_state = true;
	d->state_gen = (uint32_t)gen;
	memcpy(d->state_build_id, build_id, HMB_PLUGIN_BUILD_ID_LEN);
	d->have_gen = true;
	d->gen = (uint32_t)gen;
	if (d->have_dict && d->dict_gen == d->gen &&
	    memcmp(d->dict_build_id, build_id, HMB_PLUGIN_BUILD_ID_LEN)) {
		trace_seq_puts(s, " [build_id mismatch: dictionary has ");
		hmb_print_hex(s, d->dict_build_id, HMB_PLUGIN_BUILD_ID_LEN, "");
		trace_seq_putc(s, ']');
	}
	return 0;
}

/* ---- hmb_dict ------------------------------------------------------------- */

/* Marks [off, off + n) as received; returns how many bytes were new. */
static uint32_t hmb_assembly_cover(struct hmb_assembly *a, uint32_t off,
				   uint32_t n)
{
	uint32_t i, added = 0;

	for (i = off; i < off + n; i++) {
		uint8_t bit = (uint8_t)(1u << (i & 7));

		if (!(a->have[i >> 3] & bit)) {
			a->have[i >> 3] |= bit;
			added++;
		}
	}
	return added;
}

/*
 * Adds one chunk; prints its outcome after the event's fields. A complete
 * dictionary replaces @d's previous one and makes its generation current.
 */
static void hmb_dict_add_chunk(struct trace_seq *s, struct hmb_plugin *p,
			       struct hmb_dev *d, uint32_t gen, uint32_t total_len, uint32_t off,
			       const uint8_t *build_id, const uint8_t *chunk,
			       unsigned int len)
{
	struct hmb_assembly *a = &d->asm_;
	char err[128];

	if (total_len == 0 || total_len > HMB_PLUGIN_DICT_MAX) {
		trace_seq_printf(s, " [bad chunk: total_len %u not in 1..%u]",
				 total_len, HMB_PLUGIN_DICT_MAX);
		return;
	}
	if (off > total_len || len > total_len - off) {
		trace_seq_printf(s, " [bad chunk: offset+len %llu > total_len %u]",
				 (unsigned long long)off + len, total_len);
		return;
	}
	/*
	 * Already known: the periodic re-emission of the same dictionary, or
	 * another CPU's late copy of it while the next one is assembled.
	 */
	if (d->have_dict && d->dict_gen == gen &&
	    !memcmp(d->dict_build_id, build_id, HMB_PLUGIN_BUILD_ID_LEN))
		return;

	if (a->buf && (a->producer_gen != gen || a->total_len != total_len ||
		       memcmp(a->build_id, build_id, HMB_PLUGIN_BUILD_ID_LEN))) {
		trace_seq_printf(s, " [restarting dictionary: had %u of %u bytes of producer_gen %u]",
				 a->covered, a->total_len, a->producer_gen);
		hmb_assembly_reset(p, a);
	}
	if (!a->buf) {
		if (p->assembly_bytes + total_len > HMB_PLUGIN_ASSEMBLY_MAX) {
			trace_seq_printf(s, " [bad chunk: over %u bytes of dictionaries in progress]",
					 HMB_PLUGIN_ASSEMBLY_MAX);
			return;
		}
		a->buf = malloc(total_len);
		a->have = calloc((total_len + 7) / 8, 1);
		if (!a->buf || !a->have) {
			hmb_assembly_reset(p, a);
			trace_seq_puts(s, " [out of memory]");
			return;
		}
		a->producer_gen = gen;
		a->total_len = total_len;
		p->assembly_bytes += total_len;
		a->covered = 0;
		memcpy(a->build_id, build_id, HMB_PLUGIN_BUILD_ID_LEN);
	}
	memcpy(a->buf + off, chunk, len);
	a->covered += hmb_assembly_cover(a, off, len);
	if (a->covered < a->total_len)
		return;

	hmb_dict_free(d->dict);
	d->dict = hmb_dict_parse(a->buf, a->total_len, err, sizeof(err));
	d->have_dict = true;
	d->dict_gen = gen;
	memcpy(d->dict_build_id, build_id, HMB_PLUGIN_BUILD_ID_LEN);
	hmb_assembly_reset(p, a);
	d->have_gen = true;
	d->gen = gen;
	if (d->dict)
		trace_seq_printf(s, " [dictionary complete: %zu events]",
				 hmb_dict_nr_events(d->dict));
	else
		trace_seq_printf(s, " [dictionary invalid: %s]", err);
}

static int hmb_dict_handler(struct trace_seq *s, struct tep_record *record,
			    struct tep_event *event, void *context)
{
	struct hmb_plugin *p = context;
	unsigned long long dev, gen, total_len, off;
	const uint8_t *build_id, *chunk;
	unsigned int build_id_len, len;
	struct hmb_dev *d;

	if (!hmb_field_u64(event, record, "dev", &dev) ||
	    !hmb_field_u64(event, record, "producer_gen", &gen) ||
	    !hmb_field_u64(event, record, "total_len", &total_len) ||
	    !hmb_field_u64(event, record, "offset", &off) ||
	    !hmb_field_array(event, record, "build_id", &build_id,
			     &build_id_len) ||
	    build_id_len != HMB_PLUGIN_BUILD_ID_LEN ||
	    !hmb_field_array(event, record, "chunk", &chunk, &len)) {
		trace_seq_printf(s, "[hmb: malformed hmb_dict, %d bytes]",
				 record->size);
		return 0;
	}

	trace_seq_printf(s, "dev=%llu producer_gen=%llu build_id=", dev, gen);
	hmb_print_hex(s, build_id, build_id_len, "");
	trace_seq_printf(s, " total_len=%llu offset=%llu len=%u", total_len,
			 off, len);

	d = p ? hmb_dev_get(p, (uint16_t)dev) : NULL;
	if (!d) {
		trace_seq_printf(s, " [ignored: more than %u devs]",
				 HMB_PLUGIN_DEVS_MAX);
		return 0;
	}
	if (d->have_state && d->state_gen == gen &&
	    memcmp(d->state_build_id, build_id, HMB_PLUGIN_BUILD_ID_LEN)) {
		trace_seq_puts(s, " [build_id mismatch: hmb_state has ");
		hmb_print_hex(s, d->state_build_id, HMB_PLUGIN_BUILD_ID_LEN, "");
		trace_seq_putc(s, ']');
	}
	/* The fields are u32 in the format; a wider one is malformed. */
	if (gen > UINT32_MAX || total_len > UINT32_MAX || off > UINT32_MAX) {
		trace_seq_puts(s, " [bad chunk: field out of range]");
		return 0;
	}
	hmb_dict_add_chunk(s, p, d, (uint32_t)gen, (uint32_t)total_len,
			   (uint32_t)off, build_id, chunk, len);
	return 0;
}

/* ---- loader / unloader ---------------------------------------------------- */

static const struct {
	const char *name;
	tep_event_handler_func func;
} hmb_handlers[] = {
	{ "hmb_record", hmb_record_handler },
	{ "hmb_state", hmb_state_handler },
	{ "hmb_dict", hmb_dict_handler },
};

#define HMB_NR_HANDLERS (sizeof(hmb_handlers) / sizeof(hmb_handlers[0]))

HMB_PLUGIN_EXPORT int tep_plugin_loader(struct tep_handle *tep)
{
	struct hmb_plugin *p = calloc(1, sizeof(*p));
	size_t i;

	if (!p)
		return -1;
	p->tep = tep;
	for (i = 0; i < HMB_NR_HANDLERS; i++)
		tep_register_event_handler(tep, -1, "hmb", hmb_handlers[i].name,
					   hmb_handlers[i].func, p);
	/* Options are process-wide: registered by the first instance only. */
	if (!hmb_plugins)
		tep_plugin_add_options("hmb", hmb_plugin_options);
	p->next = hmb_plugins;
	hmb_plugins = p;
	return 0;
}

HMB_PLUGIN_EXPORT int tep_plugin_unloader(struct tep_handle *tep)
{
	struct hmb_plugin **pp, *p;
	size_t i;

	for (pp = &hmb_plugins; *pp; pp = &(*pp)->next)
		if ((*pp)->tep == tep)
			break;
	p = *pp;
	if (!p)
		return 0;
	*pp = p->next;
	for (i = 0; i < HMB_NR_HANDLERS; i++)
		tep_unregister_event_handler(tep, -1, "hmb",
					     hmb_handlers[i].name,
					     hmb_handlers[i].func, p);
	if (!hmb_plugins)
		tep_plugin_remove_options(hmb_plugin_options);
	hmb_dev_free_all(p);
	free(p);
	return 0;
}
