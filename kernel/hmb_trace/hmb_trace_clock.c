// SPDX-License-Identifier: GPL-2.0-only
/*
 * Firmware time on the host clocks: sync samples over the control channel,
 * the policy (clock/hmb_clock_sync.c: which sample joins the window, when
 * the fit is stale), the fit (clock/hmb_clock_fit.c), and its publication
 * in-band.
 *
 * Every HMB_TRACE_SYNC_PERIOD_MS a burst of HMB_CLOCK_SYNC_BURST sync
 * requests. Each request is bracketed by every trace clock of
 * HMB_TRACE_CLOCK_LIST (hmb_trace_clock_stamp()), and each clock has its
 * own policy and fit: a module cannot learn which trace_clock an instance
 * (or the top level, whose nvme events a capture joins) uses, so it fits
 * them all and says in each hmb_clock which clock the fit is for; a
 * converter uses the fits of the capture's clock (Documentation/design.rst,
 * decision 7). Changing an instance's trace_clock therefore needs no refit:
 * the fits of the new clock are already there, and are re-published.
 *
 * "local" is per CPU (sched_clock(), not synchronised across CPUs where
 * it is unstable): the work is queued on one CPU (@cpu), and a sample
 * whose local stamps were not both read there is no local sample. If the
 * work finds itself elsewhere (its CPU went offline), the local window
 * restarts on the CPU it runs on.
 *
 * Each fit it makes is an hmb_clock event (so every capture can be
 * converted), is repeated with each drain's metadata (so a capture has one
 * before its first record), and the local one is in the status files. A
 * firmware reset (new generation) restarts every window. A fit the policy
 * marks stale (bursts no longer answered) is re-published as such once a
 * second: its bound still grows with the distance from its window, and
 * converters say it is stale.
 *
 * When. The control channel is quiet unless asked: bursts run only while
 * the area is consumed (a tracer has hmb_record enabled in the instance,
 * or consume mode "always"; hmb_trace_area_consuming()), so a device
 * nobody traces gets no command from us. A run starts when tracing starts
 * (hmb_trace_clock_kick() from the tracepoint's reg callback, consume
 * "always", a new control channel while tracing): its bursts come every
 * HMB_TRACE_SYNC_FAST_MS (jiffies: 8 ms at HZ=250) until every trace
 * clock has a fit (HMB_CLOCK_FIT_MIN samples; at least
 * HMB_TRACE_SYNC_FAST_BURSTS bursts, at most HMB_TRACE_FIRST_FIT_NS),
 * then one every HMB_TRACE_SYNC_PERIOD_MS. Meanwhile the drains hold
 * their first records back (hmb_trace_clock_ready()), so a capture has
 * its fit, on whichever clock it uses, before its first record. The hold
 * is bounded twice: by HMB_TRACE_FIRST_FIT_NS, and by the ring (a drain
 * delivers once a core it drains is half full, hmb_trace_drain.c: waiting
 * for a fit never costs a record). A loaded controller answers the first
 * requests late (timeouts under a TCG guest's I/O burst at the start of a
 * capture: ~1 s), which is why the bound is seconds, not one period. The
 * same happens after a firmware reset (a new generation needs its own
 * fit). The run ends at the first burst after tracing stopped.
 * Between runs the window and the last fit are kept: a fit stays true
 * while the device is not reset, its bound growing with the distance from
 * its window (clock/hmb_clock_fit.h), and the next run's samples join the
 * same window.
 *
 * One exception, for the crash dump (hmb_trace_dump.c): an area that has
 * a dump and gets its control channel (at attach, and again after every
 * controller reset) while nobody traces gets one calibration run
 * (hmb_trace_clock_calibrate()): the same fast bursts, ending as soon as
 * every trace clock has its first fit of the generation (at least
 * HMB_TRACE_SYNC_FAST_BURSTS bursts), then HMB_TRACE_CALIBRATE_SPREAD
 * bursts further and further apart (a longer window: a smaller slope
 * error, so a dump taken hours later still has a useful bound); in any
 * case after
 * HMB_TRACE_CALIBRATE_BURSTS answered bursts, HMB_TRACE_CALIBRATE_NS, or
 * when the device stops answering (as a tracing run gives up). Nothing
 * periodic follows: the channel is quiet again until tracing starts, and
 * a dump taken later of that generation has a fit whose bound grows with
 * the distance from its window. Without it, a dump of a device nobody
 * traced has no fit and its records no host time. coredump_kb=0 (no
 * dump) leaves the channel silent from the load on.
 *
 * A device that stops answering: after HMB_TRACE_SYNC_GIVE_UP bursts in
 * a row with no answer (or none sent: nvme-pci keeps an unanswered
 * command in flight and refuses the next until it completes or the
 * controller resets), over at least HMB_TRACE_SYNC_GIVE_UP_NS, the sync
 * stops, says so once in the kernel log and
 * in ctrl/sync, and starts again only when tracing starts again.
 *
 * The work runs on hmb_trace_wq (WQ_MEM_RECLAIM: nvme-pci's reset path
 * cancels it), on the first drain's CPU, a housekeeping CPU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/sched/clock.h>
#include <linux/timekeeping.h>
#include <linux/trace_clock.h>
#include <linux/workqueue.h>

#include "hmb_clock_sync.h"
#include "hmb_trace_events.h"
#include "hmb_trace_internal.h"

#define HMB_TRACE_SYNC_PERIOD_MS	100
#define HMB_TRACE_SYNC_TIMEOUT_US	5000
/* The first bursts of a run, this often: a fit needs HMB_CLOCK_FIT_MIN. */
#define HMB_TRACE_SYNC_FAST_MS		5
#define HMB_TRACE_SYNC_FAST_BURSTS	(HMB_CLOCK_FIT_MIN + 1)
/*
 * Bursts in a row with no answer, and for this long (the fast bursts of a
 * run's start come 8 ms apart): the sync stops until tracing restarts.
 */
