// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-area status in /sys/class/hmb_trace/<name>/.
 *
 * One value per file; per-core counters are arrays (one value per firmware
 * core of the current geometry, space separated). Geometry, state and
 * meta-page errors are those seen by drains[0]; per-core counters come
 * from the context that drains the core. Nothing here reads device memory:
 * "dictionary" is the validated private copy.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/kdev_t.h>
#include <linux/kstrtox.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/time64.h>

#include "hmb_trace_compat.h"
#include "hmb_trace_internal.h"

static struct hmb_trace_area *hmb_trace_dev_area(struct device *dev)
{
	return dev_get_drvdata(dev);
}

/* A copy of what drains[0] knows about the whole area. */
struct hmb_trace_snapshot {
	enum hmb_consumer_state state;
	enum hmb_consumer_broken_reason broken_reason;
	struct hmb_geometry geo;
	u64 resets;
	u64 errors[HMB_ERR_NR];
};

static void hmb_trace_snapshot(struct hmb_trace_area *a,
			       struct hmb_trace_snapshot *s)
{
	struct hmb_trace_drain *d = a->drains[0];

	mutex_lock(&d->lock);
	s->state = d->c.state;
	s->broken_reason = d->c.broken_reason;
	s->geo = d->c.geo;
	s->resets = d->c.resets;
	memcpy(s->errors, d->c.errors, sizeof(s->errors));
	mutex_unlock(&d->lock);
}

static ssize_t index_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", hmb_trace_dev_area(dev)->index);
}
static DEVICE_ATTR_RO(index);

static ssize_t state_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	static const char *const names[] = {
		[HMB_CONSUMER_DETACHED] = "detached",
		[HMB_CONSUMER_ATTACHED] = "attached",
		[HMB_CONSUMER_PRODUCER_INIT] = "producer_init",
		[HMB_CONSUMER_BROKEN] = "broken",
	};
	struct hmb_trace_snapshot s;

	hmb_trace_snapshot(hmb_trace_dev_area(dev), &s);
	if ((unsigned int)s.state >= ARRAY_SIZE(names))
		return sysfs_emit(buf, "unknown\n");
	return sysfs_emit(buf, "%s\n", names[s.state]);
}
static DEVICE_ATTR_RO(state);

/* Why the state is "broken"; "none" otherwise (hmb_consumer.h). */
static ssize_t broken_reason_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct hmb_trace_snapshot s;

	hmb_trace_snapshot(hmb_trace_dev_area(dev), &s);
	return sysfs_emit(buf, "%s\n",
			  hmb_consumer_broken_reason_name(s.broken_reason));
}
static DEVICE_ATTR_RO(broken_reason);

static ssize_t build_id_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct hmb_trace_snapshot s;

	hmb_trace_snapshot(hmb_trace_dev_area(dev), &s);
	return sysfs_emit(buf, "%*phN\n", (int)sizeof(s.geo.build_id),
			  s.geo.build_id);
}
static DEVICE_ATTR_RO(build_id);

/* Geometry of the current producer generation; 0 before attaching. */
enum hmb_trace_geo_field {
	HMB_TRACE_GEO_PRODUCER_GEN,
	HMB_TRACE_GEO_PAGE_SIZE,
	HMB_TRACE_GEO_NR_CORES,
	HMB_TRACE_GEO_PAGES_PER_CORE,
	HMB_TRACE_GEO_AREA_LEN,
	HMB_TRACE_GEO_DICT_OFFSET,
	HMB_TRACE_GEO_DICT_LEN,
	HMB_TRACE_GEO_RING_OFFSET,
	HMB_TRACE_GEO_CLOCK_HZ,
};

static ssize_t hmb_trace_geo_show(struct device *dev, char *buf,
				  enum hmb_trace_geo_field field)
{
	struct hmb_trace_snapshot s;
	const struct hmb_geometry *g = &s.geo;
	u64 v = 0;

	hmb_trace_snapshot(hmb_trace_dev_area(dev), &s);
	switch (field) {
	case HMB_TRACE_GEO_PRODUCER_GEN:
		v = g->producer_gen;
		break;
	case HMB_TRACE_GEO_PAGE_SIZE:
		v = g->page_size;
		break;
	case HMB_TRACE_GEO_NR_CORES:
		v = g->nr_cores;
		break;
	case HMB_TRACE_GEO_PAGES_PER_CORE:
		v = g->pages_per_core;
		break;
	case HMB_TRACE_GEO_AREA_LEN:
		v = g->area_len;
		break;
	case HMB_TRACE_GEO_DICT_OFFSET:
		v = g->dict_offset;
		break;
	case HMB_TRACE_GEO_DICT_LEN:
		v = g->dict_len;
		break;
	case HMB_TRACE_GEO_RING_OFFSET:
		v = g->ring_offset;
		break;
	case HMB_TRACE_GEO_CLOCK_HZ:
		v = g->clock_hz;
		break;
	}
	return sysfs_emit(buf, "%llu\n", v);
}

