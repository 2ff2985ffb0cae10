/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private declarations of hmb_trace.ko.
 */
#ifndef HMB_TRACE_INTERNAL_H
#define HMB_TRACE_INTERNAL_H

#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "hmb_clock_sync.h"
#include "hmb_consumer.h"
#include "hmb_trace.h"
#include "hmb_trace_ctrl_abi.h"
#include "hmb_trace_events_abi.h"

#define HMB_TRACE_AREA_NAME_LEN	32
#define HMB_TRACE_DICT_CHUNK	1024u		/* bytes per hmb_dict event */

struct device;
struct hmb_trace_area;
struct hmb_trace_dump;
struct hmb_dump_cmd;

/* Losses not yet in the trace buffer, per core, oldest first. */
#define HMB_TRACE_PENDING_LOST	4

struct hmb_trace_pending_lost {
	u64 count;
	u64 at_seq;
	u8 reason;
};

/**
 * struct hmb_trace_drain - one drain context: the cores of an area that are
 * drained on one host CPU.
 * @area: the area this context belongs to
 * @index: drains firmware cores k with k % area->nr_drains == index
 * @home_cpu: the CPU this context belongs on while it is online
 * @cpu: the CPU the work runs on now (@home_cpu, or a stand-in while
 *	@home_cpu is offline), so records land in that CPU's buffer;
 *	written under @lock, read by the work and the timer
 * @timer: paces the passes (high resolution, not bound to jiffies)
 * @work: one pass, queued on @cpu by @timer or by itself
 * @stopping: set before the area is unregistered; nothing is re-armed
 * @kick_pending: tracing started (hmb_trace_drains_kick()); the next pass
 *	takes it
 * @kicked: the pass took a kick: if nobody traces yet, look again soon
 * @lock: protects @c and the pass state; held for a whole pass and by
 *	status readers
 * @c: this context's own consumer over the whole area (hmb_trace_drain.c)
 * @scratch: @c's copy buffer, HMB_CONSUMER_SCRATCH_LEN bytes
 * @interval_us: the current pause between passes, backed off while idle
 * @busy_since: start of the current run of back-to-back passes (ns)
 * @last_data: when the last record was delivered (ns)
 * @next_dict: jiffies at which the dictionary is re-emitted
 * @dict_due: the dictionary is owed to this CPU's buffer
 * @meta_due: hmb_state and the dictionary go before the next record
 * @tracing: the pass under way drains (someone traces); set before its poll
 * @reset_owed: a firmware reset was seen while nobody traced: its
 *	hmb_state(reset) goes into the trace when tracing starts, after the
 *	old generation's losses still in @pending, before anything newer
 * @last_record: jiffies of the last record written (quiet-spell rule)
 * @had_records: @last_record is valid
 * @pending: losses whose hmb_lost the buffer did not take yet, per core
 * @nr_pending: entries of @pending per core
 * @next_core: the core a pass starts with (passes cut short by time
 *	rotate, so every core gets its turn)
 * @gate_open: the "hmb" instance's buffer took the gate's line
 *	(hmb_trace_instance_takes()) under @gate_gen, before @gate_until
 * @gate_gen: hmb_trace_record_generation() when the gate opened
 * @gate_until: jiffies after which the gate asks again
 * @gate_shut: the gate was asked in this pass and the buffer refused
 * @stats: pass counters for debugfs (idle cost, refusals)
 */
