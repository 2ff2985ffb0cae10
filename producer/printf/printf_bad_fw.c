// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * printf_bad_fw.c - printf sites that compile but that the dictionary
 * cannot express: `hmbtrace-cmd dict` refuses this firmware, naming each
 * site's file and line (printf_dict_unittest checks the lines below).
 */
#include "hmb_trace_printf.h"

static struct hmb_trace_producer fw_p;

int main(void)
{
	double ratio = 0.5;
	uint32_t a = 1, b = 2;

	HMB_TRACE_PRINTF(&fw_p, 0, 1, "name=%s", a);
	HMB_TRACE_PRINTF(&fw_p, 0, 2, "a=%u b=%u", a);
	HMB_TRACE_PRINTF(&fw_p, 0, 3, "a=%u", a, b);
	HMB_TRACE_PRINTF(&fw_p, 0, 4, "ratio=%u", ratio);
	HMB_TRACE_PRINTF(&fw_p, 0, 5, "w=%*u", a);
	return 0;
}
