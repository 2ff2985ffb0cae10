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
 *   hmb_dict(dev, gen, total_len, offset=1024) │ reassembled per (dev, gen)
 *   ...                                        ┘
 *   hmb_record(dev, core, seq, event_id, payload)  decoded with the
 *                                                  dictionary of its
 *                                                  generation
 *
 * Everything here is shared with hmbtrace-cmd, so that the two print the
 * same text for the same record: the events' fields are read, with every
 * read checked against the untrusted record, by decode/hmb_events.h;
 * reassembly and the rule that picks the dictionary of a record (the
 * generation of the last hmb_state of the record's dev on its CPU) by
 * decode/dictionary_set.h through decode_c.h; the text by
 * hmb_dict_format(). The plugin sees the trace once, in order, so a
 * record that comes before its dictionary prints as the kernel prints it:
 * event_id and a hex payload.
 *
 * Firmware time: hmb_clock events carry the module's fits of each
 * (dev, producer_gen)'s firmware clock to the trace clock. Each record
 * line ends its decoded text with the record's fw_ts converted by the
 * latest fit of its generation (decode/clock_set.h, the same rule and
 * text as hmbtrace-cmd's): "fw_time=<s> ±<bound>", or "fw_time=? (<why>)".
 * The module publishes a fit per host trace clock (hmb_clock.clock); the
 * plugin converts with the fits of the clock option hmb:clock names
 * ("local" unless -O hmb:clock=mono: libtraceevent 1.7 tells a plugin
 * nothing about the capture's clock), and with no other.
 * A trace whose formats lack hmb_clock (a module before clock fits) has
 * nothing to convert with, and its lines stay as they were. A record of a
 * retimed capture (hmbtrace-cmd retime) already has its converted time as
 * its timestamp: it is not converted again, and says how long after that
 * time it was drained: "retimed ±<bound> drain=+<delay>". State lives
 * per tep_handle and is freed by tep_plugin_unloader().
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "decode_c.h"
#include "hmb_events.h"
#include "hmb_trace_events_abi.h"

#define HMB_PLUGIN_EXPORT __attribute__((visibility("default")))

/* Longest decoded text taken from hmb_dict_format(); longer is cut. */
#define HMB_PLUGIN_TEXT_MAX	4096
/* Longest message from the dictionary set printed after an event. */
#define HMB_PLUGIN_MSG_MAX	512

static const char *const hmb_state_names[] = {
	HMB_ABI_NAMES(HMB_TRACE_EV_STATE_LIST)
};

/* The plugin's state for one tep_handle; the handlers' context. */
struct hmb_plugin {
	struct hmb_plugin *next;
	struct tep_handle *tep;
	struct hmb_event_set events;	/* looked up at the first event */
	struct hmb_dict_set *dicts;
	struct hmb_clock_set *clocks;
	const char *clock;	/* the hmb:clock value @clocks converts to */
	bool dict_file_tried;	/* hmb:dictionary was read (or failed) */
	bool dict_file_used;	/* ... and @dicts has it */
	char dict_file_error[HMB_PLUGIN_MSG_MAX];  /* why not; printed once */
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
	{
		.name = "fw_time",
		.plugin_alias = "hmb",
		.description = "print hmb_record's firmware time on the trace clock, with its bound",
		.set = 1,
	},
	{
		.name = "clock",
		.plugin_alias = "hmb",
		.description = "the capture's trace clock (trace-cmd report cannot tell a plugin): firmware time is converted with the module's fits to this clock",
		.value = "local",
	},
	{
		.name = "dictionary",
		.plugin_alias = "hmb",
		.description = "a dictionary file (hmbtrace-cmd dict) with the firmware's tokenized printf events; default $HMB_TRACE_DICTIONARY",
		.value = "",	/* a string option: libtraceevent needs a value */
	},
	{ .name = NULL },
};

static struct tep_plugin_option *hmb_opt_hex = &hmb_plugin_options[0];
static struct tep_plugin_option *hmb_opt_fw_time = &hmb_plugin_options[1];
static struct tep_plugin_option *hmb_opt_clock = &hmb_plugin_options[2];
static struct tep_plugin_option *hmb_opt_dictionary = &hmb_plugin_options[3];

/*
 * The clock set converts to the clock hmb:clock names (options are parsed
 * before the trace is read, so this is the first event's value); a fit of
 * another clock is skipped.
 */
static void hmb_follow_clock_option(struct hmb_plugin *p)
{
	char why[HMB_PLUGIN_MSG_MAX];

	if (p->clock == hmb_opt_clock->value)
		return;
	p->clock = hmb_opt_clock->value;
	hmb_clock_set_trace_clock(p->clocks, p->clock, why, sizeof(why));
}

/*
 * The dictionary file hmb:dictionary names (else $HMB_TRACE_DICTIONARY),
 * read once, at the first hmb event: options are set when the plugin
 * registers them, before the trace is read, and the file must be there
 * before the first dictionary completes. A file that cannot be used is
 * said on stderr and, once, on the first event's line.
 */
static void hmb_follow_dictionary_option(struct hmb_plugin *p)
{
	const char *path = hmb_opt_dictionary->value;

	if (p->dict_file_tried)
		return;
	p->dict_file_tried = true;
	if (!path || !path[0])
		path = getenv("HMB_TRACE_DICTIONARY");
	if (!path || !path[0])
		return;
	if (hmb_dict_set_use_file(p->dicts, path, p->dict_file_error,
				  sizeof(p->dict_file_error)) >= 0) {
		p->dict_file_used = true;
		return;
	}
	fprintf(stderr, "hmb: dictionary file not used: %s\n", p->dict_file_error);
}

/* ---- reading an event ----------------------------------------------------- */

/*
 * Decodes @record into @ev with the checks of hmb_events.h; false if it
 * is malformed (a line saying so is printed) or not an hmb event.
 */
static bool hmb_read_event(struct trace_seq *s, struct hmb_plugin *p,
			   struct tep_event *event, struct tep_record *record,
			   struct hmb_capture_event *ev)
{
	if (!p->events.tep)
		hmb_event_set_init(&p->events, event->tep);
	hmb_follow_dictionary_option(p);
	if (p->dict_file_error[0]) {
		trace_seq_printf(s, "[hmb: dictionary file not used: %s] ",
				 p->dict_file_error);
		p->dict_file_error[0] = '\0';
	}
	if (!hmb_event_set_decode(&p->events, record, record->cpu, ev))
		return false;
	if (ev->kind == HMB_CAPTURE_MALFORMED) {
		trace_seq_printf(s, "[hmb: malformed %s, %d bytes: %s]",
				 event->name, record->size,
				 ev->malformed_reason);
		return false;
	}
	return true;
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

/* " fw_time=..." after a record's text, if the trace can say it. */
static void hmb_print_fw_time(struct trace_seq *s, struct hmb_plugin *p,
			      const struct hmb_capture_event *ev)
{
	char text[HMB_PLUGIN_MSG_MAX];

	if (!hmb_opt_fw_time->set)
		return;
	if (ev->retimed) {
		/* Its timestamp is its converted time already (hmbtrace-cmd retime). */
		if (hmb_retimed_record_time(ev->ts, ev->retime_flags, ev->retime_miss,
					    ev->retime_bound_ns, ev->drain_ts, text,
					    sizeof(text)) >= 0)
			trace_seq_printf(s, " %s", text);
		return;
	}
	if (!ev->clock_format)
		return;
	hmb_follow_clock_option(p);
	if (hmb_clock_set_record_time(p->clocks, ev->dev,
				      hmb_dict_set_generation(p->dicts, ev->dev,
							      ev->cpu),
				      ev->fw_ts, text, sizeof(text)) >= 0)
		trace_seq_printf(s, " %s", text);
}

/*
 * After a record whose id the dictionary lacks: the sites of a firmware's
 * tokenized printf are not in the trace when it keeps them in a file.
 */
static void hmb_print_not_in_dict(struct trace_seq *s, struct hmb_plugin *p,
				  const struct hmb_capture_event *ev)
{
	if (p->dict_file_used && hmb_dict_set_file_used(p->dicts, ev->dev, ev->cpu))
		trace_seq_puts(s, " [not in the trace's dictionary nor the file's]");
	else if (p->dict_file_used)
		trace_seq_puts(s, " [not in the trace's dictionary; the dictionary file is of another build: refused]");
	else
		trace_seq_puts(s, " [not in the trace's dictionary: printf sites kept in a file? -O hmb:dictionary=FILE]");
}

static int hmb_record_handler(struct trace_seq *s, struct tep_record *record,
			      struct tep_event *event, void *context)
{
	struct hmb_plugin *p = context;
	struct hmb_capture_event ev;
	const struct hmb_dict *dict;
	char stack_text[256];
	char *text = stack_text;
	const char *name;
	int n;

	if (!p || !hmb_read_event(s, p, event, record, &ev))
		return 0;

	trace_seq_printf(s, "dev=%u core=%u seq=%llu fw_ts=%llu ", ev.dev,
			 ev.core, (unsigned long long)ev.seq,
			 (unsigned long long)ev.fw_ts);

	dict = hmb_dict_set_lookup(p->dicts, ev.dev, ev.cpu);
	if (!dict)
		goto raw;
	n = hmb_dict_format(dict, ev.event_id, ev.data, ev.data_len, stack_text,
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
		} else if (hmb_dict_format(dict, ev.event_id, ev.data,
					   ev.data_len, text, want) < 0) {
			free(text);
			goto raw;
		}
	}
	name = hmb_dict_event_name(dict, ev.event_id);
	if (name)
		trace_seq_printf(s, "%s: %s", name, text);
	else
		trace_seq_puts(s, text);  /* "unknown event <id> ..." */
	if (!name)
		hmb_print_not_in_dict(s, p, &ev);
	if (text != stack_text)
		free(text);
	hmb_print_fw_time(s, p, &ev);
	if (ev.len != ev.data_len)
		trace_seq_printf(s, " [payload cut: len=%u, %u bytes kept]",
				 ev.len, ev.data_len);
	if (hmb_opt_hex->set) {
		trace_seq_puts(s, " payload=");
		hmb_print_hex(s, ev.data, ev.data_len, "");
	}
	return 0;

raw:
	/* As the kernel's print fmt renders it (__print_hex). */
	trace_seq_printf(s, "event_id=%u len=%u payload=", ev.event_id, ev.len);
	hmb_print_hex(s, ev.data, ev.data_len, " ");
	hmb_print_fw_time(s, p, &ev);
	return 0;
}

/* ---- hmb_state ------------------------------------------------------------ */

static void hmb_print_name(struct trace_seq *s, const char *name)
{
	const unsigned char *c;

	for (c = (const unsigned char *)name; *c; c++) {
		if (*c >= 0x20 && *c < 0x7f && *c != '\\')
			trace_seq_putc(s, (char)*c);
		else
			trace_seq_printf(s, "\\x%02x", *c);
	}
}

/* Prints the dictionary set's message about an event, if any. */
static void hmb_print_result(struct trace_seq *s, int result, const char *msg)
{
	if (result != HMB_DICT_SET_NOTHING && msg[0])
		trace_seq_printf(s, " [%s]", msg);
}

static int hmb_state_handler(struct trace_seq *s, struct tep_record *record,
			     struct tep_event *event, void *context)
{
	struct hmb_plugin *p = context;
	struct hmb_capture_event ev;
	char msg[HMB_PLUGIN_MSG_MAX];
	int result;

	if (!p || !hmb_read_event(s, p, event, record, &ev))
		return 0;

	trace_seq_printf(s, "dev=%u name=", ev.dev);
	hmb_print_name(s, ev.name);
	if (ev.state < sizeof(hmb_state_names) / sizeof(hmb_state_names[0]))
		trace_seq_printf(s, " state=%s", hmb_state_names[ev.state]);
	else
		trace_seq_printf(s, " state=%u", ev.state);
	trace_seq_printf(s, " producer_gen=%u build_id=", ev.producer_gen);
	hmb_print_hex(s, ev.build_id, HMB_CAPTURE_BUILD_ID_LEN, "");
	trace_seq_printf(s, " nr_cores=%u clock_hz=%llu", ev.nr_cores,
			 (unsigned long long)ev.clock_hz);

	result = hmb_dict_set_add_state(p->dicts, ev.dev, ev.cpu, ev.state,
					ev.producer_gen, ev.build_id, msg,
					sizeof(msg));
	hmb_print_result(s, result, msg);
	hmb_clock_set_add_state(p->clocks, ev.dev, ev.producer_gen,
				ev.clock_hz);
	return 0;
}

/* ---- hmb_dict ------------------------------------------------------------- */

static int hmb_dict_handler(struct trace_seq *s, struct tep_record *record,
			    struct tep_event *event, void *context)
{
	struct hmb_plugin *p = context;
	struct hmb_capture_event ev;
	struct hmb_dict_chunk chunk;
	char msg[HMB_PLUGIN_MSG_MAX];
	int result;

	if (!p || !hmb_read_event(s, p, event, record, &ev))
		return 0;

	trace_seq_printf(s, "dev=%u producer_gen=%u build_id=", ev.dev,
			 ev.producer_gen);
	hmb_print_hex(s, ev.build_id, HMB_CAPTURE_BUILD_ID_LEN, "");
	trace_seq_printf(s, " total_len=%u offset=%u len=%u", ev.total_len,
			 ev.offset, ev.data_len);

	chunk.dev = ev.dev;
	chunk.producer_gen = ev.producer_gen;
	chunk.build_id = ev.build_id;
	chunk.total_len = ev.total_len;
	chunk.offset = ev.offset;
	chunk.data = ev.data;
	chunk.len = ev.data_len;
	result = hmb_dict_set_add_chunk(p->dicts, &chunk, msg, sizeof(msg));
	hmb_print_result(s, result, msg);
	return 0;
}

/* ---- hmb_clock ------------------------------------------------------------ */


static int hmb_clock_handler(struct trace_seq *s, struct tep_record *record,
			     struct tep_event *event, void *context)
{
	struct hmb_plugin *p = context;
	struct hmb_capture_event ev;
	char text[HMB_PLUGIN_TEXT_MAX];

	if (!p || !hmb_read_event(s, p, event, record, &ev))
		return 0;
	hmb_follow_clock_option(p);
	/* Fed whether or not fw_time is printed: the option may change. */
	hmb_clock_set_add_fit(p->clocks, ev.dev, ev.producer_gen, &ev.clock,
			      ev.clock_flags, ev.clock_id, text, sizeof(text));
	trace_seq_puts(s, text);
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
	{ "hmb_clock", hmb_clock_handler },
};

#define HMB_NR_HANDLERS (sizeof(hmb_handlers) / sizeof(hmb_handlers[0]))

HMB_PLUGIN_EXPORT int tep_plugin_loader(struct tep_handle *tep)
{
	struct hmb_plugin *p = calloc(1, sizeof(*p));
	size_t i;

	if (!p)
		return -1;
	p->dicts = hmb_dict_set_alloc();
	p->clocks = hmb_clock_set_alloc();
	if (!p->dicts || !p->clocks) {
		hmb_dict_set_free(p->dicts);
		hmb_clock_set_free(p->clocks);
		free(p);
		return -1;
	}
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
	hmb_dict_set_free(p->dicts);
	hmb_clock_set_free(p->clocks);
	free(p);
	return 0;
}
