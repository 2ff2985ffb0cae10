// SPDX-License-Identifier: GPL-2.0-only
/*
 * Trace areas: registration (the API for backends), the dictionary.
 *
 * An area is drained by one context per CPU (hmb_trace_drain.c); the
 * dictionary is copied once per producer generation into a private,
 * validated copy shared by the contexts (emitted as hmb_dict chunks) and
 * the status file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/export.h>
#include <linux/idr.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/topology.h>

#include "hmb_consumer_port.h"
#include "hmb_trace_events.h"
#include "hmb_trace_internal.h"

static DEFINE_IDA(hmb_trace_ida);
static LIST_HEAD(hmb_trace_areas);
static DEFINE_MUTEX(hmb_trace_areas_lock);

static_assert(HMB_TRACE_EV_BUILD_ID_LEN == HMB_TRACE_BUILD_ID_LEN);
static_assert(HMB_TRACE_EV_NAME_LEN == HMB_TRACE_AREA_NAME_LEN);
static_assert(HMB_TRACE_DICT_CHUNK <= U16_MAX);

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
		unsigned int noio;

		/*
		 * No I/O from reclaim here: this pass holds the drain's lock,
		 * and nvme-pci's reset path (DISABLING) waits for the pass;
		 * reclaim writing back to the very disk being reset would
		 * wait for that reset. The scope also covers kvmalloc()'s
		 * vmalloc fallback, which GFP_NOIO alone would not allow.
		 */
		noio = memalloc_noio_save();
		buf = kvmalloc(len, GFP_KERNEL);
		memalloc_noio_restore(noio);
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

/**
 * hmb_trace_dict_emit() - emit the dictionary of @d's generation into
 * this CPU's buffer, as hmb_dict chunks.
 * @d: the drain context, locked
 *
 * Return: 0, -EAGAIN (retry later), -ENOENT (none), -EINVAL, -ENOMEM.
 */
int hmb_trace_dict_emit(struct hmb_trace_drain *d)
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

static struct dentry *hmb_trace_debugfs_root;

static struct hmb_trace_area *
hmb_trace_area_create(const char *name, struct device *parent,
		      const void *const *pages, unsigned int nr_pages,
		      unsigned int page_shift, bool start);

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
 * The area's meta page is polled from per-CPU drains at once; its records
 * are consumed while a tracer has hmb_record enabled in the trace instance
 * "hmb" (or always, if the area's consume mode says so), and appear there
 * as events of system "hmb".
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
	return hmb_trace_area_create(name, parent, pages, nr_pages, page_shift,
				     true);
}
EXPORT_SYMBOL_GPL(hmb_trace_register_area);

/**
 * hmb_trace_register_area_suspended() - register an area that is not read
 * yet: as hmb_trace_register_area(), then hmb_trace_suspend_area().
 * @name: as hmb_trace_register_area()
 * @parent: as hmb_trace_register_area()
 * @pages: as hmb_trace_register_area()
 * @nr_pages: as hmb_trace_register_area()
 * @page_shift: as hmb_trace_register_area()
 *
 * For a backend that prepares the registration (allocations, the status
 * device, debugfs) away from a path that must not allocate, and starts
 * reading with hmb_trace_resume_area() once it knows the area is still
 * enabled (hmb_trace_nvme.c).
 *
 * Context: process context, may sleep.
 * Return: a handle, or an ERR_PTR().
 */
struct hmb_trace_area *
hmb_trace_register_area_suspended(const char *name, struct device *parent,
				  const void *const *pages,
				  unsigned int nr_pages, unsigned int page_shift)
{
	return hmb_trace_area_create(name, parent, pages, nr_pages, page_shift,
				     false);
}

static struct hmb_trace_area *
hmb_trace_area_create(const char *name, struct device *parent,
		      const void *const *pages, unsigned int nr_pages,
		      unsigned int page_shift, bool start)
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
	a->tun = hmb_trace_default_tunables;
	mutex_init(&a->dict_lock);
	hmb_trace_ctrl_init(a);
	hmb_trace_clock_init(a);

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

	a->debugfs = debugfs_create_dir(a->name, hmb_trace_debugfs_root);
	hmb_trace_drains_debugfs(a);
	hmb_trace_freeze_init(a);
	hmb_trace_dump_create(a, parent);

	mutex_lock(&hmb_trace_areas_lock);
	list_add_tail(&a->node, &hmb_trace_areas);
	if (start)
		hmb_trace_drains_start(a);
	else
		hmb_trace_drains_pause(a);
	mutex_unlock(&hmb_trace_areas_lock);

	pr_info("%s: area %u registered: %llu bytes, %u drain CPUs\n",
		a->name, a->index, (u64)nr_pages << page_shift, a->nr_drains);
	return a;

err_destroy_drains:
	hmb_trace_drains_stop(a);
	hmb_trace_drains_destroy(a);
