// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * fw_bench_dict.c - the one file that creates the sample firmware's
 * dictionary: fw_events[] and fw_nr_events, const, in ROM.
 */
#define HMB_TRACE_CREATE_DICTIONARY
#include "fw_bench_events.h"
