// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/* fwsim_events.c - hmb-fwsim's event dictionary, from fwsim_events.def. */
#define HMB_TRACE_CREATE_DICTIONARY
#include "fwsim_events.h"

/* fw_events[] holds ids 1, 2, ... in order (fw_events_unittest checks). */
const struct hmb_trace_event_desc *fw_event_by_id(uint16_t id)
{
	return id >= 1 && id <= fw_nr_events ? &fw_events[id - 1] : 0;
}
