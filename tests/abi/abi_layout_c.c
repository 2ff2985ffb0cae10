// SPDX-License-Identifier: GPL-2.0-only
/* The layout as a C11 compiler sees it (freestanding, pedantic). */
#include "abi_layout.h"

int hmb_abi_layout_c(void);
int hmb_abi_layout_c(void)
{
	return (int)sizeof(struct hmb_trace_meta);
}
