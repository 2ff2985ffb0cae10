// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module's events: the tracepoints (CREATE_TRACE_POINTS), and the
 * gate that tells the drain whether the "hmb" instance's buffer takes
 * writes.
 *
 * Every event fires through its tracepoint (trace_hmb_*()), so every
 * consumer of a tracepoint gets it: each instance that enables it, perf,
 * BPF. A tracepoint cannot say whether a buffer took the event. Yet a
 * record the buffer does not take should stay in the firmware ring:
 * trace-cmd enables the events before it turns the instance's tracing_on
 * on (and turns it off before it disables them), and a drain in between
 * would consume records into a buffer that is off. Nothing exported reads
 * an instance's tracing_on (tracing_is_on() is the top-level one), but
 * trace_array_puts() on the instance returns 0 when its buffer did not
 * take the string: that is the gate (hmb_trace_instance_takes()). A
 * probe that succeeds writes one ftrace print line into the instance; one
 * that fails writes nothing. The drain asks before it consumes after a
 * tracer enabled hmb_record, after a quiet spell and once a second while
 * records flow (hmb_trace_drain.c, "The gate"); what a tracer that turns
 * tracing_on off in between loses is said in kernel/hmb_trace/README.md.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/export.h>
#include <linux/kernel.h>
#include <linux/trace.h>

#include "hmb_trace_compat.h"
#include "hmb_trace_internal.h"

#define CREATE_TRACE_POINTS
#include "hmb_trace_events.h"

/* For the benchmark module (bench/): the bare tracepoint is its baseline. */
EXPORT_TRACEPOINT_SYMBOL_GPL(hmb_record);

/* The "hmb" instance; the module holds a reference while it is loaded. */
static struct trace_array *hmb_trace_events_tr;

/* Bumped each time hmb_record gets its first probe (hmb_trace_record_reg()). */
static atomic_t hmb_trace_record_gen = ATOMIC_INIT(0);

/**
 * hmb_trace_events_init() - the instance the gate probes.
 * @tr: the "hmb" instance; the caller holds a reference on it until the
 *	module unloads
 */
void hmb_trace_events_init(struct trace_array *tr)
{
	hmb_trace_events_tr = tr;
}

/**
 * hmb_trace_record_wanted() - has the hmb_record tracepoint a probe?
 *
 * A probe is an instance that enabled the event (the "hmb" instance, the
 * top-level one, any other), a perf event or a BPF program. The drain
 * consumes the firmware's rings only while there is one (unless the
 * area's consume mode is "always").
 * Return: true if someone listens to hmb_record.
 */
bool hmb_trace_record_wanted(void)
{
	return trace_hmb_record_enabled();
}

/**
 * hmb_trace_record_generation() - how many times hmb_record got its first
 * probe: a drain whose gate was opened under another generation asks
 * again (a tracer that stopped and started between two passes).
 * Return: the generation.
 */
unsigned int hmb_trace_record_generation(void)
{
	return atomic_read(&hmb_trace_record_gen);
}

/** hmb_trace_record_generation_next() - hmb_record got its first probe. */
void hmb_trace_record_generation_next(void)
{
	atomic_inc(&hmb_trace_record_gen);
}

/**
 * hmb_trace_instance_takes() - does the "hmb" instance's buffer take writes?
 * @area: the area's name, for the line written
 * @cpu: the CPU whose buffer is asked (the caller's)
 *
 * Writes "hmb_trace: <area> cpu<N>: drain on" into the instance with
 * trace_array_puts(): the buffer takes it unless its tracing_on is 0, it
 * is full in non-overwrite mode, or its "printk" option is off. A kernel
 * without trace_array_puts() (before v6.3 and its stable backports) has
 * no way to ask: the answer is then always yes.
 * Context: may be called with preemption enabled; the line lands in the
 * buffer of the CPU it runs on.
 * Return: true if the buffer took the line.
 */
bool hmb_trace_instance_takes(const char *area, int cpu)
{
	char line[HMB_TRACE_AREA_NAME_LEN + 48];

	snprintf(line, sizeof(line), "hmb_trace: %s cpu%d: drain on\n", area,
		 cpu);
	return hmb_trace_array_puts(hmb_trace_events_tr, line) != 0;
}
