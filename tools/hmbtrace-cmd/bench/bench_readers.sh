#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The readers of captures, next to `trace-cmd report` of the same file in the
# same run: hmbtrace-cmd report, stat, export (protobuf, plain and
# --compress), export --format json, and retime (which writes a capture).
# Prints per command the wall and CPU
# time, records/s, peak RSS, the ratio of its time to trace-cmd report's, and
# the output's bytes per record: medians of ROUNDS runs (default 3).
# A benchmark, not a test: it never fails on a figure.
#
# Usage: [ROUNDS=N] bench_readers.sh HMBTRACE_CMD [RECORDS [WORKDIR]]
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
dat=$work/capture-clock-$records.dat
if [[ ! -s $dat ]]; then
	PYTHONPATH="$here/../../../tests/lib${PYTHONPATH:+:$PYTHONPATH}" \
		python3 "$here/make_big_capture.py" "$records" "$dat.part" --clock
	mv "$dat.part" "$dat"
fi
n=$("$cmd" stat --json -i "$dat" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(c["records"] for dev in d["devices"] for c in dev["cores"]))')
echo "capture: $dat, $n firmware records, $(stat -c %s "$dat") bytes"

# Every command runs ROUNDS times (default 3), the commands taking turns, so
# that a noisy minute on this shared machine hits them all alike; each
# figure printed is the median of its runs.
rounds=${ROUNDS:-3}
results=$work/results.txt
: >"$results"

# run NAME OUTFILE COMMAND...: one run, appended to $results; OUTFILE "-"
# for stdout to /dev/null.
run() {
	local name=$1 out=$2; shift 2
	local t=$work/time.txt bytes=0
	# The previous output is deleted and the disk told so (ext4's discard),
	# and everything written back, before the clock starts, not during it.
	[[ $out != - ]] && rm -f "$out"
	sync
	/usr/bin/time -f '%e %U %S %M' -o "$t" "$@" >/dev/null
	[[ $out != - ]] && bytes=$(stat -c %s "$out")
	printf '%s\t%s\t%s\n' "$name" "$(tail -n 1 "$t")" "$bytes" >>"$results"
}
for ((r = 1; r <= rounds; r++)); do
	echo "round $r of $rounds" >&2
	run "trace-cmd report" - trace-cmd report -i "$dat"
	run "hmbtrace-cmd report" - "$cmd" report -i "$dat"
	run "hmbtrace-cmd stat" - "$cmd" stat -i "$dat"
	run "export (protobuf)" "$work/out.pftrace" "$cmd" export -q -i "$dat" -o "$work/out.pftrace"
	run "export --compress" "$work/out.pftrace" "$cmd" export -q --compress -i "$dat" -o "$work/out.pftrace"
	run "export --format json" "$work/out.json" "$cmd" export -q -i "$dat" -o "$work/out.json"
	run "hmbtrace-cmd retime" "$work/out-retimed.dat" "$cmd" retime -q -i "$dat" -o "$work/out-retimed.dat"
done
rm -f "$work/out.pftrace" "$work/out.json" "$work/out-retimed.dat" "$work/time.txt"
python3 - "$n" "$results" <<'PY'
import statistics, sys
n = int(sys.argv[1])
runs = {}
for line in open(sys.argv[2]):
    name, fig, out = line.rstrip("\n").split("\t")
    wall, user, sys_, rss = fig.split()
    runs.setdefault(name, []).append((float(wall), float(user) + float(sys_), int(rss), int(out)))
med = {k: [statistics.median(r[i] for r in v) for i in range(4)] for k, v in runs.items()}
bw, bc = med["trace-cmd report"][0], med["trace-cmd report"][1]
print(f"{'command':<22} {'wall_s':>8} {'cpu_s':>8} {'Mrec/s':>9} {'rss_MB':>8} {'x_wall':>8} {'x_cpu':>8}"
      f" {'x_cpu max':>9} {'B/rec':>8}")
for name, (wall, cpu, rss, out) in med.items():
    worst = max(r[1] for r in runs[name]) / bc
    per = f"{out / n:8.1f}" if out else "       -"
    print(f"{name:<22} {wall:8.2f} {cpu:8.2f} {n / max(wall, 1e-9) / 1e6:9.3f} {rss / 1024:8.1f}"
          f" {wall / bw:8.3f} {cpu / bc:8.3f} {worst:9.3f} {per}")
print(f"medians of {len(runs['trace-cmd report'])} runs each; x_wall, x_cpu: the command's time /"
      " trace-cmd report's (goal: <= 0.33); x_cpu max: its slowest run / trace-cmd's median")
PY
