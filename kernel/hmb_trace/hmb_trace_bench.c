// SPDX-License-Identifier: GPL-2.0-only
/*
 * Debug-only micro-benchmark of the hmb_record tracepoint, for comparing
 * the whole pipeline (firmware ring -> consumer -> tracepoint) with the
 * tracepoint alone.
 *
 * /sys/kernel/debug/hmb_trace/bench_record (root only):
 *   write "N [LEN]"  emit N hmb_record events (1..10000000) with a LEN-byte
 *                    payload (0..3072, default 16) back to back on the
 *                    writing CPU; they are marked dev=65535 core=65535,
 *                    seq 0..N-1, and land in the hmb instance like any other
 *   read             the last run: calls, len, ns, ns_per_call, enabled
 *                    (whether hmb_record was enabled anywhere at the time)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "hmb_trace_internal.h"
#include "hmb_trace_events.h"

#define HMB_TRACE_BENCH_MAX_CALLS	10000000u
#define HMB_TRACE_BENCH_DEFAULT_LEN	16u
#define HMB_TRACE_BENCH_MARK		U16_MAX	/* dev and core of bench events */

static struct dentry *hmb_trace_bench_dir;
static DEFINE_MUTEX(hmb_trace_bench_lock);
static u64 hmb_trace_bench_calls;
static u64 hmb_trace_bench_ns;
static u32 hmb_trace_bench_len;
static bool hmb_trace_bench_enabled;

static int hmb_trace_bench_run(u32 calls, u32 len)
{
	struct hmb_record rec = {
		.core = HMB_TRACE_BENCH_MARK,
		.event_id = 1,
		.len = len,
	};
	u8 *payload;
	u64 t0, t1;
	u32 i;

	payload = kmalloc(max(len, 1u), GFP_KERNEL);
	if (!payload)
		return -ENOMEM;
	for (i = 0; i < len; i++)
		payload[i] = i;
	rec.payload = payload;

	hmb_trace_bench_enabled = trace_hmb_record_enabled();
	t0 = ktime_get_ns();
	for (i = 0; i < calls; i++) {
		rec.seq = i;
		rec.ts = i;
		trace_hmb_record(HMB_TRACE_BENCH_MARK, &rec);
		if (!(i & 0xffff))
			cond_resched();
	}
	t1 = ktime_get_ns();

	hmb_trace_bench_calls = calls;
	hmb_trace_bench_len = len;
	hmb_trace_bench_ns = t1 - t0;
	kfree(payload);
	return 0;
}

static ssize_t hmb_trace_bench_write(struct file *file, const char __user *ubuf,
				     size_t count, loff_t *ppos)
{
	u32 calls, len = HMB_TRACE_BENCH_DEFAULT_LEN;
	char buf[32];
	int n, ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	n = sscanf(buf, "%u %u", &calls, &len);
	if (n < 1 || !calls || calls > HMB_TRACE_BENCH_MAX_CALLS ||
	    len > HMB_TRACE_EV_PAYLOAD_MAX)
		return -EINVAL;

	mutex_lock(&hmb_trace_bench_lock);
	ret = hmb_trace_bench_run(calls, len);
	mutex_unlock(&hmb_trace_bench_lock);
	return ret ? ret : count;
}

static ssize_t hmb_trace_bench_read(struct file *file, char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	u64 per_call_ps = 0;
	char buf[128];
	int len;

	mutex_lock(&hmb_trace_bench_lock);
	if (hmb_trace_bench_calls)
		per_call_ps = div64_u64(hmb_trace_bench_ns * 1000,
					hmb_trace_bench_calls);
	len = scnprintf(buf, sizeof(buf),
			"calls=%llu len=%u ns=%llu ns_per_call=%llu.%03llu enabled=%d\n",
			hmb_trace_bench_calls, hmb_trace_bench_len,
			hmb_trace_bench_ns, per_call_ps / 1000,
			per_call_ps % 1000, hmb_trace_bench_enabled);
	mutex_unlock(&hmb_trace_bench_lock);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations hmb_trace_bench_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = hmb_trace_bench_read,
	.write = hmb_trace_bench_write,
	.llseek = default_llseek,
};

/**
 * hmb_trace_bench_init() - create debugfs hmb_trace/bench_record.
 *
 * debugfs is optional: without it the module works, minus the benchmark.
 */
void hmb_trace_bench_init(void)
{
	hmb_trace_bench_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("bench_record", 0600, hmb_trace_bench_dir, NULL,
			    &hmb_trace_bench_fops);
}

/**
 * hmb_trace_bench_exit() - remove what hmb_trace_bench_init() created.
 */
void hmb_trace_bench_exit(void)
{
	debugfs_remove_recursive(hmb_trace_bench_dir);
}
