#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check `hmbtrace-cmd stat --json` of a capture against hmb-fwsim's truth.

usage: verify_stat.py --stat STAT.json --truth TRUTH.json [--no-loss] [--dev N]

Per firmware core, over every producer generation ("life") of the truth:
  - records + lost (all reasons) = records produced, exactly;
  - stat's own check of hmb_lost against the sequence numbers agrees;
  - the core saw the truth's producer generations;
with --no-loss: lost = 0 and the per-event counts equal the truth's.
The capture has one device, or with --dev N (several areas in one
capture, each with its own truth) the device N is checked.
"""
import json
import sys
from collections import Counter

from hmbtest.check import finish, parser, report_problems, start


def truth_per_core(truth):
    produced, events, gens = Counter(), {}, {}
    for life in truth["lives"]:
        for c in life["cores"]:
            k = c["core"]
            produced[k] += c["produced"]
            events.setdefault(k, Counter()).update(c.get("event_counts", {}))
            gens.setdefault(k, []).append(life["producer_gen"])
    return produced, events, gens


def check(F, stat, truth, no_loss, dev=None):
    produced, events, gens = truth_per_core(truth)
    devices = stat.get("devices", [])
    if dev is not None:
        devs = [d.get("dev") for d in devices]
        devices = [d for d in devices if d.get("dev") == dev]
        if not F.check(len(devices) == 1, f"stat reports device {dev} (of {devs})",
                       f"expected device {dev} once in stat, saw devices {devs}"):
            return
    elif not F.check(len(devices) == 1, "stat reports one device",
                     f"expected one device in stat, saw {len(devices)}"):
        return
    cores = {c["core"]: c for c in devices[0]["cores"]}
    F.check(set(cores) == set(produced), f"stat reports cores {sorted(cores)}",
            f"stat reports cores {sorted(cores)}, the truth has {sorted(produced)}")
    problems = []
    for k in sorted(produced):
        c = cores.get(k)
        if c is None:
            continue
        lost = c["lost"]["total"]
        if c["records"] + lost != produced[k]:
            problems.append(f"core {k}: records {c['records']} + lost {lost} = "
                            f"{c['records'] + lost}, produced {produced[k]}")
        if c["seq_check"] != "agrees":
            problems.append(f"core {k}: stat's sequence check says {c['seq_check']!r}")
        if c["producer_gens"] != gens[k]:
            problems.append(f"core {k}: producer generations {c['producer_gens']}, "
                            f"truth {gens[k]}")
        if no_loss:
            if lost:
                problems.append(f"core {k}: {lost} lost, expected none")
            want = {n: v for n, v in events[k].items() if v}
            if c["events"] != want:
                problems.append(f"core {k}: event counts {c['events']}, truth {want}")
    what = "records + lost = produced" + (", 0 lost, event counts" if no_loss else "")
    report_problems(F, problems, f"stat per core: {what} equal the truth "
                    f"({sum(produced.values())} records produced)")


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--stat", required=True)
    p.add_argument("--truth", required=True)
    p.add_argument("--no-loss", action="store_true")
    p.add_argument("--dev", type=int, help="check this device (several in the capture)")
    a, F = start(p, argv)
    with open(a.stat) as fh:
        stat = json.load(fh)
    with open(a.truth) as fh:
        truth = json.load(fh)
    check(F, stat, truth, a.no_loss, a.dev)
    return finish(F, "stat")


if __name__ == "__main__":
    sys.exit(main())
