// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module's events: the tracepoints (CREATE_TRACE_POINTS), and the
 * writers of hmb_record and hmb_lost into the "hmb" instance.
 *
 * Why hmb_record, hmb_lost and hmb_state are not written through their
 * tracepoints:
 * a record the trace buffer does not take must stay in the firmware ring.
 * A tracepoint cannot say whether the buffer took the event, and trace-cmd
 * enables the events before it turns tracing_on back on (and turns it off
 * before it disables them when it stops): a drain in between would
 * consume records into a buffer that is off. trace_event_buffer_reserve()
 * on the instance's own event file says so (NULL), so the drain can stop
 * and come back, and the firmware ring keeps what was not taken. This is
 * what the generated probe does (trace_event_raw_event_<call>() in
 * trace/trace_events.h), with that answer returned.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/preempt.h>
#include <linux/trace_events.h>

#include "hmb_trace_internal.h"

#define CREATE_TRACE_POINTS
#include "hmb_trace_events.h"

/* For the benchmark module (bench/): the bare tracepoint is its baseline. */
EXPORT_TRACEPOINT_SYMBOL_GPL(hmb_record);

/* The event files of the "hmb" instance (see hmb_trace_events_lookup()). */
static struct trace_event_file *hmb_trace_record_file;
static struct trace_event_file *hmb_trace_lost_file;
static struct trace_event_file *hmb_trace_state_file;

/* Is @file's event enabled and armed in its instance (not soft-disabled)? */
static bool hmb_trace_file_on(const struct trace_event_file *file)
{
	unsigned long flags = READ_ONCE(file->flags);

	return (flags & EVENT_FILE_FL_ENABLED) &&
	       !(flags & EVENT_FILE_FL_SOFT_DISABLED);
}

/**
 * hmb_trace_record_wanted() - is hmb_record enabled in the "hmb" instance?
 *
 * The drain consumes the firmware's rings only while it is (unless the
 * area's consume mode is "always").
 * Return: true if a tracer has hmb_record enabled there.
 */
bool hmb_trace_record_wanted(void)
{
	return hmb_trace_file_on(hmb_trace_record_file);
}

/*
 * Reserve @len bytes for @file's event. Return: the entry, or NULL with
 * *@res saying why: HMB_TRACE_OFF (the event is not enabled there),
 * HMB_TRACE_WRITTEN (filtered out: soft-disabled by a trigger, or by
 * set_event_pid; the tracer chose to drop it), HMB_TRACE_REFUSED (the
 * buffer did not take it).
 * Context: preemption disabled, as in a tracepoint probe.
 */
static void *hmb_trace_reserve(struct trace_event_buffer *fbuffer,
			       struct trace_event_file *file, unsigned long len,
			       enum hmb_trace_write *res)
{
	void *entry;

	if (!hmb_trace_file_on(file)) {
		*res = HMB_TRACE_OFF;
		return NULL;
	}
	*res = HMB_TRACE_WRITTEN;
	if (trace_trigger_soft_disabled(file))
		return NULL;
	entry = trace_event_buffer_reserve(fbuffer, file, len);
	if (!entry)
		*res = HMB_TRACE_REFUSED;
	return entry;
}

/**
 * hmb_trace_write_record() - write one firmware record as hmb_record.
 * @dev: the area's index
 * @rec: the record (payload in the consumer's scratch copy)
 *
 * Return: HMB_TRACE_WRITTEN (or filtered out), HMB_TRACE_REFUSED if the
 * instance's buffer did not take it (tracing_on is 0, or it is full in
 * non-overwrite mode), HMB_TRACE_OFF if hmb_record is not enabled there.
 */
