// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * A site whose event name, <file stem>_<line>, is longer than the
 * dictionary's 31 characters: `hmbtrace-cmd dict` refuses it.
 */
#include "hmb_trace_printf.h"

static struct hmb_trace_producer fw_p;

int main(void)
{
	return HMB_TRACE_PRINTF(&fw_p, 0, 1, "x=%u", 1u);
}