static ssize_t producer_gen_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return hmb_trace_geo_show(dev, buf, HMB_TRACE_GEO_PRODUCER_GEN);
}
static DEVICE_ATTR_RO(producer_gen);

static ssize_t page_size_show(struct device *dev, struct device_attribute *attr,
			      char *buf)
{
	return hmb_trace_geo_show(dev, buf, HMB_TRACE_GEO_PAGE_SIZE);
}
static DEVICE_ATTR_RO(page_size);

static ssize_t nr_cores_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return hmb_trace_geo_show(dev, buf, HMB_TRACE_GEO_NR_CORES);
}
static DEVICE_ATTR_RO(nr_cores);

static ssize_t pages_per_core_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return hmb_trace_geo_show(dev, buf, HMB_TRACE_GEO_PAGES_PER_CORE);
}
static DEVICE_ATTR_RO(pages_per_core);

static ssize_t area_len_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return hmb_trace_geo_show(dev, buf, HMB_TRACE_GEO_AREA_LEN);
}
static DEVICE_ATTR_RO(area_len);

static ssize_t dict_offset_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return hmb_trace_geo_show(dev, buf, HMB_TRACE_GEO_DICT_OFFSET);
}
static DEVICE_ATTR_RO(dict_offset);

static ssize_t dict_len_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return hmb_trace_geo_show(dev, buf, HMB_TRACE_GEO_DICT_LEN);
}
static DEVICE_ATTR_RO(dict_len);

static ssize_t ring_offset_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return hmb_trace_geo_show(dev, buf, HMB_TRACE_GEO_RING_OFFSET);
}
static DEVICE_ATTR_RO(ring_offset);

static ssize_t clock_hz_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return hmb_trace_geo_show(dev, buf, HMB_TRACE_GEO_CLOCK_HZ);
}
static DEVICE_ATTR_RO(clock_hz);

static ssize_t mapped_len_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct hmb_trace_area *a = hmb_trace_dev_area(dev);

	return sysfs_emit(buf, "%llu\n", a->map.nr_pages << a->map.page_shift);
}
static DEVICE_ATTR_RO(mapped_len);

static ssize_t resets_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct hmb_trace_snapshot s;

	hmb_trace_snapshot(hmb_trace_dev_area(dev), &s);
	return sysfs_emit(buf, "%llu\n", s.resets);
}
static DEVICE_ATTR_RO(resets);

/* Which value of a core an array attribute shows. */
enum hmb_trace_core_value {
	HMB_TRACE_CORE_CPU = -2,
	HMB_TRACE_CORE_DELIVERED = -1,
	/* 0..HMB_LOST_NR-1: lost[reason] */
};

static ssize_t hmb_trace_core_array_show(struct hmb_trace_area *a, int which,
					 char *buf)
{
	struct hmb_trace_snapshot s;
	ssize_t len = 0;
	u16 core;

	hmb_trace_snapshot(a, &s);
	for (core = 0; core < s.geo.nr_cores; core++) {
		struct hmb_trace_drain *d = a->drains[core % a->nr_drains];
		u64 v;

		mutex_lock(&d->lock);
		if (which == HMB_TRACE_CORE_CPU)
			v = d->cpu;
		else if (which == HMB_TRACE_CORE_DELIVERED)
			v = d->c.core[core].delivered;
		else
			v = d->c.core[core].lost[which];
		mutex_unlock(&d->lock);
		len += sysfs_emit_at(buf, len, "%s%llu", core ? " " : "", v);
	}
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

static ssize_t core_cpu_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return hmb_trace_core_array_show(hmb_trace_dev_area(dev),
					 HMB_TRACE_CORE_CPU, buf);
}
static DEVICE_ATTR_RO(core_cpu);

static ssize_t delivered_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return hmb_trace_core_array_show(hmb_trace_dev_area(dev),
					 HMB_TRACE_CORE_DELIVERED, buf);
}
static DEVICE_ATTR_RO(delivered);

static ssize_t dictionary_read(struct file *file, struct kobject *kobj,
			       hmb_trace_bin_attr_const struct bin_attribute *attr,
			       char *buf, loff_t off, size_t count)
{
	struct hmb_trace_area *a = hmb_trace_dev_area(kobj_to_dev(kobj));
	ssize_t ret;

	mutex_lock(&a->dict_lock);
	ret = memory_read_from_buffer(buf, count, &off, a->dict, a->dict_len);
	mutex_unlock(&a->dict_lock);
	return ret;
}