#define HMB_TRACE_SYNC_GIVE_UP		10
#define HMB_TRACE_SYNC_GIVE_UP_NS	(10ULL * HMB_TRACE_SYNC_PERIOD_MS * NSEC_PER_MSEC)
/*
 * A tracer's reg callback runs before its event is marked enabled: a run
 * kicked then keeps going this long before it believes nobody traces.
 */
#define HMB_TRACE_SYNC_GRACE_NS		(50 * NSEC_PER_MSEC)
/*
 * The drains hold their first records back at most this long for a fit
 * (and less if a ring fills), and the fast bursts last at most this long.
 */
#define HMB_TRACE_FIRST_FIT_NS		(2 * NSEC_PER_SEC)
/*
 * A calibration run's answered bursts at most (HMB_CLOCK_SYNC_BURST
 * requests each; a first fit needs HMB_TRACE_SYNC_FAST_BURSTS, but a
 * burst whose round trips were slow, a preempted vCPU, does not count:
 * 8 were not enough on a loaded TCG host), and its length at most: a
 * controller loaded with I/O right after its reset answers the first
 * requests late (timeouts for ~1 s under TCG), and a
 * request that timed out keeps the next ones from being sent. One that
 * does not answer at all ends it sooner (HMB_TRACE_SYNC_GIVE_UP).
 */
#define HMB_TRACE_CALIBRATE_BURSTS	32
#define HMB_TRACE_CALIBRATE_NS		(10 * NSEC_PER_SEC)
/*
 * After its first fit, a calibration run spreads this many more bursts
 * HMB_TRACE_SYNC_PERIOD_MS, then twice, four times ... that apart (25.5 s
 * in all): a window of a few fast bursts spans ~30 ms, and its slope's
 * error (~2000 ppm measured) would make a dump's bound grow by 2 ms per
 * second since; over 25 s it falls to the tolerance's floor.
 */
#define HMB_TRACE_CALIBRATE_SPREAD	8

static const char *const hmb_trace_sync_state_names[] = {
	[HMB_TRACE_SYNC_IDLE] = "idle",
	[HMB_TRACE_SYNC_RUNNING] = "running",
	[HMB_TRACE_SYNC_NO_ANSWER] = "stopped: no answer",
};