struct hmb_trace_drain {
	struct hmb_trace_area *area;
	unsigned int index;
	int home_cpu;
	int cpu;
	struct hrtimer timer;
	ktime_t fired;			/* expiry of the last timer run; 0: none */
	/*
	 * Between passes at the poll interval the timer only looks
	 * (hmb_consumer_peek_changed()) and queues the work when something
	 * changed, or after HMB_TRACE_PEEK_NS of looks. @peek is written by
	 * the work before it sets @peek_armed, read by the timer after.
	 */
	bool peek_armed;
	u64 peek_skipped_ns;		/* timer only, reset by each pass */
	struct hmb_consumer_peek peek;
	struct work_struct work;
	bool stopping;
	bool kick_pending;
	bool kicked;
	struct mutex lock;		/* protects @c and the pass state */
	struct hmb_consumer c;
	u8 *scratch;
	unsigned int interval_us;
	u64 busy_since;
	u64 last_data;
	unsigned long next_dict;
	bool dict_due;
	bool meta_due;
	bool tracing;
	bool reset_owed;
	bool had_records;
	unsigned long last_record;
	struct hmb_trace_pending_lost pending[HMB_TRACE_MAX_CORES]
					     [HMB_TRACE_PENDING_LOST];
	u8 nr_pending[HMB_TRACE_MAX_CORES];
	u16 next_core;
	bool gate_open;
	bool gate_shut;
	unsigned int gate_gen;
	unsigned long gate_until;
	struct {
		u64 passes;		/* passes that polled the area */
		u64 peeks;		/* looks by the timer that found nothing */
		u64 empty_passes;	/* ... and found nothing */
		u64 busy_ns;		/* time spent in passes */
		u64 refused;		/* passes the gate kept records in the ring */
		u64 gate_probes;	/* lines the gate wrote (buffer took) */
		u64 yields;		/* catch-up runs cut by time */
		u64 unreported_lost;	/* losses only in the counters */
	} stats;
};

/* How an area is drained: hmb_trace_area.consume. */
enum hmb_trace_consume {
	HMB_TRACE_CONSUME_TRACED,	/* only while hmb_record is enabled */
	HMB_TRACE_CONSUME_ALWAYS,	/* from registration on */
};

/**
 * struct hmb_trace_tunables - per-area settings (sysfs, hmb_trace_status.c);
 *	read with READ_ONCE, written whole values at a time.
 * @poll_interval_us: pause between passes while records flow
 * @idle_interval_us: longest pause, reached when idle
 * @budget: records per core per pass before other cores get a turn
 * @dict_interval_ms: metadata re-emission period; 0: on changes only
 * @consume: enum hmb_trace_consume
 * @max_rate: the most records per second a core can produce: a loss the
 *	device claims beyond a ring plus that rate since the core was last
 *	confirmed is implausible (consumer/); 0: no time bound
 * @clock_tolerance_ppm: how far the firmware clock's rate may move between
 *	sync samples (clock/hmb_clock_fit.h): the floor of the fit's slope
 *	doubt, so of its stated bound
 */
struct hmb_trace_tunables {
	unsigned int max_rate;
	unsigned int clock_tolerance_ppm;
	unsigned int poll_interval_us;
	unsigned int idle_interval_us;
	unsigned int budget;
	unsigned int dict_interval_ms;
	unsigned int consume;
};

/**
 * struct hmb_trace_ctrl - an area's control channel (hmb_trace_ctrl.c).
 * @ops: the transport, NULL if none
 * @priv: @ops' data
 * @lock: one request at a time; protects everything here
 * @seq: the last request's sequence number
 * @requests: requests sent, by op
 * @timeouts: requests with no answer in time
 * @not_sent: requests the transport refused to send (one still in flight)
 * @failed: answers with a status other than OK
 * @going: the channel is being unset: send nothing, stop waiting
 * @tracing: what the device acknowledged: 1 started, 0 stopped, -1 unknown
 * @ring_mode: acknowledged HMB_CTRL_RING_*, -1 unknown
 * @mask_base: first event id of the last acknowledged event mask
 * @mask: that mask (bit i: event id @mask_base + i produced)
 * @have_mask: @mask_base and @mask are valid
 * @have_freeze_config: @freeze_ns and @freeze_after (FREEZE_CONFIG) are valid
 */
struct hmb_trace_ctrl {
	const struct hmb_trace_ctrl_ops *ops;
	void *priv;
	struct mutex lock;		/* one request at a time */
	u64 seq;
	u64 requests[HMB_CTRL_OP_NR];
	u64 timeouts;
	u64 not_sent;
	u64 failed;
	bool going;
	int tracing;
	int ring_mode;
	u64 mask_base;
	u64 mask;
	bool have_mask;
	bool have_freeze_config;
	u64 freeze_ns;
	u64 freeze_after;
};