/* The firmware's own event names and formats: root only, like the trace. */
static BIN_ATTR_ADMIN_RO(dictionary, 0);

/*
 * Tunables: one value per file, checked against the same ranges as the
 * module parameters that give their defaults.
 */
struct hmb_trace_tunable_range {
	unsigned int min, max;
};

static const struct hmb_trace_tunable_range hmb_trace_poll_range = {
	10, USEC_PER_SEC };
static const struct hmb_trace_tunable_range hmb_trace_idle_range = {
	10, 10 * USEC_PER_SEC };
static const struct hmb_trace_tunable_range hmb_trace_budget_range = {
	1, 1u << 20 };
static const struct hmb_trace_tunable_range hmb_trace_dict_range = {
	0, 3600 * MSEC_PER_SEC };
static const struct hmb_trace_tunable_range hmb_trace_tolerance_range = {
	0, 100000 };
static const struct hmb_trace_tunable_range hmb_trace_rate_range = {
	0, UINT_MAX };

static bool hmb_trace_in_range(unsigned int v,
			       const struct hmb_trace_tunable_range *r)
{
	return v >= r->min && v <= r->max;
}

/**
 * hmb_trace_tunables_check() - are all tunables within their ranges?
 * @t: the tunables
 *
 * Return: 0 or -EINVAL.
 */
int hmb_trace_tunables_check(const struct hmb_trace_tunables *t)
{
	if (!hmb_trace_in_range(t->poll_interval_us, &hmb_trace_poll_range) ||
	    !hmb_trace_in_range(t->idle_interval_us, &hmb_trace_idle_range) ||
	    !hmb_trace_in_range(t->budget, &hmb_trace_budget_range) ||
	    !hmb_trace_in_range(t->dict_interval_ms, &hmb_trace_dict_range) ||
	    !hmb_trace_in_range(t->clock_tolerance_ppm,
				&hmb_trace_tolerance_range) ||
	    t->consume > HMB_TRACE_CONSUME_ALWAYS)
		return -EINVAL;
	return 0;
}

static ssize_t hmb_trace_tunable_store(struct device *dev, const char *buf,
				       size_t count, unsigned int *field,
				       const struct hmb_trace_tunable_range *r)
{
	unsigned int v;
	int ret;

	ret = kstrtouint(buf, 0, &v);
	if (ret)
		return ret;
	if (!hmb_trace_in_range(v, r))
		return -ERANGE;
	WRITE_ONCE(*field, v);
	return count;
}

#define HMB_TRACE_TUNABLE_ATTR(name, range)				\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%u\n",					\
			  READ_ONCE(hmb_trace_dev_area(dev)->tun.name));	\
}									\
static ssize_t name##_store(struct device *dev,				\
			    struct device_attribute *attr,		\
			    const char *buf, size_t count)		\
{									\
	return hmb_trace_tunable_store(dev, buf, count,			\
				       &hmb_trace_dev_area(dev)->tun.name, \
				       &(range));			\
}									\
static DEVICE_ATTR_RW(name)

HMB_TRACE_TUNABLE_ATTR(poll_interval_us, hmb_trace_poll_range);
HMB_TRACE_TUNABLE_ATTR(idle_interval_us, hmb_trace_idle_range);
HMB_TRACE_TUNABLE_ATTR(budget, hmb_trace_budget_range);
HMB_TRACE_TUNABLE_ATTR(dict_interval_ms, hmb_trace_dict_range);
HMB_TRACE_TUNABLE_ATTR(clock_tolerance_ppm, hmb_trace_tolerance_range);
HMB_TRACE_TUNABLE_ATTR(max_rate, hmb_trace_rate_range);

static const char *const hmb_trace_consume_names[] = {
	[HMB_TRACE_CONSUME_TRACED] = "traced",
	[HMB_TRACE_CONSUME_ALWAYS] = "always",
};

/* "traced": drain only while hmb_record is enabled; "always". */
static ssize_t consume_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	unsigned int v = READ_ONCE(hmb_trace_dev_area(dev)->tun.consume);

	return sysfs_emit(buf, "%s\n", hmb_trace_consume_names[v]);
}

static ssize_t consume_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t count)
{
	int v = sysfs_match_string(hmb_trace_consume_names, buf);

	if (v < 0)
		return v;
	WRITE_ONCE(hmb_trace_dev_area(dev)->tun.consume, v);
	if (v == HMB_TRACE_CONSUME_ALWAYS) {
		hmb_trace_drains_kick(hmb_trace_dev_area(dev));
		hmb_trace_clock_kick(hmb_trace_dev_area(dev), true);
	}
	return count;
}
static DEVICE_ATTR_RW(consume);

