// SPDX-License-Identifier: GPL-2.0-only
/*
 * hmb_insn_marks.c - QEMU TCG plugin: the guest's executed-instruction count
 * each time it reaches one of a few marker addresses.
 *
 *   qemu-arm -plugin ./libhmb_insn_marks.so,mark=0x10040,mark=0x10044,out=F
 *
 * Every instruction adds 1 to one counter (an inline add, exact even when a
 * translation block is left early); a marker instruction also appends
 * "<marker index> <count>" to F at exit. Differences between two hits are
 * the instructions the guest executed from one marker to the next: the
 * sample firmware (bench_fw.c) brackets each emit with two markers. One
 * vCPU (user mode, one thread): the counter needs no atomics. TCG has no
 * cycle model, so instructions are all this can count.
 *
 * Built against qemu-plugin.h of the QEMU that runs it (API version 1 in
 * QEMU 7.2); no glib.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_MARKS 8

static uint64_t insns;
static uint64_t mark_addr[MAX_MARKS];
static unsigned int nr_marks;
static const char *out_path;

/* Hits in execution order: marker index and the count when it ran. */
struct hit {
	uint32_t mark;
	uint64_t count;
};
static struct hit *hits;
static size_t nr_hits, cap_hits;
static int out_of_memory;

static void on_mark(unsigned int vcpu_index, void *udata)
{
	(void)vcpu_index;
	if (nr_hits == cap_hits) {
		size_t cap = cap_hits ? 2 * cap_hits : 4096;
		struct hit *h = realloc(hits, cap * sizeof(*h));

		if (!h) {
			out_of_memory = 1;
			return;
		}
		hits = h;
		cap_hits = cap;
	}
	hits[nr_hits].mark = (uint32_t)(uintptr_t)udata;
	hits[nr_hits].count = insns;
	nr_hits++;
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	unsigned int m;

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);

		/* The hit sees the count before this instruction's add. */
		for (m = 0; m < nr_marks; m++)
			if (va == mark_addr[m])
				qemu_plugin_register_vcpu_insn_exec_cb(insn,
					on_mark, QEMU_PLUGIN_CB_NO_REGS,
					(void *)(uintptr_t)m);
		qemu_plugin_register_vcpu_insn_exec_inline(insn,
			QEMU_PLUGIN_INLINE_ADD_U64, &insns, 1);
	}
}

static void on_plugin_exit(qemu_plugin_id_t id, void *p)
{
	FILE *f = out_path ? fopen(out_path, "w") : stderr;
	size_t i;

	(void)id;
	(void)p;
	if (!f) {
		perror(out_path);
		return;
	}
	fprintf(f, "# insns %" PRIu64 "%s\n", insns,
		out_of_memory ? " (hits lost: out of memory)" : "");
	for (i = 0; i < nr_hits; i++)
		fprintf(f, "%" PRIu32 " %" PRIu64 "\n", hits[i].mark,
			hits[i].count);
	if (f != stderr)
		fclose(f);
	free(hits);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "mark=", 5) && nr_marks < MAX_MARKS) {
			/* A Thumb function's symbol has bit 0 set; its code does not. */
			mark_addr[nr_marks++] =
				strtoull(argv[i] + 5, NULL, 0) & ~1ull;
		} else if (!strncmp(argv[i], "out=", 4)) {
			out_path = argv[i] + 4;
		} else {
			fprintf(stderr, "hmb_insn_marks: bad argument %s\n",
				argv[i]);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
	return 0;
}
