#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What an idle device costs (measure-idle): per window, busy CPU from
/proc/stat against the window without the module, and from the module's
debugfs drains file the passes per second and the time inside them, the
module's timer expiries and work items per second (timer and workqueue
tracepoints) and its control requests per second."""
import os
import re
import sys

USER_HZ = 100


def drains(path):
    rows = {}
    with open(path) as fh:
        head = fh.readline().split()
        for line in fh:
            v = line.split()
            rows[int(v[0])] = dict(zip(head, (int(x) for x in v)))
    return rows


def main(share):
    windows = {}
    with open(os.path.join(share, "idle.txt")) as fh:
        for line in fh:
            m = re.match(r"(\w+): busy_jiffies (\d+) seconds ([\d.]+) ([\d.]+)"
                         r"(?: timers (\d+) works (\d+) requests (\d+))?", line)
            if m:
                windows[m.group(1)] = (int(m.group(2)), float(m.group(4)) - float(m.group(3)),
                                       [int(m.group(i) or 0) for i in (5, 6, 7)])
    if "unloaded" not in windows or "on" not in windows:
        print("FAIL: missing windows in idle.txt")
        return 1
    base = windows["unloaded"][0] / USER_HZ / windows["unloaded"][1]
    print(f"{'window':8} {'busy CPU':>9} {'vs unloaded':>12} {'passes/s':>9} {'ns/pass':>8} "
          f"{'in passes':>10} {'timers/s':>9} {'works/s':>8} {'requests/s':>10}")
    for name in ("unloaded", "off", "on"):
        if name not in windows:
            continue
        jiffies, secs, (timers, works, requests) = windows[name]
        busy = jiffies / USER_HZ / secs
        passes = ns = 0
        d0 = os.path.join(share, f"idle-{name}-drains0.txt")
        d1 = os.path.join(share, f"idle-{name}-drains1.txt")
        if os.path.exists(d0) and os.path.exists(d1):
            a, b = drains(d0), drains(d1)
            passes = sum(b[k]["passes"] - a[k]["passes"] for k in b)
            ns = sum(b[k]["busy_ns"] - a[k]["busy_ns"] for k in b)
        per = f"{ns / passes:8.0f}" if passes else f"{'-':>8}"
        inside = f"{ns / 1e9 / secs * 100:9.4f}%" if passes else f"{'-':>10}"
        print(f"{name:8} {busy * 100:8.3f}% {(busy - base) * 100:+11.3f}% "
              f"{passes / secs:9.1f} {per} {inside} {timers / secs:9.1f} {works / secs:8.1f} "
              f"{requests / secs:10.1f}")
    print("busy CPU: /proc/stat user+nice+system+irq+softirq of all CPUs per second of "
          "wall time (1 CPU = 100%); 'in passes': the drains' own time (ktime around a pass; "
          "passes are counted only while consuming); timers/s, works/s: the module's hrtimer "
          "expiries and work items (all CPUs); requests/s: control requests (the clock sync)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