/* Is the area being drained now: 1 or 0. */
static ssize_t consuming_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  hmb_trace_area_consuming(hmb_trace_dev_area(dev)));
}
static DEVICE_ATTR_RO(consuming);

static struct attribute *hmb_trace_attrs[] = {
	&dev_attr_index.attr,
	&dev_attr_state.attr,
	&dev_attr_broken_reason.attr,
	&dev_attr_build_id.attr,
	&dev_attr_producer_gen.attr,
	&dev_attr_page_size.attr,
	&dev_attr_nr_cores.attr,
	&dev_attr_pages_per_core.attr,
	&dev_attr_area_len.attr,
	&dev_attr_mapped_len.attr,
	&dev_attr_dict_offset.attr,
	&dev_attr_dict_len.attr,
	&dev_attr_ring_offset.attr,
	&dev_attr_clock_hz.attr,
	&dev_attr_resets.attr,
	&dev_attr_core_cpu.attr,
	&dev_attr_delivered.attr,
	&dev_attr_consuming.attr,
	&dev_attr_consume.attr,
	&dev_attr_poll_interval_us.attr,
	&dev_attr_idle_interval_us.attr,
	&dev_attr_budget.attr,
	&dev_attr_dict_interval_ms.attr,
	&dev_attr_clock_tolerance_ppm.attr,
	&dev_attr_max_rate.attr,
	NULL
};

/*
 * ctrl/: the control channel. Writes send a request and return when the
 * device answered: -ENODEV without a channel, -ETIMEDOUT without an
 * answer, -EOPNOTSUPP / -EINVAL for the device's refusal. Reads show what
 * the device acknowledged last.
 */
/*
 * A user's request waits asleep for up to 1 s: a firmware (or, in the
 * mock, a firmware process on a loaded host) busy for tens of
 * milliseconds is not an error the user should see; the clock sync,
 * whose samples are worthless when slow, keeps its own 5 ms.
 */
#define HMB_TRACE_CTRL_TIMEOUT_US	(1000 * USEC_PER_MSEC)

static int hmb_trace_ctrl_send(struct hmb_trace_area *a, u16 op, u64 arg0,
			       u64 arg1, u64 val[4])
{
	struct hmb_trace_stamps t0, t1;
	u64 arg[4] = { arg0, arg1 };
	int ret;

	ret = hmb_trace_ctrl_call(a, op, arg, val, &t0, &t1,
				  HMB_TRACE_CTRL_TIMEOUT_US);
	if (ret == HMB_CTRL_UNSUPPORTED)
		return -EOPNOTSUPP;
	if (ret > 0)
		return -EINVAL;
	return ret;
}

static ssize_t ctrl_available_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct hmb_trace_ctrl *c = &hmb_trace_dev_area(dev)->ctrl;
	bool on;

	mutex_lock(&c->lock);
	on = c->ops;
	mutex_unlock(&c->lock);
	return sysfs_emit(buf, "%d\n", on);
}

/* requests, timeouts, failed, not_sent: one value each. */
static ssize_t hmb_trace_ctrl_counter(struct device *dev, char *buf, int which)
{
	struct hmb_trace_ctrl *c = &hmb_trace_dev_area(dev)->ctrl;
	unsigned int i;
	u64 v = 0;

	mutex_lock(&c->lock);
	if (which == 0)
		for (i = 0; i < HMB_CTRL_OP_NR; i++)
			v += c->requests[i];
	else if (which == 1)
		v = c->timeouts;
	else if (which == 2)
		v = c->failed;
	else
		v = c->not_sent;
	mutex_unlock(&c->lock);
	return sysfs_emit(buf, "%llu\n", v);
}

static ssize_t ctrl_requests_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	return hmb_trace_ctrl_counter(dev, buf, 0);
}

static ssize_t ctrl_timeouts_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	return hmb_trace_ctrl_counter(dev, buf, 1);
}

static ssize_t ctrl_failed_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return hmb_trace_ctrl_counter(dev, buf, 2);
}

static ssize_t ctrl_not_sent_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	return hmb_trace_ctrl_counter(dev, buf, 3);
}

/* The clock sync: "idle", "running" or "stopped: no answer". */
static ssize_t ctrl_sync_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  hmb_trace_clock_sync_state(hmb_trace_dev_area(dev)));
}

/* "started", "stopped" or "unknown"; write start|stop. */
static ssize_t ctrl_tracing_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	static const char *const names[] = { "unknown", "stopped", "started" };
	struct hmb_trace_ctrl *c = &hmb_trace_dev_area(dev)->ctrl;
	int v;

	mutex_lock(&c->lock);
	v = c->tracing;
	mutex_unlock(&c->lock);
	return sysfs_emit(buf, "%s\n", names[v + 1]);
}

