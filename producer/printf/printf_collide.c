// SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT
/*
 * printf_collide.c - a unit that forgot its own HMB_TRACE_PRINTF_BASE:
 * its first site takes the id of printf_sample_sites.c's first site, and
 * `hmbtrace-cmd dict` refuses a firmware linked with both.
 */
#include "hmb_trace_printf.h"

static struct hmb_trace_producer fw_p;

int main(void)
{
	return HMB_TRACE_PRINTF(&fw_p, 0, 1, "collide=%u", 1u);
}
