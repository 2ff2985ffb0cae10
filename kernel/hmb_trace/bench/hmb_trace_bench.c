// SPDX-License-Identifier: GPL-2.0-only
/*
 * hmb_trace_bench.ko - debug-only micro-benchmark of the hmb_record
 * tracepoint, in its own module like kernel/trace/ring_buffer_benchmark.c.
 *
 * It calls the bare tracepoint trace_hmb_record() that hmb_trace.ko
 * exports: what an ordinary TRACE_EVENT costs (the generated probe's
 * reserve, assign and commit into every instance where the event is
 * enabled). That is the baseline the whole pipeline (firmware ring ->
 * consumer -> the same tracepoint) is compared with.
 *
 * /sys/kernel/debug/hmb_trace/bench_record (root only):
 *   write "N [LEN]"  emit N hmb_record events (1..10000000) with a LEN-byte
 *                    payload (0..3072, default 16) back to back on the
 *                    writing CPU; they are marked dev=65535 core=65535,
 *                    seq 0..N-1, and land in the hmb instance like any other
 *   read             the last run: calls, len, ns, ns_per_call, enabled
 *                    (whether hmb_record was enabled anywhere at the time)
 *
 * The directory hmb_trace/ is shared with hmb_trace.ko should it have
 * one: it is created here only if it does not exist yet, and then
 * removed on unload.
 */
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "hmb_trace_events.h"

#define HMB_TRACE_BENCH_DIR		"hmb_trace"
#define HMB_TRACE_BENCH_MAX_CALLS	10000000u
#define HMB_TRACE_BENCH_DEFAULT_LEN	16u
#define HMB_TRACE_BENCH_MARK		U16_MAX	/* dev and core of bench events */

static struct dentry *hmb_trace_bench_dir;	/* created here, or NULL */
static struct dentry *hmb_trace_bench_file;

/* The last run, as the debugfs file reads it. */
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

	lockdep_assert_held(&hmb_trace_bench_lock);
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

static int __init hmb_trace_bench_init(void)
{
	struct dentry *parent;

	parent = debugfs_lookup(HMB_TRACE_BENCH_DIR, NULL);
	if (!parent) {
		parent = debugfs_create_dir(HMB_TRACE_BENCH_DIR, NULL);
		if (IS_ERR(parent))
			return PTR_ERR(parent);	/* no debugfs: nothing to offer */
		hmb_trace_bench_dir = parent;
	}
	hmb_trace_bench_file = debugfs_create_file("bench_record", 0600, parent,
						   NULL, &hmb_trace_bench_fops);
	if (!hmb_trace_bench_dir)
		dput(parent);	/* the file holds its parent */
	if (IS_ERR(hmb_trace_bench_file)) {
		debugfs_remove(hmb_trace_bench_dir);
		return PTR_ERR(hmb_trace_bench_file);
	}
	return 0;
}
module_init(hmb_trace_bench_init);

static void __exit hmb_trace_bench_exit(void)
{
	debugfs_remove(hmb_trace_bench_file);
	debugfs_remove(hmb_trace_bench_dir);
}
module_exit(hmb_trace_bench_exit);

MODULE_DESCRIPTION("Micro-benchmark of hmb_trace's hmb_record tracepoint (debugfs hmb_trace/bench_record)");
MODULE_AUTHOR("hmbtrace developers");
MODULE_LICENSE("GPL");
