// SPDX-License-Identifier: GPL-2.0-only
/*
 * Trace areas: drain contexts, dictionary, registration.
 *
 * Draining and CPUs
 * -----------------
 * Firmware core k is drained on host CPU (k mod nr_online_cpus), so each CPU
 * buffer of the "hmb" instance carries whole firmware cores, in order:
 *
 *   area --+-- drains[0] on CPU a: cores 0, D, 2D, ...   --> cpu a buffer
 *          +-- drains[1] on CPU b: cores 1, D+1, ...     --> cpu b buffer
 *          +-- ...          (D = nr_drains = min(online CPUs, MAX_CORES))
 *
 * Each drain context owns a complete struct hmb_consumer over the whole
 * area, with its own scratch buffer, and only ever drains its own cores.
 * hmb_consumer_poll() mutates the consumer it is given (state, geometry,
 * positions), so sharing one consumer between CPUs would need a lock held
 * across every drain and would serialise the CPUs. With one consumer per
 * context nothing is shared between contexts: each polls the read-only meta
 * page itself, notices attach/reset/broken itself (and says so in its own
 * CPU buffer, right where its records change generation), and keeps
 * positions and loss counters only for its cores. The cost is one meta-page
 * read per context per poll and D scratch buffers per area.
 *
 * A context's @lock is held by its work for a whole pass and by status
 * readers; the work item is non-reentrant, so the lock never contends
 * between CPUs. Lock order: drain->lock, then area->dict_lock.
 *
 * Metadata: a context that carries records (and always drains[0]) emits
 * hmb_state then the whole dictionary as hmb_dict chunks on attach and on
 * reset, and again every dict_interval_ms, because trace-cmd resets the
 * buffers after enabling the events: a one-off emission would be lost.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/idr.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/topology.h>

#include "hmb_consumer_port.h"
#include "hmb_trace_internal.h"

#define CREATE_TRACE_POINTS
#include "hmb_trace_events.h"

#define HMB_TRACE_IDLE_BACKOFF	10	/* idle polls slow down to 10x */

static DEFINE_IDA(hmb_trace_ida);
static LIST_HEAD(hmb_trace_areas);
static DEFINE_MUTEX(hmb_trace_areas_lock);

static_assert(HMB_TRACE_EV_BUILD_ID_LEN == HMB_TRACE_BUILD_ID_LEN);
static_assert(HMB_TRACE_EV_NAME_LEN == HMB_TRACE_AREA_NAME_LEN);
static_assert(HMB_TRACE_DICT_CHUNK <= U16_MAX);
static_assert((int)HMB_TRACE_EV_ATTACHED == (int)HMB_EVENT_ATTACHED);
static_assert((int)HMB_TRACE_EV_RESET == (int)HMB_EVENT_RESET);
static_assert((int)HMB_TRACE_EV_PRODUCER_INIT == (int)HMB_EVENT_PRODUCER_INIT);
static_assert((int)HMB_TRACE_EV_BROKEN == (int)HMB_EVENT_BROKEN);
static_assert((int)HMB_TRACE_EV_IMPLAUSIBLE == (int)HMB_EVENT_IMPLAUSIBLE);

/* Does this context's CPU buffer carry the area's records and metadata? */
static bool hmb_trace_drain_emits(const struct hmb_trace_drain *d)
{
	return d->index == 0 || d->index < d->c.geo.nr_cores;
}

static void hmb_trace_dict_invalid(struct hmb_trace_area *a, u32 gen)
{
	lockdep_assert_held(&a->dict_lock);

	if (a->dict_bad && a->dict_bad_gen == gen)
		return;
	a->dict_bad = true;
	a->dict_bad_gen = gen;
	a->dict_errors++;
	/* A dictionary of an older generation would mislead decoders. */
	kvfree(a->dict);
	a->dict = NULL;
	a->dict_len = 0;
}

/*
 * Make a->dict the dictionary of @d's generation, with the consumer core's
 * snapshot read (hmb_consumer_dict_len/_copy: READY and the generation
 * checked before and after the copy).
 * Return: 0, -EAGAIN (retry later), -ENOENT (none), -EINVAL, -ENOMEM.
 */
