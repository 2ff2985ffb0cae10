#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench_readers.sh twice on the same capture with the same binary: the
# events walked through libtracecmd's iteration (HMBTRACE_REFERENCE_WALK=1,
# what main does) and from the capture's pages (capture/tracecmd_walk_c.h),
# the two tables one after the other; each table's ratios are to its own
# run of `trace-cmd report`. A benchmark, not a test.
#
# Usage: [ROUNDS=N] bench_walks.sh HMBTRACE_CMD [RECORDS [WORKDIR]]
set -euo pipefail

cmd=$(realpath "${1:?usage: bench_walks.sh HMBTRACE_CMD [RECORDS [WORKDIR]]}")
records=${2:-1000000}
work=${3:-${TMPDIR:-/tmp}/hmbtrace-bench}
here=$(dirname "$(realpath "$0")")
mkdir -p "$work"
reference=$work/hmbtrace-cmd-reference-walk
printf '#!/bin/sh\nHMBTRACE_REFERENCE_WALK=1 exec %q "$@"\n' "$cmd" >"$reference"
chmod +x "$reference"
echo "== reference walk (libtracecmd's iteration)"
"$here/bench_readers.sh" "$reference" "$records" "$work"
echo "== page walk"
env -u HMBTRACE_REFERENCE_WALK "$here/bench_readers.sh" "$cmd" "$records" "$work"
rm -f "$reference"
