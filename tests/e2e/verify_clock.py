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

With --retimed, REPORT is plain `trace-cmd report` of the capture retimed
by `hmbtrace-cmd retime`: the echo record's own ftrace timestamp is its
time (nothing converts it here), the bound is the fit's before it in
trace-cmd's order; the echo must also come between its markers in that
order (or tie with one within the bound), and the records retimed before
the first probe (the flight-recorder backlog among them) come before it.
"""
import json
import re
import statistics
import sys

from hmbtest.check import finish, parser, report_problems, start
from hmbtest.clockfit import to_host
from hmbtest.report import parse_report


def echo_records(truth):
    """{(core, seq): cookie} of the firmware's echo records (hmb-fwsim's
    truth: control.echoes, the answered ones carry the record's seq)."""
    out = {}
    for e in truth.get("control", {}).get("echoes", []):
        if e.get("status") == "ok" and "seq" in e:
            out[(int(e["core"]), int(e["seq"]))] = int(e["cookie"])
    return out


def check_retimed_order(F, probes, events, marks, index, conv):
    """trace-cmd's own order of a retimed capture: each echo between its
    markers (a tie within the bound allowed), and every record timed before
    the first probe's marker printed before it."""
    disorder, inside, tied = [], 0, 0
    for i in range(probes):
        ib, ia, ie = index.get((i, "before")), index.get((i, "after")), index.get(("echo", i))
        if None in (ib, ia, ie) or conv.get(i) is None:
            continue
        host, bound = conv[i]
        if ib < ie < ia:
            inside += 1
            continue
        if (ie < ib and marks[(i, "before")] - host <= bound) or \
           (ie > ia and host - marks[(i, "after")] <= bound):
            tied += 1
            continue
        disorder.append(f"probe {i}: echo at line {ie}, markers at lines {ib} and {ia}")
    report_problems(F, disorder, "trace-cmd's order: every echo between its markers "
                    "(or tied with one within the bound)")
    F.info(f"trace-cmd's order: {inside} of {probes} echoes printed between their markers, "
           f"{tied} next to one within the bound")
    first = index.get((0, "before"))
    if first is None:
        return
    before = [e for e in events if e.name == "hmb_record" and e.ts < marks[(0, "before")]]
    late = [e for e in before if e.idx > first]
    F.info(f"{len(before)} records timed before the first probe's marker, "
           f"{len(late)} of them printed after it")
    F.check(before and not late,
            f"{len(before)} records timed before the first probe (the backlog among them) "
            f"printed before it",
            f"expected the records timed before the first probe printed before it: "
            f"{len(before)} such records, {len(late)} printed after it")


def main():
    p = parser(__doc__)
    p.add_argument("--report", required=True)
    p.add_argument("--truth", required=True)
    p.add_argument("--probes", type=int, required=True)
    p.add_argument("--status", help="guest clock/ and ctrl/ status files")
    p.add_argument("--ops", help="guest ctrl-ops.txt")
    p.add_argument("--retimed", action="store_true",
                   help="REPORT is of a retimed capture: check the records' own timestamps")
    a, F = start(p)
    with open(a.truth) as fh:
        truth = json.load(fh)
    echoes = echo_records(truth)
    events = parse_report(a.report)
    marks = {}
    index = {}  # (probe, before/after) or ("echo", probe): line index in the report
    fit = None
    fits = 0
    conv = {}
    stale = 0
    for e in events:
        if e.name == "print":
            m = re.search(r"HMBPROBE n=(\d+) (before|after)", e.text)
            if m:
                marks[(int(m.group(1)), m.group(2))] = e.ts
                index[(int(m.group(1)), m.group(2))] = e.idx
        elif e.name == "hmb_clock":
            # A fit per trace clock: the capture's is "local" (0; a
            # module before per-clock fits has no clock field, all "local").
            if e.f.get("clock", 0) not in (0, "local"):
                continue
            fit = e.f
            fits += 1
            if "stale" in str(e.f.get("flags", "")):
                stale += 1
        elif e.name == "hmb_record":
            key = (e.f["core"], e.f["seq"])
            if key in echoes:
                index[("echo", echoes[key])] = e.idx
                if fit is None:
                    conv[echoes[key]] = None
                elif a.retimed:
                    conv[echoes[key]] = (e.ts, to_host(fit, e.f["fw_ts"])[1])
                else:
                    conv[echoes[key]] = to_host(fit, e.f["fw_ts"])
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
    what = "timestamp in the retimed capture" if a.retimed else "converted time"
    report_problems(F, bad, f"{len(bounds) - len(bad)} of {a.probes} echo records' "
                    f"{what} within their markers +- the bound")
    if a.retimed:
        check_retimed_order(F, a.probes, events, marks, index, conv)
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