static const char *const hmb_trace_clock_names[HMB_TRACE_CLOCK_NR] = {
	HMB_ABI_NAMES(HMB_TRACE_CLOCK_LIST)
};

/* The generation and clock rate drains[0] is attached to; false if none. */
static bool hmb_trace_clock_geometry(struct hmb_trace_area *a, u32 *gen,
				     u64 *clock_hz)
{
	struct hmb_trace_drain *d = a->drains[0];
	bool attached;

	mutex_lock(&d->lock);
	attached = d->c.state == HMB_CONSUMER_ATTACHED;
	*gen = d->c.geo.producer_gen;
	*clock_hz = d->c.geo.clock_hz;
	mutex_unlock(&d->lock);
	return attached;
}

/*
 * The per-CPU and software clocks, read with preemption off so that
 * @t->cpu is the CPU of the "local" stamp. @after: reverse order, "local"
 * first.
 */
static void hmb_trace_clock_stamp_cpu(struct hmb_trace_stamps *t, bool after)
{
	u64 *ns = t->ns;

	preempt_disable();
	t->cpu = smp_processor_id();
	if (after) {
		ns[HMB_TRACE_CLOCK_LOCAL] = trace_clock_local();
		ns[HMB_TRACE_CLOCK_PERF] = trace_clock();
		ns[HMB_TRACE_CLOCK_GLOBAL] = trace_clock_global();
	} else {
		ns[HMB_TRACE_CLOCK_GLOBAL] = trace_clock_global();
		ns[HMB_TRACE_CLOCK_PERF] = trace_clock();
		ns[HMB_TRACE_CLOCK_LOCAL] = trace_clock_local();
	}
	preempt_enable();
}

/*
 * The timekeeping clocks. "boot" and "tai" are "mono" plus the
 * timekeeper's offsets, as ktime_get_boot_fast_ns() and
 * ktime_get_tai_fast_ns() add them: derived from the one mono read, they
 * cost no clocksource read of their own (the HPET under TCG: ~2 us each).
 */
static void hmb_trace_clock_stamp_tk(struct hmb_trace_stamps *t, bool after)
{
	u64 *ns = t->ns;
	ktime_t mono;

	if (after) {
		ns[HMB_TRACE_CLOCK_MONO] = ktime_get_mono_fast_ns();
		ns[HMB_TRACE_CLOCK_MONO_RAW] = ktime_get_raw_fast_ns();
	} else {
		ns[HMB_TRACE_CLOCK_MONO_RAW] = ktime_get_raw_fast_ns();
		ns[HMB_TRACE_CLOCK_MONO] = ktime_get_mono_fast_ns();
	}
	mono = ns_to_ktime(ns[HMB_TRACE_CLOCK_MONO]);
	ns[HMB_TRACE_CLOCK_BOOT] =
		ktime_to_ns(ktime_mono_to_any(mono, TK_OFFS_BOOT));
	ns[HMB_TRACE_CLOCK_TAI] =
		ktime_to_ns(ktime_mono_to_any(mono, TK_OFFS_TAI));
}

/**
 * hmb_trace_clock_stamp() - read every trace clock a fit is kept for.
 * @t: the stamps (out)
 * @after: false right before a sync request is posted, true right after
 *	its answer is seen
 *
 * Before the request the clocks are read in one order, after it in the
 * reverse, so that every clock's [t0, t1] contains the moment the device
 * latched its tick, and "local" (the instances' default, innermost) keeps
 * the tightest bracket: its round trip is what it was when it was the
 * only clock read.
 *
 * Context: any; does not sleep.
 */
void hmb_trace_clock_stamp(struct hmb_trace_stamps *t, bool after)
{
	if (after) {
		hmb_trace_clock_stamp_cpu(t, true);
		hmb_trace_clock_stamp_tk(t, true);
	} else {
		hmb_trace_clock_stamp_tk(t, false);
		hmb_trace_clock_stamp_cpu(t, false);
	}
}

static void hmb_trace_clock_burst(struct hmb_trace_area *a,
				  struct hmb_trace_burst *b)
{
	static const u64 arg[4];
	unsigned int i;
	int ret;

