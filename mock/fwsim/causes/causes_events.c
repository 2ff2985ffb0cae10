// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * causes_events.c - the one file that creates the die model's dictionary:
 * cz_events[], cz_cmds[] and their counts, for hmb_trace_producer_config.
 */
#define HMB_TRACE_CREATE_DICTIONARY
#include "causes_events.h"
