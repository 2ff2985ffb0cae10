#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check the command join of a capture (hmbtrace-cmd stat --commands-json).

Every host command (nvme_setup_cmd .. nvme_complete_rq) must be joined to
a firmware fetch and completion, or carry a reason for each missing one;
commands without a full join may be at most --max-unmatched of all. For
every joined command the converted firmware fetch and completion times
must lie inside [setup - bound, complete + bound] (bound: each record's
stated clock bound), fetch before completion within the bounds. The
workload must be what the scenario claims: at least --min-commands host
commands, reads and writes, more than one queue, some queue with more
than one command in flight. Against hmb-fwsim's truth: each joined
record's fw_ts is the tick the truth's clock model gives a fetch
(completion) of a command with the same (qid, cid), so a join that picked
another command's record fails; the simulator served at least as many
commands as the host completed in the capture.
Against the reference SSD's truth (mock/qemu-nvme/verify_ssd.py
--truth-json) instead: each joined record's fw_ts is a stamp the device gave
a command with the same (qid, cid), and a command not fully joined counts
as unmatched unless the device says its firmware did not record it.
Fails naming the first commands that break a rule.
"""
import argparse
import collections
import json
import sys


def name(c):
    return "nvme%d qid=%d cid=%d opc=%d setup=%d" % (c["ctrl"], c["qid"], c["cid"], c["opcode"],
                                                      c["setup_ns"])


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--commands", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--min-commands", type=int, default=10000)
    ap.add_argument("--max-unmatched", type=float, default=0.001)
    args = ap.parse_args()
    doc = json.load(open(args.commands))
    truth = json.load(open(args.truth))
    cmds = doc["commands"]
    errors = []

    def err(msg):
        errors.append(msg)

    if len(cmds) < args.min_commands:
        err("only %d host commands in the capture, expected at least %d" %
            (len(cmds), args.min_commands))
    ops = collections.Counter(c["opcode"] for c in cmds)
    if not ops.get(1) or not ops.get(2):
        err("expected reads (opc 2) and writes (opc 1), saw opcodes %s" % dict(ops))
    queues = collections.Counter(c["qid"] for c in cmds if c["qid"] != 0)
    if len(queues) < 2:
        err("expected commands on several I/O queues, saw %s" % dict(queues))

    # Queue depth: the most commands of one queue in flight at once.
    depth = {}
    for q in queues:
        ev = []
        for c in cmds:
            if c["qid"] == q and c["complete_ns"] is not None:
                ev.append((c["setup_ns"], 1))
                ev.append((c["complete_ns"], -1))
        ev.sort(key=lambda e: (e[0], e[1]))
        cur = best = 0
        for _, d in ev:
            cur += d
            best = max(best, cur)
        depth[q] = best
    if not depth or max(depth.values()) < 2:
        err("expected a queue depth above 1, saw %s" % depth)

    # The reference SSD's truth says which fetches and completions its
    # firmware did not record (control STOP): a host command missing such a
    # record is explained by the device, at most as many per (qid, cid) as
    # the device left unrecorded.
    dev = truth.get("qemu_nvme_device")
    unrec = collections.Counter()
    for tc in (dev or {}).get("commands", []):
        if not tc["fetch_recorded"] or not tc.get("complete_recorded", True):
            unrec[(tc["qid"], tc["cid"])] += 1
    explained = []
    unmatched = []
    bad_time = []
    no_host_completion = []
    for c in cmds:
        f, d = c["fetch"], c["complete"]
        if f is None or d is None:
            reasons = [c.get("why_no_fetch"), c.get("why_no_complete")]
            if unrec[(c["qid"], c["cid"])] > 0:
                unrec[(c["qid"], c["cid"])] -= 1
                explained.append((c, reasons))
                continue
            if (f is None and not c.get("why_no_fetch")) or (d is None and not c.get("why_no_complete")):
                err("%s: not joined and no reason given" % name(c))
            unmatched.append((c, reasons))
            continue
        # No nvme_complete_rq in the capture: the recording stopped between
        # the firmware's completion and the host's (the join's interval for
        # it is open-ended). Its records are still checked against its
        # setup here and against the truth below.
        open_ended = c["complete_ns"] is None
        lo = c["setup_ns"]
        hi = c["complete_ns"] if not open_ended else None
        if open_ended:
            no_host_completion.append(name(c))
        for what, r in (("fetch", f), ("complete", d)):
            b = r["bound_ns"]
            if not (lo - b <= r["host_ns"] and (open_ended or r["host_ns"] <= hi + b)):
                bad_time.append("%s: firmware %s at %d (bound %d ns) outside [%d, %s] by %d ns" %
                                (name(c), what, r["host_ns"], b, lo,
                                 "no completion" if open_ended else hi,
                                 (lo - b - r["host_ns"]) if r["host_ns"] < lo - b else
                                 (r["host_ns"] - hi - b)))
        if f["host_ns"] > d["host_ns"] + f["bound_ns"] + d["bound_ns"]:
            bad_time.append("%s: fetch at %d after completion at %d" % (name(c), f["host_ns"],
                                                                       d["host_ns"]))
    for msg in bad_time[:20]:
        err(msg)
    if len(bad_time) > 20:
        err("... and %d more commands outside their interval" % (len(bad_time) - 20))
    if cmds and len(unmatched) > args.max_unmatched * len(cmds):
        err("%d of %d host commands not fully joined (more than %.3f%%): first: %s" %
            (len(unmatched), len(cmds), 100 * args.max_unmatched,
             "; ".join("%s (%s)" % (name(c), ", ".join(x for x in r if x))
                       for c, r in unmatched[:10])))

    # Each joined record must be the simulator's record of that very
    # command: its fw_ts is the tick the truth's clock model gives the time
    # QEMU fetched (completed) a command with the same (qid, cid).
    clock = truth.get("clock", {})

    def tick(mono):
        m = (mono - clock["start_monotonic_ns"]) * clock.get("time_scale", 1)
        m = max(m, 0)
        seg = clock["segments"][0]
        for sg in clock["segments"]:
            if sg["from_model_ns"] <= m:
                seg = sg
        return seg["tick"] + (m - seg["from_model_ns"]) * clock["hz"] * (10**9 + seg["ppb"]) // 10**18

    # The reference SSD (mock/qemu-nvme/verify_ssd.py --truth-json) tells
    # the very stamps its firmware gave each command.
    q = truth.get("qemu_nvme") or dev
    if dev or (q and clock.get("segments")):
        fetch_ticks = collections.defaultdict(set)
        done_ticks = collections.defaultdict(set)
        for tc in q["commands"]:
            key = (tc["qid"], tc["cid"])
            if dev:
                fetch_ticks[key].add(tc["fetch_tick"])
                if "complete_tick" in tc:
                    done_ticks[key].add(tc["complete_tick"])
                continue
            fetch_ticks[key].add(tick(tc["fetch_mono_ns"]))
            done_ticks[key].add(tick(tc["complete_mono_ns"]))
        wrong = []
        for c in cmds:
            key = (c["qid"], c["cid"])
            for what, r, ticks in (("fetch", c["fetch"], fetch_ticks), ("complete", c["complete"],
                                                                         done_ticks)):
                # A stamp may be raised to its core's previous record's (the
                # producer keeps a core's fw_ts in order): allow 1 ms.
                if r and not any(0 <= r["fw_ts"] - t <= 1000000 for t in ticks[key]):
                    wrong.append("%s: joined %s record (fw_ts %d) is no %s of this (qid, cid) in "
                                 "the truth" % (name(c), what, r["fw_ts"], what))
        for msg in wrong[:20]:
            err(msg)
        if len(wrong) > 20:
            err("... and %d more wrong joins" % (len(wrong) - 20))
        print("joins checked against the %s: %d wrong" %
              ("device's own stamps" if dev else "truth's clock model", len(wrong)))

    if not q:
        err("the truth has no qemu_nvme section: was hmb-fwsim run with --follow-qemu-nvme?")
    elif not dev:
        completed_host = sum(1 for c in cmds if c["complete_ns"] is not None)
        if q["completed"] < completed_host:
            err("hmb-fwsim served %d commands, the host completed %d in the capture" %
                (q["completed"], completed_host))
        if q["malformed_lines"] or q["lines_without_timestamp"]:
            err("hmb-fwsim could not read %d lines of QEMU's log: %s" %
                (q["malformed_lines"] + q["lines_without_timestamp"], q["malformed_examples"]))

    s = doc["summary"]
    bounds = sorted(r["bound_ns"] for c in cmds for r in (c["fetch"], c["complete"]) if r)
    print("host commands %d (reads %d, writes %d, other %d), queues %s, max depth %s" %
          (len(cmds), ops.get(2, 0), ops.get(1, 0), len(cmds) - ops.get(1, 0) - ops.get(2, 0),
           dict(queues), depth))
    print("joined %d, partial %d, not joined %d, matched by order %d" %
          (s["joined"], s["partial"], s["unjoined"], s["matched_by_order"]))
    print("host unmatched by reason: %s" % (s["host_unmatched"] or "none"))
    if dev:
        print("not fully joined, explained by the device (its firmware did not record the "
              "fetch or completion): %d: %s" %
              (len(explained), "; ".join("%s (%s)" % (name(c), ", ".join(x for x in r if x))
                                         for c, r in explained[:5])))
    if no_host_completion:
        print("joined with no nvme_complete_rq in the capture (it ended first; checked "
              "against setup and the truth): %d: %s" %
              (len(no_host_completion), ", ".join(no_host_completion[:5])))
    print("firmware records not joined by reason: %s" % (s["fw_unmatched"] or "none"))
    if bounds:
        print("clock bound: median %.1f us, max %.1f us" %
              (bounds[len(bounds) // 2] / 1e3, bounds[-1] / 1e3))
    for row in s["latency_split"]:
        print("  %-6s %-31s n=%-6d p50 %8.1f us  p90 %8.1f us  p99 %8.1f us" %
              (row["opcode"], row["phase"], row["count"], row["p50_us"], row["p90_us"],
               row["p99_us"]))
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
