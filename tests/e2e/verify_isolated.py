#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The isolated scenario's checks: with isolcpus=1 nohz_full=1, no timer of
hmb_trace.ko expires and no work item of it runs on CPU 1, while on CPU 0
the drain's timer, the drain's work and the clock sync's work do (so the
method would have seen them on CPU 1); every drain context lives on CPU 0;
records were delivered.

Usage: verify_isolated.py SHARE"""

import re
import sys

# hrtimer_expire_entry: "... function=hmb_trace_drain_timer ..."
# workqueue_execute_start: "... function hmb_trace_drain_work ..."
FUNC = re.compile(r"(hrtimer_expire_entry|workqueue_execute_start):.*function[= ](\S+)")


def hmb_functions(path):
    seen = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = FUNC.search(line)
            if m and m[2].startswith("hmb_trace_"):
                key = (m[1], m[2])
                seen[key] = seen.get(key, 0) + 1
    return seen


def main():
    share = sys.argv[1]
    failed = 0

    def check(what, cond):
        nonlocal failed
        print(("ok - " if cond else "not ok - ") + what)
        failed += 0 if cond else 1

    cmdline = open(f"{share}/iso-cmdline.txt").read()
    check(f"the guest booted with isolcpus=1 nohz_full=1 ({cmdline.strip()})",
          "isolcpus=1" in cmdline and "nohz_full=1" in cmdline)
    quiet = open(f"{share}/iso-quiet.txt").read().strip()
    check(f"nobody tracing (module loaded, 2 s): no control request, sync idle ({quiet})",
          quiet == "before tracing: requests 0 sync idle")
    cpu0 = hmb_functions(f"{share}/iso-cpu0.txt")
    cpu1 = hmb_functions(f"{share}/iso-cpu1.txt")
    print(f"figures: hmb_trace timers and work on CPU 0: {cpu0}")
    print(f"figures: hmb_trace timers and work on CPU 1: {cpu1}")
    check("CPU 0 ran the drain timer, the drain work and the clock work "
          "(the tracepoints see them)",
          ("hrtimer_expire_entry", "hmb_trace_drain_timer") in cpu0 and
          ("workqueue_execute_start", "hmb_trace_drain_work") in cpu0 and
          ("workqueue_execute_start", "hmb_trace_clock_work") in cpu0)
    check("no hmb_trace timer expired and no hmb_trace work ran on CPU 1", not cpu1)
    # The reset-path rule: the drain and clock work go to hmb_trace_wq,
    # which is WQ_MEM_RECLAIM (its rescuer thread carries its name).
    queues = set()
    for cpu in (0, 1):
        with open(f"{share}/iso-cpu{cpu}.txt", errors="replace") as f:
            for line in f:
                m = re.search(r"workqueue_queue_work:.*function=(hmb_trace_\S+)(?: \[\S+\])? "
                              r"workqueue=(\S+)", line)
                if m:
                    queues.add((m[1], m[2]))
    print(f"figures: hmb_trace work queued on: {sorted(queues)}")
    check("the drain and the clock work are queued on hmb_trace_wq only",
          {q for _, q in queues} == {"hmb_trace"} and
          {f for f, _ in queues} >= {"hmb_trace_drain_work", "hmb_trace_clock_work"})
    comms = open(f"{share}/iso-comm.txt").read().split()
    check("hmb_trace_wq is WQ_MEM_RECLAIM (its rescuer thread hmb_trace exists)",
          "hmb_trace" in comms)
    drains = [line.split() for line in open(f"{share}/iso-drains.txt")
              if line[:1].isdigit()]
    print(f"figures: drain contexts (drain cpu home_cpu ...): "
          f"{[(d[0], d[1], d[2]) for d in drains]}")
    check("every drain context runs and belongs on CPU 0",
          bool(drains) and all(d[1] == "0" and d[2] == "0" for d in drains))
    status = dict(line.split(": ", 1) for line in open(f"{share}/iso-status.txt"))
    cores = status.get("core_cpu", "").split()
    delivered = [int(x) for x in status.get("delivered", "").split()]
    check(f"every firmware core drained on CPU 0 (core_cpu {cores})",
          bool(cores) and all(c == "0" for c in cores))
    check(f"records were delivered ({delivered})", sum(delivered) > 0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
