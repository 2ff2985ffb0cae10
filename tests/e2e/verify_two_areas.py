#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Two areas in one capture: each keeps its own dev, dictionary and counters.

usage: verify_two_areas.py --report RAW.txt --area TRUTH:STATUS --area TRUTH:STATUS
                           [--plugin PLUGIN.txt] [--cmd CMD.txt]
                           [--cmd-status STATUS.json] [--stat STAT.json]

RAW is `trace-cmd report -R -t -N` of the capture; each --area names one
simulated SSD's truth (hmb-fwsim --truth) and its area's status files
("name: value" lines, guest-lib.sh dump_status). The per-area delivery
checks (every record once, delivered + lost = produced) are
verify_trace.py's with --dev; here is what only two areas can show:
  - the status directories have distinct indexes, and each has the
    geometry, clock and build of its own truth;
  - every hmb event of the capture carries one of these devs, and each
    dev's hmb_state names one area;
  - PLUGIN (trace-cmd report with plugin_hmb.so) and CMD (hmbtrace-cmd
    report) print every record of the capture once, with the event name
    of its own area's dictionary of its generation (the truth's events,
    per life with --new-build-at-reset);
  - CMD-STATUS (hmbtrace-cmd status --json in the guest) shows both
    areas with the status files' per-core counters;
  - STAT (hmbtrace-cmd stat --json of the capture) has both devs.