/* Why the clock sync is not running: hmb_trace_clock.halted. */
enum hmb_trace_sync_halt {
	HMB_TRACE_SYNC_IDLE,		/* nobody traces (or no channel) */
	HMB_TRACE_SYNC_RUNNING,		/* a burst every period */
	HMB_TRACE_SYNC_NO_ANSWER,	/* gave up: bursts unanswered */
};

/**
 * struct hmb_trace_stamps - the host side of a sync request, on every
 * trace clock a fit is kept for (hmb_trace_clock_stamp()).
 * @ns: each clock's reading, indexed by enum hmb_trace_clock_id
 * @cpu: the CPU that read "local" (a per-CPU clock)
 */
struct hmb_trace_stamps {
	u64 ns[HMB_TRACE_CLOCK_NR];
	int cpu;
};

/**
 * struct hmb_trace_burst - one burst's answered sync requests.
 * @t0: host stamps right before each request
 * @t1: host stamps right after each answer
 * @tick: the device's clock in each answer
 * @n: answered requests
 */
struct hmb_trace_burst {
	struct hmb_trace_stamps t0[HMB_CLOCK_SYNC_BURST];
	struct hmb_trace_stamps t1[HMB_CLOCK_SYNC_BURST];
	u64 tick[HMB_CLOCK_SYNC_BURST];
	unsigned int n;
};

/**
 * struct hmb_trace_clock - firmware time on the host clocks (hmb_trace_clock.c).
 * @work: a burst of sync requests every period, on hmb_trace_wq, queued
 *	on the first drain's CPU
 * @lock: protects the rest
 * @sync: per trace clock (enum hmb_trace_clock_id), the sync policy's
 *	window, fit and counters (clock/hmb_clock_sync.h)
 * @gen: the producer generation the windows and fits belong to
 * @have_gen: @gen is valid
 * @cpu: the CPU the last burst ran on, whose trace_clock_local() the
 *	"local" fit is for; -1 before the first
 * @stopping: set before the area goes; the work does not re-arm
 * @state: enum hmb_trace_sync_halt; written by the work and the kick,
 *	read without the lock (status, the drains' first-fit gate)
 * @started: local_clock() when this run of the sync started
 * @run_bursts: bursts since @started (the first ones come faster)
 * @silent: bursts in a row with no request answered or sent
 * @answered: local_clock() of the last burst with an answer (or of the
 *	run's start): the sync gives up only after a silence this old too
 * @burst: the work's last burst (too large for its stack frame); only the
 *	work uses it, and a work item never runs twice at once
 * @calibrating: this run is the one-shot run of an attach with nobody
 *	tracing (hmb_trace_clock_calibrate()): it ends at the first fit
 * @calib_answered: answered bursts of the calibration run (bounded)
 * @calib_spread: its bursts since its first fit (spread out)
 */
struct hmb_trace_clock {
	struct delayed_work work;
	struct mutex lock;		/* protects the rest */
	struct hmb_clock_sync sync[HMB_TRACE_CLOCK_NR];
	u32 gen;
	bool have_gen;
	int cpu;
	bool stopping;
	int state;
	u64 started;
	unsigned int run_bursts;
	unsigned int silent;
	u64 answered;
	struct hmb_trace_burst burst;
	bool calibrating;
	unsigned int calib_answered;
	unsigned int calib_spread;
};

/**
 * struct hmb_trace_freeze - the firmware's freeze (ABI 1.1) as drains[0]
 * sees it at its passes (hmb_trace_freeze_look()).
 * @lock: protects @going: orders queueing @work against unregistration
 * @work: takes the crash dump of a freeze (process context)
 * @going: the area is being unregistered: nothing is queued
 * @word: the freeze word at the last look (READ_ONCE by the status)
 * @word_gen: the producer generation of @word
 * @handled: the count of the last freeze a dump was asked for
 * @handled_gen: its generation; @have_handled: the two are valid
 * @freezes: freezes seen FROZEN, once per count
 * @unknown: words with a state or reason out of range (not acted on)
 */