enum hmb_trace_write hmb_trace_write_record(u16 dev,
					    const struct hmb_record *rec)
{
	struct trace_event_raw_hmb_record *entry;
	struct trace_event_buffer fbuffer;
	u32 len = min_t(u32, rec->len, HMB_TRACE_EV_PAYLOAD_MAX);
	enum hmb_trace_write res;

	preempt_disable_notrace();
	entry = hmb_trace_reserve(&fbuffer, hmb_trace_record_file,
				  sizeof(*entry) + len, &res);
	if (entry) {
		HMB_TRACE_RECORD_ASSIGN(entry, dev, rec);
		/* __data_loc: length << 16 | offset from the entry's start */
		entry->__data_loc_payload =
			len << 16 | offsetof(typeof(*entry), __data);
		memcpy(entry->__data, rec->payload, len);
		trace_event_buffer_commit(&fbuffer);
	}
	preempt_enable_notrace();
	return res;
}

/**
 * hmb_trace_write_lost() - write hmb_lost.
 * @dev: the area's index
 * @core: firmware core
 * @count: records lost
 * @reason: enum hmb_lost_reason
 * @at_seq: sequence number of the next record that was not lost
 *
 * Return: as hmb_trace_write_record().
 */
enum hmb_trace_write hmb_trace_write_lost(u16 dev, u16 core, u64 count,
					  u8 reason, u64 at_seq)
{
	struct trace_event_raw_hmb_lost *entry;
	struct trace_event_buffer fbuffer;
	enum hmb_trace_write res;

	preempt_disable_notrace();
	entry = hmb_trace_reserve(&fbuffer, hmb_trace_lost_file,
				  sizeof(*entry), &res);
	if (entry) {
		HMB_TRACE_LOST_ASSIGN(entry, dev, core, count, reason, at_seq);
		trace_event_buffer_commit(&fbuffer);
	}
	preempt_enable_notrace();
	return res;
}

/**
 * hmb_trace_write_state() - write hmb_state.
 * @dev: the area's index
 * @state: enum hmb_trace_ev_state
 * @geo: the geometry of the generation
 * @name: the area's name
 *
 * Return: as hmb_trace_write_record().
 */
enum hmb_trace_write hmb_trace_write_state(u16 dev, u8 state,
					   const struct hmb_geometry *geo,
					   const char *name)
{
	struct trace_event_raw_hmb_state *entry;
	struct trace_event_buffer fbuffer;
	enum hmb_trace_write res;

	preempt_disable_notrace();
	entry = hmb_trace_reserve(&fbuffer, hmb_trace_state_file,
				  sizeof(*entry), &res);
	if (entry) {
		HMB_TRACE_STATE_ASSIGN(entry, dev, state, geo, name);
		trace_event_buffer_commit(&fbuffer);
	}
	preempt_enable_notrace();
	return res;
}

static struct trace_event_file *hmb_trace_file_lookup(const char *instance,
						      const char *event)
{
	struct trace_event_file *file;

	file = trace_get_event_file(instance, "hmb", event);
	if (IS_ERR(file))
		return file;
	/*
	 * trace_get_event_file() also takes a reference on the module that
	 * owns the event, that is on us: kept, rmmod could never succeed.
	 * The file lives as long as both the instance (we hold it: it cannot
	 * be removed) and our events (until we unload), so the pointer stays
	 * valid without the references.
	 */
	trace_put_event_file(file);
	return file;
}

/**
 * hmb_trace_events_lookup() - find our event files in the instance.
 * @instance: the instance's name; the caller holds a reference on it
 *
 * Return: 0 or a negative errno.
 */
int hmb_trace_events_lookup(const char *instance)
{
	struct trace_event_file *rec, *lost, *state;

	rec = hmb_trace_file_lookup(instance, "hmb_record");
	if (IS_ERR(rec))
		return PTR_ERR(rec);
	lost = hmb_trace_file_lookup(instance, "hmb_lost");
	if (IS_ERR(lost))
		return PTR_ERR(lost);
	state = hmb_trace_file_lookup(instance, "hmb_state");
	if (IS_ERR(state))
		return PTR_ERR(state);
	hmb_trace_record_file = rec;
	hmb_trace_lost_file = lost;
	hmb_trace_state_file = state;
	return 0;
}
