/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * c_error.h - how the C files of hmbtrace-cmd (the ones that wrap
 * libtracecmd and libtracefs) hand an error message back to C++: into a
 * caller's buffer, NUL-terminated and cut to its size.
 */
#ifndef HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_C_ERROR_H_
#define HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_C_ERROR_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

__attribute__((format(printf, 3, 4)))
static inline void set_err(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !err_len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
}

#endif /* HMBTRACE_TOOLS_HMBTRACE_CMD_CAPTURE_C_ERROR_H_ */