struct hmb_trace_freeze {
	struct mutex lock;		/* protects going */
	struct work_struct work;
	bool going;
	u32 word;
	u32 word_gen;
	u32 handled;
	u32 handled_gen;
	bool have_handled;
	u64 freezes;
	u64 unknown;
};

/**
 * struct hmb_trace_area - one registered trace area.
 * @node: in the list of all areas
 * @cpuhp_node: in the CPU hotplug state's instance list
 * @name: identity: the status device's name and hmb_state.name
 * @index: the "dev" field of every event; unique while registered
 * @dev: status device in class hmb_trace
 * @debugfs: debugfs directory of the area
 * @pages: kernel address of every host page of the area (owned copy)
 * @map: the area as the consumer core sees it
 * @tun: tunables
 * @nr_drains: drain contexts; core k is drained by drains[k % nr_drains]
 * @drains: the drain contexts, drains[0] is on the first online CPU
 * @dict_lock: protects the dict_* fields; nests inside a drain's @lock
 * @dict: private copy of the last valid dictionary, or NULL
 * @dict_len: bytes in @dict (its header's total_len)
 * @dict_gen: producer generation @dict was copied from
 * @dict_build_id: build id of that generation
 * @dict_bad_gen: generation whose dictionary failed validation
 * @dict_bad: @dict_bad_gen is valid
 * @dict_errors: dictionaries that failed validation
 * @ctrl: the control channel
 * @clock: the firmware clock's fit
 * @dump: the crash dump (hmb_trace_dump.c), or NULL
 * @freeze: the firmware's freeze, noticed by drains[0]
 */
struct hmb_trace_area {
	struct list_head node;
	struct hlist_node cpuhp_node;
	char name[HMB_TRACE_AREA_NAME_LEN];
	u16 index;
	struct device *dev;
	struct dentry *debugfs;
	const u8 **pages;
	struct hmb_area map;
	struct hmb_trace_tunables tun;
	unsigned int nr_drains;
	struct hmb_trace_drain **drains;
	struct mutex dict_lock;		/* protects dict* */
	u8 *dict;
	u32 dict_len;
	u32 dict_gen;
	u8 dict_build_id[HMB_TRACE_BUILD_ID_LEN];
	u32 dict_bad_gen;
	bool dict_bad;
	u64 dict_errors;
	struct hmb_trace_ctrl ctrl;
	struct hmb_trace_clock clock;
	struct hmb_trace_dump *dump;
	struct hmb_trace_freeze freeze;
};

/* Defaults of new areas' tunables: module parameters (hmb_trace_main.c). */
extern struct hmb_trace_tunables hmb_trace_default_tunables;
extern struct workqueue_struct *hmb_trace_wq;

int hmb_trace_tunables_check(const struct hmb_trace_tunables *t);

/* hmb_trace_events.c */
struct trace_array;
void hmb_trace_events_init(struct trace_array *tr);
bool hmb_trace_record_wanted(void);
unsigned int hmb_trace_record_generation(void);
void hmb_trace_record_generation_next(void);
bool hmb_trace_instance_takes(const char *area, int cpu);

/* hmb_trace_area.c */
struct hmb_trace_area *
hmb_trace_register_area_suspended(const char *name, struct device *parent,
				  const void *const *pages,
				  unsigned int nr_pages, unsigned int page_shift);
int hmb_trace_dict_emit(struct hmb_trace_drain *d);
void hmb_trace_drains_kick_all(void);
void hmb_trace_areas_init(void);
void hmb_trace_areas_exit(void);

/* hmb_trace_ctrl.c */
const char *hmb_trace_ctrl_op_name(unsigned int op);
int hmb_trace_ctrl_call(struct hmb_trace_area *a, u16 op, const u64 arg[4],
			u64 val[4], struct hmb_trace_stamps *t0,
			struct hmb_trace_stamps *t1, unsigned int timeout_us);
void hmb_trace_ctrl_going(struct hmb_trace_area *a);
void hmb_trace_ctrl_init(struct hmb_trace_area *a);
void hmb_trace_ctrl_destroy(struct hmb_trace_area *a);