static ssize_t ctrl_tracing_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	static const char *const ops[] = { "stop", "start" };
	struct hmb_trace_area *a = hmb_trace_dev_area(dev);
	int v = sysfs_match_string(ops, buf), ret;
	u64 val[4];

	if (v < 0)
		return v;
	ret = hmb_trace_ctrl_send(a, v ? HMB_CTRL_OP_START : HMB_CTRL_OP_STOP,
				  0, 0, val);
	if (ret)
		return ret;
	mutex_lock(&a->ctrl.lock);
	a->ctrl.tracing = v;
	mutex_unlock(&a->ctrl.lock);
	return count;
}

/* "overwrite", "stop" or "unknown"; write one of the first two. */
static ssize_t ctrl_ring_mode_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	static const char *const names[] = { "unknown", "overwrite", "stop" };
	struct hmb_trace_ctrl *c = &hmb_trace_dev_area(dev)->ctrl;
	int v;

	mutex_lock(&c->lock);
	v = c->ring_mode;
	mutex_unlock(&c->lock);
	return sysfs_emit(buf, "%s\n", names[v + 1]);
}

static ssize_t ctrl_ring_mode_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t count)
{
	static const char *const modes[] = {
		[HMB_CTRL_RING_OVERWRITE] = "overwrite",
		[HMB_CTRL_RING_STOP] = "stop",
	};
	struct hmb_trace_area *a = hmb_trace_dev_area(dev);
	int v = sysfs_match_string(modes, buf), ret;
	u64 val[4];

	if (v < 0)
		return v;
	ret = hmb_trace_ctrl_send(a, HMB_CTRL_OP_RING_MODE, v, 0, val);
	if (ret)
		return ret;
	mutex_lock(&a->ctrl.lock);
	a->ctrl.ring_mode = v;
	mutex_unlock(&a->ctrl.lock);
	return count;
}

/* "BASE MASK" (hex) of the last acknowledged mask, "unknown"; write it. */
static ssize_t ctrl_event_mask_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct hmb_trace_ctrl *c = &hmb_trace_dev_area(dev)->ctrl;
	ssize_t ret;

	mutex_lock(&c->lock);
	if (c->have_mask)
		ret = sysfs_emit(buf, "%llu 0x%016llx\n", c->mask_base,
				 c->mask);
	else
		ret = sysfs_emit(buf, "unknown\n");
	mutex_unlock(&c->lock);
	return ret;
}

static ssize_t ctrl_event_mask_store(struct device *dev,
				     struct device_attribute *attr,
				     const char *buf, size_t count)
{
	struct hmb_trace_area *a = hmb_trace_dev_area(dev);
	unsigned long long base, mask;
	u64 val[4];
	int ret;

	if (sscanf(buf, "%llu %llx", &base, &mask) != 2 || base % 64 ||
	    base > U16_MAX)
		return -EINVAL;
	ret = hmb_trace_ctrl_send(a, HMB_CTRL_OP_EVENT_MASK, base, mask, val);
	if (ret)
		return ret;
	mutex_lock(&a->ctrl.lock);
	a->ctrl.mask_base = base;
	a->ctrl.mask = mask;
	a->ctrl.have_mask = true;
	mutex_unlock(&a->ctrl.lock);
	return count;
}

/* Write "COOKIE [CORE]": the firmware emits an hmb_echo record. */
static ssize_t ctrl_echo_store(struct device *dev,
			       struct device_attribute *attr,
			       const char *buf, size_t count)
{
	unsigned long long cookie;
	unsigned int core = 0;
	u64 val[4];
	int ret;

	if (sscanf(buf, "%llu %u", &cookie, &core) < 1)
		return -EINVAL;
	ret = hmb_trace_ctrl_send(hmb_trace_dev_area(dev), HMB_CTRL_OP_ECHO,
				  cookie, core, val);
	return ret ? ret : count;
}

/*
 * The firmware's freeze (ABI 1.1): its state as drains[0] last read it
 * ("running", "triggered", "frozen", "unknown"); write "rearm" (overwrite
 * again) or "now [DETAIL]" (freeze now, reason host).
 */
static ssize_t ctrl_freeze_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct hmb_trace_area *a = hmb_trace_dev_area(dev);

	return sysfs_emit(buf, "%s\n",
			  hmb_trace_freeze_state_name(READ_ONCE(a->freeze.word)));
}

