#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Summarise the measurement scenarios (tests/e2e/scenarios/measure-*).

  measure.py rate RUN_DIR      rate sweep + tracepoint benchmark table
  measure.py latency RUN_DIR   producer write -> trace_pipe latency

Python 3 standard library only. Exit status 1 if the inputs are incomplete.
"""

import glob
import json
import os
import re
import statistics
import sys


def kv_lists(path):
    out = {}
    cpu = None
    stats = {}
    with open(path) as fh:
        for line in fh:
            m = re.match(r"cpu:\s*(\d+)\s*$", line)
            if m:
                cpu = int(m.group(1))
                stats[cpu] = {}
                continue
            if ":" not in line:
                continue
            k, v = line.split(":", 1)
            k, v = k.strip(), v.strip()
            if cpu is not None and re.fullmatch(r"[a-z ]+", k):
                if re.fullmatch(r"\d+", v):
                    stats[cpu][k] = int(v)
                continue
            if re.fullmatch(r"\d+( \d+)*", v):
                out[k] = [int(x) for x in v.split()]
    return out, stats


def cmd_rate(run):
    ok = True
    bench = []
    if os.path.exists(f"{run}/bench.txt"):
        for line in open(f"{run}/bench.txt"):
            m = re.search(r"calls=(\d+) len=(\d+) ns=(\d+)", line)
            if m:
                bench.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    rates = [int(x) for x in open(f"{run}/sweep-rates").read().split()]
    print(f"{'rate/core':>10} {'produced/core':>13} {'elapsed s':>9} {'achieved/core/s':>15} "
          f"{'delivered':>9} {'hmb lost':>8} {'missing':>7} {'ftrace ovr':>10} {'dat MB':>7}  zero loss")
    best = None
    for i, rate in enumerate(rates):
        tp = f"{run}/truth.{i}.json"
        sp = f"{run}/sweep.{i}.txt"
        if not (os.path.exists(tp) and os.path.exists(sp)):
            print(f"{rate:>10} (no data)")
            ok = False
            continue
        t = json.load(open(tp))
        produced = [0] * 4
        for life in t["lives"]:
            for c in life["cores"]:
                produced[c["core"]] += c["produced"]
        kv, stats = kv_lists(sp)
        if "after_delivered" not in kv:
            print(f"{rate:>10} (incomplete)")
            ok = False
            continue
        dl = [a - b for a, b in zip(kv["after_delivered"], kv["before_delivered"])]
        lost = [0] * len(dl)
        # Every lost/<reason> the guest dumped (the module names them).
        for key in kv:
            if key.startswith("after_lost_") and "before" + key[5:] in kv:
                lost = [x + a - b for x, a, b in zip(lost, kv[key], kv["before" + key[5:]])]
        missing = [p - d - l for p, d, l in zip(produced, dl, lost)]
        ovr = sum(s.get("overrun", 0) + s.get("dropped events", 0) + s.get("commit overrun", 0)
                  for s in stats.values())
        dat = kv.get("dat_bytes", [0])[0]
        zero = sum(lost) == 0 and sum(missing) == 0 and ovr == 0
        el = t.get("elapsed_s", 0)
        ach = sum(produced) / 4 / el if el else 0
        print(f"{rate:>10} {sum(produced) // 4:>13} {el:>9.2f} {ach:>15.0f} {sum(dl):>9} "
              f"{sum(lost):>8} {sum(missing):>7} {ovr:>10} {dat / 1e6:>7.1f}  {'yes' if zero else 'NO'}")
        if zero and rate and (best is None or rate > best[0]):
            best = (rate, ach)
    if best:
        print(f"highest zero-loss step: {best[0]} records/s per core requested, "
              f"{best[1]:.0f} achieved by hmb-fwsim, x4 cores = {best[1] * 4:.0f} records/s")
    if bench:
        per = [ns / calls for calls, _, ns in bench]
        med = statistics.median(per)
        print(f"tracepoint alone (bench_record, len {bench[0][1]}): "
              + ", ".join(f"{p:.1f}" for p in per)
              + f" ns/call; median {med:.1f} ns = {1e9 / med / 1e6:.2f} M events/s on one CPU")
        if best:
            pipeline_per_cpu = best[1] * 2  # 4 cores on 2 CPUs
            print(f"ratio: tracepoint alone / sustained pipeline per CPU = "
                  f"{1e9 / med:.0f} / {pipeline_per_cpu:.0f} = {1e9 / med / pipeline_per_cpu:.0f}x")
    else:
        print("no tracepoint benchmark figures")
        ok = False
    return 0 if ok else 1


def cmd_latency(run):
    """Samples from the guest's trace_pipe reader (see measure-latency)."""
    path = f"{run}/latency-pipe.txt"
    if not os.path.exists(path):
        print(f"no {path}")
        return 1
    # Lines: "R <read_ns>" (reader's CLOCK_MONOTONIC after a read() returned)
    # followed by the trace_pipe text it read.
    rec_re = re.compile(r"\[(\d+)\]\s+\S+\s+(\d+)\.(\d+):\s+(\w+):\s+(.*)$")
    read_ns = None
    last_pass = {}
    samples = []
    with open(path, errors="replace") as fh:
        for line in fh:
            if line.startswith("R "):
                read_ns = int(line.split()[1])
                continue
            m = rec_re.search(line)
            if not m:
                continue
            cpu, sec, frac, name, rest = m.groups()
            ts = int(sec) * 1000000000 + int(frac.ljust(9, "0")[:9])
            cpu = int(cpu)
            if name == "workqueue_execute_start" and "hmb_trace_drain_work" in rest:
                last_pass[cpu] = ts
            elif name == "hmb_record":
                f = dict(re.findall(r"(\w+)=(\d+)", rest))
                if cpu not in last_pass or read_ns is None:
                    continue
                samples.append({"fw_ts": int(f["fw_ts"]), "emit": ts,
                                "pass": last_pass[cpu], "read": read_ns,
                                "core": int(f["core"]), "seq": int(f["seq"])})
    if len(samples) < 20:
        print(f"too few samples: {len(samples)}")
        return 1
    # fw_ts is host CLOCK_MONOTONIC (hmb-fwsim, clock_hz 1e9) minus hmb-fwsim's
    # epoch; emit/pass/read are the guest's CLOCK_MONOTONIC (trace_clock
    # mono). Under TCG both advance at the host's rate, so emit - fw_ts =
    # offset + latency. A record is always emitted after it was written, so
    # offset = min over samples of (emit - fw_ts) (bias: the true minimum
    # write -> emit latency, >= the minimum P). The spread of the per-second
    # minima checks that (no drift, phases well spread).
    d = [s["emit"] - s["fw_ts"] for s in samples]
    off = min(d)
    t0 = samples[0]["fw_ts"]
    span = (samples[-1]["fw_ts"] - t0) / 1e9
    nb = max(1, int(span))
    bins = [[] for _ in range(nb)]
    for s, x in zip(samples, d):
        bins[min(nb - 1, int((s["fw_ts"] - t0) / 1e9 * nb / span))].append(x)
    mins = [min(b) - off for b in bins if b]
    lat = [x - off for x in d]
    proc = [s["emit"] - s["pass"] for s in samples]
    vis = [s["read"] - s["emit"] for s in samples]
    total = [e + v for e, v in zip(lat, vis)]

    def pct(xs, q):
        xs = sorted(xs)
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    def row(name, xs):
        us = [x / 1000 for x in xs]
        print(f"{name:<34} {min(us):>9.1f} {statistics.median(us):>9.1f} {statistics.mean(us):>9.1f} "
              f"{pct(us, 0.9):>9.1f} {pct(us, 0.99):>9.1f} {max(us):>9.1f}")
    print(f"{len(samples)} records over {span:.1f} s; calibration: per-second minima of "
          f"(emit - fw_ts) within {max(mins) / 1000:.0f} us of the overall minimum "
          f"(offset error estimate); smallest pass start -> emit {min(proc) / 1000:.0f} us")
    print(f"{'microseconds':<34} {'min':>9} {'median':>9} {'mean':>9} {'p90':>9} {'p99':>9} {'max':>9}")
    row("write -> emitted into ftrace (E)", lat)
    row("  of which pass start -> emitted (P)", proc)
    row("emitted -> read from trace_pipe (V)", vis)
    row("write -> read from trace_pipe (E+V)", total)
    return 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("rate", "latency"):
        print(__doc__)
        return 2
    run = sys.argv[2]
    return cmd_rate(run) if sys.argv[1] == "rate" else cmd_latency(run)


if __name__ == "__main__":
    sys.exit(main())
