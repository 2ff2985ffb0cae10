/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Private declarations of hmb_trace.ko.
 */
#ifndef HMB_TRACE_INTERNAL_H
#define HMB_TRACE_INTERNAL_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "hmb_consumer.h"
#include "hmb_trace.h"

#define HMB_TRACE_AREA_NAME_LEN	32
#define HMB_TRACE_DICT_CHUNK	1024u		/* bytes per hmb_dict event */

struct device;
struct hmb_trace_area;

/**
 * struct hmb_trace_drain - one drain context: the cores of an area that are
 * drained on one host CPU.
 * @area: the area this context belongs to
 * @index: drains firmware cores k with k % area->nr_drains == index
 * @cpu: host CPU the work runs on, so records land in that CPU's buffer
 * @work: the poll/drain work, bound to @cpu, non-reentrant
 * @lock: protects @c; held by the work for a whole pass and by status readers
 * @c: this context's own consumer over the whole area (see hmb_trace_area.c)
 * @scratch: @c's copy buffer, HMB_CONSUMER_SCRATCH_LEN bytes
 * @interval_us: current poll interval, backed off while idle (work only)
 * @next_dict: jiffies at which the dictionary is re-emitted (work only)
 * @dict_due: the dictionary is owed to this CPU's buffer (work only)
 */
struct hmb_trace_drain {
	struct hmb_trace_area *area;
	unsigned int index;
	int cpu;
	struct delayed_work work;
	struct mutex lock;		/* protects @c */
	struct hmb_consumer c;
	u8 *scratch;
	unsigned int interval_us;
	unsigned long next_dict;
	unsigned long busy_since;	/* jiffies: start of back-to-back passes */
	bool catching_up;		/* the last pass filled its budget */
	bool dict_due;
	bool had_records;		/* @last_record is valid */
	unsigned long last_record;	/* jiffies of the last record emitted */
};

/**
 * struct hmb_trace_area - one registered trace area.
 * @node: in the list of all areas
 * @name: identity: the status device's name and hmb_state.name
 * @index: the "dev" field of every event; unique while registered
 * @dev: status device in class hmb_trace
 * @pages: kernel address of every host page of the area (owned copy)
 * @map: the area as the consumer core sees it
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
 */
struct hmb_trace_area {
	struct list_head node;
	char name[HMB_TRACE_AREA_NAME_LEN];
	u16 index;
	struct device *dev;
	const u8 **pages;
	struct hmb_area map;
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
};

/* Module parameters (hmb_trace_main.c); read with READ_ONCE. */
extern unsigned int hmb_trace_poll_interval_us;
extern unsigned int hmb_trace_budget;
extern unsigned int hmb_trace_dict_interval_ms;
extern struct workqueue_struct *hmb_trace_wq;

bool hmb_trace_areas_empty(void);

int hmb_trace_status_init(void);
void hmb_trace_status_exit(void);
int hmb_trace_status_add(struct hmb_trace_area *area, struct device *parent);
void hmb_trace_status_remove(struct hmb_trace_area *area);

int hmb_trace_ivshmem_init(void);
void hmb_trace_ivshmem_exit(void);

void hmb_trace_bench_init(void);
void hmb_trace_bench_exit(void);

#endif /* HMB_TRACE_INTERNAL_H */
