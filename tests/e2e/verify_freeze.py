#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks the freeze scenario: the firmware froze its rings on a latency outlier, hmb_trace.ko left a crash dump of it, and re-arm resumed the firmware.

The dump (include/hmb_trace_dump_abi.h) carries the meta page and the core
descriptors as they were (hmb-trace-abi.rst "The freeze"): the freeze word,
freeze_core, freeze_detail (qid << 16 | cid of the outlier), every core's
freeze_seq and next_seq. Checked: reason fw_freeze; FROZEN, LATENCY, the
first freeze, on core 0; on every core exactly N records after the trigger
(freeze_seq .. next_seq - 1, consecutive, in the dump) and nothing after;
the outlier's cmd_complete is core 0's last record before the trigger,
with a latency over the threshold, and its cmd_fetch is in the dump too;
the module showed "frozen", then "running" after the re-arm, and the
firmware's truth has more records than the window's end (it wrote again).
Python 3 standard library and tests/lib/hmbtest.
"""
import json
import struct
import sys

from hmbtest.check import finish, parser, start
from hmbtest.dump import DumpError, parse as parse_dump

SEC_META, SEC_CORES = 1, 2
FW_EV_CMD_FETCH, FW_EV_CMD_COMPLETE = 1, 2  # mock/fwsim/fwsim_events.h
FROZEN, LATENCY = 2, 2                      # include/hmb_trace_abi.h
META_FREEZE = 1 << 1
CORE_LEN = 64


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--dump", required=True)
    p.add_argument("--ops", required=True, help="the guest's freeze-ops.txt")
    p.add_argument("--truth", required=True)
    p.add_argument("--n-after", type=int, required=True)
    p.add_argument("--threshold-ns", type=int, required=True)
    a, F = start(p, argv)
    ops = open(a.ops).read() if a.ops else ""
    F.check("frozen: frozen" in ops, "the module showed the freeze (ctrl/freeze)",
            f"ctrl/freeze never read frozen: {ops!r}")
    F.check("rearmed: running" in ops, "re-armed: ctrl/freeze reads running",
            f"after rearm ctrl/freeze is not running: {ops!r}")
    F.check("debugfs freezes 1" in ops, "debugfs counts one freeze",
            f"debugfs freeze file: {ops!r}")
    try:
        d = parse_dump(open(a.dump, "rb").read())
    except (OSError, DumpError) as e:
        F.fail(f"the crash dump: {e}")
        return finish(F, "freeze")
    h = d["header"]
    F.check(h["reason"] == 3, "the dump's reason is fw_freeze",
            f"the dump's reason is {h['reason']}, not 3 (fw_freeze)")
    meta = d["sections"].get(SEC_META, (0, b"", 0))[1]
    cores = d["sections"].get(SEC_CORES, (0, b"", 0))[1]
    if len(meta) < 128 or len(cores) < CORE_LEN * h["nr_cores"]:
        F.fail(f"META ({len(meta)} bytes) or CORES ({len(cores)}) missing")
        return finish(F, "freeze")
    flags, = struct.unpack_from("<I", meta, 52)
    word, fcore, _, fts, detail = struct.unpack_from("<IHHQQ", meta, 96)
    F.check(flags & META_FREEZE, "the firmware advertises the freeze (meta flag)",
            f"meta flags {flags:#x} without HMB_TRACE_META_FREEZE")
    F.check(word & 0xf == FROZEN and (word >> 8) & 0xff == LATENCY and word >> 16 == 1,
            "freeze word: FROZEN, LATENCY, the first freeze",
            f"freeze word {word:#010x}, wanted FROZEN LATENCY count 1")
    F.check(fcore == 0, "the trigger was core 0's (the slow command's)",
            f"freeze_core {fcore}, wanted 0")
    qid, cid = detail >> 16 & 0xffff, detail & 0xffff
    threshold = a.threshold_ns * h["clock_hz"] // 1000000000
    by_core = {}
    for r in d["records"]:
        by_core.setdefault(r["core"], {})[r["seq"]] = r
    end = {}
    for k in range(h["nr_cores"]):
        next_seq, = struct.unpack_from("<Q", cores, k * CORE_LEN + 8)
        freeze_seq, = struct.unpack_from("<Q", cores, k * CORE_LEN + 48)
        end[k] = next_seq
        recs = by_core.get(k, {})
        F.check(next_seq == freeze_seq + a.n_after,
                f"core {k}: {a.n_after} records written after the trigger, then none",
                f"core {k}: freeze_seq {freeze_seq}, next_seq {next_seq}: "
                f"{next_seq - freeze_seq} after the trigger, wanted {a.n_after}")
        after = [s for s in range(freeze_seq, next_seq) if s in recs]
        F.check(len(after) == a.n_after and max(recs, default=-1) == next_seq - 1,
                f"core {k}: the dump holds the {a.n_after} records after, the ring's end",
                f"core {k}: the dump holds {len(after)} of seq {freeze_seq}..{next_seq - 1}, "
                f"its last seq {max(recs, default=None)}")
        if k != 0:
            continue
        last = recs.get(freeze_seq - 1)
        ok = last is not None and last["event_id"] == FW_EV_CMD_COMPLETE
        if ok:
            q, c, _, lat = struct.unpack_from("<HHHI", last["payload"])
            ok = (q, c) == (qid, cid) and lat >= threshold
        F.check(ok, f"core 0: the outlier's cmd_complete (qid {qid} cid {cid}) is the "
                "record before the trigger, over the threshold",
                f"core 0: record {freeze_seq - 1} is not the outlier's completion: {last}")
        fetches = [s for s, r in recs.items() if s < freeze_seq - 1 and
                   r["event_id"] == FW_EV_CMD_FETCH and
                   struct.unpack_from("<HH", r["payload"]) == (qid, cid)]
        F.check(fetches, f"core 0: the outlier's cmd_fetch is in the dump (seq {fetches[-1:]})",
                f"core 0: no cmd_fetch of qid {qid} cid {cid} in the dump")
    truth = json.load(open(a.truth))
    life = truth["lives"][-1]
    more = [c["core"] for c in life["cores"] if c["produced"] > end.get(c["core"], 0)]
    F.check(len(more) == h["nr_cores"], "re-armed: every core wrote again (the firmware's truth)",
            f"after the re-arm only cores {more} wrote more than the frozen window")
    return finish(F, "freeze")


if __name__ == "__main__":
    sys.exit(main())