	b->n = 0;
	for (i = 0; i < HMB_CLOCK_SYNC_BURST; i++) {
		u64 val[4];

		ret = hmb_trace_ctrl_call(a, HMB_CTRL_OP_SYNC, arg, val,
					  &b->t0[b->n], &b->t1[b->n],
					  HMB_TRACE_SYNC_TIMEOUT_US);
		if (ret == -EBUSY || ret == -ENODEV)
			break;
		if (ret != HMB_CTRL_OK)
			continue;
		b->tick[b->n++] = val[0];
	}
}

/*
 * The burst's samples of clock @id into @s; how many. A "local" sample
 * counts only if both its stamps were read on @cpu.
 */
static unsigned int hmb_trace_clock_samples(const struct hmb_trace_burst *b,
					    unsigned int id, int cpu,
					    struct hmb_clock_sample *s)
{
	unsigned int i, n = 0;

	for (i = 0; i < b->n; i++) {
		if (id == HMB_TRACE_CLOCK_LOCAL &&
		    (b->t0[i].cpu != cpu || b->t1[i].cpu != cpu))
			continue;
		s[n].t0 = b->t0[i].ns[id];
		s[n].t1 = b->t1[i].ns[id];
		s[n++].tick = b->tick[i];
	}
	return n;
}

/* The CPU the work runs on: the first drain's, a housekeeping CPU. */
static int hmb_trace_clock_cpu(struct hmb_trace_area *a)
{
	return READ_ONCE(a->drains[0]->cpu);
}

/* Has every trace clock a fit of the current generation? Under k->lock. */
static bool hmb_trace_clock_all_fit(struct hmb_trace_clock *k)
{
	unsigned int id;

	lockdep_assert_held(&k->lock);
	if (!k->have_gen)
		return false;
	for (id = 0; id < HMB_TRACE_CLOCK_NR; id++)
		if (!k->sync[id].have_fit)
			return false;
	return true;
}

/*
 * Is a run still wanted? Under k->lock. Ends it (state idle) when nobody
 * has traced since the grace after its kick.
 */
static bool hmb_trace_clock_wanted(struct hmb_trace_area *a)
{
	struct hmb_trace_clock *k = &a->clock;

	lockdep_assert_held(&k->lock);
	if (k->state != HMB_TRACE_SYNC_RUNNING)
		return false;
	if (hmb_trace_area_consuming(a))
		return true;
	if (k->calibrating) {
		/* Until the first fit of the generation, bounded. */
		bool fit = k->run_bursts >= HMB_TRACE_SYNC_FAST_BURSTS &&
			   hmb_trace_clock_all_fit(k);

		if (k->calib_answered < HMB_TRACE_CALIBRATE_BURSTS &&
		    (fit ? k->calib_spread < HMB_TRACE_CALIBRATE_SPREAD :
		     local_clock() - k->started < HMB_TRACE_CALIBRATE_NS))
			return true;
		k->calibrating = false;
	} else if (local_clock() - k->started < HMB_TRACE_SYNC_GRACE_NS) {
		return true;
	}
	WRITE_ONCE(k->state, HMB_TRACE_SYNC_IDLE);
	return false;
}

/* One step of clock @id's policy, and the hmb_clock it asks for. */
static void hmb_trace_clock_step(struct hmb_trace_area *a,
				 const struct hmb_trace_burst *b,
				 unsigned int id, u64 clock_hz)
{
	struct hmb_trace_clock *k = &a->clock;
	struct hmb_clock_sync *y = &k->sync[id];
	struct hmb_clock_sample s[HMB_CLOCK_SYNC_BURST];
	unsigned int n, act;

	lockdep_assert_held(&k->lock);
	n = hmb_trace_clock_samples(b, id, k->cpu, s);
	act = hmb_clock_sync_step(y, s, n, hmb_clock_nominal_mult(clock_hz),
				  READ_ONCE(a->tun.clock_tolerance_ppm));
	/* Unanswered bursts are unanswered on every clock: warn once. */
	if (id == HMB_TRACE_CLOCK_LOCAL && (act & HMB_CLOCK_SYNC_WENT_STALE))
		pr_warn_ratelimited("%s: clock sync: no answer for %u bursts: the last fit is stale\n",
				    a->name, y->failing);
	if (act & HMB_CLOCK_SYNC_CONTRADICTED)
		pr_warn_ratelimited("%s: clock sync: no clock within %u ppm runs through the samples on trace clock %s (firmware SYNC answers that are not its clock at the request?): window restarted, %llu so far\n",
				    a->name,
				    READ_ONCE(a->tun.clock_tolerance_ppm),
				    hmb_trace_clock_names[id], y->contradicted);
	if (act & HMB_CLOCK_SYNC_NEW_FIT)
		trace_hmb_clock(a->index, k->gen, id, &y->fit, 0);
	if (act & HMB_CLOCK_SYNC_PUBLISH_STALE)
		trace_hmb_clock(a->index, k->gen, id, &y->fit,
				HMB_CLOCK_FL_STALE);
}