static ssize_t ctrl_freeze_store(struct device *dev,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	struct hmb_trace_area *a = hmb_trace_dev_area(dev);
	unsigned long long detail = 0;
	u64 val[4];
	int ret;

	if (sysfs_streq(buf, "rearm"))
		ret = hmb_trace_ctrl_send(a, HMB_CTRL_OP_FREEZE_REARM, 0, 0, val);
	else if (sysfs_streq(buf, "now") ||
		 sscanf(buf, "now %llu", &detail) == 1)
		ret = hmb_trace_ctrl_send(a, HMB_CTRL_OP_FREEZE_NOW, detail, 0,
					  val);
	else
		return -EINVAL;
	return ret ? ret : count;
}

/* "THRESHOLD_NS N" last acknowledged, or "unknown"; write it (arms). */
static ssize_t ctrl_freeze_config_show(struct device *dev,
				       struct device_attribute *attr,
				       char *buf)
{
	struct hmb_trace_ctrl *c = &hmb_trace_dev_area(dev)->ctrl;
	ssize_t ret;

	mutex_lock(&c->lock);
	if (c->have_freeze_config)
		ret = sysfs_emit(buf, "%llu %llu\n", c->freeze_ns,
				 c->freeze_after);
	else
		ret = sysfs_emit(buf, "unknown\n");
	mutex_unlock(&c->lock);
	return ret;
}

static ssize_t ctrl_freeze_config_store(struct device *dev,
					struct device_attribute *attr,
					const char *buf, size_t count)
{
	struct hmb_trace_area *a = hmb_trace_dev_area(dev);
	unsigned long long ns, n;
	u64 val[4];
	int ret;

	if (sscanf(buf, "%llu %llu", &ns, &n) != 2 || n > U32_MAX)
		return -EINVAL;
	ret = hmb_trace_ctrl_send(a, HMB_CTRL_OP_FREEZE_CONFIG, ns, n, val);
	if (ret)
		return ret;
	mutex_lock(&a->ctrl.lock);
	a->ctrl.freeze_ns = ns;
	a->ctrl.freeze_after = n;
	a->ctrl.have_freeze_config = true;
	mutex_unlock(&a->ctrl.lock);
	return count;
}

static struct device_attribute hmb_trace_ctrl_dev_attrs[] = {
	__ATTR(available, 0444, ctrl_available_show, NULL),
	__ATTR(requests, 0444, ctrl_requests_show, NULL),
	__ATTR(timeouts, 0444, ctrl_timeouts_show, NULL),
	__ATTR(failed, 0444, ctrl_failed_show, NULL),
	__ATTR(tracing, 0644, ctrl_tracing_show, ctrl_tracing_store),
	__ATTR(ring_mode, 0644, ctrl_ring_mode_show, ctrl_ring_mode_store),
	__ATTR(event_mask, 0644, ctrl_event_mask_show, ctrl_event_mask_store),
	__ATTR(echo, 0200, NULL, ctrl_echo_store),
	__ATTR(not_sent, 0444, ctrl_not_sent_show, NULL),
	__ATTR(sync, 0444, ctrl_sync_show, NULL),
	__ATTR(freeze, 0644, ctrl_freeze_show, ctrl_freeze_store),
	__ATTR(freeze_config, 0644, ctrl_freeze_config_show,
	       ctrl_freeze_config_store),
};

static struct attribute *hmb_trace_ctrl_attrs[] = {
	&hmb_trace_ctrl_dev_attrs[0].attr,
	&hmb_trace_ctrl_dev_attrs[1].attr,
	&hmb_trace_ctrl_dev_attrs[2].attr,
	&hmb_trace_ctrl_dev_attrs[3].attr,
	&hmb_trace_ctrl_dev_attrs[4].attr,
	&hmb_trace_ctrl_dev_attrs[5].attr,
	&hmb_trace_ctrl_dev_attrs[6].attr,
	&hmb_trace_ctrl_dev_attrs[7].attr,
	&hmb_trace_ctrl_dev_attrs[8].attr,
	&hmb_trace_ctrl_dev_attrs[9].attr,
	&hmb_trace_ctrl_dev_attrs[10].attr,
	&hmb_trace_ctrl_dev_attrs[11].attr,
	NULL
};

static const struct attribute_group hmb_trace_ctrl_group = {
	.name = "ctrl",
	.attrs = hmb_trace_ctrl_attrs,
};

