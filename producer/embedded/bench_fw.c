// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_fw.c - a sample firmware for the producer's cost on an embedded
 * core: bare metal, no libc, one core, the trace area in its own RAM.
 *
 * It publishes its dictionary (fw_bench_events.def), then emits series of
 * FW_EMITS records of one event each, every emit between the markers
 * bench_mark_begin() and bench_mark_end() (startup.S), and
 * bench_mark_switch() after an emit that opened a page. The counting
 * plugin turns the markers into instruction counts; bench.sh subtracts
 * the first series, which emits nothing (the markers' own cost).
 *
 * Series, in order, each ended by bench_mark_phase():
 *   0 nothing  1 cmd_fetch (8 B)  2 nand_op (32 B)  3 media_dump (128 B)
 *   4 a tokenized printf event: empty until HMB_TRACE_PRINTF exists
 *     (issue 35, item 2).
 *
 * The emit sites are functions of their own (noipa: compiled as any
 * caller would see them), so that nm gives each one's code size; an emit
 * inlined into its caller saves their call and return.
 */
#include "fw_bench_events.h"
#include "hmb_trace_printf.h"

/* A 4 KiB page holds 253 8-byte, 101 32-byte or 29 128-byte payloads. */
#define FW_PAGE_SIZE	4096u
#define FW_AREA_LEN	(8u * FW_PAGE_SIZE)
#define FW_EMITS	1024u

void bench_mark_begin(void);
void bench_mark_end(void);
void bench_mark_switch(void);
void bench_mark_phase(void);
int fw_main(void);

static uint8_t fw_area[FW_AREA_LEN] __attribute__((aligned(64)));
static struct hmb_trace_producer fw_producer;
static uint8_t fw_dump[124];

/* Static, zeroed by the loader: built without a memset. */
static struct hmb_trace_producer_config fw_config;
#ifdef FW_BLOB
extern const unsigned char fw_blob[];
extern const unsigned int fw_blob_len;
#endif

/* Arguments the emits take, read before the first marker. */
static volatile uint32_t fw_arg = 0x1234;

#define FW_SITE __attribute__((noipa))

FW_SITE int site_cmd_fetch(struct hmb_trace_producer *p, uint64_t ts,
			   uint16_t qid, uint16_t cid, uint32_t lba)
{
	return fw_trace_cmd_fetch(p, 0, ts, qid, cid, lba);
}

FW_SITE int site_cmd_done(struct hmb_trace_producer *p, uint64_t ts,
			  uint16_t qid, uint16_t cid, uint32_t latency)
{
	return fw_trace_cmd_done(p, 0, ts, qid, cid, latency);
}

FW_SITE int site_nand_op(struct hmb_trace_producer *p, uint64_t ts,
			 uint32_t die, uint32_t block, uint32_t page,
			 uint64_t addr, uint64_t ticks)
{
	return fw_trace_nand_op(p, 0, ts, FW_NAND_PROGRAM, die, block, page,
				addr, ticks);
}

FW_SITE int site_media_dump(struct hmb_trace_producer *p, uint64_t ts,
			    uint32_t lba, const uint8_t *dump)
{
	return fw_trace_media_dump(p, 0, ts, lba, dump, sizeof(fw_dump));
}

FW_SITE int site_queue_depth(struct hmb_trace_producer *p, uint64_t ts,
			     uint8_t queue, int32_t depth)
{
	return fw_trace_queue_depth(p, 0, ts, queue, depth);
}

/*
 * One series: FW_EMITS times @emit between the markers. The time moves by
 * one tick a record; a page opens when the last one is full.
 */
#define FW_SERIES(emit)							\
	do {								\
		uint32_t i;						\
									\
		for (i = 0; i < FW_EMITS; i++) {			\
			const uint8_t *page = p->core[0].page;		\
			uint32_t a = fw_arg;				\
									\
			ts++;						\
			bench_mark_begin();				\
			emit;						\
			bench_mark_end();				\
			if (p->core[0].page != page)			\
				bench_mark_switch();			\
		}							\
		bench_mark_phase();					\
	} while (0)

int fw_main(void)
{
	struct hmb_trace_producer *p = &fw_producer;
	uint64_t ts = 0;
	uint32_t i;
	int err = 0;

	fw_config.page_size = FW_PAGE_SIZE;
	fw_config.pages_per_core = 0;	/* as many as fit: 6 */
	fw_config.nr_cores = 1;
	fw_config.clock_hz = 1000000000;
	for (i = 0; i < sizeof(fw_dump); i++)
		fw_dump[i] = (uint8_t)i;
#ifdef FW_BLOB
	/* The pre-built dictionary (fw_bench_blob_gen.c): no serializer linked. */
	fw_config.dict_blob = fw_blob;
	fw_config.dict_blob_len = fw_blob_len;
	if (hmb_trace_producer_init_blob(p, fw_area, sizeof(fw_area), &fw_config))
		return 1;
#else
	fw_config.nr_events = fw_nr_events;
	fw_config.events = fw_events;
	if (hmb_trace_producer_init(p, fw_area, sizeof(fw_area), &fw_config))
		return 1;
#endif

	FW_SERIES((void)a);
	FW_SERIES(err |= site_cmd_fetch(p, ts, 1, (uint16_t)a, a));
	FW_SERIES(err |= site_nand_op(p, ts, 2, a, 7, a, 40));
	FW_SERIES(err |= site_media_dump(p, ts, a, fw_dump));
#ifdef HMB_TRACE_PRINTF
	FW_SERIES(err |= HMB_TRACE_PRINTF(p, 0, ts, "gc: victim=%u valid=%u",
					  a, 7));
#else
	bench_mark_phase();
#endif
	/* The other sites, once: their sizes are what bench.sh reports. */
	err |= site_cmd_done(p, ts, 1, 2, 100);
	err |= site_queue_depth(p, ts, 3, 5);
	return err ? 2 : 0;
}