static void hmb_trace_clock_work(struct work_struct *work)
{
	struct hmb_trace_clock *k = container_of(to_delayed_work(work),
						 struct hmb_trace_clock,
						 work);
	struct hmb_trace_area *a = container_of(k, struct hmb_trace_area,
						clock);
	/* Not on the stack (~550 bytes): the work never runs twice at once. */
	struct hmb_trace_burst *b = &k->burst;
	unsigned int id, ms;
	bool wanted, fast = true;
	u64 clock_hz;
	u32 gen;

	mutex_lock(&k->lock);
	wanted = hmb_trace_clock_wanted(a);
	mutex_unlock(&k->lock);
	if (!wanted)
		return;
	if (!hmb_trace_clock_geometry(a, &gen, &clock_hz))
		goto again;
	hmb_trace_clock_burst(a, b);

	if (k->have_gen && k->gen != gen) {
		/* A firmware reset restores its defaults: what it acked is gone. */
		mutex_lock(&a->ctrl.lock);
		a->ctrl.tracing = -1;
		a->ctrl.ring_mode = -1;
		a->ctrl.have_mask = false;
		a->ctrl.have_freeze_config = false;
		mutex_unlock(&a->ctrl.lock);
	}
	mutex_lock(&k->lock);
	if (!k->have_gen || k->gen != gen) {
		for (id = 0; id < HMB_TRACE_CLOCK_NR; id++)
			hmb_clock_sync_restart(&k->sync[id]);
		k->have_gen = true;
		k->gen = gen;
		/* The new generation's first fit comes as fast as a run's. */
		k->run_bursts = 0;
		WRITE_ONCE(k->started, local_clock());
	}
	if (b->n && b->t0[0].cpu != k->cpu) {
		/*
		 * The first burst, or the first drain moved (its CPU went
		 * offline): "local" is another CPU's clock from here on.
		 */
		WRITE_ONCE(k->cpu, b->t0[0].cpu);
		hmb_clock_sync_restart(&k->sync[HMB_TRACE_CLOCK_LOCAL]);
	}
	for (id = 0; id < HMB_TRACE_CLOCK_NR; id++)
		hmb_trace_clock_step(a, b, id, clock_hz);
	k->run_bursts++;
	k->silent = b->n ? 0 : k->silent + 1;
	if (b->n) {
		k->answered = local_clock();
		k->calib_answered += k->calibrating;
	}
	/* Fast until every clock has its first fit, within the bound. */
	fast = k->run_bursts < HMB_TRACE_SYNC_FAST_BURSTS ||
	       (!hmb_trace_clock_all_fit(k) &&
		local_clock() - k->started < HMB_TRACE_FIRST_FIT_NS);
	if (k->silent >= HMB_TRACE_SYNC_GIVE_UP &&
	    local_clock() - k->answered >= HMB_TRACE_SYNC_GIVE_UP_NS &&
	    k->state == HMB_TRACE_SYNC_RUNNING) {
		WRITE_ONCE(k->state, HMB_TRACE_SYNC_NO_ANSWER);
		pr_warn("%s: clock sync stopped: no answer to %u bursts in a row; it starts again when tracing starts\n",
			a->name, k->silent);
	}
	ms = fast ? HMB_TRACE_SYNC_FAST_MS : HMB_TRACE_SYNC_PERIOD_MS;
	if (k->calibrating && !fast && hmb_trace_clock_all_fit(k)) {
		/* Spread out: the window grows, the slope's error falls. */
		ms = HMB_TRACE_SYNC_PERIOD_MS << min(k->calib_spread, 10u);
		k->calib_spread++;
	}
	mutex_unlock(&k->lock);
	goto queue;
again:
	ms = fast ? HMB_TRACE_SYNC_FAST_MS : HMB_TRACE_SYNC_PERIOD_MS;
queue:
	if (!READ_ONCE(k->stopping) &&
	    READ_ONCE(k->state) == HMB_TRACE_SYNC_RUNNING)
		queue_delayed_work_on(hmb_trace_clock_cpu(a), hmb_trace_wq,
				      &k->work, msecs_to_jiffies(ms));
}