"""
import json
import re
import sys
from collections import Counter, defaultdict

from hmbtest.check import die, finish, parser, report_problems, start
from hmbtest.formats import LOST_REASONS, load_lost_reasons
from hmbtest.report import core_streams, parse_report, parse_status, status_scalar
from hmbtest.truth import load_truth

# "dev=D core=C seq=S fw_ts=T <decoded>": both decoders' record text.
RECORD_RE = re.compile(r"dev=(\d+) core=(\d+) seq=(\d+) fw_ts=(\d+) (\S+)")


class Area:
    def __init__(self, spec):
        truth, _, status = spec.partition(":")
        if not status:
            die(f"--area wants TRUTH:STATUS, saw {spec!r}")
        self.truth = load_truth(truth)
        self.status = parse_status(status)
        self.status_path = status
        self.dev = status_scalar(self.status, "index")
        first = {e["id"]: e["name"] for e in self.truth["events"]}
        # Event names per life (producer generation), in life order.
        self.names = [{e["id"]: e["name"] for e in life.get("events", [])} or first
                      for life in self.truth["lives"]]

    def __str__(self):
        t = self.truth
        return (f"dev {self.dev} ({t['geometry']['nr_cores']} cores, "
                f"{t['clock']['hz']} Hz, build {t['lives'][-1].get('build_id', t['build_id'])[:8]})")


def check_status(F, areas):
    devs = [a.dev for a in areas]
    F.check(len(set(devs)) == len(devs) and all(isinstance(d, int) for d in devs),
            f"status indexes {devs} are distinct",
            f"expected distinct status indexes, saw {devs}")
    for a in areas:
        t, st = a.truth, a.status
        want = {"nr_cores": t["geometry"]["nr_cores"], "clock_hz": t["clock"]["hz"],
                "area_len": t["geometry"]["area_len"],
                "producer_gen": t["lives"][-1]["producer_gen"]}
        saw = {k: status_scalar(st, k) for k in want}
        bid = t["lives"][-1].get("build_id", t["build_id"]).lower()
        F.check(saw == want and st.get("build_id") == bid,
                f"{a}: status {saw}, build_id {bid[:12]}.. as its truth",
                f"{a.status_path}: expected {want} build_id {bid}, saw {saw} "
                f"build_id {st.get('build_id')}")
        F.check(st.get("state") == "attached", f"{a}: status state attached",
                f"{a}: expected status state attached, saw {st.get('state')}")


def expected_records(F, events, areas):
    """(dev, core, seq, fw_ts) -> (area, life index, event_id) for every
    hmb_record of the raw report."""
    out = {}
    for a in areas:
        mine = [e for e in events if not e.name.startswith("hmb_") or e.f.get("dev") == a.dev]
        streams, seg = core_streams(mine)
        for core, evs in streams.items():
            for e in evs:
                if e.name == "hmb_record":
                    out[(a.dev, core, e.f["seq"], e.f["fw_ts"])] = (a, seg[e.idx], e.f["event_id"])
    return out


def check_capture(F, events, areas):
    devs = {a.dev for a in areas}
    hmb = [e for e in events if e.name in ("hmb_record", "hmb_lost", "hmb_state", "hmb_dict")]
    stray = Counter(e.f.get("dev") for e in hmb if e.f.get("dev") not in devs)
    F.check(not stray, f"every hmb event carries dev {sorted(devs)}",
            f"expected every hmb event to carry one of the areas' devs {sorted(devs)}, "
            f"saw others: {dict(stray)}")
    recs = Counter(e.f.get("dev") for e in events if e.name == "hmb_record")
    F.check(all(recs.get(d) for d in devs),
            "records of each area: " + ", ".join(f"dev {d}: {recs.get(d, 0)}" for d in sorted(devs)),
            f"expected records of every area, saw {dict(recs)}")
    names = defaultdict(set)
    for e in events:
        if e.name == "hmb_state":
            names[e.f.get("dev")].add(e.f.get("name"))
    ok = all(len(names[d]) == 1 for d in devs) and \
        len({n for d in devs for n in names[d]}) == len(devs)
    F.check(ok, "hmb_state names one area per dev: "
            + ", ".join(f"dev {d}: {sorted(names[d])}" for d in sorted(devs)),
            f"expected one area name per dev, distinct, saw {dict(names)}")


def check_decoder(F, label, path, expected):
    """Every record once, with its own area's event name of its generation."""
    seen = Counter()
    problems, raw = [], []
    per = Counter()
    with open(path, errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            m = RECORD_RE.search(line)
            if not m:
                continue
            key = tuple(int(x) for x in m.groups()[:4])
            seen[key] += 1
            exp = expected.get(key)
            if exp is None:
                problems.append(f"{label} line {lineno}: record {key} is not in the capture")
                continue
            area, life, event_id = exp
            name = m.group(5).rstrip(":")
            if m.group(5).startswith("event_id="):
                raw.append(f"{label} line {lineno}: dev {key[0]} core {key[1]} seq {key[2]} "
                           f"not decoded: {line.strip()[:100]}")
                continue
            if life >= len(area.names):
                problems.append(f"{label} line {lineno}: {area}: a record after {life} resets, "
                                f"its truth has {len(area.names)} life/lives")
                continue
            want = area.names[life].get(event_id)
            if name != want:
                problems.append(f"{label} line {lineno}: {area} life {life} event_id {event_id}: "
                                f"expected {want!r}, saw {name!r}")
                continue
            per[(area.dev, life)] += 1
    dup = [k for k, n in seen.items() if n > 1]
    missing = [k for k in expected if k not in seen]
    F.check(not dup and not missing,
            f"{label}: every record of the capture once ({len(expected)})",
            f"{label}: expected every record of the capture once, {len(missing)} missing "
            f"(first {missing[:3]}), {len(dup)} more than once (first {dup[:3]})")
    report_problems(F, raw, f"{label}: every record decoded")
    report_problems(F, problems, f"{label}: every record with its own area's event name: "
                    + ", ".join(f"dev {d} gen #{life + 1}: {n}" for (d, life), n in sorted(per.items())))
    return per


def check_cmd_status(F, path, areas):
    try:
        with open(path) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        F.fail(f"cannot read hmbtrace-cmd status --json {path}: {e}")
        return
    devices = doc.get("devices", [])
    by_index = {}
    for d in devices:
        idx = d.get("index")
        by_index[int(idx) if isinstance(idx, (int, str)) and str(idx).isdigit() else idx] = d
    F.check(len(devices) == len(areas) and set(by_index) == {a.dev for a in areas},
            f"hmbtrace-cmd status shows {len(devices)} areas: "
            + ", ".join(f"{d.get('name')} (index {d.get('index')})" for d in devices),
            f"expected hmbtrace-cmd status to show areas with indexes {[a.dev for a in areas]}, "
            f"saw {[(d.get('name'), d.get('index')) for d in devices]}")
    for a in areas:
        d = by_index.get(a.dev)
        if d is None:
            continue
        cores = d.get("cores", [])
        got = [c.get("delivered") for c in cores]
        want = a.status.get("delivered")
        lost_got = {r: [c["lost"].get(r, 0) for c in cores]
                    for r in LOST_REASONS.values()}
        lost_want = {r: a.status.get(f"lost/{r}", []) for r in lost_got}
        F.check(got == want and lost_got == lost_want,
                f"hmbtrace-cmd status, {a}: delivered {got}, lost as the status files",
                f"hmbtrace-cmd status, {a}: expected delivered {want} lost {lost_want} "
                f"(status files), saw {got} {lost_got}")


def check_stat(F, path, areas):
    with open(path) as fh:
        stat = json.load(fh)
    devs = sorted(d.get("dev") for d in stat.get("devices", []))
    want = sorted(a.dev for a in areas)
    F.check(devs == want, f"hmbtrace-cmd stat shows devs {devs}",
            f"expected hmbtrace-cmd stat to show devs {want}, saw {devs}")


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--report", required=True)
    p.add_argument("--area", action="append", required=True, metavar="TRUTH:STATUS")
    p.add_argument("--plugin")
    p.add_argument("--cmd")
    p.add_argument("--cmd-status")
    p.add_argument("--stat")
    a, F = start(p, argv)
    load_lost_reasons(a.report)
    areas = [Area(s) for s in a.area]
    for area in areas:
        F.info(f"area {area}")
    check_status(F, areas)
    events = parse_report(a.report)
    check_capture(F, events, areas)
    expected = expected_records(F, events, areas)
    for label, path in (("plugin_hmb.so", a.plugin), ("hmbtrace-cmd report", a.cmd)):
        if path:
            per = check_decoder(F, label, path, expected)
            lives = [(area.dev, i) for area in areas for i in range(len(area.names))]
            F.check(all(per.get(k) for k in lives),
                    f"{label}: records of every area and generation decoded",
                    f"{label}: expected decoded records of every (dev, generation) {lives}, "
                    f"saw {dict(per)}")
    if a.cmd_status:
        check_cmd_status(F, a.cmd_status, areas)
    if a.stat:
        check_stat(F, a.stat, areas)
    return finish(F, "two-areas")


if __name__ == "__main__":
    sys.exit(main())