static int hmb_trace_dict_refresh(struct hmb_trace_drain *d)
{
	struct hmb_trace_area *a = d->area;
	const struct hmb_geometry *g = &d->c.geo;
	enum hmb_dict_snapshot snap;
	u32 len;
	u8 *buf;

	lockdep_assert_held(&d->lock);
	lockdep_assert_held(&a->dict_lock);

	if (a->dict && a->dict_gen == g->producer_gen)
		return 0;
	if (a->dict_bad && a->dict_bad_gen == g->producer_gen)
		return -EINVAL;
	snap = hmb_consumer_dict_len(&d->c, &len);
	if (snap == HMB_DICT_OK) {
		buf = kvmalloc(len, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
		snap = hmb_consumer_dict_copy(&d->c, buf, len);
		if (snap != HMB_DICT_OK)
			kvfree(buf);
	}
	switch (snap) {
	case HMB_DICT_OK:
		break;
	case HMB_DICT_NONE:
		return -ENOENT; /* the firmware publishes no dictionary */
	case HMB_DICT_RETRY:
		return -EAGAIN;
	default:
		hmb_trace_dict_invalid(a, g->producer_gen);
		return -EINVAL;
	}
	kvfree(a->dict);
	a->dict = buf;
	a->dict_len = len;
	a->dict_gen = g->producer_gen;
	memcpy(a->dict_build_id, g->build_id, sizeof(a->dict_build_id));
	a->dict_bad = false;
	return 0;
}

/* Emit the dictionary of @d's generation into this CPU's buffer. */
static int hmb_trace_dict_emit(struct hmb_trace_drain *d)
{
	struct hmb_trace_area *a = d->area;
	u32 off, n;
	int ret;

	lockdep_assert_held(&d->lock);

	mutex_lock(&a->dict_lock);
	ret = hmb_trace_dict_refresh(d);
	for (off = 0; !ret && off < a->dict_len; off += n) {
		n = min(a->dict_len - off, HMB_TRACE_DICT_CHUNK);
		trace_hmb_dict(a->index, a->dict_gen, a->dict_build_id,
			       a->dict_len, off, a->dict + off, n);
	}
	mutex_unlock(&a->dict_lock);
	return ret;
}

/* hmb_state, then (attached/reset) the dictionary, in this CPU's buffer. */
static void hmb_trace_emit_metadata(struct hmb_trace_drain *d,
				    enum hmb_trace_ev_state state)
{
	unsigned int ms = READ_ONCE(hmb_trace_dict_interval_ms);
	int ret;

	lockdep_assert_held(&d->lock);

	trace_hmb_state(d->area->index, state, &d->c.geo, d->area->name);
	if (state == HMB_TRACE_EV_IMPLAUSIBLE)
		return; /* not a state change: an owed dictionary stays owed */
	if (state != HMB_TRACE_EV_ATTACHED && state != HMB_TRACE_EV_RESET) {
		d->dict_due = false;
		return;
	}
	ret = hmb_trace_dict_emit(d);
	/* A transient failure is retried on the next poll. */
	d->dict_due = ret == -EAGAIN || ret == -ENOMEM;
	d->next_dict = jiffies + msecs_to_jiffies(ms);
}

/*
 * Records after this long without any on a drain are "the first after a
 * quiet spell": see hmb_trace_on_record().
 */
#define HMB_TRACE_QUIET_MS	250

static int hmb_trace_on_record(void *ctx, const struct hmb_record *rec)
{
	struct hmb_trace_drain *d = ctx;

	lockdep_assert_held(&d->lock);
	/*
	 * A capture that started while this drain was quiet has none of its
	 * metadata: trace-cmd clears the buffers when it starts, and the
	 * periodic emission may be up to dict_interval_ms away. So the first
	 * record after a quiet spell comes after hmb_state and the
	 * dictionary, and a one-pass decoder (plugin_hmb.so in trace-cmd
	 * report, KernelShark) decodes a burst from its first record.
	 */
	if (hmb_trace_drain_emits(d) &&
	    (!d->had_records ||
	     time_after(jiffies, d->last_record +
				 msecs_to_jiffies(HMB_TRACE_QUIET_MS))))
		hmb_trace_emit_metadata(d, HMB_TRACE_EV_ATTACHED);
	d->had_records = true;
	d->last_record = jiffies;
	trace_hmb_record(d->area->index, rec);
	return 0;
}

static void hmb_trace_on_lost(void *ctx, u16 core, u64 count,
			      enum hmb_lost_reason reason, u64 at_seq)
{
	struct hmb_trace_drain *d = ctx;

	lockdep_assert_held(&d->lock);
	trace_hmb_lost(d->area->index, core, count, reason, at_seq);
}

static void hmb_trace_on_event(void *ctx, enum hmb_consumer_event ev,
			       u32 producer_gen)
{
	struct hmb_trace_drain *d = ctx;

	lockdep_assert_held(&d->lock);
	/*
	 * One line per transition to broken, and only from the first CPU's
	 * context (every context polls the same meta page): an area that
	 * is garbage says so, where one that was never started stays quiet.
	 */
	if (ev == HMB_EVENT_BROKEN && d->index == 0)
		pr_warn_ratelimited("%s: trace area broken (%s), generation %u: nothing is read\n",
				    d->area->name,
				    hmb_consumer_broken_reason_name(d->c.broken_reason),
				    d->c.broken_gen);
	if (!hmb_trace_drain_emits(d))
		return;
	/* enum hmb_trace_ev_state extends enum hmb_consumer_event. */
	hmb_trace_emit_metadata(d, (enum hmb_trace_ev_state)ev);
}

static const struct hmb_consumer_ops hmb_trace_consumer_ops = {
	.deliver = hmb_trace_on_record,
	.lost = hmb_trace_on_lost,
	.event = hmb_trace_on_event,
};

/* Periodic re-emission, and retry of an owed dictionary. */
static void hmb_trace_periodic_metadata(struct hmb_trace_drain *d)
{
	unsigned int ms = READ_ONCE(hmb_trace_dict_interval_ms);

	lockdep_assert_held(&d->lock);

	if (!hmb_trace_drain_emits(d))
		return;
	if (d->dict_due || (ms && time_after_eq(jiffies, d->next_dict)))
		hmb_trace_emit_metadata(d, HMB_TRACE_EV_ATTACHED);
}

/*
 * One pass: poll the meta page, drain each of our cores by at most
 * "budget" records. Requeue at once while a core had more, at the poll
 * interval after data, and back off towards 10x the interval while idle.
 */
static void hmb_trace_drain_work(struct work_struct *work)
{
	struct hmb_trace_drain *d = container_of(to_delayed_work(work),
						 struct hmb_trace_drain, work);
	unsigned int base = READ_ONCE(hmb_trace_poll_interval_us);
	u32 budget = READ_ONCE(hmb_trace_budget);
	unsigned int nr_drains = d->area->nr_drains;
	unsigned long delay;
	bool more = false;
	u32 got = 0;
	u16 core;

	mutex_lock(&d->lock);
	if (hmb_consumer_poll(&d->c) == HMB_CONSUMER_ATTACHED) {
		for (core = d->index; core < d->c.geo.nr_cores;
		     core += nr_drains) {
			u32 n = hmb_consumer_drain_core(&d->c, core, budget);

			got += n;
			if (n >= budget)
				more = true;
			cond_resched();
		}
		hmb_trace_periodic_metadata(d);
	}
	mutex_unlock(&d->lock);

	if (more) {
		/*
		 * Catch up at once, but back to back for at most one poll
		 * interval: the work is WQ_HIGHPRI, and a producer that
		 * outruns the host must not starve everything else on this
		 * CPU (it loses records either way).
		 */
		if (!d->catching_up) {
			d->catching_up = true;
			d->busy_since = jiffies;
		}
		d->interval_us = base;
		delay = 0;
		if (time_after_eq(jiffies,
				  d->busy_since + usecs_to_jiffies(base))) {
			d->catching_up = false;
			delay = usecs_to_jiffies(base);
		}
	} else if (got) {
		d->catching_up = false;
		d->interval_us = base;
		delay = usecs_to_jiffies(base);
	} else {
		d->catching_up = false;
		d->interval_us = clamp(d->interval_us * 2, base,
				       base * HMB_TRACE_IDLE_BACKOFF);
		delay = usecs_to_jiffies(d->interval_us);
	}
	queue_delayed_work_on(d->cpu, hmb_trace_wq, &d->work, delay);
}

static void hmb_trace_drain_free(struct hmb_trace_drain *d)
{
	if (!d)
		return;
	mutex_destroy(&d->lock);
	kvfree(d->scratch);
	kfree(d);
}

static struct hmb_trace_drain *hmb_trace_drain_alloc(struct hmb_trace_area *a,
						     unsigned int index,
						     int cpu)
{
	struct hmb_trace_drain *d;

	d = kzalloc_node(sizeof(*d), GFP_KERNEL, cpu_to_node(cpu));
	if (!d)
		return NULL;
	d->scratch = kvmalloc_node(HMB_CONSUMER_SCRATCH_LEN, GFP_KERNEL,
				   cpu_to_node(cpu));
	if (!d->scratch) {
		kfree(d);
		return NULL;
	}
	d->area = a;
	d->index = index;
	d->cpu = cpu;
	mutex_init(&d->lock);
	INIT_DELAYED_WORK(&d->work, hmb_trace_drain_work);
	hmb_consumer_init(&d->c, &a->map, &hmb_trace_consumer_ops, d,
			  d->scratch);
	return d;
}

/*
 * One context per online CPU, at most one per possible firmware core. The
 * CPU mapping is fixed here; a CPU going offline later only makes its
 * work run unbound (its records then land in another CPU's buffer).
 */
static int hmb_trace_drains_create(struct hmb_trace_area *a)
{
	unsigned int nr = min(num_online_cpus(), HMB_TRACE_MAX_CORES);
	unsigned int i = 0;
	int cpu;

	a->drains = kcalloc(nr, sizeof(*a->drains), GFP_KERNEL);
	if (!a->drains)
		return -ENOMEM;
	for_each_online_cpu(cpu) {
		if (i == nr)
			break;
		a->drains[i] = hmb_trace_drain_alloc(a, i, cpu);
		if (!a->drains[i])
			goto err_free;
		i++;
	}
	if (!i)
		goto err_free;
	a->nr_drains = i;
	/* Context j drains cores j, j + nr, j + 2 nr, ...: say so to its consumer. */
	for (i = 0; i < a->nr_drains; i++) {
		unsigned int core;

		a->drains[i]->c.core_mask = 0;
		for (core = i; core < HMB_TRACE_MAX_CORES; core += a->nr_drains)
			a->drains[i]->c.core_mask |= BIT(core);
	}
	return 0;

err_free:
	while (i--)
		hmb_trace_drain_free(a->drains[i]);
	kfree(a->drains);
	a->drains = NULL;
	return -ENOMEM;
}

static void hmb_trace_drains_destroy(struct hmb_trace_area *a)
{
	unsigned int i;

	for (i = 0; i < a->nr_drains; i++)
		hmb_trace_drain_free(a->drains[i]);
	kfree(a->drains);
}

/**
 * hmb_trace_register_area() - start publishing an HMB trace area.
 * @name: the area's identity, e.g. dev_name() of the device that owns it;
 *	copied (at most 31 characters). Names the status directory
 *	/sys/class/hmb_trace/<name>/ and must be unique.
 * @parent: the device that owns the area, or NULL
 * @pages: kernel address of each host page of the area, in area order; the
 *	array is copied, the pages must stay mapped and readable until
 *	hmb_trace_unregister_area() returns. They are never written.
 * @nr_pages: number of entries in @pages
 * @page_shift: log2 of the size of each page, 12..30
 *
 * The area is polled from per-CPU work at once; its records appear as
 * events of system "hmb" in the trace instance "hmb".
 *
 * Context: process context, may sleep.
 * Return: a handle for hmb_trace_unregister_area(), or an ERR_PTR().
 */
struct hmb_trace_area *hmb_trace_register_area(const char *name,
					       struct device *parent,
					       const void *const *pages,
					       unsigned int nr_pages,
					       unsigned int page_shift)
{
	struct hmb_trace_area *a;
	unsigned int i;
	int ret;

	if (!name || !*name || !pages || !nr_pages || page_shift < 12 ||
	    page_shift > 30)
		return ERR_PTR(-EINVAL);

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return ERR_PTR(-ENOMEM);
	strscpy(a->name, name, sizeof(a->name));
	mutex_init(&a->dict_lock);

	a->pages = kvmalloc_array(nr_pages, sizeof(*a->pages), GFP_KERNEL);
	if (!a->pages) {
		ret = -ENOMEM;
		goto err_free_area;
	}
	for (i = 0; i < nr_pages; i++)
		a->pages[i] = pages[i];
	a->map.pages = a->pages;
	a->map.nr_pages = nr_pages;
	a->map.page_shift = page_shift;

	ret = ida_alloc_max(&hmb_trace_ida, U16_MAX, GFP_KERNEL);
	if (ret < 0)
		goto err_free_pages;
	a->index = ret;

	ret = hmb_trace_drains_create(a);
	if (ret)
		goto err_free_index;

	ret = hmb_trace_status_add(a, parent);
	if (ret)
		goto err_destroy_drains;

	mutex_lock(&hmb_trace_areas_lock);
	list_add_tail(&a->node, &hmb_trace_areas);
	mutex_unlock(&hmb_trace_areas_lock);

	for (i = 0; i < a->nr_drains; i++)
		queue_delayed_work_on(a->drains[i]->cpu, hmb_trace_wq,
				      &a->drains[i]->work, 0);
	pr_info("%s: area %u registered: %llu bytes, %u drain CPUs\n",
		a->name, a->index, (u64)nr_pages << page_shift, a->nr_drains);
	return a;

err_destroy_drains:
	hmb_trace_drains_destroy(a);
err_free_index:
	ida_free(&hmb_trace_ida, a->index);
err_free_pages:
	kvfree(a->pages);
err_free_area:
	mutex_destroy(&a->dict_lock);
	kfree(a);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(hmb_trace_register_area);

/**
 * hmb_trace_unregister_area() - stop publishing an area and free it.
 * @area: a handle from hmb_trace_register_area(); NULL or an ERR_PTR() is
 *	ignored
 *
 * Every drain is stopped synchronously before this returns: the area's
 * pages are not read afterwards and may be unmapped. An hmb_state(detached)
 * event marks the end of the area in the trace.
 *
 * Context: process context, may sleep.
 */
void hmb_trace_unregister_area(struct hmb_trace_area *area)
{
	struct hmb_trace_area *a = area;
	unsigned int i;

	if (IS_ERR_OR_NULL(a))
		return;

	mutex_lock(&hmb_trace_areas_lock);
	list_del(&a->node);
	mutex_unlock(&hmb_trace_areas_lock);

	/* No status reader runs once the device is gone. */
	hmb_trace_status_remove(a);
	/* The work requeues itself; cancel_delayed_work_sync() stops that too. */
	for (i = 0; i < a->nr_drains; i++)
		cancel_delayed_work_sync(&a->drains[i]->work);

	trace_hmb_state(a->index, HMB_TRACE_EV_DETACHED, &a->drains[0]->c.geo,
			a->name);
	pr_info("%s: area %u unregistered\n", a->name, a->index);

	hmb_trace_drains_destroy(a);
	ida_free(&hmb_trace_ida, a->index);
	kvfree(a->pages);
	kvfree(a->dict);
	mutex_destroy(&a->dict_lock);
	kfree(a);
}
EXPORT_SYMBOL_GPL(hmb_trace_unregister_area);

/**
 * hmb_trace_areas_empty() - check that every area has been unregistered.
 *
 * Return: true if no area is registered.
 */
bool hmb_trace_areas_empty(void)
{
	bool empty;

	mutex_lock(&hmb_trace_areas_lock);
	empty = list_empty(&hmb_trace_areas);
	mutex_unlock(&hmb_trace_areas_lock);
	return empty;
}