/* A run of the sync from now: its bursts, answers and silence start over. */
static void hmb_trace_clock_start_run(struct hmb_trace_clock *k)
{
	lockdep_assert_held(&k->lock);
	k->run_bursts = 0;
	k->silent = 0;
	WRITE_ONCE(k->started, local_clock());
	k->answered = k->started;
	WRITE_ONCE(k->state, HMB_TRACE_SYNC_RUNNING);
}

/**
 * hmb_trace_clock_kick() - tracing started (or the area got a channel):
 * start a run of the sync if someone traces and none runs.
 * @a: the area
 * @tracing_started: a tracer enabled hmb_record or consume became
 *	"always": start even though the event may not be marked enabled
 *	yet, and after a sync that gave up
 *
 * Context: process context (takes the clock's mutex).
 */
void hmb_trace_clock_kick(struct hmb_trace_area *a, bool tracing_started)
{
	struct hmb_trace_clock *k = &a->clock;
	bool queue = false;

	if (READ_ONCE(k->stopping) || !READ_ONCE(a->ctrl.ops))
		return;
	if (!tracing_started && !hmb_trace_area_consuming(a))
		return;
	mutex_lock(&k->lock);
	if (tracing_started && k->calibrating) {
		/* Tracing takes the calibration run over: a run from now. */
		k->calibrating = false;
		WRITE_ONCE(k->started, local_clock());
	}
	if (k->state == HMB_TRACE_SYNC_IDLE ||
	    (tracing_started && k->state == HMB_TRACE_SYNC_NO_ANSWER)) {
		hmb_trace_clock_start_run(k);
		queue = true;
	}
	mutex_unlock(&k->lock);
	if (queue)
		queue_delayed_work_on(hmb_trace_clock_cpu(a), hmb_trace_wq,
				      &k->work, 0);
}

/**
 * hmb_trace_clock_calibrate() - the area got its control channel: a run
 * of the sync if someone traces, else, if the area has a crash dump, one
 * calibration run that ends at the generation's first fit (above).
 * @a: the area
 *
 * Context: process context (takes the clock's mutex).
 */
void hmb_trace_clock_calibrate(struct hmb_trace_area *a)
{
	struct hmb_trace_clock *k = &a->clock;
	bool queue = false;

	if (READ_ONCE(k->stopping) || !READ_ONCE(a->ctrl.ops))
		return;
	if (hmb_trace_area_consuming(a) || !a->dump) {
		hmb_trace_clock_kick(a, false);
		return;
	}
	mutex_lock(&k->lock);
	if (k->state == HMB_TRACE_SYNC_IDLE) {
		k->calibrating = true;
		k->calib_answered = 0;
		k->calib_spread = 0;
		hmb_trace_clock_start_run(k);
		queue = true;
	}
	mutex_unlock(&k->lock);
	if (queue)
		queue_delayed_work_on(hmb_trace_clock_cpu(a), hmb_trace_wq,
				      &k->work, 0);
}

