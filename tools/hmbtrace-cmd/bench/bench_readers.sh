#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The readers of captures, next to `trace-cmd report` of the same file in the
# same run: hmbtrace-cmd report, stat, export (protobuf, plain and
# --compress) and export --format json. Prints per command the wall and CPU time, records/s, peak RSS, the
# ratio of its time to trace-cmd report's, and the output's bytes per record.
# A benchmark, not a test: it never fails on a figure.
#
# Usage: bench_readers.sh HMBTRACE_CMD [RECORDS [WORKDIR]]
#   RECORDS  firmware records in the synthetic capture (default 1000000;
#            made once by make_big_capture.py and kept in WORKDIR)
#   WORKDIR  default ${TMPDIR:-/tmp}/hmbtrace-bench
set -euo pipefail

cmd=$(realpath "${1:?usage: bench_readers.sh HMBTRACE_CMD [RECORDS [WORKDIR]]}")
records=${2:-1000000}
work=${3:-${TMPDIR:-/tmp}/hmbtrace-bench}
here=$(dirname "$(realpath "$0")")
for p in /usr/bin/time trace-cmd python3; do
	command -v "$p" >/dev/null || { echo "bench_readers: $p not found (scripts/install-deps.sh)" >&2; exit 1; }
done
mkdir -p "$work"
dat=$work/capture-$records.dat
if [[ ! -s $dat ]]; then
	python3 "$here/make_big_capture.py" "$records" "$dat.part"
	mv "$dat.part" "$dat"
fi
n=$("$cmd" stat --json -i "$dat" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(c["records"] for dev in d["devices"] for c in dev["cores"]))')
echo "capture: $dat, $n firmware records, $(stat -c %s "$dat") bytes"

# run NAME OUTFILE COMMAND...: one line of figures; OUTFILE "-" for stdout to /dev/null.
base_wall= base_cpu=
run() {
	local name=$1 out=$2; shift 2
	local t=$work/time.txt
	if [[ $out == - ]]; then
		/usr/bin/time -f '%e %U %S %M' -o "$t" "$@" >/dev/null
	else
		rm -f "$out"
		/usr/bin/time -f '%e %U %S %M' -o "$t" "$@" >/dev/null
	fi
	read -r wall user sys rss_kb < <(tail -n 1 "$t")
	local cpu bytes=""
	cpu=$(python3 -c "print($user + $sys)")
	[[ $out != - ]] && bytes=$(stat -c %s "$out")
	if [[ -z $base_wall ]]; then
		base_wall=$wall base_cpu=$cpu
	fi
	python3 - "$name" "$n" "$wall" "$cpu" "$rss_kb" "$base_wall" "$base_cpu" "$bytes" <<'PY'
import sys
name, n, wall, cpu, rss, bw, bc, out = sys.argv[1:]
n, wall, cpu, rss, bw, bc = int(n), float(wall), float(cpu), int(rss), float(bw), float(bc)
per = f"{int(out) / n:8.1f}" if out else "       -"
print(f"{name:<22} {wall:8.2f} {cpu:8.2f} {n / max(wall, 1e-9) / 1e6:9.3f} {rss / 1024:8.1f}"
      f" {wall / bw:8.3f} {cpu / bc:8.3f} {per}")
PY
}
printf '%-22s %8s %8s %9s %8s %8s %8s %8s\n' command wall_s cpu_s Mrec/s rss_MB \
	x_wall x_cpu B/rec
run "trace-cmd report" - trace-cmd report -i "$dat"
run "hmbtrace-cmd report" - "$cmd" report -i "$dat"
run "hmbtrace-cmd stat" - "$cmd" stat -i "$dat"
run "export (protobuf)" "$work/out.pftrace" "$cmd" export -q -i "$dat" -o "$work/out.pftrace"
run "export --compress" "$work/out.pftrace" "$cmd" export -q --compress -i "$dat" -o "$work/out.pftrace"
run "export --format json" "$work/out.json" "$cmd" export -q -i "$dat" -o "$work/out.json"
rm -f "$work/out.pftrace" "$work/out.json" "$work/time.txt"
echo "x_wall, x_cpu: the command's time / trace-cmd report's (goal: <= 0.33)"
