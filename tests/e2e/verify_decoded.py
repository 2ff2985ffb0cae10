#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check trace-cmd report with plugin_hmb.so against the raw report.

usage: verify_decoded.py --raw RAW.txt --decoded DECODED.txt

RAW is `trace-cmd report -R -t -N` of a capture (no plugins, raw fields);
DECODED is `trace-cmd report` of the same capture with the plugin loaded.
Checks what a user reading the decoded report relies on:
  - every hmb_record of the raw report is in the decoded one, once, with the
    same dev, core and seq, and nothing else is;
  - once the plugin has printed "[dictionary complete" for a dev, none of
    that dev's records is left as event_id + hex;
  - every decoded record carries the name of its event id, and its field
    values equal the payload bytes decoded here independently, with the
    hmb-fwsim event layouts (mock/fwsim/fwsim_events.def).
"""
import re
import struct
import sys

from hmbtest.check import finish, parser, report_problems, start
from hmbtest.report import parse_report

# hmb-fwsim's events: id -> (name, struct layout, field names checked).
# Enum-valued fields (opc, status, ...) are rendered as names and left out.
FWSIM_EVENTS = {
    1: ("cmd_fetch", "<HHBIQI", ("qid", "cid", None, "nsid", "slba", "nlb")),
    2: ("cmd_complete", "<HHHI", ("qid", "cid", None, "latency")),
    3: ("nand_read", "<BBHHI", ("die", "plane", "block", "page", "latency")),
    4: ("nand_program", "<BBHHI", ("die", "plane", "block", "page", "latency")),
    5: ("nand_erase", "<BBHI", ("die", "plane", "block", "latency")),
    6: ("gc_begin", "<BHH", ("die", "victim_block", "valid_pages")),
    7: ("gc_end", "<BHHI", ("die", "victim_block", "pages_moved", "latency")),
    8: ("thermal", None, ()),
    9: ("error", None, ()),
    10: ("log", None, ()),
}

# "... [001]  7.559639: hmb_record:  dev=0 core=1 seq=2993 fw_ts=965 REST"
DECODED_RE = re.compile(
    r"\[(\d+)\]\s+\d+\.\d+:\s+hmb_record:\s+dev=(\d+) core=(\d+) seq=(\d+) "
    r"fw_ts=(\d+) (.*)$")
DICT_DONE_RE = re.compile(r"hmb_dict:\s+dev=(\d+) .*\[dictionary complete")


def parse_decoded(path):
    """hmb_record lines as (lineno, dev, core, seq, rest, dict_known)."""
    out = []
    known = set()
    with open(path, errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            m = DICT_DONE_RE.search(line)
            if m:
                known.add(int(m.group(1)))
                continue
            m = DECODED_RE.search(line)
            if m:
                dev = int(m.group(2))
                out.append((lineno, dev, int(m.group(3)), int(m.group(4)),
                            m.group(6).rstrip("\n"), dev in known))
    return out


def expected_fields(event_id, payload):
    """(name, {field: value}) of the payload by hmb-fwsim's layout, the
    values None when the payload does not fit the layout."""
    name, layout, names = FWSIM_EVENTS[event_id]
    if layout is None:
        return name, {}
    if len(payload) != struct.calcsize(layout):
        return name, None
    values = struct.unpack(layout, payload)
    return name, {k: v for k, v in zip(names, values) if k}


def check(F, raw_path, decoded_path):
    raw = {}
    for e in parse_report(raw_path):
        if e.name == "hmb_record":
            key = (e.f["dev"], e.f["core"], e.f["seq"])
            raw[key] = (e.f["event_id"], e.f.get("payload", b""))
    decoded = parse_decoded(decoded_path)
    if not F.check(raw, f"{len(raw)} hmb_record events in the raw report",
                   f"no hmb_record in the raw report {raw_path}"):
        return
    keys = [(d[1], d[2], d[3]) for d in decoded]
    F.check(len(keys) == len(set(keys)) == len(raw) and set(keys) == set(raw),
            f"the decoded report has the same {len(raw)} records (dev, core, seq)",
            f"decoded report: {len(keys)} records, {len(set(keys))} distinct, "
            f"{len(set(raw) - set(keys))} of the raw report's {len(raw)} missing, "
            f"{len(set(keys) - set(raw))} not in it")

    hex_after, wrong, done, fields_checked = [], [], 0, 0
    for lineno, dev, core, seq, rest, dict_known in decoded:
        if (dev, core, seq) not in raw:
            continue
        event_id, payload = raw[(dev, core, seq)]
        if rest.startswith("event_id="):
            if dict_known:
                hex_after.append(f"line {lineno}: {rest[:80]}")
            continue
        done += 1
        if event_id not in FWSIM_EVENTS:
            wrong.append(f"line {lineno}: event id {event_id} is not hmb-fwsim's")
            continue
        name, want = expected_fields(event_id, payload)
        if want is None:
            wrong.append(f"line {lineno}: {name}: a payload of {len(payload)} bytes, "
                         f"hmb-fwsim's layout has {struct.calcsize(FWSIM_EVENTS[event_id][1])}")
            continue
        if not rest.startswith(name + ": "):
            wrong.append(f"line {lineno}: event id {event_id}: expected '{name}: ...', "
                         f"saw '{rest[:60]}'")
            continue
        got = dict(re.findall(r"(\w+)=(-?\d+)(?=\s|$)", rest[len(name) + 2:]))
        for k, v in want.items():
            fields_checked += 1
            if got.get(k) != str(v):
                wrong.append(f"line {lineno}: {name} {k}: payload says {v}, "
                             f"decoded {got.get(k)} ({rest[:100]})")
                break
    F.check(done > 0, f"{done} of {len(decoded)} records decoded by the plugin",
            "the plugin decoded no record: is plugin_hmb.so loaded "
            "(TRACEEVENT_PLUGIN_DIR)?")
    report_problems(F, hex_after, "no record left in hex once its dictionary is complete")
    report_problems(F, wrong, f"every decoded record has its event's name and the "
                    f"payload's values ({fields_checked} fields compared)")


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--raw", required=True)
    p.add_argument("--decoded", required=True)
    a, F = start(p, argv)
    check(F, a.raw, a.decoded)
    return finish(F, "decoded")


if __name__ == "__main__":
    sys.exit(main())