/**
 * hmb_trace_clock_ready() - may a drain deliver records of @gen now?
 * @a: the area
 * @gen: the generation the drain is attached to
 *
 * While a run of the sync has no fit of @gen on every trace clock yet
 * (a capture may be on any of them) and began less than
 * HMB_TRACE_FIRST_FIT_NS ago, no: a capture's first records would have no
 * fit before them. Always yes without a channel or a running sync. The
 * drain also delivers when its ring fills (hmb_trace_drain.c).
 *
 * Context: process context, under the drain's lock (lock order: a drain's
 * lock, then the clock's).
 * Return: true if the drain may deliver.
 */
bool hmb_trace_clock_ready(struct hmb_trace_area *a, u32 gen)
{
	struct hmb_trace_clock *k = &a->clock;
	bool ready, other_gen;

	if (!READ_ONCE(a->ctrl.ops) ||
	    READ_ONCE(k->state) != HMB_TRACE_SYNC_RUNNING)
		return true;
	mutex_lock(&k->lock);
	other_gen = k->have_gen && k->gen != gen;
	ready = !other_gen && hmb_trace_clock_all_fit(k);
	if (!ready && !other_gen &&
	    local_clock() - k->started >= HMB_TRACE_FIRST_FIT_NS)
		ready = true;
	mutex_unlock(&k->lock);
	/* The sync has not seen the new generation yet: a burst now. */
	if (other_gen)
		mod_delayed_work_on(hmb_trace_clock_cpu(a), hmb_trace_wq,
				    &k->work, 0);
	return ready;
}

/**
 * hmb_trace_clock_sync_state() - what ctrl/sync shows.
 * @a: the area
 * Return: "idle", "running" or "stopped: no answer".
 */
const char *hmb_trace_clock_sync_state(struct hmb_trace_area *a)
{
	int state = READ_ONCE(a->clock.state);

	if (!READ_ONCE(a->ctrl.ops))
		return "idle";
	return hmb_trace_sync_state_names[state];
}

/**
 * hmb_trace_clock_emit() - the current fits of @gen, one per trace clock,
 * into this CPU's buffer (with a drain's metadata), if there are any.
 * @a: the area
 * @gen: the generation the drain is in
 */
void hmb_trace_clock_emit(struct hmb_trace_area *a, u32 gen)
{
	struct hmb_trace_clock *k = &a->clock;
	unsigned int id;

	mutex_lock(&k->lock);
	for (id = 0; id < HMB_TRACE_CLOCK_NR; id++) {
		struct hmb_clock_sync *y = &k->sync[id];

		if (y->have_fit && k->gen == gen)
			trace_hmb_clock(a->index, k->gen, id, &y->fit,
					y->stale ? HMB_CLOCK_FL_STALE : 0);
	}
	mutex_unlock(&k->lock);
}

/** hmb_trace_clock_init() - no samples, no fit. */
void hmb_trace_clock_init(struct hmb_trace_area *a)
{
	unsigned int id;

	mutex_init(&a->clock.lock);
	INIT_DELAYED_WORK(&a->clock.work, hmb_trace_clock_work);
	for (id = 0; id < HMB_TRACE_CLOCK_NR; id++)
		hmb_clock_sync_init(&a->clock.sync[id]);
	a->clock.cpu = -1;
}

/**
 * hmb_trace_clock_stop() - no sample after this returns.
 * @a: the area
 *
 * Context: may be called from nvme-pci's reset path: it waits only for
 * the work on hmb_trace_wq (WQ_MEM_RECLAIM), whose request gives up when
 * the channel goes (hmb_trace_ctrl_going()).
 */
void hmb_trace_clock_stop(struct hmb_trace_area *a)
{
	WRITE_ONCE(a->clock.stopping, true);
	cancel_delayed_work_sync(&a->clock.work);
	WRITE_ONCE(a->clock.state, HMB_TRACE_SYNC_IDLE);
}

/** hmb_trace_clock_resume() - after a stop: a run at the next kick. */
void hmb_trace_clock_resume(struct hmb_trace_area *a)
{
	WRITE_ONCE(a->clock.stopping, false);
}

/** hmb_trace_clock_destroy() - free what init set up. */
void hmb_trace_clock_destroy(struct hmb_trace_area *a)
{
	mutex_destroy(&a->clock.lock);
}
