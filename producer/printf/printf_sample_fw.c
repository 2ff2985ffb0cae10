// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * printf_sample_fw.c - a sample firmware with tokenized printf events
 * (hmb_trace_printf.h), compiled for the host so that the test command
 * can run it: it publishes its trace area into the file named by argv[1]
 * (as a device into its HMB), with the build id of its own ELF file.
 *
 * With argv[2] it publishes the dictionary that file holds (the ABI's
 * dictionary bytes, `hmbtrace-cmd dict --raw`): the trace then describes
 * itself. Without, the area's dictionary is empty and decoders take the
 * dictionary from a file (`--dictionary`).
 *
 * Records, on core 0 at ts 1000, 2000, ...: FW_ROUNDS rounds of the
 * three sites below, then one record of the site without arguments.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmb_trace_printf.h"
#include "printf_sample_fw.h"

#ifndef FW_ROUNDS
#define FW_ROUNDS	3
#endif

/* The GNU build id of this program's own ELF file, as a firmware's
 * linker script would give it; 0 if found. */
static int fw_note(struct dl_phdr_info *info, size_t size, void *data)
{
	uint8_t *build_id = data;
	int i;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0;	/* not the executable */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *n = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		size_t off = 0;

		if (ph->p_type != PT_NOTE)
			continue;
		while (off + 12 <= ph->p_memsz) {
			uint32_t namesz, descsz, type;

			memcpy(&namesz, n + off, 4);
			memcpy(&descsz, n + off + 4, 4);
			memcpy(&type, n + off + 8, 4);
			if (type == NT_GNU_BUILD_ID && namesz == 4 &&
			    !memcmp(n + off + 12, "GNU", 4)) {
				memcpy(build_id, n + off + 16,
				       descsz < HMB_TRACE_BUILD_ID_LEN ?
				       descsz : HMB_TRACE_BUILD_ID_LEN);
				return 1;
			}
			off += 12 + ((namesz + 3) & ~3u) + ((descsz + 3) & ~3u);
		}
	}
	return 0;
}

static uint8_t *fw_read_file(const char *path, uint32_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		b = malloc((size_t)n);
		if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
			free(b);
			b = NULL;
		}
		*len = (uint32_t)n;
	}
	fclose(f);
	return b;
}

int main(int argc, char **argv)
{
	static struct hmb_trace_producer p;
	struct hmb_trace_producer_config cfg = {
		.page_size = 4096, .pages_per_core = 4, .nr_cores = 1,
		.clock_hz = 1000000000,
	};
	uint64_t ts = 0, len;
	uint8_t *area, *blob = NULL;
	uint32_t blob_len = 0;
	int i, err = 0;
	FILE *out;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s AREA [DICTIONARY.raw]\n", argv[0]);
		return 2;
	}
	if (!dl_iterate_phdr(fw_note, cfg.build_id)) {
		fprintf(stderr, "%s: no GNU build id note\n", argv[0]);
		return 1;
	}
	if (argc == 3) {
		blob = fw_read_file(argv[2], &blob_len);
		if (!blob) {
			perror(argv[2]);
			return 1;
		}
		cfg.dict_blob = blob;
		cfg.dict_blob_len = blob_len;
	}
	len = hmb_trace_area_size(&cfg);
	area = len ? aligned_alloc(4096, (size_t)len) : NULL;
	if (!area || hmb_trace_producer_init(&p, area, len, &cfg)) {
		fprintf(stderr, "%s: the producer refused the configuration\n", argv[0]);
		return 1;
	}
	for (i = 0; i < FW_ROUNDS; i++) {
		err |= fw_gc_pick(&p, ts += 1000, (uint32_t)(100 + i), (uint16_t)(7 * i));
		err |= fw_temp(&p, ts += 1000, (int8_t)(-5 + 10 * i));
		err |= fw_erase(&p, ts += 1000, 0xdead0000u + (uint32_t)i, (uint64_t)1 << (40 + i));
	}
	err |= fw_idle(&p, ts += 1000);
	out = fopen(argv[1], "wb");
	if (err || !out || fwrite(area, 1, (size_t)len, out) != (size_t)len || fclose(out)) {
		fprintf(stderr, "%s: cannot emit or write %s\n", argv[0], argv[1]);
		return 1;
	}
	free(area);
	free(blob);
	return 0;
}
