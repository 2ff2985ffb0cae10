#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""clock scenario: causality probes. Each probe is a trace_marker line
"HMBPROBE n=I before", a firmware echo record with cookie I, and
"HMBPROBE n=I after". The echo record's firmware time, converted with the
capture's hmb_clock fit (clock/hmb_clock_fit.h: the arithmetic is redone
here, independently of decode/), must lie between the two markers' ftrace
times widened by the fit's stated bound, for every probe. The markers are
written by the guest before the request and after the answer, so a fit
that is wrong by more than the bound plus the bracket fails: the firmware
clock's offset from the guest's is seconds, the brackets are milliseconds.
"""
import json
import re
import statistics
import sys

from hmbtest.check import finish, parser, report_problems, start
from hmbtest.report import parse_report


def convert(fit, tick):
    """clock/hmb_clock_fit.c hmb_clock_to_host()."""
    if tick >= fit["tick_ref"]:
        host = fit["host_ref"] + (((tick - fit["tick_ref"]) * fit["mult"]) >> 32)
    else:
        host = fit["host_ref"] - (((fit["tick_ref"] - tick) * fit["mult"]) >> 32)
    if tick < fit["tick_first"]:
        dist = fit["tick_first"] - tick
    elif tick > fit["tick_last"]:
        dist = tick - fit["tick_last"]
    else:
        dist = fit["half_gap"]
    return host, fit["err_ns"] + ((dist * fit["slope_err"]) >> 32) + 1


def echo_records(truth):
    """{(core, seq): cookie} of the firmware's echo records (hmb-fwsim's
    truth: control.echoes, the answered ones carry the record's seq)."""
    out = {}
    for e in truth.get("control", {}).get("echoes", []):
        if e.get("status") == "ok" and "seq" in e:
            out[(int(e["core"]), int(e["seq"]))] = int(e["cookie"])
    return out


def main():
    p = parser(__doc__)
    p.add_argument("--report", required=True)
    p.add_argument("--truth", required=True)
    p.add_argument("--probes", type=int, required=True)
    p.add_argument("--status", help="guest clock/ and ctrl/ status files")
    p.add_argument("--ops", help="guest ctrl-ops.txt")
    a, F = start(p)
    with open(a.truth) as fh:
        truth = json.load(fh)
    echoes = echo_records(truth)
    events = parse_report(a.report)
    marks = {}
    fit = None
    fits = 0
    conv = {}
    stale = 0
    for e in events:
        if e.name == "print":
            m = re.search(r"HMBPROBE n=(\d+) (before|after)", e.text)
            if m:
                marks[(int(m.group(1)), m.group(2))] = e.ts
        elif e.name == "hmb_clock":
            fit = e.f
            fits += 1
            if "stale" in str(e.f.get("flags", "")):
                stale += 1
        elif e.name == "hmb_record":
            key = (e.f["core"], e.f["seq"])
            if key in echoes:
                if fit is None:
                    conv[echoes[key]] = None
                else:
                    conv[echoes[key]] = convert(fit, e.f["fw_ts"])
    F.check(fits, f"{fits} hmb_clock fits in the capture ({stale} stale)",
            "expected hmb_clock events in the capture, saw none")
    F.check(len(echoes) >= a.probes, f"{len(echoes)} echo records in the truth",
            f"expected {a.probes} echo records in hmb-fwsim's truth, saw {len(echoes)}")
    bad, missing, bounds, widths, slack = [], [], [], [], []
    for i in range(a.probes):
        b, af = marks.get((i, "before")), marks.get((i, "after"))
        c = conv.get(i)
        if b is None or af is None or c is None:
            missing.append(i)
            continue
        host, bound = c
        bounds.append(bound)
        widths.append(af - b)
        slack.append(min(host - b, af - host))
        if not (b - bound <= host <= af + bound):
            bad.append(f"probe {i}: converted {host} outside [{b} - {bound}, {af} + {bound}] "
                       f"by {max(b - bound - host, host - af - bound)} ns")
    F.check(not missing, f"all {a.probes} probes have both markers and a converted echo",
            f"expected every probe's markers and a converted echo record, missing "
            f"{len(missing)}: first {missing[:5]}")
    report_problems(F, bad, f"every echo record's converted time within its markers "
                       f"+- the bound ({len(bounds)} probes)")
    if bounds:
        q = statistics.quantiles(bounds, n=100) if len(bounds) > 1 else bounds * 99
        F.info(f"bound: median {statistics.median(bounds) / 1000:.1f} us, p99 "
               f"{q[98] / 1000:.1f} us, worst {max(bounds) / 1000:.1f} us; marker bracket: "
               f"median {statistics.median(widths) / 1000:.1f} us; echo inside the bracket "
               f"by median {statistics.median(slack) / 1000:.1f} us, worst "
               f"{min(slack) / 1000:.1f} us (negative: outside, within the bound)")
    if a.status:
        st = {}
        with open(a.status) as fh:
            for line in fh:
                k, _, v = line.partition(":")
                st[k.strip()] = v.strip()
        F.info("status: " + ", ".join(f"{k}={st[k]}" for k in sorted(st)))
        req, tmo = int(st.get("ctrl/requests", 0)), int(st.get("ctrl/timeouts", -1))
        F.check(req > 0 and 0 <= tmo <= req // 100,
                f"{req} control requests, {tmo} timed out (counted, at most 1%)",
                f"expected control requests with at most 1% timed out, saw {req} requests, "
                f"{tmo} timeouts")
    if a.ops:
        with open(a.ops) as fh:
            ops = fh.read()
        want = ["event_mask: 0 0xfffffffffffffffe", "tracing: stopped", "tracing: started",
                "ring_mode: overwrite"]
        F.check(all(w in ops for w in want), "the device acknowledged event_mask, stop, "
                "start, ring_mode", f"expected {want} in ctrl-ops.txt, saw {ops!r}")
    return finish(F, "clock")


if __name__ == "__main__":
    sys.exit(main())