/* clock/: the last fit and the sync counters; one value per file. */
enum hmb_trace_clock_value {
	HMB_TRACE_CLK_HAVE_FIT,
	HMB_TRACE_CLK_STALE,
	HMB_TRACE_CLK_ERR_NS,
	HMB_TRACE_CLK_RTT_MIN_NS,
	HMB_TRACE_CLK_SAMPLES,
	HMB_TRACE_CLK_TICK_REF,
	HMB_TRACE_CLK_HOST_REF,
	HMB_TRACE_CLK_MULT,
	HMB_TRACE_CLK_SLOPE_ERR,
	HMB_TRACE_CLK_BURSTS,
	HMB_TRACE_CLK_FAILED_BURSTS,
	HMB_TRACE_CLK_FITS,
	HMB_TRACE_CLK_BAD_FITS,
	HMB_TRACE_CLK_SLOW_BURSTS,
	HMB_TRACE_CLK_CONTRADICTED,
	HMB_TRACE_CLK_NR,
};

static const char *const hmb_trace_clock_names[HMB_TRACE_CLK_NR] = {
	"have_fit", "stale", "err_ns", "rtt_min_ns", "samples", "tick_ref",
	"host_ref", "mult", "slope_err", "bursts", "failed_bursts", "fits",
	"bad_fits", "slow_bursts", "contradicted",
};

static ssize_t hmb_trace_clock_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr,
						    struct dev_ext_attribute,
						    attr);
	struct hmb_trace_clock *k = &hmb_trace_dev_area(dev)->clock;
	/* The files show the fit to the instance's default clock. */
	struct hmb_clock_sync *y = &k->sync[HMB_TRACE_CLOCK_LOCAL];
	u64 v[HMB_TRACE_CLK_NR];

	mutex_lock(&k->lock);
	v[HMB_TRACE_CLK_HAVE_FIT] = y->have_fit;
	v[HMB_TRACE_CLK_STALE] = y->stale;
	v[HMB_TRACE_CLK_ERR_NS] = y->fit.err_ns;
	v[HMB_TRACE_CLK_RTT_MIN_NS] = y->fit.rtt_min_ns;
	v[HMB_TRACE_CLK_SAMPLES] = y->fit.samples;
	v[HMB_TRACE_CLK_TICK_REF] = y->fit.tick_ref;
	v[HMB_TRACE_CLK_HOST_REF] = y->fit.host_ref;
	v[HMB_TRACE_CLK_MULT] = y->fit.mult;
	v[HMB_TRACE_CLK_SLOPE_ERR] = y->fit.slope_err;
	v[HMB_TRACE_CLK_BURSTS] = y->bursts;
	v[HMB_TRACE_CLK_FAILED_BURSTS] = y->failed_bursts;
	v[HMB_TRACE_CLK_FITS] = y->fits;
	v[HMB_TRACE_CLK_BAD_FITS] = y->bad_fits;
	v[HMB_TRACE_CLK_SLOW_BURSTS] = y->slow;
	v[HMB_TRACE_CLK_CONTRADICTED] = y->contradicted;
	mutex_unlock(&k->lock);
	return sysfs_emit(buf, "%llu\n", v[(uintptr_t)ea->var]);
}

static struct dev_ext_attribute hmb_trace_clock_attrs[HMB_TRACE_CLK_NR];
static struct attribute *hmb_trace_clock_ptrs[HMB_TRACE_CLK_NR + 1];

static const struct attribute_group hmb_trace_clock_group = {
	.name = "clock",
	.attrs = hmb_trace_clock_ptrs,
};

static hmb_trace_bin_attr_const struct bin_attribute *hmb_trace_bin_attrs[] = {
	&bin_attr_dictionary,
	NULL
};

static const struct attribute_group hmb_trace_group = {
	.attrs = hmb_trace_attrs,
	.bin_attrs = hmb_trace_bin_attrs,
};

/*
 * lost/<reason> and errors/<name>: file names come from the consumer core
 * (hmb_lost_reason_name(), hmb_consumer_error_name()) so that tools and
 * status files can never disagree; they are filled in at module init.
 */
static struct dev_ext_attribute hmb_trace_lost_attrs[HMB_LOST_NR];
static struct attribute *hmb_trace_lost_ptrs[HMB_LOST_NR + 1];

static const struct attribute_group hmb_trace_lost_group = {
	.name = "lost",
	.attrs = hmb_trace_lost_ptrs,
};

#define HMB_TRACE_ERR_DICT	HMB_ERR_NR	/* errors/bad_dictionary */

static struct dev_ext_attribute hmb_trace_error_attrs[HMB_ERR_NR + 1];
static struct attribute *hmb_trace_error_ptrs[HMB_ERR_NR + 2];

static const struct attribute_group hmb_trace_errors_group = {
	.name = "errors",
	.attrs = hmb_trace_error_ptrs,
};

static const struct attribute_group *hmb_trace_groups[] = {
	&hmb_trace_group,
	&hmb_trace_lost_group,
	&hmb_trace_errors_group,
	&hmb_trace_ctrl_group,
	&hmb_trace_clock_group,
	NULL
};