/* hmb_trace_clock.c */
void hmb_trace_clock_init(struct hmb_trace_area *a);
void hmb_trace_clock_kick(struct hmb_trace_area *a, bool tracing_started);
void hmb_trace_clock_calibrate(struct hmb_trace_area *a);
bool hmb_trace_clock_ready(struct hmb_trace_area *a, u32 gen);
const char *hmb_trace_clock_sync_state(struct hmb_trace_area *a);
void hmb_trace_clock_stop(struct hmb_trace_area *a);
void hmb_trace_clock_resume(struct hmb_trace_area *a);
void hmb_trace_clock_destroy(struct hmb_trace_area *a);
void hmb_trace_clock_emit(struct hmb_trace_area *a, u32 gen);
void hmb_trace_clock_stamp(struct hmb_trace_stamps *t, bool after);

/* hmb_trace_dump.c */

/**
 * struct hmb_trace_inflight - a backend's list of the host's commands in
 * flight, for a crash dump (nvme-pci's, hmb_trace_nvme.c)
 * @walk: calls @add with @dump for each command until @add returns false;
 *	must not sleep or allocate (the reset path)
 * @ctx: the backend's, for @walk
 */
struct hmb_trace_inflight {
	void (*walk)(void *ctx,
		     bool (*add)(void *dump, const struct hmb_dump_cmd *cmd),
		     void *dump);
	void *ctx;
};

int hmb_trace_dump_check_params(void);
void hmb_trace_dump_create(struct hmb_trace_area *a, struct device *parent);
void hmb_trace_dump_take(struct hmb_trace_area *a, u32 reason,
			 const struct hmb_trace_inflight *inflight);
void hmb_trace_dump_fw_restart(struct hmb_trace_area *a, u32 gen);
void hmb_trace_dump_destroy(struct hmb_trace_area *a);
void hmb_trace_freeze_init(struct hmb_trace_area *a);
void hmb_trace_freeze_look(struct hmb_trace_drain *d);
void hmb_trace_freeze_going(struct hmb_trace_area *a);
const char *hmb_trace_freeze_state_name(u32 word);
const char *hmb_trace_freeze_reason_name(u32 word);

/* hmb_trace_drain.c */
bool hmb_trace_area_consuming(const struct hmb_trace_area *a);
int hmb_trace_drains_create(struct hmb_trace_area *a);
void hmb_trace_drains_start(struct hmb_trace_area *a);
void hmb_trace_drains_stop(struct hmb_trace_area *a);
void hmb_trace_drains_pause(struct hmb_trace_area *a);
void hmb_trace_drains_resume(struct hmb_trace_area *a);
void hmb_trace_drains_destroy(struct hmb_trace_area *a);
void hmb_trace_drains_kick(struct hmb_trace_area *a);
int hmb_trace_cpuhp_init(void);
void hmb_trace_cpuhp_exit(void);
int hmb_trace_cpuhp_add(struct hmb_trace_area *a);
void hmb_trace_cpuhp_remove(struct hmb_trace_area *a);
void hmb_trace_drains_debugfs(struct hmb_trace_area *a);

bool hmb_trace_areas_empty(void);

int hmb_trace_status_init(void);
void hmb_trace_status_exit(void);
int hmb_trace_status_add(struct hmb_trace_area *area, struct device *parent);
void hmb_trace_status_remove(struct hmb_trace_area *area);

int hmb_trace_ivshmem_init(void);
void hmb_trace_ivshmem_exit(void);

/*
 * The nvme-pci backend exists only when built against the nvme-pci HMB
 * trace series (Kbuild defines HMB_TRACE_NVME where its header is).
 */
#ifdef HMB_TRACE_NVME
int hmb_trace_nvme_init(void);
void hmb_trace_nvme_exit(void);
#else
static inline int hmb_trace_nvme_init(void) { return 0; }
static inline void hmb_trace_nvme_exit(void) { }
#endif

#endif /* HMB_TRACE_INTERNAL_H */