err_free_index:
	ida_free(&hmb_trace_ida, a->index);
err_free_pages:
	kvfree(a->pages);
err_free_area:
	hmb_trace_clock_destroy(a);
	hmb_trace_ctrl_destroy(a);
	mutex_destroy(&a->dict_lock);
	kfree(a);
	return ERR_PTR(ret);
}

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

	if (IS_ERR_OR_NULL(a))
		return;

	mutex_lock(&hmb_trace_areas_lock);
	list_del(&a->node);
	mutex_unlock(&hmb_trace_areas_lock);

	debugfs_remove_recursive(a->debugfs);
	/* No freeze's dump is taken from here on. */
	hmb_trace_freeze_going(a);
	/*
	 * A dump taken at the last DISABLING goes to devcoredump while the
	 * device it is of (maybe the status device) is still there.
	 */
	hmb_trace_dump_destroy(a);
	/* No status reader runs once the device is gone. */
	hmb_trace_status_remove(a);
	/*
	 * Drains first: a pass may ask the clock for a burst. No request
	 * after this: the backend's transport may go.
	 */
	hmb_trace_drains_stop(a);
	hmb_trace_clock_stop(a);

	trace_hmb_state(a->index, HMB_TRACE_EV_DETACHED, &a->drains[0]->c.geo,
			a->name);
	pr_info("%s: area %u unregistered\n", a->name, a->index);

	hmb_trace_drains_destroy(a);
	ida_free(&hmb_trace_ida, a->index);
	kvfree(a->pages);
	kvfree(a->dict);
	hmb_trace_clock_destroy(a);
	hmb_trace_ctrl_destroy(a);
	mutex_destroy(&a->freeze.lock);
	mutex_destroy(&a->dict_lock);
	kfree(a);
}
EXPORT_SYMBOL_GPL(hmb_trace_unregister_area);

/**
 * hmb_trace_suspend_area() - stop reading an area for a while, keeping
 * what was read of it.
 * @area: a handle from hmb_trace_register_area()
 *
 * For a device that stops writing the area and will start again on the
 * same memory (an NVMe controller reset that keeps its Host Memory
 * Buffer): every drain and every control request has stopped when this
 * returns, and the control channel is gone (set it again after
 * hmb_trace_resume_area()). The consumers keep their positions, so when
 * the device comes back as a new producer generation, the records of the
 * old one that were written after the last drain are charged as lost to
 * "reset" from the new generation's prev_next_seq (hmb-trace-abi.rst,
 * "Producer reset"): a new registration would know nothing of them. The
 * area's status and trace events stay.
 *
 * Safe on a reset path that the memory reclaim may wait for (nvme-pci's
 * DISABLING): it allocates nothing and waits only for work on
 * hmb_trace_wq (WQ_MEM_RECLAIM), whose passes allocate in a no-I/O scope,
 * and for a control request, which gives up at once.
 *
 * Context: process context, may sleep.
 */
void hmb_trace_suspend_area(struct hmb_trace_area *area)
{
	hmb_trace_ctrl_going(area);
	hmb_trace_set_ctrl(area, NULL, NULL);
	hmb_trace_drains_pause(area);
	hmb_trace_clock_stop(area);
}
EXPORT_SYMBOL_GPL(hmb_trace_suspend_area);

/**
 * hmb_trace_resume_area() - read a suspended area again, from where every
 * drain stood.
 * @area: a handle suspended by hmb_trace_suspend_area()
 *
 * The pages must be the ones registered. The clock sync starts again with
 * the next hmb_trace_set_ctrl().
 *
 * Context: process context, may sleep.
 */
void hmb_trace_resume_area(struct hmb_trace_area *area)
{
	hmb_trace_clock_resume(area);
	hmb_trace_drains_resume(area);
}
EXPORT_SYMBOL_GPL(hmb_trace_resume_area);

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

/**
 * hmb_trace_drains_kick_all() - a tracer enabled hmb_record: every area
 * gets a pass soon rather than at its next check for a tracer.
 *
 * Context: process context (the tracepoint's reg callback).
 */
void hmb_trace_drains_kick_all(void)
{
	struct hmb_trace_area *a;

	mutex_lock(&hmb_trace_areas_lock);
	list_for_each_entry(a, &hmb_trace_areas, node) {
		hmb_trace_drains_kick(a);
		hmb_trace_clock_kick(a, true);
	}
	mutex_unlock(&hmb_trace_areas_lock);
}

/** hmb_trace_areas_init() - the debugfs directory of all areas. */
void hmb_trace_areas_init(void)
{
	hmb_trace_debugfs_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
}

/** hmb_trace_areas_exit() - remove the debugfs directory. */
void hmb_trace_areas_exit(void)
{
	debugfs_remove_recursive(hmb_trace_debugfs_root);
}