static ssize_t hmb_trace_lost_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr,
						    struct dev_ext_attribute,
						    attr);

	return hmb_trace_core_array_show(hmb_trace_dev_area(dev),
					 (int)(uintptr_t)ea->var, buf);
}

static ssize_t hmb_trace_error_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr,
						    struct dev_ext_attribute,
						    attr);
	unsigned int err = (uintptr_t)ea->var;
	struct hmb_trace_area *a = hmb_trace_dev_area(dev);
	struct hmb_trace_snapshot s;
	unsigned int i;
	u64 v = 0;

	if (err == HMB_TRACE_ERR_DICT) {
		mutex_lock(&a->dict_lock);
		v = a->dict_errors;
		mutex_unlock(&a->dict_lock);
	} else if (err == HMB_ERR_BAD_MAGIC || err == HMB_ERR_BAD_GEOMETRY ||
		   err == HMB_ERR_BAD_GENERATION) {
		/* Every context checks the meta page: count it once. */
		hmb_trace_snapshot(a, &s);
		v = s.errors[err];
	} else {
		/* Page and record errors belong to the context's own cores. */
		for (i = 0; i < a->nr_drains; i++) {
			struct hmb_trace_drain *d = a->drains[i];

			mutex_lock(&d->lock);
			v += d->c.errors[err];
			mutex_unlock(&d->lock);
		}
	}
	return sysfs_emit(buf, "%llu\n", v);
}

static void hmb_trace_ext_attr_init(struct dev_ext_attribute *ea,
				    const char *name,
				    ssize_t (*show)(struct device *,
						    struct device_attribute *,
						    char *),
				    unsigned int var)
{
	sysfs_attr_init(&ea->attr.attr);
	ea->attr.attr.name = name;
	ea->attr.attr.mode = 0444;
	ea->attr.show = show;
	ea->var = (void *)(uintptr_t)var;
}

static struct class hmb_trace_class = {
	.name = "hmb_trace",
	.dev_groups = hmb_trace_groups,
};

/**
 * hmb_trace_status_init() - register class hmb_trace.
 *
 * Return: 0 or a negative errno.
 */
int hmb_trace_status_init(void)
{
	unsigned int i;

	for (i = 0; i < HMB_LOST_NR; i++) {
		hmb_trace_ext_attr_init(&hmb_trace_lost_attrs[i],
					hmb_lost_reason_name(i),
					hmb_trace_lost_show, i);
		hmb_trace_lost_ptrs[i] = &hmb_trace_lost_attrs[i].attr.attr;
	}
	for (i = 0; i < HMB_ERR_NR; i++) {
		hmb_trace_ext_attr_init(&hmb_trace_error_attrs[i],
					hmb_consumer_error_name(i),
					hmb_trace_error_show, i);
		hmb_trace_error_ptrs[i] = &hmb_trace_error_attrs[i].attr.attr;
	}
	hmb_trace_ext_attr_init(&hmb_trace_error_attrs[HMB_TRACE_ERR_DICT],
				"bad_dictionary", hmb_trace_error_show,
				HMB_TRACE_ERR_DICT);
	hmb_trace_error_ptrs[HMB_TRACE_ERR_DICT] =
		&hmb_trace_error_attrs[HMB_TRACE_ERR_DICT].attr.attr;
	for (i = 0; i < HMB_TRACE_CLK_NR; i++) {
		hmb_trace_ext_attr_init(&hmb_trace_clock_attrs[i],
					hmb_trace_clock_names[i],
					hmb_trace_clock_show, i);
		hmb_trace_clock_ptrs[i] = &hmb_trace_clock_attrs[i].attr.attr;
	}

	return class_register(&hmb_trace_class);
}

/**
 * hmb_trace_status_exit() - unregister class hmb_trace.
 */
void hmb_trace_status_exit(void)
{
	class_unregister(&hmb_trace_class);
}

/**
 * hmb_trace_status_add() - create /sys/class/hmb_trace/<name>/ for an area.
 * @area: the area, with its drain contexts allocated
 * @parent: the device that owns the area, or NULL
 *
 * Return: 0 or a negative errno (-EEXIST if the name is taken).
 */
int hmb_trace_status_add(struct hmb_trace_area *area, struct device *parent)
{
	struct device *dev;

	dev = device_create(&hmb_trace_class, parent, MKDEV(0, 0), area, "%s",
			    area->name);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	area->dev = dev;
	return 0;
}

/**
 * hmb_trace_status_remove() - remove an area's status directory.
 * @area: the area
 *
 * Waits for status readers in progress; none can start afterwards.
 */
void hmb_trace_status_remove(struct hmb_trace_area *area)
{
	device_unregister(area->dev);
	area->dev = NULL;
}
