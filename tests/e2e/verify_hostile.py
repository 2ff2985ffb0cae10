#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks of the hostile scenario (tests/e2e/scenarios/hostile): what the
module made of an area that hmb-mutate damaged while hmb-fwsim wrote it.

Inputs:
  --truth        hmb-fwsim's ground truth (lives, geometry, clock epoch)
  --report       `trace-cmd report -R -t -N` of the capture (its sibling
                 .formats file gives the names of hmb_lost reasons and
                 hmb_state states, as the module defines them)
  --mutations    hmb-mutate's JSON-lines log: phases (mark lines), what was
                 written, CLOCK_MONOTONIC times, producer positions
  --status       the status files after the capture
  --fill-status  the run directory with hostile-fill-{zero,ff,random}-
                 {live,fresh,restored}.txt

Checks, each "ok:" or "FAIL: ... expected X, saw Y", with the phase (row of
issue 8's table) the evidence falls in:
  - no duplicate (generation, core, seq); the generation of a record is the
    producer_gen of the last hmb_state (attached/reset) on its CPU
  - no single hmb_lost larger than a ring holds (pages_per_core x the
    records a page can hold)
  - no core silent (no record for longer than --silent seconds) while the
    others deliver (every simulated core produces all the time), and every
    core's last life delivered or accounted to its end
  - over phase A (damage to record bytes only) delivered + lost = produced
    exactly, for every core, the losses charged as invalid
  - every record of every life delivered or reported lost (no silent loss;
    a life's tail after a damaged prev_next_seq is only shown)
  - status resets <= real resets + meta-page mutations; status delivered =
    the capture's records
  - an area of zeros, 0xff or random bytes is not reported as detached /
    producer_init / attached, but as one of the module's other states
    (read from the capture's hmb_state format: today only "broken")

Phases in time: hmb-mutate logs CLOCK_MONOTONIC; the simulator's firmware
clock is CLOCK_MONOTONIC minus the truth's epoch. A capture event is placed
at the newest firmware time delivered up to it (see annotate()).
"""

import json
import os
import re
import sys
from collections import defaultdict

from hmbtest.check import Failures, parser
from hmbtest.formats import load_lost_reasons, reason_name, symbolic
from hmbtest.report import parse_report, parse_status, status_scalar
from hmbtest.truth import load_truth

REC_HDR = 8
PAGE_HDR = 48
NOT_GARBAGE = {"detached", "producer_init", "attached", "reset", "unknown", ""}
ROWS = {
    "A": "record bytes flipped (payload, then headers)",
    "B": "row 2 page_seq +~2^50 (core 1) / row 5 page producer_gen bit (core 2), CLOSED cleared (core 3)",
    "C": "row 3 meta producer_gen alternating G+1, G",
    "D": "row 4 meta state INIT/READY, same generation",
    "E": "row 1 prev_next_seq +2^32 / +2^63 at the two resets",
}


def load_mutations(path):
    out = []
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if line:
                out.append(json.loads(line))
    return out


class Clock:
    """Firmware time (ns since the simulator's epoch) <-> phases."""

    def __init__(self, truth, muts):
        self.epoch = truth["clock"]["epoch_monotonic_ns"]
        self.hz = truth["clock"]["hz"]
        self.phases = []  # (name, fw_ns_begin)
        for m in muts:
            if m["op"] == "mark" and re.fullmatch(r"phase-[A-Z]", m.get("name", "")):
                self.phases.append((m["name"][-1], self.fw(m["mono_ns"])))

    def fw(self, mono_ns):
        return mono_ns - self.epoch

    def ticks_to_ns(self, ticks):
        return ticks * 1000000000 // self.hz

    def phase(self, fw_ns):
        cur = "-"
        for name, t in self.phases:
            if fw_ns >= t:
                cur = name
        return cur


def annotate(events, clock, snames, first_gen):
    """Per event: generation (per CPU, from hmb_state) and time of delivery
    on the firmware clock: the newest firmware time delivered so far (the
    consumer's progress through the data, whatever its lag), running on
    with the ftrace clock while nothing is delivered (so that what happens
    while every core is silent still gets a time). Records before the first
    hmb_state on their CPU (the capture began after the module attached)
    belong to the first life."""
    gen_of_cpu = defaultdict(lambda: first_gen)
    gen = {}
    when = {}
    newest, last_ts = 0, None
    for e in events:
        if e.name == "hmb_state":
            st = e.f.get("state")
            name = snames.get(st, st) if isinstance(st, int) else st
            if name in ("attached", "reset", 0, 1):
                gen_of_cpu[e.cpu] = e.f.get("producer_gen")
        if e.name == "hmb_record":
            newest = max(newest, clock.ticks_to_ns(e.f["fw_ts"]))
            last_ts = e.ts
        gen[e.idx] = gen_of_cpu[e.cpu]
        when[e.idx] = newest + max(0, e.ts - last_ts) if last_ts is not None else 0
    return gen, when


def check_duplicates(F, events, gen, when, clock):
    seen = {}
    dups = []
    for e in events:
        if e.name != "hmb_record":
            continue
        key = (gen[e.idx], e.f["core"], e.f["seq"])
        if key in seen:
            dups.append((key, seen[key], e))
        else:
            seen[key] = e
    by_phase = defaultdict(list)
    for key, first, e in dups:
        by_phase[clock.phase(when[e.idx])].append((key, first, e))
    if not dups:
        F.ok("no duplicate (generation, core, seq)")
        return by_phase
    for ph, lst in sorted(by_phase.items()):
        cores = defaultdict(int)
        for (g, c, s), _, _ in lst:
            cores[(g, c)] += 1
        ex = lst[0]
        F.fail(f"phase {ph} ({ROWS.get(ph, '')}): expected no duplicate (generation, core, seq), "
               f"saw {len(lst)} re-delivered records, by (gen, core): {dict(cores)}; "
               f"e.g. {ex[0]} first at line {ex[1].lineno}, again at line {ex[2].lineno}")
    return by_phase


def check_loss_bound(F, events, when, clock, capacity):
    big = [e for e in events if e.name == "hmb_lost" and e.f["count"] > capacity]
    losses = defaultdict(list)
    for e in events:
        if e.name == "hmb_lost":
            losses[clock.phase(when[e.idx])].append(e)
    for ph in sorted(losses):
        summ = defaultdict(int)
        for e in losses[ph]:
            summ[(e.f["core"], reason_name(e.f["reason"]))] += e.f["count"]
        F.info(f"phase {ph}: hmb_lost by (core, reason): {dict(summ)}")
    if not big:
        F.ok(f"no single hmb_lost larger than a ring ({capacity} records)")
        return
    for e in big[:10]:
        F.fail(f"phase {clock.phase(when[e.idx])} ({ROWS.get(clock.phase(when[e.idx]), '')}): "
               f"expected no single hmb_lost above the ring capacity {capacity}, saw core "
               f"{e.f['core']} count={e.f['count']} reason="
               f"{reason_name(e.f['reason'])} at_seq={e.f['at_seq']} "
               f"(line {e.lineno})")


def check_silence(F, events, when, clock, truth, silent_s, gen):
    recs = [e for e in events if e.name == "hmb_record"]
    if not recs:
        F.fail("expected records in the capture, saw none")
        return
    t0, t1 = recs[0].ts, recs[-1].ts
    cores = sorted(c["core"] for c in truth["lives"][0]["cores"])
    by_core = defaultdict(list)
    for e in recs:
        by_core[e.f["core"]].append(e)
    limit = int(silent_s * 1e9)
    found = False
    for c in cores:
        lst = by_core.get(c, [])
        prev_ts, prev_e = t0, None
        for e in lst + [None]:
            ts = e.ts if e else t1
            if ts - prev_ts > limit:
                found = True
                start = clock.phase(when[prev_e.idx]) if prev_e else "start"
                since = (f"after seq {prev_e.f['seq']} of gen {gen[prev_e.idx]}"
                         if prev_e else "from the start")
                until = (f"seq {e.f['seq']} of gen {gen[e.idx]}" if e
                         else "the end of the capture")
                F.fail(f"core {c}: expected no silence over {silent_s} s while the producers "
                       f"advance, saw none of its records for {(ts - prev_ts) / 1e9:.2f} s "
                       f"(from phase {start}, {since}, to {until})")
            if e:
                prev_ts, prev_e = ts, e
    if not found:
        F.ok(f"no core silent for more than {silent_s} s")
    # Every core's last life delivered or accounted up to its end.
    last = truth["lives"][-1]
    for ct in last["cores"]:
        c = ct["core"]
        mine = [e for e in by_core.get(c, []) if gen[e.idx] == last["producer_gen"]]
        top = max((e.f["seq"] for e in mine), default=-1)
        F.check(top == ct["produced"] - 1,
                f"core {c}: last life (gen {last['producer_gen']}) delivered to its last seq {top}",
                f"core {c}: expected the last life (gen {last['producer_gen']}) delivered up to seq "
                f"{ct['produced'] - 1}, saw {'up to ' + str(top) if mine else 'no record of it'}")


def check_phase_a_exact(F, events, gen, muts):
    begin = next((m for m in muts if m["op"] == "payload-flips-begin"), None)
    end = next((m for m in muts if m["op"] == "record-flips-end"), None)
    if not begin or not end:
        F.fail("expected payload-flips-begin and record-flips-end in the mutation log, saw none")
        return
    g = begin["area"]["producer_gen"]
    flips = sum(m.get("flips", 0) for m in muts if m["op"].endswith("flips-end"))
    # What the core delivered until its first record produced after the
    # next phase began (cores lag by different amounts under TCG, and a
    # damaged ts_delta makes fw_ts useless here): later re-deliveries are
    # the duplicate check's business.
    after = muts[muts.index(end):]
    nxt = next((m for m in after if m["op"] == "mark" and
                re.fullmatch(r"phase-[A-Z]", m.get("name", ""))), None)
    stop = nxt["area"]["next_seq"] if nxt else end["area"]["next_seq"]
    for c, (s0, s1) in enumerate(zip(begin["area"]["next_seq"], end["area"]["next_seq"])):
        delivered = defaultdict(int)
        lost = set()
        reasons = defaultdict(int)
        # hmb_lost events in a row with one at_seq split one gap by reason:
        # together they cover [at_seq - sum of counts, at_seq).
        run_at, run_n = None, 0
        for e in events:
            if e.f.get("core") != c or gen[e.idx] != g:
                continue
            if e.name == "hmb_record":
                if e.f["seq"] >= stop[c]:
                    break
                run_at, run_n = None, 0
                if s0 <= e.f["seq"] < s1:
                    delivered[e.f["seq"]] += 1
            elif e.name == "hmb_lost":
                if e.f["at_seq"] != run_at:
                    run_at, run_n = e.f["at_seq"], 0
                hi = run_at - run_n
                run_n += e.f["count"]
                lo = run_at - run_n
                if hi > s0 and lo < s1 and hi - lo < 10 ** 7:
                    lost.update(range(max(lo, s0), min(hi, s1)))
                    reasons[reason_name(e.f["reason"])] += \
                        min(hi, s1) - max(lo, s0)
        nd = sum(delivered.values())
        twice = sum(1 for n in delivered.values() if n > 1)
        both = len(lost & set(delivered))
        missing = (s1 - s0) - len(set(delivered) | lost)
        F.check(nd + len(lost) == s1 - s0 and not twice and not both and not missing,
                f"phase A core {c}: seq {s0}..{s1 - 1}: delivered {nd} + lost {len(lost)} = produced "
                f"{s1 - s0}",
                f"phase A ({ROWS['A']}, {flips} flips in all) core {c}: expected delivered + lost = "
                f"produced {s1 - s0} over seq {s0}..{s1 - 1} of gen {g}, saw delivered {nd} "
                f"(twice: {twice}) + lost {len(lost)} (also delivered: {both}), unaccounted {missing}")
        # The ring holds pages_per_core pages (seconds of records) and the
        # consumer keeps up: damaged records are invalid, nothing was
        # overwritten or torn.
        F.check(set(reasons) <= {"invalid"},
                f"phase A core {c}: losses charged as invalid only {dict(reasons)}",
                f"phase A ({ROWS['A']}) core {c}: expected the records lost to damage charged as "
                f"invalid (the ring was never lapped), saw {dict(reasons)}")


def check_accounted(F, events, gen, truth, muts):
    """Every record produced is delivered or charged as lost (any reason):
    a loss nobody reports is the worst lie a trace can tell. Except the
    tail of a life whose final prev_next_seq the device published wrong
    (phase E): the ring was wiped, so a consumer that rejects the value
    cannot know how many records it missed; that tail is only shown."""
    damaged_end = {m["old_gen"] for m in muts if m["op"] == "reset-prev-next"}
    runs = defaultdict(lambda: (None, 0))  # (gen, core) -> (at_seq, sum)
    delivered = defaultdict(set)
    lost = defaultdict(set)
    for e in events:
        if e.name not in ("hmb_record", "hmb_lost"):
            continue
        key = (gen[e.idx], e.f["core"])
        if e.name == "hmb_record":
            runs[key] = (None, 0)
            delivered[key].add(e.f["seq"])
            continue
        at, n = runs[key]
        if e.f["at_seq"] != at:
            at, n = e.f["at_seq"], 0
        hi = at - n
        n += e.f["count"]
        runs[key] = (at, n)
        lo = max(0, at - n)
        lost[key].update(range(lo, min(hi, 10 ** 7)))
    both = {k: len(delivered[k] & lost[k]) for k in sorted(lost, key=str)
            if delivered[k] & lost[k]}
    F.check(not both, "no record both delivered and reported lost",
            f"expected no record both delivered and reported lost, saw by (gen, core): {both}")
    covered = {k: delivered[k] | lost[k] for k in set(delivered) | set(lost)}
    holes = []
    for life in truth["lives"]:
        g = life["producer_gen"]
        for ct in life["cores"]:
            got = covered.get((g, ct["core"]), set())
            miss = sorted(set(range(ct["produced"])) - got)
            if miss and g in damaged_end:
                top = max(got, default=-1)
                tail = [m for m in miss if m > top]
                if tail:
                    F.info(f"gen {g} core {ct['core']}: the last {len(tail)} records (seq "
                           f"{tail[0]}..{tail[-1]}) neither delivered nor reported lost; the "
                           f"device published a wrong prev_next_seq for them")
                miss = [m for m in miss if m <= top]
            if miss:
                holes.append(f"gen {g} core {ct['core']}: {len(miss)} of {ct['produced']} "
                             f"(seq {miss[0]}..{miss[-1]})")
    F.check(not holes, "every record produced was delivered or reported lost",
            "expected every record produced delivered or reported lost, saw unreported: "
            + "; ".join(holes))


def check_counters(F, status, events, muts, truth):
    real = len(truth["lives"]) - 1
    meta_ops = sum(1 for m in muts if m["op"] in (
        "gen-alternate-begin", "state-flip-begin", "reset-prev-next", "page-seq-ahead",
        "page-gen-bit", "page-unclose", "payload-flips-begin", "record-flips-begin", "dict-flip"))
    resets = status_scalar(status, "resets")
    F.check(isinstance(resets, int) and resets <= real + meta_ops,
            f"status resets {resets} <= real resets {real} + mutations {meta_ops}",
            f"expected status resets <= {real} real resets + {meta_ops} mutations, saw {resets}")
    recs = defaultdict(int)
    for e in events:
        if e.name == "hmb_record":
            recs[e.f["core"]] += 1
    dl = status.get("delivered", [])
    cap = [recs[c] for c in range(len(dl))]
    F.check(dl == cap, f"status delivered {dl} = the capture's records",
            f"expected status delivered = the capture's records {cap}, saw {dl}")
    F.info(f"status: state {status.get('state')}, resets {resets}, producer_gen "
           f"{status.get('producer_gen')}, " + ", ".join(
               f"{k} {v}" for k, v in sorted(status.items())
               if k.startswith(("lost/", "errors/")) and isinstance(v, list) and any(v)))


def check_fills(F, fill_dir, snames):
    garbage = {n for n in snames.values() if n not in NOT_GARBAGE} or {"broken"}
    F.info(f"states that name a damaged area (from the capture's hmb_state format): "
           f"{sorted(garbage)}")
    for w in ("zero", "ff", "random"):
        for when in ("live", "fresh", "restored"):
            path = os.path.join(fill_dir, f"hostile-fill-{w}-{when}.txt")
            if not os.path.exists(path):
                F.fail(f"fill {w}: expected {os.path.basename(path)} from the guest, saw none")
                continue
            st = parse_status(path)
            state = st.get("state", "")
            extra = {k: v for k, v in st.items()
                     if k.startswith("errors/") and isinstance(v, list) and any(v)}
            if when == "restored":
                F.check(state == "attached",
                        f"fill {w}: attached again once the good area is back",
                        f"fill {w}: expected state attached once the good area was written back, "
                        f"saw {state!r}")
            elif w == "zero" and when == "fresh":
                F.info(f"fill zero, fresh insmod: state {state!r} (zeros look like firmware that "
                       f"never started: not checked) {extra}")
            else:
                F.check(state in garbage,
                        f"fill {w} ({when}): state {state!r}",
                        f"fill {w} ({when}, "
                        f"{'module attached before' if when == 'live' else 'after rmmod + insmod'}): "
                        f"expected a state naming a damaged area ({'/'.join(sorted(garbage))}), "
                        f"saw {state!r} {extra}")


def main(argv=None):
    ap = parser(__doc__)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--mutations", required=True)
    ap.add_argument("--status", required=True)
    ap.add_argument("--fill-status", required=True)
    ap.add_argument("--silent", type=float, default=2.0,
                    help="seconds without a record of a core that count as silent")
    a = ap.parse_args(argv)
    Failures.verbose = True  # the passes are part of the record
    F = Failures()
    truth = load_truth(a.truth)
    events = parse_report(a.report, light=True)
    snames = symbolic(load_lost_reasons(a.report), "hmb_state", "state")
    muts = load_mutations(a.mutations)
    status = parse_status(a.status)
    clock = Clock(truth, muts)
    geo = truth["geometry"]
    capacity = geo["pages_per_core"] * ((geo["page_size"] - PAGE_HDR) // REC_HDR)
    F.info("phases (firmware s): " + ", ".join(f"{n} {t / 1e9:.2f}" for n, t in clock.phases))
    for m in muts:
        if m["op"] in ("reset-prev-next", "page-seq-ahead", "page-gen-bit", "page-unclose", "error"):
            info = {k: v for k, v in m.items() if k not in ("area", "mono_ns", "op")}
            F.info(f"mutation {m['op']} at {clock.fw(m['mono_ns']) / 1e9:.3f} s: {info}")
    gen, when = annotate(events, clock, snames, truth["lives"][0]["producer_gen"])
    states = defaultdict(int)
    for e in events:
        if e.name == "hmb_state":
            st = e.f.get("state")
            states[(clock.phase(when[e.idx]), snames.get(st, st))] += 1
    F.info(f"hmb_state events by (phase, state): {dict(states)}")
    check_duplicates(F, events, gen, when, clock)
    check_loss_bound(F, events, when, clock, capacity)
    check_silence(F, events, when, clock, truth, a.silent, gen)
    check_phase_a_exact(F, events, gen, muts)
    check_accounted(F, events, gen, truth, muts)
    check_counters(F, status, events, muts, truth)
    check_fills(F, a.fill_status, snames)
    print(f"hostile: {F.passed} checks passed, {F.count} failed")
    return 1 if F.count else 0


if __name__ == "__main__":
    sys.exit(main())
