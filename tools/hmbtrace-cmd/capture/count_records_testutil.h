/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For tests: counts hmb_record events per firmware core another way than
 * capture_c.c does: CPU by CPU with tracecmd_read_data() and
 * libtraceevent's own tep_get_field_val(), no merge, no checks of ours.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_COUNT_RECORDS_TESTUTIL_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_COUNT_RECORDS_TESTUTIL_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Adds to counts[core] for core < nr_counts; returns the total, or -1. */
long long count_hmb_records_per_core(const char *path, uint64_t *counts,
				     int nr_counts);

#ifdef __cplusplus
}
#endif

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_COUNT_RECORDS_TESTUTIL_H_ */
