#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check the cmd scenario: hmbtrace-cmd status/stream/marker in the guest.

usage: verify_stream.py --dir RUN_DIR [--marker TEXT] [-v]

RUN_DIR holds what tests/e2e/scenarios/cmd/guest.sh brought back and
hmb-fwsim's truth.json. Checks:
  - stream.txt has every record of every core exactly once, in sequence
    order per core (0 .. produced-1, the truth's count), on CPU core mod
    the number of CPUs; every record decoded (no "(no dictionary yet)",
    "(not in the dictionary)", MALFORMED), no LOST line;
  - the marker line is in it exactly once, with records before and after;
  - stream exited 0 and its summary (stderr) counts the same records, 0 lost;
  - status --json at the end: one device, per core delivered = produced,
    lost total 0; mid-stream status saw every hmb event enabled;
  - the hmb events' enable state after stream (--duration, and SIGINT)
    equals the state before it; the SIGINT run exited 0 with a summary;
  - status with no module status directory exits 1 naming the fix.
"""
import json
import os
import re
import sys
from collections import defaultdict

from hmbtest.check import finish, parser, report_problems, start
from hmbtest.truth import load_truth, truth_total

RECORD = re.compile(r"^\d+\.\d+ \[(\d+)\] dev=(\d+) core=(\d+) seq=(\d+) fw_ts=\d+ (.*)$")
LOST = re.compile(r"^\d+\.\d+ \[\d+\] dev=\d+ core=\d+ LOST ")
MARKER = re.compile(r"^\d+\.\d+ \[(\d+)\] MARKER (.*)$")
UNDECODED = ("(no dictionary yet)", "(not in the dictionary)")


def read(path, F, what):
    try:
        with open(path) as fh:
            return fh.read()
    except OSError as e:
        F.fail(f"{what}: cannot read {path}: {e}")
        return None


def read_json(path, F, what):
    text = read(path, F, what)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as e:
        F.fail(f"{what}: {path} is not JSON: {e}")
        return None


def check_stream(F, text, produced, ncpus, marker):
    seqs = defaultdict(list)
    cpus = defaultdict(set)
    undecoded, malformed, lost, markers = [], [], [], []
    first_marker_at = None
    for n, line in enumerate(text.splitlines(), 1):
        m = RECORD.match(line)
        if m:
            cpu, _dev, core, seq, rest = int(m[1]), m[2], int(m[3]), int(m[4]), m[5]
            seqs[core].append(seq)
            cpus[core].add(cpu)
            if any(u in rest for u in UNDECODED):
                undecoded.append(f"line {n}: {line}")
            continue
        if LOST.match(line):
            lost.append(f"line {n}: {line}")
        elif " MALFORMED " in line:
            malformed.append(f"line {n}: {line}")
        else:
            mm = MARKER.match(line)
            if mm:
                markers.append(mm[2])
                if mm[2] == marker and first_marker_at is None:
                    first_marker_at = sum(len(v) for v in seqs.values())
    problems = []
    for k in sorted(set(produced) | set(seqs)):
        got, want = seqs.get(k, []), produced.get(k, 0)
        if got == list(range(want)):
            continue
        dups = len(got) - len(set(got))
        out_of_order = sum(1 for a, b in zip(got, got[1:]) if b <= a)
        missing = want - len(set(s for s in got if s < want))
        problems.append(f"core {k}: {len(got)} records, expected seq 0..{want - 1} exactly once in "
                        f"order: {missing} missing, {dups} duplicates, {out_of_order} out of order"
                        f" (first {got[:3]}, last {got[-3:]})")
    total = sum(produced.values())
    report_problems(F, problems, f"stream: every record of every core exactly once, in seq order "
                    f"({total} records)")
    report_problems(F, [f"core {k} on CPUs {sorted(c)}, expected {k % ncpus}"
                        for k, c in sorted(cpus.items()) if c != {k % ncpus}],
                    f"stream: core k's records on CPU k mod {ncpus}")
    report_problems(F, undecoded, "stream: every record decoded (dictionary from sysfs)")
    report_problems(F, malformed, "stream: no MALFORMED line")
    report_problems(F, lost, "stream: no LOST line")
    n_marker = markers.count(marker)
    F.check(n_marker == 1, f"stream: the marker line {marker!r} once",
            f"stream: expected the marker line {marker!r} once, saw it {n_marker} times "
            f"(markers: {markers[:5]})")
    if n_marker:
        F.check(0 < first_marker_at < total,
                "stream: the marker is between firmware records",
                f"stream: the marker came after {first_marker_at} of {total} records, "
                f"expected mid-stream")
    return sum(len(v) for v in seqs.values())


def check_summary(F, err, records, what):
    m = re.search(r"hmbtrace-cmd stream: [\d.]+ s, (\d+) records, (\d+) lost, (\d+) markers, "
                  r"(\d+) events dropped by ftrace", err or "")
    if not F.check(m is not None, f"{what}: summary on stderr",
                   f"{what}: no summary line on stderr: {(err or '').strip()[:300]!r}"):
        return
    if records is not None:
        F.check(int(m[1]) == records and int(m[2]) == 0 and int(m[4]) == 0,
                f"{what}: summary says {m[1]} records, 0 lost, 0 dropped",
                f"{what}: summary says {m[1]} records, {m[2]} lost, {m[4]} dropped by ftrace; "
                f"the output has {records} records")


def check_status(F, st, produced, what):
    if st is None:
        return
    devs = st.get("devices", [])
    if not F.check(len(devs) == 1, f"{what}: one device",
                   f"{what}: expected one device, saw {len(devs)}"):
        return
    d = devs[0]
    F.check(d.get("state") == "attached", f"{what}: state attached",
            f"{what}: state {d.get('state')!r}, expected attached")
    F.check((d.get("dictionary_bytes") or 0) > 0, f"{what}: dictionary present",
            f"{what}: dictionary_bytes {d.get('dictionary_bytes')}")
    got = {c["core"]: (c["delivered"], c["lost"]["total"]) for c in d.get("cores", [])}
    want = {k: (n, 0) for k, n in produced.items()}
    F.check(got == want, f"{what}: per core delivered = produced, 0 lost",
            f"{what}: per core (delivered, lost) {got}, expected {want}")
    inst = st.get("instance", {})
    F.check(inst.get("exists") is True and len(inst.get("cpus", [])) > 0,
            f"{what}: instance with {len(inst.get('cpus', []))} CPU buffers",
            f"{what}: instance {inst}")


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--dir", required=True)
    p.add_argument("--marker", default="HMBCMD marker mid-stream")
    a, F = start(p, argv)
    d = a.dir
    produced = truth_total(load_truth(os.path.join(d, "truth.json")))

    st_end = read_json(os.path.join(d, "status-end.json"), F, "status --json (end)")
    ncpus = len(st_end.get("instance", {}).get("cpus", [])) if st_end else 2
    text = read(os.path.join(d, "stream.txt"), F, "stream")
    records = check_stream(F, text, produced, ncpus or 2, a.marker) if text is not None else None
    rc = (read(os.path.join(d, "stream.rc"), F, "stream exit status") or "").strip()
    F.check(rc == "0", "stream exited 0", f"stream exited {rc!r}, expected 0")
    check_summary(F, read(os.path.join(d, "stream.err"), F, "stream stderr"), records, "stream")

    check_status(F, st_end, produced, "status --json (end)")
    st_start = read_json(os.path.join(d, "status-start.json"), F, "status --json (start)")
    if st_start is not None:
        F.check(len(st_start.get("devices", [])) == 1, "status --json (start): one device",
                f"status --json (start): {st_start.get('devices')}")
    st_mid = read_json(os.path.join(d, "status-mid.json"), F, "status --json (mid)")
    if st_mid is not None:
        ev = st_mid.get("instance", {}).get("events", {})
        F.check(ev and all(ev.values()), f"mid-stream: every hmb event enabled ({sorted(ev)})",
                f"mid-stream: hmb events {ev}, expected all enabled by stream")
    for name in ("status-start.txt", "status-mid.txt", "status-end.txt"):
        t = read(os.path.join(d, name), F, name) or ""
        F.check("device " in t and "instance " in t and "delivered" in t,
                f"{name}: device and instance sections",
                f"{name}: expected device and instance sections, saw {t[:300]!r}")

    before = read(os.path.join(d, "enable-before.txt"), F, "enable state before")
    during = read(os.path.join(d, "enable-during.txt"), F, "enable state during")
    if before is not None:
        F.check(" 0" in before, "the test set some hmb events off before stream",
                f"expected some hmb events off before stream: {before!r}")
        if during is not None:
            F.check(before != during and " 0" not in during,
                    "stream enabled every hmb event",
                    f"enable state during stream {during!r}, before {before!r}")
        for f, what in (("enable-after.txt", "--duration"), ("enable-after-sigint.txt", "SIGINT")):
            after = read(os.path.join(d, f), F, f)
            if after is not None:
                F.check(after == before, f"after stream ({what}) the hmb events' enable state "
                        f"is as before",
                        f"after stream ({what}): enable state {after!r}, before {before!r}")
    rc = (read(os.path.join(d, "stream-sigint.rc"), F, "SIGINT stream exit status") or "").strip()
    F.check(rc == "0", "stream ended by SIGINT exited 0", f"SIGINT stream exited {rc!r}")
    check_summary(F, read(os.path.join(d, "stream-sigint.err"), F, "SIGINT stream stderr"), None,
                  "stream (SIGINT)")
    rc = (read(os.path.join(d, "status-notloaded.rc"), F, "not-loaded status") or "").strip()
    err = read(os.path.join(d, "status-notloaded.err"), F, "not-loaded status stderr") or ""
    F.check(rc == "1" and "insmod hmb_trace.ko" in err,
            "status without the module's directory: exit 1 and the fix",
            f"status --sysfs /nonexistent: exit {rc!r}, stderr {err.strip()!r}")

    return finish(F, "stream")


if __name__ == "__main__":
    sys.exit(main())
