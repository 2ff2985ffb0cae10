#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Summarise the measurement scenarios (tests/e2e/scenarios/measure-*).

  measure.py rate RUN_DIR      rate sweep + tracepoint benchmark table
  measure.py latency RUN_DIR   producer write -> trace_pipe latency
  measure.py drain RUN_DIR     drain of a pre-filled area vs the bare
                               tracepoint, per run (runs trace-cmd report)
  measure.py area AREA_FILE    records in an area file and their mean payload
                               length (what the drain benchmark emits)

Python 3 standard library and tests/lib/hmbtest. Exit status 1 if the inputs are incomplete.
"""

import json
import os
import re
import statistics
import struct
import subprocess
import sys

from hmbtest.report import parse_line, ts_ns


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
            if "enabled=0" in line:
                print("note: the tracepoint benchmark ran with hmb_record disabled (a no-op)")
                ok = False
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
            print(f"zero-loss rate per CPU as a fraction of the tracepoint alone: "
                  f"{pipeline_per_cpu:.0f} / {1e9 / med:.0f} = "
                  f"{pipeline_per_cpu * med / 1e9:.3f}x (issue 9 target: >= 0.5x)")
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
    read_ns = None
    last_pass = {}
    samples = []
    marks = []
    with open(path, errors="replace") as fh:
        for line in fh:
            if line.startswith("R "):
                read_ns = int(line.split()[1])
                continue
            parsed = parse_line(line)
            if parsed is None:
                continue
            cpu, ts, name, rest = parsed
            if name == "workqueue_execute_start" and "hmb_trace_drain_work" in rest:
                last_pass[cpu] = ts
            elif name == "tracing_mark_write" and "lat_mark t=" in rest:
                if read_ns is not None:
                    w = int(rest.split("lat_mark t=")[1].split()[0])
                    marks.append({"write": w, "emit": ts, "read": read_ns})
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
    # The baseline, on one clock (no offset): trace_marker lines written at
    # the same rate carry their CLOCK_MONOTONIC write time.
    if len(marks) >= 20:
        print(f"baseline: {len(marks)} trace_marker writes (same instance, same rate)")
        row("marker: write -> emitted", [m["emit"] - m["write"] for m in marks])
        row("marker: emitted -> read (V)", [m["read"] - m["emit"] for m in marks])
        row("marker: write -> read", [m["read"] - m["write"] for m in marks])
    else:
        print(f"baseline: only {len(marks)} trace_marker samples")
    # What the polling cost meanwhile (debugfs drains before/after the step).
    d0, d1 = f"{run}/latency-drains0.txt", f"{run}/latency-drains1.txt"
    if os.path.exists(d0) and os.path.exists(d1):
        from measure_idle import drains
        a, b = drains(d0), drains(d1)
        secs = span + 2
        for k in sorted(b):
            if k not in a:
                continue
            n = b[k]["passes"] - a[k]["passes"]
            ns = b[k]["busy_ns"] - a[k]["busy_ns"]
            looks = b[k].get("peeks", 0) - a[k].get("peeks", 0)
            print(f"drain {k} (cpu {b[k]['cpu']}): {looks / secs:.0f} timer looks/s, {n / secs:.0f} passes/s, "
                  f"{ns / max(n, 1):.0f} ns/pass, {100 * ns / 1e9 / secs:.2f}% of a CPU in passes "
                  f"(over ~{secs:.0f} s, reader's window)")
    return 0


def area_records(path):
    """(records, payload bytes) in the ring pages of an area file.

    Layout: include/hmb_trace_abi.h (meta page; per core pages_per_core
    pages of page_size bytes from ring_offset; a 48-byte page header whose
    commit word holds records and bytes; records of an 8-byte header plus
    len bytes, 8-byte aligned). Pages of another generation, or being
    rewritten, are not counted. For a quiescent area the simulator filled.
    """
    with open(path, "rb") as fh:
        area = fh.read()
    magic, = struct.unpack_from("<I", area, 0)
    if magic != 0x54424D48:
        raise ValueError(f"{path}: no trace area (magic {magic:#x})")
    gen, page_size, nr_cores, _, ppc = struct.unpack_from("<IIHHI", area, 16)
    ring_offset, = struct.unpack_from("<Q", area, 56)
    records = payload = 0
    for page in range(nr_cores * ppc):
        off = ring_offset + page * page_size
        commit, page_gen = struct.unpack_from("<II", area, off + 24)
        if commit == 0xFFFFFFFF or page_gen != gen:
            continue
        end = off + 48 + (commit & 0xFFFF)
        pos = off + 48
        for _ in range((commit >> 16) & 0x7FFF):
            if pos + 8 > end:
                break
            length, = struct.unpack_from("<H", area, pos + 2)
            records += 1
            payload += length
            pos += (8 + length + 7) & ~7
    return records, payload


def cmd_area(path):
    records, payload = area_records(path)
    if not records:
        print(f"{path}: no records")
        return 1
    print(f"records={records} mean_len={payload / records:.2f}")
    return 0


BENCH_MARK = 65535  # dev of the benchmark's events (hmb_trace_bench.c)


def report_events(dat):
    """(cpu, ts_ns, name, rest) for every event of `trace-cmd report` of
    DAT (lines "[instance:] comm-pid [CPU] SECS.NSECS: NAME: FIELDS").
    Split by hand: a capture holds a million events or more."""
    proc = subprocess.Popen(["trace-cmd", "report", "-t", "-N", "-i", dat],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, errors="replace")
    for line in proc.stdout:
        j = line.find("] ")
        k = line.rfind("[", 0, j)
        if j < 0 or k < 0:
            continue
        parts = line[j + 2:].lstrip().split(": ", 2)
        if len(parts) != 3 or not line[k + 1:j].isdigit():
            continue
        sec, _, frac = parts[0].partition(".")
        if not (sec.isdigit() and frac.isdigit()):
            continue
        ts = ts_ns(sec, frac)
        yield int(line[k + 1:j]), ts, parts[1], parts[2]
    proc.wait()
    if proc.returncode:
        raise RuntimeError(f"trace-cmd report -i {dat}: status {proc.returncode}")


def capture_summary(dat):
    """Per CPU, from `trace-cmd report` of DAT: the drain's hmb_record
    events (count, first and last timestamp, payload bytes; not the
    benchmark's, dev 65535), hmb_lost counts, and
    drain-work time: the workqueue_execute_start -> _end of hmb_trace's
    work items that emitted at least one drained record."""
    cpus = {}
    for cpu, ts, name, rest in report_events(dat):
        c = cpus.get(cpu)
        if c is None:
            c = cpus[cpu] = {"n": 0, "first": None, "last": None, "bytes": 0,
                             "lost": 0, "work_ns": 0, "passes": 0,
                             "pass": None}
        if name == "hmb_record":
            # The fixed fields come first: dev= core= seq= fw_ts= event_id= len=.
            f = dict(x.split("=", 1) for x in rest.split(None, 6)[:6] if "=" in x)
            if int(f.get("dev", -1)) == BENCH_MARK:
                continue
            c["n"] += 1
            c["bytes"] += int(f.get("len", 0))
            if c["first"] is None:
                c["first"] = ts
            c["last"] = ts
            if c["pass"] is not None:
                c["pass"][2] = True
        elif name == "hmb_lost":
            cnt = re.search(r"\bcount=(\d+)", rest)
            c["lost"] += int(cnt.group(1)) if cnt else 0
        elif name == "workqueue_execute_start":
            work = re.search(r"work struct (\S+?):", rest)
            if "hmb_trace" in rest and work:
                c["pass"] = [work.group(1), ts, False]
        elif name == "workqueue_execute_end":
            work = re.search(r"work struct (\S+?):", rest)
            p = c["pass"]
            if p and work and work.group(1) == p[0]:
                if p[2]:
                    c["work_ns"] += ts - p[1]
                    c["passes"] += 1
                c["pass"] = None
    return cpus


def cmd_drain(run):
    """One row per run i: drain.i.dat, bench.i.txt, drain.i.txt (guest
    notes), ftrace-stats.i.txt, truth.i.json, host-load.i.txt (the host's
    /proc/loadavg after the boot: the machine is shared)."""
    ok = True
    runs = sorted(int(m.group(1)) for f in os.listdir(run)
                  if (m := re.fullmatch(r"truth\.(\d+)\.json", f)))
    if not runs:
        print(f"no truth.N.json in {run}")
        return 1
    print(f"{'run':>3} {'records':>8} {'lost':>5} {'ovr':>4} {'len':>5} {'CPUs':>4} "
          f"{'drain ns/rec':>12} {'work ns/rec':>11} {'idle':>5} "
          f"{'tp ns/call':>10} {'ratio':>6}  started by")
    ratios = []
    for i in runs:
        truth = json.load(open(f"{run}/truth.{i}.json"))
        produced = sum(c["produced"] for life in truth["lives"] for c in life["cores"])
        dat = f"{run}/drain.{i}.dat"
        bench = notes = None
        if os.path.exists(f"{run}/bench.{i}.txt"):
            bench = [(int(m.group(1)), int(m.group(2)), int(m.group(3))) for m in
                     re.finditer(r"calls=(\d+) len=(\d+) ns=(\d+)", open(f"{run}/bench.{i}.txt").read())]
        if os.path.exists(f"{run}/drain.{i}.txt"):
            notes, _ = kv_lists(f"{run}/drain.{i}.txt")
        stats_path = f"{run}/ftrace-stats.{i}.txt"
        if not (os.path.exists(dat) and bench and notes and os.path.exists(stats_path)):
            print(f"{i:>3} (incomplete: drain.{i}.dat, bench.{i}.txt, drain.{i}.txt, "
                  f"ftrace-stats.{i}.txt)")
            ok = False
            continue
        cpus = capture_summary(dat)
        drained = {c: v for c, v in cpus.items() if v["n"] > 1}
        n = sum(v["n"] for v in cpus.values())
        span = sum(v["last"] - v["first"] for v in drained.values())
        gaps = sum(v["n"] - 1 for v in drained.values())
        work = sum(v["work_ns"] for v in drained.values())
        lost = sum(v["lost"] for v in cpus.values())
        _, stats = kv_lists(stats_path)
        ovr = sum(s.get("overrun", 0) + s.get("dropped events", 0) for s in stats.values())
        per_rec = span / gaps if gaps else float("nan")
        work_rec = work / n if work and n else None
        tps = [ns / calls for calls, _, ns in bench]
        tp = statistics.median(tps)
        mean_len = sum(v["bytes"] for v in cpus.values()) / n if n else 0
        ratio = per_rec / tp
        ratios.append(ratio)
        before = sum(notes.get("delivered_before_enable", [0]))
        started = "enable" if before == 0 else f"insmod ({before} before enable)"
        print(f"{i:>3} {n:>8} {lost:>5} {ovr:>4} {mean_len:>5.1f} {len(drained):>4} "
              f"{per_rec:>12.1f} "
              + (f"{work_rec:>11.1f} {max(0.0, 1 - work / span):>5.0%} " if work_rec else f"{'n/a':>11} {'':>5} ")
              + f"{tp:>10.1f} {ratio:>5.2f}x  {started}")
        if n != produced or lost or ovr:
            print(f"    records {n} of {produced} produced, {lost} reported lost, "
                  f"{ovr} ftrace overrun/dropped: not a complete drain")
            ok = False
        load = ""
        if os.path.exists(f"{run}/host-load.{i}.txt"):
            load = "; host load average " + open(f"{run}/host-load.{i}.txt").read().split()[0]
        runs_text = ", ".join(f"{x:.0f}" for x in tps[:2])
        if len(tps) > 2:
            runs_text += ", (drain), " + ", ".join(f"{x:.0f}" for x in tps[2:])
        print(f"    tracepoint runs: {runs_text} ns/call{load}")
        if bench[0][0] != n or bench[0][1] != round(mean_len):
            print(f"    note: the benchmark ran {bench[0][0]} calls of {bench[0][1]} bytes")
    if ratios:
        print("drain ns/rec: per guest CPU, last - first hmb_record over records - 1, "
              "both summed over the CPUs that drained; work ns/rec: time in hmb_trace's work "
              "items that emitted records / records; idle: 1 - work / span; tp: the bare "
              "hmb_record tracepoint (hmb_trace_bench.ko on CPU 0, median of its runs "
              "before and after the drain)")
        print(f"ratio drain/tracepoint: median {statistics.median(ratios):.2f}x over "
              f"{len(ratios)} run(s), max {max(ratios):.2f}x (issue 9 target: <= 1.25x)")
    return 0 if ok else 1


def main():
    cmds = {"rate": cmd_rate, "latency": cmd_latency, "drain": cmd_drain, "area": cmd_area}
    if len(sys.argv) != 3 or sys.argv[1] not in cmds:
        print(__doc__)
        return 2
    return cmds[sys.argv[1]](sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
