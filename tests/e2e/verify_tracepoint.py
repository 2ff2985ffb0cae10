#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The hmb events reach every consumer of their tracepoints alike.

The e2e tracepoint scenario: the hmb instance, the top-level instance and
perf stat -e 'hmb:*' listened at once. Checks: each hmb event (hmb_record,
hmb_lost, hmb_state, hmb_dict, hmb_clock) counted the same by the three;
hmb_record as many as hmb-fwsim produced; the records of each (core, event
id) the same in both instances; and while the hmb instance's tracing_on
was 0 the drain consumed nothing although the tracepoints had probes
(the gate: gate.txt); with --bpftrace, bpftrace's records per event id
equal hmbtrace-cmd stat's. Exact delivery of each capture against the truth is
verify_trace.py record's.
"""
import csv
import json
import re
import sys
from collections import Counter

from hmbtest.check import finish, parser, start
from hmbtest.report import parse_report, parse_status
from hmbtest.truth import load_truth, truth_total

EVENTS = ("hmb_record", "hmb_lost", "hmb_state", "hmb_dict", "hmb_clock")


def perf_counts(path):
    """{event: count} of perf stat -x, output ("<not counted>" as None)."""
    counts = {}
    with open(path, newline="") as fh:
        for row in csv.reader(fh):
            if len(row) < 3 or row[0].startswith("#"):
                continue
            name = row[2].split(":", 1)[-1]
            counts[name] = int(row[0]) if row[0].isdigit() else None
    return counts


def check_bpftrace(F, a, truth):
    """bpftrace's records per event id equal hmbtrace-cmd stat's per name
    (the truth names the ids)."""
    names = {e["id"]: e["name"] for e in truth["events"]}
    bpf = Counter()
    with open(a.bpftrace) as fh:
        for line in fh:
            m = re.match(r"@\[(\d+)\]: (\d+)", line.strip())
            if m:
                bpf[names.get(int(m.group(1)), f"id {m.group(1)}")] += int(m.group(2))
    with open(a.stat) as fh:
        stat = json.load(fh)
    st = Counter()
    for dev in stat["devices"]:
        for c in dev["cores"]:
            st.update(c["events"])
    F.check(bpf and bpf == st,
            f"bpftrace's records per event id = hmbtrace-cmd stat's ({sum(bpf.values())})",
            f"expected bpftrace's counts per event = stat's, saw {dict(bpf)} vs {dict(st)}")


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--truth", required=True)
    p.add_argument("--hmb", required=True, help="trace-cmd report of the hmb instance")
    p.add_argument("--top", required=True, help="trace-cmd report of the top-level instance")
    p.add_argument("--perf", required=True, help="perf stat -x, output")
    p.add_argument("--gate", required=True, help="guest's gate.txt")
    p.add_argument("--bpftrace", help="bpftrace output: '@[EVENT_ID]: COUNT' lines")
    p.add_argument("--stat", help="hmbtrace-cmd stat --json of the hmb instance's capture")
    a, F = start(p, argv)

    produced = sum(truth_total(load_truth(a.truth)).values())
    hmb = parse_report(a.hmb, light=True)
    top = parse_report(a.top, light=True)
    # light drops hmb_dict: count those lines separately.
    def count(path, events):
        c = Counter(e.name for e in events if e.name in EVENTS)
        with open(path) as fh:
            c["hmb_dict"] = sum(1 for line in fh if " hmb_dict:" in line)
        return c
    c_hmb, c_top = count(a.hmb, hmb), count(a.top, top)
    perf = perf_counts(a.perf)
    for ev in EVENTS:
        F.check(ev in perf and perf[ev] is not None, f"perf counted hmb:{ev}",
                f"expected a perf count for hmb:{ev}, saw {perf.get(ev, 'no line')}")
        seen = (c_hmb[ev], c_top[ev], perf.get(ev))
        F.check(len(set(seen)) == 1,
                f"{ev}: {c_hmb[ev]} in the hmb instance = top level = perf",
                f"{ev}: expected the same count in the hmb instance, the top level "
                f"and perf, saw {seen[0]}, {seen[1]}, {seen[2]}")
    F.check(c_hmb["hmb_record"] == produced,
            f"hmb_record: {produced} records, as hmb-fwsim produced",
            f"expected {produced} hmb_record (hmb-fwsim's truth), saw {c_hmb['hmb_record']}")
    F.check(c_hmb["hmb_state"] > 0 and c_hmb["hmb_dict"] > 0,
            "metadata (hmb_state, hmb_dict) in the capture",
            f"expected hmb_state and hmb_dict, saw {dict(c_hmb)}")

    def per_id(events):
        return Counter((e.f.get("core"), e.f.get("event_id"))
                       for e in events if e.name == "hmb_record")
    F.check(per_id(hmb) == per_id(top),
            f"records per (core, event id) equal in both instances ({len(per_id(hmb))} keys)",
            "expected the same records per (core, event id) in both instances")

    gate = parse_status(a.gate)
    off = gate.get("delivered_while_off")
    F.check(isinstance(off, list) and off and not any(off),
            f"nothing consumed while the hmb instance was off ({off})",
            f"expected delivered all 0 while instances/hmb/tracing_on was 0, saw {off}")
    F.check(gate.get("consuming_while_off") == [1],
            "the tracepoints had probes meanwhile (consuming 1)",
            f"expected consuming 1 while off, saw {gate.get('consuming_while_off')}")
    if a.bpftrace:
        check_bpftrace(F, a, load_truth(a.truth))
    F.info("counts " + ", ".join(f"{ev} {c_hmb[ev]}/{c_top[ev]}/{perf.get(ev)}"
                                 for ev in EVENTS) + " (hmb/top/perf)")
    return finish(F, "tracepoint")


if __name__ == "__main__":
    sys.exit(main())
