// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * hmb_trace_declare_example.c - the one file that creates the example's
 * dictionary: ex_events[] and ex_nr_events, for hmb_trace_producer_config.
 */
#define HMB_TRACE_CREATE_DICTIONARY
#include "hmb_trace_declare_example.h"
