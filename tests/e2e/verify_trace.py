#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Compare what came back from the QEMU guest with hmb-fwsim's ground truth.

Inputs (all produced by the e2e scenarios, see tests/e2e/scenarios/*/):
  --truth   hmb-fwsim --truth JSON: per life (producer generation) and core
            the records produced, and the injected faults
  --report  `trace-cmd report -R -t -N` of the guest's capture (raw fields,
            ns timestamps), or the text of instances/hmb/trace
  --status  /sys/class/hmb_trace/<area>/ as "name: value" lines
  --stats   per_cpu/cpuN/stats of the hmb instance (guest) or
            `trace-cmd report --stat` (host); both are accepted
  --dev     with several areas in one capture: check only the hmb events
            of this area (their `dev` field); --status and --truth are
            that area's, and the status file's `index` must be this dev

One subcommand per scenario. Each check prints "ok: ..." or
"FAIL: ... expected X, saw Y"; the exit status is 1 if any check failed,
2 on unusable input. Python 3 standard library and tests/lib/hmbtest
(PYTHONPATH, as e2e-lib.sh sets it).
"""

import re
import sys
from collections import defaultdict

from hmbtest.check import Failures, die, finish, parser, report_problems
from hmbtest.formats import LOST_REASONS, load_lost_reasons, reason_name
from hmbtest.report import (core_streams, parse_report, parse_stats, parse_status,
                            records_of, reset_events, split_lives, status_scalar)
from hmbtest.truth import load_truth, truth_produced, truth_total

DICT_MAGIC = b"HMBD"


def walk_core(F, core, evs, produced, first_expected=0, what="",
              allow_tail_gap=False, quiet=False):
    """Check one core's events of one life: records in sequence order, each
    gap announced by hmb_lost events placed right before the next record
    (at_seq = that record's seq, counts summing to the gap), everything up to
    produced - 1 accounted. Returns (delivered, {reason: lost}, problems)."""
    problems = []
    delivered = 0
    lost = defaultdict(int)
    expect = first_expected
    pending = []
    last_ts = None
    for e in evs:
        if e.name == "hmb_lost":
            pending.append(e)
            continue
        s = e.f["seq"]
        if last_ts is not None and e.ts < last_ts:
            problems.append(f"{what}core {core}: timestamp went backwards at seq {s} ({e})")
        last_ts = e.ts
        gap = s - expect
        pcount = sum(p.f["count"] for p in pending)
        if s < expect:
            problems.append(f"{what}core {core}: seq {s} after {expect - 1}: duplicate or out of order ({e})")
        elif gap != pcount:
            problems.append(
                f"{what}core {core}: expected seq {expect}, saw {s}: gap of {gap} "
                f"but hmb_lost before it accounts for {pcount} ({e})")
        for p in pending:
            if p.f["at_seq"] != s:
                problems.append(
                    f"{what}core {core}: hmb_lost at_seq={p.f['at_seq']} count={p.f['count']} "
                    f"but the next record has seq {s} ({p})")
            lost[reason_name(p.f["reason"])] += p.f["count"]
        pending = []
        delivered += 1
        expect = max(expect, s + 1)
    # A life may end with the records a firmware reset took: hmb_lost
    # events contiguous to the end of the life, the last with reason reset
    # (what the ring could still hold), any before it overwritten (the
    # older part of a tail longer than a ring), and nothing after them.
    reasons = [reason_name(p.f["reason"]) for p in pending]
    chain = bool(reasons) and reasons[-1] == "reset" and \
        set(reasons[:-1]) <= {"overwritten"}
    for p, reason in zip(pending, reasons):
        lost[reason] += p.f["count"]
        if chain and p.f["at_seq"] == expect + p.f["count"]:
            expect = p.f["at_seq"]
        else:
            problems.append(f"{what}core {core}: hmb_lost with no record after it "
                            f"(expected only a reset loss ending at seq {expect}): {p}")
    if produced is not None and expect != produced and not allow_tail_gap:
        problems.append(f"{what}core {core}: expected the last seq to be {produced - 1} "
                        f"(produced {produced}), saw {expect - 1}")
    return delivered, dict(lost), problems


def check_cpu_mapping(F, streams, ncpus, status=None):
    problems = []
    for core, evs in sorted(streams.items()):
        want = core % ncpus
        bad = [e for e in evs if e.cpu != want]
        if bad:
            problems.append(f"core {core}: expected every event on CPU {want} (core mod {ncpus}), "
                            f"saw {len(bad)} elsewhere, first {bad[0]}")
    report_problems(F, problems, f"every core's events on CPU core mod {ncpus}")
    if status is not None and isinstance(status.get("core_cpu"), list):
        want = [k % ncpus for k in range(len(status["core_cpu"]))]
        F.check(status["core_cpu"] == want, f"status core_cpu {status['core_cpu']}",
                f"status core_cpu: expected {want}, saw {status['core_cpu']}")


def check_dictionary(F, events, truth=None, dict_bin=None, cpus_with_records=()):
    """hmb_state(attached/reset) followed by hmb_dict chunks that reassemble,
    in offset order, to exactly total_len bytes starting with the magic."""
    states = [e for e in events if e.name == "hmb_state"]
    if not F.check(states, f"{len(states)} hmb_state event(s) in the capture",
                   "expected hmb_state events in the capture, saw none"):
        return
    last_gen = None
    if truth is not None:
        bid = truth["build_id"].lower()
        # With --new-build-at-reset each life names its own build.
        bids = {life["producer_gen"]: life.get("build_id", bid).lower()
                for life in truth["lives"]}
        last_gen = truth["lives"][-1]["producer_gen"] if truth["lives"] else None
        nc = truth["geometry"]["nr_cores"]
        hz = truth["clock"]["hz"]
        bad = [e for e in states
               if e.f.get("build_id", b"").hex() != bids.get(e.f.get("producer_gen"), bid)
               or e.f.get("nr_cores") != nc or e.f.get("clock_hz") != hz]
        F.check(not bad, f"hmb_state carries build_id {bid[:12]}.."
                + (f" (per generation: {sorted(set(bids.values()))})" if len(set(bids.values())) > 1 else "")
                + f", nr_cores {nc}, clock_hz {hz}",
                f"hmb_state: expected build_id {bids} by producer_gen, nr_cores {nc} clock_hz {hz}, "
                f"saw {bad[0] if bad else ''}")
    # Reassemble per (cpu, dev, gen): chunks in order after each state event.
    complete = {}
    per_cpu = defaultdict(list)
    for e in events:
        if e.name in ("hmb_state", "hmb_dict"):
            per_cpu[e.cpu].append(e)
    problems = []
    for cpu, evs in per_cpu.items():
        cur = None
        for e in evs:
            if e.name == "hmb_state":
                cur = None
                continue
            f = e.f
            chunk = f.get("chunk", b"")
            if not isinstance(chunk, bytes):
                chunk = b""
            if f["offset"] == 0:
                cur = {"gen": f["producer_gen"], "total": f["total_len"], "data": b""}
            if cur is None:
                continue  # a dictionary cut by the start of the capture
            if f["offset"] != len(cur["data"]) or f["total_len"] != cur["total"]:
                problems.append(f"cpu {cpu}: hmb_dict chunk at offset {f['offset']} "
                                f"(total_len {f['total_len']}) does not continue "
                                f"{len(cur['data'])} bytes of total {cur['total']}: {e}")
                cur = None
                continue
            cur["data"] += chunk
            if len(cur["data"]) >= cur["total"]:
                if len(cur["data"]) != cur["total"]:
                    problems.append(f"cpu {cpu}: dictionary reassembled to {len(cur['data'])} "
                                    f"bytes, expected total_len {cur['total']}")
                else:
                    complete.setdefault((cpu, cur["gen"]), cur["data"])
                cur = None
    report_problems(F, problems, "every hmb_dict chunk continues the previous one")
    if not F.check(complete, f"{len(complete)} complete dictionar(y/ies) in the capture "
                   f"(cpu, gen): {sorted(complete)}",
                   "expected at least one complete dictionary (hmb_dict offsets 0..total_len), saw none"):
        return
    for (cpu, gen), data in sorted(complete.items()):
        F.check(data[:4] == DICT_MAGIC, f"dictionary cpu {cpu} gen {gen}: {len(data)} bytes, magic ok",
                f"dictionary cpu {cpu} gen {gen}: expected magic {DICT_MAGIC!r}, saw {data[:4]!r}")
        # The status file holds the current generation's dictionary.
        if dict_bin is not None and (last_gen is None or gen == last_gen):
            F.check(data == dict_bin,
                    f"dictionary cpu {cpu} gen {gen} equals the status 'dictionary' file",
                    f"dictionary cpu {cpu} gen {gen}: {len(data)} bytes differ from the "
                    f"status 'dictionary' file ({len(dict_bin)} bytes)")
    for cpu in cpus_with_records:
        F.check(any(c == cpu for c, _ in complete),
                f"CPU {cpu} (carries records) has a complete dictionary",
                f"expected a complete dictionary on CPU {cpu}, which carries records; saw none")


def check_ftrace_stats(F, stats, label):
    if not F.check(stats, f"{label}: ftrace per-cpu stats for CPUs {sorted(stats)}",
                   f"{label}: expected ftrace per-cpu stats, found none"):
        return
    for cpu, s in sorted(stats.items()):
        bad = {k: s.get(k) for k in ("overrun", "commit overrun", "dropped events")
               if s.get(k, 0) != 0}
        F.check(not bad, f"{label}: CPU {cpu} no ftrace-side overrun/dropped events",
                f"{label}: CPU {cpu}: expected overrun = commit overrun = dropped events = 0, saw {bad}")


def check_ftrace_side(F, a):
    """No ftrace-side overrun or drop in the guest stats / trace-cmd --stat
    given on the command line, so the exact checks above mean something."""
    if a.stats:
        check_ftrace_stats(F, parse_stats(a.stats), "guest per_cpu stats")
    if a.stat_report:
        check_ftrace_stats(F, parse_stats(a.stat_report), "trace-cmd --stat")


# ---- scenarios --------------------------------------------------------------

def load_common(a, need_status=True):
    truth = load_truth(a.truth) if getattr(a, "truth", None) else None
    events = parse_report(a.report) if getattr(a, "report", None) else []
    status = parse_status(a.status) if getattr(a, "status", None) else None
    if getattr(a, "dev", None) is not None:
        events = [e for e in events if not e.name.startswith("hmb_") or e.f.get("dev") == a.dev]
        if status is not None and status_scalar(status, "index") != a.dev:
            die(f"{a.status} is the status of the area with index {status.get('index')}, "
                f"not of --dev {a.dev}")
    return truth, events, status


def exact_delivery(F, events, truth, ncpus, status, allow_loss=False):
    """Every record of every core of every life exactly once, in order, on
    the right CPU; hmb_lost accounts every gap. Returns per-core totals."""
    streams, seg = core_streams(events)
    lives = truth_produced(truth)
    resets = reset_events(events)
    tot_del = defaultdict(int)
    tot_lost = defaultdict(lambda: defaultdict(int))
    F.check(len(lives) == 1 or resets,
            f"truth has {len(lives)} life/lives",
            f"truth has {len(lives)} lives but the capture has no hmb_state(reset)")
    problems = []
    cores = sorted(lives[0][1])
    missing = [k for k in cores if k not in streams]
    F.check(not missing, f"records of every core {cores} in the capture",
            f"expected records of cores {cores}, saw none for {missing}")
    for core in cores:
        segs = split_lives(streams.get(core, []), seg)
        for i, (gen, produced) in enumerate(lives):
            evs = segs.get(i, [])
            d, lost, p = walk_core(F, core, evs, produced[core],
                                   what=f"gen {gen} ")
            problems += p
            tot_del[core] += d
            for r, n in lost.items():
                tot_lost[core][r] += n
        extra = [s for s in segs if s >= len(lives)]
        if extra:
            problems.append(f"core {core}: records after {max(extra)} resets, truth has {len(lives)} lives")
    produced_tot = truth_total(truth)
    report_problems(F, problems,
                    "every record of every core appears once, in sequence order"
                    + (", every gap announced by hmb_lost" if allow_loss else ""))
    for core in cores:
        lsum = sum(tot_lost[core].values())
        F.check(tot_del[core] + lsum == produced_tot[core],
                f"core {core}: delivered {tot_del[core]} + lost {lsum} = produced {produced_tot[core]}",
                f"core {core}: expected delivered + lost = produced {produced_tot[core]}, "
                f"saw {tot_del[core]} + {lsum} in the capture")
        if not allow_loss:
            F.check(lsum == 0, f"core {core}: no hmb_lost",
                    f"core {core}: expected no lost records, saw {dict(tot_lost[core])}")
    check_cpu_mapping(F, streams, ncpus, status)
    return tot_del, tot_lost, streams


def check_status_counters(F, status, truth, tot_del, tot_lost, allow_loss):
    produced = truth_total(truth)
    cores = sorted(produced)
    dl = status.get("delivered")
    if not F.check(isinstance(dl, list) and len(dl) == len(cores),
                   f"status delivered {dl}",
                   f"status: expected delivered with {len(cores)} values, saw {dl!r}"):
        return
    for k in cores:
        sl = {r: status.get(f"lost/{r}", [0] * len(cores))[k] for r in LOST_REASONS.values()}
        F.check(dl[k] == tot_del[k],
                f"core {k}: status delivered {dl[k]} = records in the capture",
                f"core {k}: expected status delivered = {tot_del[k]} (records in the capture), saw {dl[k]}")
        F.check(dl[k] + sum(sl.values()) == produced[k],
                f"core {k}: status delivered + lost {sl} = produced {produced[k]}",
                f"core {k}: expected status delivered + lost = produced {produced[k]}, "
                f"saw {dl[k]} + {sl}")
        cap = {r: tot_lost[k].get(r, 0) for r in LOST_REASONS.values()}
        F.check(cap == sl, f"core {k}: status lost counters match the capture's hmb_lost",
                f"core {k}: expected status lost = capture's hmb_lost {cap}, saw {sl}")
        if not allow_loss:
            F.check(sum(sl.values()) == 0, f"core {k}: status lost = 0",
                    f"core {k}: expected no lost records in status, saw {sl}")


def cmd_record(a):
    F = Failures()
    truth, events, status = load_common(a)
    tot_del, tot_lost, streams = exact_delivery(F, events, truth, a.cpus, status)
    check_status_counters(F, status, truth, tot_del, tot_lost, allow_loss=False)
    errs = {k: v for k, v in status.items() if k.startswith("errors/") and any(v)}
    F.check(not errs, "status errors/* all 0", f"expected status errors/* all 0, saw {errs}")
    dict_bin = open(a.dictionary, "rb").read() if a.dictionary else None
    check_dictionary(F, events, truth, dict_bin,
                     cpus_with_records=sorted({k % a.cpus for k in streams}))
    check_ftrace_side(F, a)
    return F


def cmd_overrun(a):
    F = Failures()
    truth, events, status = load_common(a)
    tot_del, tot_lost, streams = exact_delivery(F, events, truth, a.cpus, status,
                                                allow_loss=True)
    check_status_counters(F, status, truth, tot_del, tot_lost, allow_loss=True)
    total_lost = sum(sum(v.values()) for v in tot_lost.values())
    F.check(total_lost > 0, f"{total_lost} records lost in all: the overrun happened",
            "expected the small ring to overflow (lost > 0), saw no loss: the scenario tested nothing")
    nlost = sum(1 for e in events if e.name == "hmb_lost")
    F.info(f"{nlost} hmb_lost events; per core delivered "
           + ", ".join(f"{k}: {tot_del[k]}" for k in sorted(tot_del)) + "; lost "
         + ", ".join(f"{k}: {dict(v)}" for k, v in sorted(tot_lost.items())))
    check_ftrace_side(F, a)
    return F


def cmd_markers(a):
    F = Failures()
    truth, events, status = load_common(a)
    tot_del, tot_lost, streams = exact_delivery(F, events, truth, a.cpus, status)
    produced = truth_total(truth)
    marks = {}
    dup = []
    for e in events:
        if e.name == "print":
            m = re.search(r"HMBMARK n=(\d+)", e.text)
            if m:
                n = int(m.group(1))
                if n in marks:
                    dup.append(n)
                marks[n] = e
    F.check(not dup, "each marker once", f"expected each marker once, saw duplicates {dup}")
    log = []
    with open(a.markers) as fh:
        for line in fh:
            m = re.match(r"(\d+) before=([\d ]+) after=([\d ]+)", line.strip())
            if m:
                log.append((int(m.group(1)), [int(x) for x in m.group(2).split()],
                            [int(x) for x in m.group(3).split()]))
    if not F.check(log, f"{len(log)} markers written by the guest",
                   f"expected marker lines in {a.markers}, saw none"):
        return F
    missing = [n for n, _, _ in log if n not in marks]
    F.check(not missing, f"all {len(log)} markers in the capture",
            f"expected all markers in the capture, missing {missing}")
    by_core = {k: {e.f["seq"]: e for e in records_of(evs)} for k, evs in streams.items()}
    problems = []
    midstream = 0
    for n, before, after in log:
        mk = marks.get(n)
        if mk is None:
            continue
        if any(0 < before[k] and after[k] < produced[k] for k in produced):
            midstream += 1
        for k in sorted(produced):
            recs = by_core.get(k, {})
            # Delivered (and traced: the counter is read under the drain
            # lock, after the pass) before the marker write began.
            if before[k] > 0:
                r = recs.get(before[k] - 1)
                if r is None or not r.ts <= mk.ts:
                    problems.append(
                        f"marker {n} (ts {mk.ts}, cpu{mk.cpu}): core {k} had delivered {before[k]} "
                        f"before it was written, so seq {before[k] - 1} must precede it; "
                        f"saw {r if r else 'no such record'}")
            # Not yet delivered when the counter was read after the write.
            if after[k] < produced[k]:
                r = recs.get(after[k])
                if r is None or not r.ts >= mk.ts:
                    problems.append(
                        f"marker {n} (ts {mk.ts}, cpu{mk.cpu}): core {k} had delivered only {after[k]} "
                        f"after it was written, so seq {after[k]} must follow it; "
                        f"saw {r if r else 'no such record'}")
            if after[k] < before[k]:
                problems.append(f"marker {n}: core {k} delivered went backwards {before[k]} -> {after[k]}")
    wins = [sum(a_[k] - b_[k] for k in produced) for n, b_, a_ in log if n in marks]
    if wins:
        F.info(f"records delivered while a marker was written (the check's window), all cores: "
               f"min {min(wins)}, mean {sum(wins) / len(wins):.1f}, max {max(wins)}")
    report_problems(F, problems,
                    "every marker sits after all records delivered before it was written "
                    "and before all records delivered after it")
    F.check(midstream * 2 >= len(log),
            f"{midstream} of {len(log)} markers were written while records flowed",
            f"expected most markers written mid-stream (0 < delivered < produced), saw "
            f"{midstream} of {len(log)}: the check would be vacuous")
    order = [n for n, _, _ in log if n in marks]
    ts = [marks[n].ts for n in order]
    F.check(ts == sorted(ts), "markers in the capture in the order written",
            f"expected markers in written order, saw {sorted(order, key=lambda n: marks[n].ts)}")
    return F


def one_reset(F, truth, events, ncpus):
    """The truth has one reset (two lives) and every CPU that carries
    records has one hmb_state(reset) of the new generation. Returns
    (lives, new_gen, cpus), or None if the truth is not of one reset."""
    lives = truth_produced(truth)
    resets_t = [f for f in truth["faults"] if f["type"] == "reset"]
    if not F.check(len(lives) == 2 and len(resets_t) == 1,
                   f"truth: one reset, gen {lives[0][0]} -> {lives[-1][0]}",
                   f"expected truth with one reset and two lives, saw {len(resets_t)} resets, "
                   f"{len(lives)} lives"):
        return None
    new_gen = resets_t[0]["new_producer_gen"]
    rev = reset_events(events)
    cpus = sorted({k % ncpus for k in lives[0][1]})
    for cpu in cpus:
        r = [e for e in rev if e.cpu == cpu]
        F.check(len(r) == 1 and r[0].f["producer_gen"] == new_gen,
                f"CPU {cpu}: one hmb_state(reset) with producer_gen {new_gen}",
                f"CPU {cpu}: expected one hmb_state(reset) with producer_gen {new_gen}, "
                f"saw {[(e.f.get('producer_gen'), e.lineno) for e in r]}")
    return lives, new_gen, cpus


def cmd_reset(a):
    F = Failures()
    truth, events, status = load_common(a)
    got = one_reset(F, truth, events, a.cpus)
    if not got:
        return F
    lives, new_gen, cpus = got
    streams, seg = core_streams(events)
    problems = []
    produced_tot = truth_total(truth)
    tot_del = defaultdict(int)
    tot_lost = defaultdict(lambda: defaultdict(int))
    for core in sorted(lives[0][1]):
        segs = split_lives(streams.get(core, []), seg)
        old = segs.get(0, [])
        d0, l0, p0 = walk_core(F, core, old, lives[0][1][core], what=f"gen {lives[0][0]} ")
        problems += p0
        F.info(f"core {core}: old life gen {lives[0][0]}: {d0} of {lives[0][1][core]} delivered, "
               f"{l0.get('reset', 0)} unread at the reset and charged as lost (reset)")
        F.check(d0 > 0, f"core {core}: old life delivered records",
                f"core {core}: expected records of gen {lives[0][0]} before the reset, saw none")
        new = segs.get(1, [])
        recs = records_of(new)
        F.check(recs and recs[0].f["seq"] == 0,
                f"core {core}: new life gen {new_gen} starts at seq 0",
                f"core {core}: expected the first record after the reset to have seq 0, "
                f"saw {recs[0] if recs else 'no records'}")
        d1, l1, p1 = walk_core(F, core, new, lives[1][1][core], what=f"gen {new_gen} ")
        problems += p1
        F.check(not l1 and set(l0) <= {"reset"},
                f"core {core}: no hmb_lost but for the records the reset took",
                f"core {core}: expected no hmb_lost but reason reset in the old life, "
                f"saw old {l0} new {l1}")
        tot_del[core] = d0 + d1
        for r, n in list(l0.items()) + list(l1.items()):
            tot_lost[core][r] += n
    report_problems(F, problems, "both lives in sequence order and exact "
                    "(delivered + lost == produced, the old life's tail lost to the reset)")
    sr = status.get("lost/reset", [])
    for core in sorted(tot_lost):
        F.check(core < len(sr) and sr[core] == tot_lost[core].get("reset", 0),
                f"core {core}: status lost/reset {tot_lost[core].get('reset', 0)} = the capture's",
                f"core {core}: expected status lost/reset {tot_lost[core].get('reset', 0)}, "
                f"saw {sr}")
    check_cpu_mapping(F, streams, a.cpus, status)
    F.check(status_scalar(status, "resets") == 1, "status resets = 1",
            f"expected status resets = 1, saw {status.get('resets')}")
    F.check(status_scalar(status, "producer_gen") == new_gen,
            f"status producer_gen = {new_gen}",
            f"expected status producer_gen = {new_gen}, saw {status.get('producer_gen')}")
    F.check(status.get("state") == "attached", "status state attached",
            f"expected status state attached, saw {status.get('state')}")
    dl = status.get("delivered", [])
    for core in sorted(produced_tot):
        F.check(core < len(dl) and dl[core] == tot_del[core],
                f"core {core}: status delivered {tot_del[core]} = records in the capture",
                f"core {core}: expected status delivered {tot_del[core]}, saw {dl}")
    check_dictionary(F, events, truth, None, cpus_with_records=cpus)
    gens = {e.f["producer_gen"] for e in events if e.name == "hmb_dict"}
    F.check(new_gen in gens, f"a dictionary of the new generation {new_gen} follows",
            f"expected hmb_dict of producer_gen {new_gen}, saw generations {sorted(gens)}")
    return F


def cmd_flight_reset(a):
    F = Failures()
    truth, events, status = load_common(a)
    got = one_reset(F, truth, events, a.cpus)
    if not got:
        return F
    lives = got[0]
    off = parse_status(a.off_status)
    dl_off = off.get("delivered", [])
    F.check(isinstance(dl_off, list) and not any(dl_off) and
            status_scalar(off, "resets") == 1,
            f"nobody traced: nothing delivered ({dl_off}), the reset seen "
            f"(resets {off.get('resets')})",
            f"expected nothing delivered and resets 1 before tracing, saw delivered "
            f"{dl_off}, resets {off.get('resets')}")
    tot_del, tot_lost, streams = exact_delivery(F, events, truth, a.cpus, status,
                                                allow_loss=True)
    check_status_counters(F, status, truth, tot_del, tot_lost, allow_loss=True)
    # The old generation: nothing delivered, a tail of several rings charged
    # overwritten, then at most a ring to reset.
    _, seg = core_streams(events)
    for core in sorted(lives[0][1]):
        old = split_lives(streams.get(core, []), seg).get(0, [])
        recs = records_of(old)
        by = defaultdict(int)
        for e in old:
            if e.name == "hmb_lost":
                by[reason_name(e.f["reason"])] += e.f["count"]
        produced = lives[0][1][core]
        # The ring's capacity (ABI spec, "Loss accounting"): records of 8 B.
        cap = status_scalar(status, "pages_per_core") * \
            ((status_scalar(status, "page_size") - 48) // 8)
        F.check(not recs and by["overwritten"] > 0 and by["reset"] == min(produced, cap) and
                by["overwritten"] + by["reset"] == produced,
                f"core {core}: gen {lives[0][0]}'s {produced} records, never read, charged: "
                f"overwritten {by['overwritten']}, reset {by['reset']} (a ring's capacity)",
                f"core {core}: expected gen {lives[0][0]}'s tail of {produced} charged "
                f"overwritten then reset, no record; saw {len(recs)} records, {dict(by)}")
    F.check(status_scalar(status, "resets") == 1, "status resets = 1",
            f"expected status resets = 1, saw {status.get('resets')}")
    errs = {k: v for k, v in status.items() if k.startswith("errors/") and any(v)}
    F.check(not errs, "status errors/* all 0 (nothing implausible)",
            f"expected status errors/* all 0, saw {errs}")
    return F


def cmd_corrupt(a):
    F = Failures()
    truth, events, status = load_common(a)
    faults = [f for f in truth["faults"] if f["type"] == "corrupt_page"]
    if not F.check(faults, f"truth: {len(faults)} corrupted page(s) "
                   + ", ".join(f"core {f['core']} seq {f['page_first_seq']}..{f['page_last_seq']}"
                               for f in faults),
                   "expected a corrupt_page fault in the truth, saw none"):
        return F
    tot_del, tot_lost, streams = exact_delivery(F, events, truth, a.cpus, status,
                                                allow_loss=True)
    check_status_counters(F, status, truth, tot_del, tot_lost, allow_loss=True)
    fcores = {f["core"] for f in faults}
    for k in sorted(tot_lost):
        if k not in fcores:
            F.check(not sum(tot_lost[k].values()), f"core {k} (not corrupted): no loss",
                    f"core {k} (not corrupted): expected no loss, saw {dict(tot_lost[k])}")
    for f in faults:
        k = f["core"]
        lo, hi = f["page_first_seq"], f["page_last_seq"]
        if hi is None:
            hi = truth_total(truth)[k] - 1
        losts = [e for e in streams.get(k, []) if e.name == "hmb_lost"]
        inv = [e for e in losts if e.f["reason"] in (2, "invalid")]
        F.check(inv, f"core {k}: hmb_lost(invalid) {[(e.f['count'], e.f['at_seq']) for e in inv]}",
                f"core {k}: expected hmb_lost with reason invalid for the corrupted page "
                f"{lo}..{hi}, saw {[(e.f['count'], e.f['reason'], e.f['at_seq']) for e in losts]}")
        for e in losts:
            first = e.f["at_seq"] - e.f["count"]
            last = e.f["at_seq"] - 1
            F.check(lo <= first and last <= hi,
                    f"core {k}: lost {first}..{last} lies within the corrupted page {lo}..{hi}",
                    f"core {k}: expected lost records within the corrupted page {lo}..{hi}, "
                    f"saw {first}..{last} ({e.f['reason']})")
        sl = status.get("lost/invalid", [])
        F.check(k < len(sl) and sl[k] > 0, f"core {k}: status lost/invalid {sl}",
                f"core {k}: expected status lost/invalid > 0, saw {sl}")
    errs = {key: v for key, v in status.items() if key.startswith("errors/")}
    nerr = sum(sum(v) for v in errs.values() if isinstance(v, list))
    F.check(nerr > 0, f"status errors counted: { {k: v for k, v in errs.items() if any(v)} }",
            f"expected page errors counted in status errors/*, saw {errs}")
    return F


def cmd_disabled(a):
    F = Failures()
    truth = load_truth(a.truth) if a.truth else None
    off = parse_report(a.disabled)
    on = parse_report(a.enabled)
    off_recs = records_of(off)
    F.check(not off_recs, "no hmb_record while the events were disabled",
            f"expected no hmb_record while disabled, saw {len(off_recs)}, first {off_recs[0] if off_recs else ''}")
    off_hmb = [e for e in off if e.name.startswith("hmb_")]
    F.check(not off_hmb, "no hmb_* event at all while disabled",
            f"expected no hmb_* events while disabled, saw {len(off_hmb)}")
    recs = records_of(on)
    by_core = defaultdict(list)
    for e in recs:
        by_core[e.f["core"]].append(e)
    cores = sorted(truth_total(truth)) if truth else sorted(by_core)
    missing = [k for k in cores if not by_core.get(k)]
    F.check(not missing and recs, f"records arrive again after re-enabling: "
            + ", ".join(f"core {k}: {len(v)}" for k, v in sorted(by_core.items())),
            f"expected records of every core {cores} after echo 1, none for {missing}")
    resume = {}
    if a.resume:
        with open(a.resume) as fh:
            for line in fh:
                m = re.match(r"(\w+):\s*([\d ]+)$", line.strip())
                if m:
                    resume[m.group(1)] = [int(x) for x in m.group(2).split()]
    start = resume.get("delivered_after_insmod")
    if start is not None:
        F.check(not any(start), f"nothing consumed after insmod, before enabling: {start}",
                f"expected nothing delivered before the events were enabled "
                f"(flight recorder), saw delivered {start}")
    if "consuming_after_insmod" in resume:
        F.check(resume["consuming_after_insmod"] == [0] and
                resume.get("consuming_while_disabled") == [0],
                "status consuming is 0 after insmod and while disabled",
                f"expected consuming 0 after insmod and while disabled, saw "
                f"{resume.get('consuming_after_insmod')}, {resume.get('consuming_while_disabled')}")
    if a.first:
        first = parse_report(a.first)
        seen = {}
        lost0 = defaultdict(int)
        for e in first:
            if e.name == "hmb_lost" and e.f["core"] not in seen:
                lost0[e.f["core"]] += e.f["count"]
            if e.name == "hmb_record":
                seen.setdefault(e.f["core"], e.f["seq"])
        bad = {k: (s0, lost0[k]) for k, s0 in seen.items() if s0 != lost0[k]}
        F.check(seen and not bad,
                f"first enabling delivers what the firmware ring kept from seq 0: {seen}",
                f"expected every core's first record after enabling to be seq 0 (kept in the "
                f"firmware ring while nobody traced) or an hmb_lost covering the gap, "
                f"saw (first seq, lost before) {bad or 'no records'}")
    d0, d1 = resume.get("delivered_disabled_start"), resume.get("delivered_before_enable")
    if d0 is not None and d1 is not None:
        F.check(d0 == d1, f"nothing consumed while disabled: delivered {d1}",
                f"expected the delivered counters not to move while the events were "
                f"disabled (the firmware ring keeps its records), saw {d0} -> {d1}")
    before = dict(enumerate(d1 or []))
    problems = []
    lost_on = defaultdict(list)
    for e in on:
        if e.name == "hmb_lost":
            lost_on[e.f["core"]].append(e)
    for k, evs in sorted(by_core.items()):
        seqs = [e.f["seq"] for e in evs]
        if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            problems.append(f"core {k}: expected consecutive seqs after re-enabling, saw a break "
                            f"in {seqs[0]}..{seqs[-1]} ({len(seqs)} records)")
        if k in before:
            gap = [e for e in lost_on.get(k, []) if e.f["at_seq"] == seqs[0]]
            lost = sum(e.f["count"] for e in gap)
            if seqs[0] - before[k] != lost:
                problems.append(
                    f"core {k}: expected the first record after re-enabling to be "
                    f"{before[k]}, the one after the last delivered before disabling "
                    f"(or an hmb_lost covering the gap), saw seq {seqs[0]} with "
                    f"{lost} lost before it")
        if a.cpus and any(e.cpu != k % a.cpus for e in evs):
            problems.append(f"core {k}: expected on CPU {k % a.cpus}")
    report_problems(F, problems, "after re-enabling: every core continues with the record after "
                    "the last delivered before (kept in the firmware ring), consecutive, "
                    "on the right CPU")
    return F


def cmd_hotplug(a):
    """Order-independent exactness: with a CPU going offline, a core's
    records move between CPU buffers, whose clocks need not agree, so the
    merged report's order across a move proves nothing; each seq must be
    there exactly once or inside a reported loss."""
    F = Failures()
    truth, events, status = load_common(a)
    produced = truth_total(truth)
    recs, lost = defaultdict(list), defaultdict(list)
    for e in events:
        if e.name == "hmb_record":
            recs[e.f["core"]].append(e)
        elif e.name == "hmb_lost":
            lost[e.f["core"]].append(e)
    problems = []
    tot_lost = 0
    for k in sorted(produced):
        seqs = sorted(e.f["seq"] for e in recs.get(k, []))
        dups = len(seqs) - len(set(seqs))
        if dups:
            problems.append(f"core {k}: {dups} records delivered twice")
        covered = set(seqs)
        for e in lost.get(k, []):
            lo = e.f["at_seq"] - e.f["count"]
            tot_lost += e.f["count"]
            overlap = covered.intersection(range(lo, e.f["at_seq"]))
            if overlap:
                problems.append(f"core {k}: hmb_lost {lo}..{e.f['at_seq'] - 1} overlaps "
                                f"{len(overlap)} delivered records")
            covered.update(range(lo, e.f["at_seq"]))
        missing = set(range(produced[k])) - covered
        extra = covered - set(range(produced[k]))
        if missing:
            problems.append(f"core {k}: {len(missing)} records neither delivered nor reported "
                            f"lost, first {min(missing)}")
        if extra:
            problems.append(f"core {k}: {len(extra)} records beyond the {produced[k]} produced")
        cpus = {e.cpu for e in recs.get(k, [])}
        if not cpus <= {0, k % a.cpus}:
            problems.append(f"core {k}: records on CPUs {sorted(cpus)}, expected only on "
                            f"{k % a.cpus} or its stand-in 0")
    report_problems(F, problems, "every record of every core exactly once or reported lost, "
                    "on its CPU or the stand-in")
    F.check(not tot_lost, "nothing lost at this rate",
            f"expected no loss at this rate across CPU moves, saw {tot_lost} records lost")
    if status is not None:
        delivered = status.get("delivered", [])
        want = [len(recs.get(k, [])) for k in range(len(delivered))]
        F.check(delivered == want, f"status delivered {delivered} = the capture",
                f"status delivered {delivered}, capture has {want}")
    if a.moves:
        moves = {}
        with open(a.moves) as fh:
            for line in fh:
                m = re.match(r"(offline|online)_(\d+):\s*([\d ]+)$", line.strip())
                if m:
                    moves[(m.group(1), int(m.group(2)))] = [int(x) for x in m.group(3).split()]
        n = len(produced)
        home = [k % a.cpus for k in range(n)]
        off = [0] * n
        bad = {key: v for key, v in moves.items()
               if v != (off if key[0] == "offline" else home)}
        F.check(moves and not bad, f"status core_cpu while CPU 1 was offline: {off}, "
                f"after: {home} ({len(moves)} readings)",
                f"expected core_cpu {off} while CPU 1 was offline and {home} after, saw "
                f"{bad or 'no readings'}")
    return F


def cmd_summary(a):
    """Counts per core, for measurements; never fails."""
    F = Failures()
    events = parse_report(a.report)
    streams, seg = core_streams(events)
    for k, evs in sorted(streams.items()):
        recs = records_of(evs)
        lost = sum(e.f["count"] for e in evs if e.name == "hmb_lost")
        print(f"core {k}: {len(recs)} records, seq {recs[0].f['seq'] if recs else '-'}.."
              f"{recs[-1].f['seq'] if recs else '-'}, lost {lost}")
    return F


def main(argv=None):
    p = parser(__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp, status=True):
        sp.add_argument("--truth", required=True)
        sp.add_argument("--report", required=True)
        if status:
            sp.add_argument("--status", required=True)
        sp.add_argument("--cpus", type=int, default=2, help="guest CPUs (default 2)")
        sp.add_argument("--dev", type=int,
                        help="only this area's hmb events (several areas in one capture)")
        sp.add_argument("--stats", help="guest per_cpu/cpuN/stats dump")
        sp.add_argument("--stat-report", help="trace-cmd report --stat output")
        return sp

    sp = common(sub.add_parser("record", help="exact delivery, dictionary, counters"))
    sp.add_argument("--dictionary", help="the status 'dictionary' file (binary)")
    sp.set_defaults(func=cmd_record)
    sp = common(sub.add_parser("overrun", help="delivered + lost = produced, lost in place"))
    sp.set_defaults(func=cmd_overrun)
    sp = common(sub.add_parser("markers", help="trace_marker lines between the right records"))
    sp.add_argument("--markers", required=True, help="guest log: 'N before=D.. after=D..'")
    sp.set_defaults(func=cmd_markers)
    sp = common(sub.add_parser("reset", help="reset event, new life from seq 0"))
    sp.set_defaults(func=cmd_reset)
    sp = common(sub.add_parser("flight-reset", help="a reset while nobody traced: tail charged"))
    sp.add_argument("--off-status", required=True, help="status before tracing started")
    sp.set_defaults(func=cmd_flight_reset)
    sp = common(sub.add_parser("corrupt", help="corrupted page: invalid loss, rest delivered"))
    sp.set_defaults(func=cmd_corrupt)
    sp = common(sub.add_parser("hotplug", help="exact delivery across CPU offline/online"))
    sp.add_argument("--moves", help="guest file of core_cpu readings: 'offline_N: ...'")
    sp.set_defaults(func=cmd_hotplug)
    sp = sub.add_parser("disabled", help="nothing while disabled, records after re-enable")
    sp.add_argument("--truth")
    sp.add_argument("--disabled", required=True, help="trace text captured while disabled")
    sp.add_argument("--enabled", required=True, help="trace text captured after echo 1")
    sp.add_argument("--resume", help="guest file with 'delivered_before_enable: ...'")
    sp.add_argument("--first", help="trace text after the first enabling: every core "
                    "starts at seq 0, kept in the firmware ring since before")
    sp.add_argument("--cpus", type=int, default=2)
    sp.set_defaults(func=cmd_disabled)
    sp = sub.add_parser("summary", help="per-core counts of a report")
    sp.add_argument("--report", required=True)
    sp.set_defaults(func=cmd_summary)

    a = p.parse_args(argv)
    Failures.verbose = a.verbose
    if getattr(a, "report", None) and a.cmd != "summary":
        load_lost_reasons(a.report)
    return finish(a.func(a), a.cmd)


if __name__ == "__main__":
    sys.exit(main())
