#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# HMB_TRACE_PRINTF's compile-time errors: a site the header can refuse
# does not compile, with the header's message; a good site compiles (so
# that a failure is the site's, not the command's).
# Usage: compile_errors_test.sh CC PRODUCER_DIR INCLUDE_DIR
set -euo pipefail
cc=$1 producer=$2 include=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

site() { # NAME BODY: a unit with one site
	printf '#include "hmb_trace_printf.h"\nint f(struct hmb_trace_producer *p, unsigned a, char *s)\n{\n\t(void)a; (void)s;\n\treturn %s;\n}\n' "$2" >"$tmp/$1.c"
}
compile() { "$cc" -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -I"$producer" -I"$include" "$tmp/$1.c" 2>"$tmp/$1.err"; }

site good 'HMB_TRACE_PRINTF(p, 0, 1, "a=%u", a)'
compile good || fail "a good site does not compile: $(cat "$tmp/good.err")"

long=$(printf 'x%.0s' {1..96})
site long "HMB_TRACE_PRINTF(p, 0, 1, \"$long\")"
site many 'HMB_TRACE_PRINTF(p, 0, 1, "%u%u%u%u%u%u%u%u%u", a, a, a, a, a, a, a, a, a)'
site pointer 'HMB_TRACE_PRINTF(p, 0, 1, "s=%u", s)'
declare -A want=([long]="format too long" [many]="more than 8 arguments" [pointer]="")
for t in long many pointer; do
	if compile "$t"; then fail "$t: compiles"; fi
	[[ -z ${want[$t]} ]] || grep -q "${want[$t]}" "$tmp/$t.err" ||
		fail "$t: not '${want[$t]}': $(head -5 "$tmp/$t.err")"
done
echo "ok: a format too long, 9 arguments and a pointer argument do not compile"
