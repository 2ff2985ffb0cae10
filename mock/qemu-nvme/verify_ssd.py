#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host checks of a mock/qemu-nvme scenario: what the guest drained into
instances/hmb (trace.txt) against what the reference SSD did (QEMU's own
trace of the commands it fetched and completed and the Set Features it got,
and its firmware's account, pci_nvme_hmbt_*: every command's stamps and
whether a record was written, each generation's start with what it says of
the last one, each core's count at STOP and at the end; qemu-nvme.log).
Prints one ok/not ok line per check and the figures.

Usage: verify_ssd.py [--truth-json FILE] SCENARIO RUN_DIR
(--truth-json: also write the device's commands with their firmware stamps
for tests/e2e/verify_cmd_join.py)"""

import collections
import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "lib"))
from hmbtest.clockfit import to_host  # noqa: E402
from hmbtest.dump import DumpError, identity_errors, parse as parse_dump  # noqa: E402

# guest-ssd.sh's device_mark blocks (quiet): 1001 modules loaded, nobody
# tracing; 1002 20 s later; 1003 tracing starts; 1004 tracing ends; 1005
# 1 s after that; 1006 10 s later.
MARKS = range(1001, 1007)
# guest-ssd.sh's io_round: 2 CPUs x 2 x (128 reads + 32 writes).
IO_ROUND = 2 * 2 * (128 + 32)
FETCH, COMPLETE, NAND_READ, NAND_PROG, THERMAL, LOG, ECHO = 1, 2, 3, 4, 8, 10, 11
# run-ssd.sh's freeze scenario: the guest's FREEZE_CONFIG (threshold, N).
FREEZE_THRESHOLD_NS, FREEZE_N = 200_000_000, 16
# include/hmb_trace_abi.h, include/hmb_trace_dump_abi.h
FREEZE_FROZEN, FREEZE_LATENCY, META_FREEZE = 2, 2, 1 << 1
DUMP_FW_FREEZE, SEC_META, SEC_CORES, CORE_LEN = 3, 1, 2, 64
# pci_nvme_hmbt_cmd's rc: the freeze kept the record unwritten.
RC_FROZEN = 2
LOST_REASONS = ("overwritten", "torn", "invalid", "reset")  # hmb_trace_events_abi.h

PIPE_LOST = re.compile(r"CPU:(\d+) \[LOST (\d+) EVENTS\]")
ENTRIES = re.compile(r"^# entries-in-buffer/entries-written: (\d+)/(\d+)")
CPU = re.compile(r"\[(\d+)\]")
REC = re.compile(r"hmb_record:\s+dev=(\d+) core=(\d+) seq=(\d+) fw_ts=(\d+) "
                 r"event_id=(\d+) len=(\d+) payload=(.*)$")
LOST = re.compile(r"hmb_lost:\s+dev=(\d+) core=(\d+) count=(\d+) reason=(\w+) at_seq=(\d+)")
CLOCK = re.compile(r"hmb_clock: .* mult=(\d+) slope_err=(\d+) .* err_ns=(\d+) rtt_min_ns=(\d+) "
                   r"samples=(\d+)")
CLOCK_OF = re.compile(r"hmb_clock: .*?(?:clock=(\w+) |$)")
MARK = re.compile(r" (\d+)\.(\d+):\s+tracing_mark_write:\s+mark (\w+)")
STATE = re.compile(r"hmb_state:\s+dev=(\d+) name=(\S+) state=(\w+) producer_gen=(\d+)")


def le(b, off, n):
    return int.from_bytes(bytes(b[off:off + n]), "little")


def check_dump(check, path, what, gen, delivered, written, fw_cmds, fw_gen_end,
               held=None, fw_restart=None):
    """The crash dump hmb_trace.ko took (guest-ssd.sh saved it to path) of
    generation gen: exact per core (identity), starting where the trace
    stopped (delivered: core -> the trace's records of that generation),
    ending at most where the device did (written: core -> next_seq), and
    its command records are commands the device's firmware stamped.
    held: the (qid, cid) the device held at a hang (hmb.hang_qid): each
    listed in flight with its cmd_fetch record. fw_restart: the device's
    assert (core, tick): the dump has reason fw_restart, no commands in
    flight, ends exactly where the device did on every core, and holds
    the assert's log record."""
    try:
        with open(path, "rb") as f:
            d = parse_dump(f.read())
    except OSError:
        check(f"{what}: a crash dump was saved ({path})", False)
        return
    except DumpError as e:
        check(f"{what}: the crash dump parses ({e})", False)
        return
    h = d["header"]
    errs = identity_errors(d)
    print(f"figures: {what}: crash dump of {h['name']} generation {h['producer_gen']}, "
          f"{h['total_len']} bytes, {len(d['records'])} records, copied in "
          f"{h['copy_ns'] / 1000:.0f} us; per core " + "; ".join(
              f"{c['core']}: seq {c['start_seq']}..{c['end_seq']} records {c['records']} "
              f"skipped {c['skipped']} lost {sum(c['lost'])}" for c in d["cores"]))
    check(f"{what}: the crash dump is of generation {gen} with its dictionary, every core "
          f"exact: end_seq - start_seq = records + skipped + lost ({'; '.join(errs) or 'all'})",
          h["producer_gen"] == gen and h["flags"] & 1 and not errs and
          len(d["cores"]) == h["nr_cores"] > 0)
    # The clock fit of the generation on "local" (id 0; the calibration
    # run at attach makes one even when nobody traced): every record has
    # a host time, before the dump (within its bound) and after the boot.
    fit = next((k for k in d["clocks"] if k["clock_id"] == 0 and k["gen"] == gen), None)
    conv = [to_host(fit, r["ts"]) for r in d["records"]] if fit else []
    taken = h["taken_ns"][0]
    # (The records are copied after the dump's time is stamped: the
    # firmware may write some during the copy, copy_ns.)
    late = [t for t, b in conv if t > taken + h["copy_ns"] + b or t - b <= 0]
    if conv:
        print(f"figures: {what}: clock fit of generation {gen} on local: {fit['samples']} "
              f"samples, err {fit['err_ns']} ns at its window; records converted to "
              f"{(taken - max(t for t, _ in conv)) / 1e6:.1f}..{(taken - min(t for t, _ in conv)) / 1e6:.1f} "
              f"ms before the dump, bound at most {max(b for _, b in conv) / 1e3:.1f} us")
    check(f"{what}: the dump has a clock fit of generation {gen} on local "
          f"({len(d['clocks'])} fits) and every record converts to a host time before the "
          f"dump's copy ended, within its bound ({len(conv)} records, {len(late)} not)",
          fit is not None and len(conv) == len(d["records"]) and not late)
    bad = []
    for c in d["cores"]:
        k = c["core"]
        seqs = [s for s, *_ in delivered.get(k, [])]
        if c["start_seq"] != (max(seqs) + 1 if seqs else 0):
            bad.append(f"core {k} starts at {c['start_seq']}, the trace delivered "
                       f"{len(seqs)} up to {max(seqs) if seqs else '-'}")
        if c["end_seq"] > written.get(k, 0):
            bad.append(f"core {k} ends at {c['end_seq']}, the device wrote {written.get(k)}")
        # A full share keeps the newest: the records end at end_seq.
        got = [r["seq"] for r in d["records"] if r["core"] == k]
        if c["skipped"] and not sum(c["lost"]) and \
                got != list(range(c["end_seq"] - c["records"], c["end_seq"])):
            bad.append(f"core {k}: {c['skipped']} skipped, but its records are not the newest")
    check(f"{what}: the dump starts where the trace stopped and ends at most where the "
          f"device wrote, on every core; a full share keeps the newest "
          f"({'; '.join(bad) or 'all'}; {sum(c['skipped'] for c in d['cores'])} skipped)",
          not bad)
    try:
        with open(os.path.join(os.path.dirname(path), "series")) as f:
            series = f.read().strip()
    except OSError:
        series = "6.1"
    if fw_restart is not None:
        core, tick = fw_restart
        short = {c["core"]: (c["end_seq"], written.get(c["core"], 0)) for c in d["cores"]
                 if c["end_seq"] != written.get(c["core"], 0)}
        asserts = [r for r in d["records"] if r["event_id"] == LOG and r["core"] == core and
                   r["ts"] == tick and bytes(r["payload"][1:8]) == b"assert:"]
        print(f"figures: {what}: the device asserted on core {core} at tick {tick}; the dump "
              f"ends at the device's count on {len(d['cores']) - len(short)} of "
              f"{len(d['cores'])} cores (short: {short}), with {len(asserts)} assert record")
        check(f"{what}: the dump's reason is fw_restart, with no commands in flight "
              f"(reason {h['reason']}, flags {h['flags']:#x})",
              h["reason"] == 2 and not h["flags"] & 8)
        check(f"{what}: the dump ends where the device's ended generation did, on every core "
              f"(end_seq == next_seq written; short: {short or 'none'})",
              not short and len(d["cores"]) == len(written))
        check(f"{what}: the dump holds the firmware's assert record, the device's stamp "
              f"({len(asserts)})", len(asserts) == 1)
    if gen in fw_gen_end and fw_restart is None:
        # What the device had fetched and not completed when generation
        # gen's firmware stopped (its own account): the host had them in
        # flight at DISABLING, so the dump lists each (the reverse need not
        # hold: the host also has commands the device never fetched, and
        # the device may complete some after the dump). Not the
        # Asynchronous Event Request (0Ch): nvme-core sends it outside the
        # block layer's tags, always outstanding.
        open_cmds, last_fetch, tag_fetch = {}, {}, {}
        for w, q, cid, opc, tick, rc in fw_cmds[:fw_gen_end[gen]]:
            if w == "fetch":
                last_fetch[(q, cid)] = tick
                tag_fetch[(q, cid & 0xfff)] = (cid, opc)
            if w == "fetch" and (q or opc != 0x0c):
                open_cmds[(q, cid)] = (opc, tick)
            else:
                open_cmds.pop((q, cid), None)
        listed = {(c["qid"], c["cid"]): c for c in d["inflight"]}
        missing = sorted(k for k in open_cmds if k not in listed)
        fetched = {(le(r["payload"], 0, 2), le(r["payload"], 2, 2), r["ts"])
                   for r in d["records"] if r["event_id"] == FETCH}
        joined = sum(1 for k in open_cmds if k + (open_cmds[k][1],) in fetched)
        # Every listed I/O command the device fetched before the dump: its
        # last cmd_fetch record, the device's own stamp, is in the dump
        # (its newest). A cid is a tag and 4 generation bits (nvme_cid()):
        # the listed command is the one the device fetched only if the
        # last fetch of its tag on its queue has its cid (a tag 16 uses
        # older has the same cid, and its record may be among those the
        # dump left out). The device records a fetch on core qid % cores
        # (its firmware's choice); one stamped after that core's newest
        # record in the dump came after the dump: the reset's window.
        newest = {}
        for r in d["records"]:
            newest[r["core"]] = max(newest.get(r["core"], -1), r["ts"])
        io_this = [k for k in listed
                   if k[0] and tag_fetch.get((k[0], k[1] & 0xfff), (None,))[0] == k[1]]
        io_opc = [k for k in io_this if tag_fetch[(k[0], k[1] & 0xfff)][1] != listed[k]["opcode"]]
        io_fetched = [k for k in io_this
                      if last_fetch[k] <= newest.get(k[0] % h["nr_cores"], -1)]
        io_unjoined = [k for k in io_fetched if k + (last_fetch[k],) not in fetched]
        print(f"figures: {what}: series {series}: {len(d['inflight'])} commands in flight "
              f"in the dump "
              f"(flags {h['flags']:#x}): " + ", ".join(
                  f"q{c['qid']} cid {c['cid']:#x} opc {c['opcode']:#04x}"
                  + (f" slba {c['slba']} nlb {c['nlb']}" if c["nlb"] else "")
                  for c in d["inflight"]) +
              f"; the device had fetched and not completed {sorted(open_cmds)}, "
              f"{joined} of them with their cmd_fetch record in the dump; of the listed I/O "
              f"commands the device fetched ({len(io_this)}; {len(io_this) - len(io_fetched)} "
              f"after the dump), {len(io_unjoined)} without their cmd_fetch record")
        check(f"{what}: the dump lists every command the device had fetched and not "
              f"completed ({len(open_cmds)}; missing {missing}), each with its cmd_fetch "
              f"record ({joined})",
              bool(h["flags"] & 8) and not missing and joined == len(open_cmds))
        check(f"{what}: every listed I/O command the device fetched, before or after the dump, "
              f"has the opcode the device fetched ({len(io_this)}; other: {io_opc})", not io_opc)
        check(f"{what}: every listed I/O command the device fetched has its cmd_fetch record "
              f"in the dump, the device's stamp ({len(io_fetched)}; without: {io_unjoined})",
              not io_unjoined)
        if held is not None:
            h_missing = sorted(k for k in held if k not in listed)
            h_unjoined = sorted(k for k in held if k + (last_fetch.get(k),) not in fetched)
            print(f"figures: {what}: the device held {len(held)} commands of the hung queue "
                  f"{sorted(held)}; the dump lists {len(d['inflight'])} in flight, "
                  f"{sum(1 for k in held if k in listed)} of the held")
            check(f"{what}: the dump lists every command the device held at the hang "
                  f"({len(held)}; missing {h_missing}), each with its cmd_fetch record "
                  f"(without: {h_unjoined})",
                  bool(held) and not h_missing and not h_unjoined)
    stamped = {(w, q, cid, tick) for w, q, cid, _, tick, rc in fw_cmds if rc == 0}
    kinds = {FETCH: "fetch", COMPLETE: "complete"}
    cmd_recs = [r for r in d["records"] if r["event_id"] in kinds]
    unknown = [r for r in cmd_recs
               if (kinds[r["event_id"]], le(r["payload"], 0, 2), le(r["payload"], 2, 2),
                   r["ts"]) not in stamped]
    check(f"{what}: every command record in the dump is one the device's firmware stamped "
          f"({len(cmd_recs)} records, {len(unknown)} unknown)", not unknown)


def check_freeze(check, path, fw_cmds, slow, freezes, freeze_cores, written):
    """The freeze scenario: the device's account (its outlier, hmb.slow_*;
    its freeze, pci_nvme_hmbt_freeze and each core's next_seq at the
    trigger and at FROZEN) against the crash dump hmb_trace took of the
    frozen rings (guest-ssd.sh saved it to path) and against
    hmb-trace-abi.rst "The freeze": the meta page says FROZEN, LATENCY,
    the outlier's qid/cid; every core wrote exactly N records after the
    trigger, then none, and the dump holds them, the ring's end; the
    outlier's cmd_complete is its core's last record before the trigger
    and its cmd_fetch is in the dump, both with the device's stamps.
    written: every core's final next_seq (the firmware wrote again after
    the re-arm)."""
    held = [x for x in slow if x[0] == "hold"]
    check(f"freeze: the device held one command's completion and released it "
          f"({[x[0] for x in slow]})",
          [x[0] for x in slow] == ["hold", "release"] and held[0][1:] == slow[1][1:])
    if not held:
        return
    _, q, cid, opc, fetch_tick = held[0]
    done = [t for w, fq, fc, _, t, rc in fw_cmds
            if w == "complete" and (fq, fc) == (q, cid) and t > fetch_tick]
    latency = done[0] - fetch_tick if done else 0
    print(f"figures: freeze: the outlier q{q} cid {cid:#x} opc {opc:#04x}, device latency "
          f"{latency / 1e6:.1f} ms (firmware ticks, 1 GHz); the device's freeze account "
          f"{[(w, hex(word), core, hex(detail)) for w, _, word, core, detail, _ in freezes]}")
    whats = [f[0] for f in freezes]
    check(f"freeze: the device froze once, then was re-armed (trigger, frozen, running: "
          f"{whats})", whats == ["trigger", "frozen", "running"])
    if not freezes:
        return
    _, gen, word, fcore, detail, fts = freezes[0]
    cores = len(freeze_cores.get("trigger", {}))
    check(f"freeze: the trigger was the outlier's latency, on its core, once it completed "
          f"(word {word:#010x}, core {fcore}, detail {detail:#x}, tick {fts}; "
          f"{latency} ticks >= {FREEZE_THRESHOLD_NS})",
          (word >> 8) & 0xff == FREEZE_LATENCY and word >> 16 == 1 and cores and
          fcore == q % cores and detail == q << 16 | cid and done and fts == done[0] and
          latency >= FREEZE_THRESHOLD_NS)
    trig, froz = freeze_cores.get("trigger", {}), freeze_cores.get("frozen", {})
    after = {c: froz.get(c, 0) - trig[c] for c in trig}
    print(f"figures: freeze: the device's cores at the trigger {trig}, at FROZEN {froz}, "
          f"at the end {written}")
    check(f"freeze: the device wrote exactly N = {FREEZE_N} records after the trigger on every "
          f"core, then none ({after})",
          bool(after) and all(v == FREEZE_N for v in after.values()))
    check(f"freeze: re-armed, the firmware wrote again on every core (end {written}, "
          f"frozen at {froz})", bool(froz) and all(written.get(c, 0) > n for c, n in froz.items()))
    try:
        with open(path, "rb") as f:
            d = parse_dump(f.read())
    except OSError:
        check(f"freeze: a crash dump was saved ({path})", False)
        return
    except DumpError as e:
        check(f"freeze: the crash dump parses ({e})", False)
        return
    h = d["header"]
    errs = identity_errors(d)
    meta = d["sections"].get(SEC_META, (0, b"", 0))[1]
    cdesc = d["sections"].get(SEC_CORES, (0, b"", 0))[1]
    recs = collections.defaultdict(dict)
    for r in d["records"]:
        recs[r["core"]][r["seq"]] = r
    print(f"figures: freeze: crash dump of {h['name']} generation {h['producer_gen']}, "
          f"reason {h['reason']}, {h['total_len']} bytes, {len(d['records'])} records, copied "
          f"in {h['copy_ns'] / 1000:.0f} us; per core " + "; ".join(
              f"{c['core']}: seq {c['start_seq']}..{c['end_seq']} records {c['records']} "
              f"skipped {c['skipped']} lost {sum(c['lost'])}" for c in d["cores"]))
    check(f"freeze: the dump's reason is fw_freeze, of generation {gen}, with its dictionary, "
          f"every core exact ({h['reason']}; {'; '.join(errs) or 'exact'})",
          h["reason"] == DUMP_FW_FREEZE and h["producer_gen"] == gen and h["flags"] & 1 and
          not errs and len(d["cores"]) == h["nr_cores"] == cores)
    if len(meta) < 128 or len(cdesc) < CORE_LEN * h["nr_cores"]:
        check(f"freeze: the dump has the meta page ({len(meta)} bytes) and the core "
              f"descriptors ({len(cdesc)})", False)
        return
    flags, = struct.unpack_from("<I", meta, 52)
    mword, mcore, _, mts, mdetail = struct.unpack_from("<IHHQQ", meta, 96)
    check(f"freeze: the dump's meta page says FROZEN, LATENCY, the first freeze, on the "
          f"outlier's core, its qid << 16 | cid, the device's trigger tick (flags {flags:#x}, "
          f"word {mword:#010x}, core {mcore}, detail {mdetail:#x}, ts {mts})",
          flags & META_FREEZE and mword & 0xf == FREEZE_FROZEN and
          (mword >> 8) & 0xff == FREEZE_LATENCY and mword >> 16 == 1 and mcore == fcore and
          mdetail == detail and mts == fts)
    bad, window = [], {}
    for k in range(h["nr_cores"]):
        next_seq, = struct.unpack_from("<Q", cdesc, k * CORE_LEN + 8)
        freeze_seq, = struct.unpack_from("<Q", cdesc, k * CORE_LEN + 48)
        end = next((c["end_seq"] for c in d["cores"] if c["core"] == k), None)
        have = [s for s in range(freeze_seq, next_seq) if s in recs[k]]
        window[k] = len(have)
        if (freeze_seq, next_seq) != (trig.get(k), froz.get(k)) or end != next_seq or \
                len(have) != FREEZE_N or max(recs[k], default=-1) != next_seq - 1:
            bad.append(f"core {k}: freeze_seq {freeze_seq} next_seq {next_seq} end_seq {end}, "
                       f"{len(have)} records of the window, last {max(recs[k], default=None)}")
    check(f"freeze: on every core the dump holds exactly the N = {FREEZE_N} records after the "
          f"trigger and ends there, the ring's end, as the device counted "
          f"({'; '.join(bad) or window})", not bad)
    last = recs[fcore].get(trig.get(fcore, 0) - 1)
    ok = last is not None and last["event_id"] == COMPLETE
    if ok:
        lq, lc, _, lat = struct.unpack_from("<HHHI", bytes(last["payload"]))
        ok = (lq, lc) == (q, cid) and lat >= FREEZE_THRESHOLD_NS and last["ts"] == fts
    check(f"freeze: the outlier's cmd_complete is core {fcore}'s last record before the "
          f"trigger, over the threshold, the device's stamp", ok)
    fetches = [s for s, r in recs[fcore].items() if r["event_id"] == FETCH and
               (le(r["payload"], 0, 2), le(r["payload"], 2, 2), r["ts"]) == (q, cid, fetch_tick)]
    check(f"freeze: the outlier's cmd_fetch is in the dump, the device's stamp (seq {fetches}, "
          f"{trig.get(fcore, 0) - 1 - (fetches or [0])[0]} records before its completion)",
          len(fetches) == 1)
    stamped = {(w, fq, fc, t) for w, fq, fc, _, t, rc in fw_cmds if rc == 0}
    kinds = {FETCH: "fetch", COMPLETE: "complete"}
    cmd_recs = [r for r in d["records"] if r["event_id"] in kinds]
    unknown = [r for r in cmd_recs
               if (kinds[r["event_id"]], le(r["payload"], 0, 2), le(r["payload"], 2, 2),
                   r["ts"]) not in stamped]
    check(f"freeze: every command record in the dump is one the device's firmware stamped "
          f"({len(cmd_recs)} records, {len(unknown)} unknown)", not unknown)


def main():
    args = sys.argv[1:]
    truth_json = None
    if args[:1] == ["--truth-json"]:
        truth_json, args = args[1], args[2:]
    scenario, run = args[0], args[1]
    failed = 0
    # causes: the die model's dictionary (mock/fwsim/causes/causes_events.def,
    # patch 0004): cmd_fetch and cmd_complete keep ids 1 and 2 and qid, cid
    # first, the fetch's opcode comes after its tag; otherwise as record.
    fetch_opc_at = 4
    if scenario == "causes":
        scenario, fetch_opc_at = "record", 6

    def check(what, cond):
        nonlocal failed
        print(("ok - " if cond else "not ok - ") + what)
        failed += 0 if cond else 1

    # The device: QEMU's trace points.
    io_cmds, admin_opc, setfeat, io_done = [], collections.Counter(), [], 0
    shutdowns = 0
    fw_cmds = []                            # (what, qid, cid, opc, tick, rc)
    fw_stop_at = []                         # len(fw_cmds) at each STOP
    fw_core = {}                            # (gen, core) -> (next_seq, dropped), last told
    fw_prev = {}                            # (gen, core) -> (prev_gen, prev_next_seq)
    fw_gens = []
    fw_gen_end = {}                         # gen -> len(fw_cmds) when its firmware stopped
    dev_marks = []                          # (block, time, C1h commands before it)
    # I/O fetched after a Create I/O SQ (01h) and before the next Doorbell
    # Buffer Config (7Ch): the host used shadow doorbells the controller
    # did not know of (kernel/patches/0006).
    dbbuf_due, dbbuf_early = False, 0
    c1_at = []                              # time of every C1h command
    held = []                               # (qid, cid) held at a hang
    asserted = []                           # (gen, core, tick) of an assert
    assert_at = []                          # len(fw_cmds) at each assert
    slow = []                               # (what, qid, cid, opc, fetch tick)
    freezes = []                            # (what, gen, word, core, detail, tick)
    freeze_cores = {}                       # "trigger"/"frozen" -> {core: next_seq}
    with open(f"{run}/qemu-nvme.log", errors="replace") as f:
        for line in f:
            t = re.match(r"\d+@(\d+\.\d+):", line)
            t = float(t[1]) if t else None
            m = re.search(r"pci_nvme_read cid \d+ nsid \d+ nlb \d+ count \d+ lba 0x(\w+)", line)
            if m:
                lba = int(m[1], 16)
                if lba % 8 == 0 and lba // 8 in MARKS:
                    dev_marks.append((lba // 8, t, len(c1_at)))
                continue
            m = re.search(r"pci_nvme_hmbt_cmd (\w+) qid (\d+) cid (\d+) opc 0x(\w+) tick (\d+) "
                          r"rc (-?\d+)", line)
            if m:
                fw_cmds.append((m[1], int(m[2]), int(m[3]), int(m[4], 16), int(m[5]), int(m[6])))
                continue
            m = re.search(r"pci_nvme_hmbt_hang hold qid (\d+) cid (\d+)", line)
            if m:
                held.append((int(m[1]), int(m[2])))
                continue
            m = re.search(r"pci_nvme_hmbt_assert gen (\d+) core (\d+) tick (\d+)", line)
            if m:
                asserted.append((int(m[1]), int(m[2]), int(m[3])))
                assert_at.append(len(fw_cmds))
                continue
            m = re.search(r"pci_nvme_hmbt_slow (\w+) qid (\d+) cid (\d+) opc 0x(\w+) "
                          r"fetch_tick (\d+)", line)
            if m:
                slow.append((m[1], int(m[2]), int(m[3]), int(m[4], 16), int(m[5])))
                continue
            m = re.search(r"pci_nvme_hmbt_freeze (\w+) gen (\d+) word 0x(\w+) core (\d+) "
                          r"detail 0x(\w+) tick (\d+)", line)
            if m:
                freezes.append((m[1], int(m[2]), int(m[3], 16), int(m[4]), int(m[5], 16),
                                int(m[6])))
                continue
            m = re.search(r"pci_nvme_hmbt_core (\w+) gen (\d+) core (\d+) next_seq (\d+) "
                          r"dropped (\d+)", line)
            if m and m[1] in ("trigger", "frozen"):
                # The first freeze's (the freeze scenario has one).
                freeze_cores.setdefault(m[1], {}).setdefault(int(m[3]), int(m[4]))
                continue
            if m:
                fw_core[(int(m[2]), int(m[3]))] = (int(m[4]), int(m[5]))
                if m[1] == "stop" and int(m[3]) == 0:
                    fw_stop_at.append(len(fw_cmds))
                continue
            m = re.search(r"pci_nvme_hmbt_core_prev gen (\d+) core (\d+) prev_gen (\d+) "
                          r"prev_next_seq (\d+)", line)
            if m:
                fw_prev[(int(m[1]), int(m[2]))] = (int(m[3]), int(m[4]))
                continue
            m = re.search(r"pci_nvme_hmbt_start gen (\d+)", line)
            if m:
                fw_gens.append(int(m[1]))
                continue
            m = re.search(r"pci_nvme_hmbt_stop gen (\d+)", line)
            if m:
                fw_gen_end[int(m[1])] = len(fw_cmds)
                continue
            m = re.search(r"pci_nvme_io_cmd cid (\d+) nsid 0x\w+ sqid (\d+) opc 0x(\w+)", line)
            if m:
                io_cmds.append((int(m[2]), int(m[1]), int(m[3], 16)))
                dbbuf_early += dbbuf_due
                continue
            m = re.search(r"pci_nvme_admin_cmd cid \d+ sqid \d+ opc 0x(\w+)", line)
            if m:
                admin_opc[int(m[1], 16)] += 1
                if int(m[1], 16) in (0x01, 0x7c):
                    dbbuf_due = int(m[1], 16) == 0x01
                if int(m[1], 16) == 0xc1:
                    c1_at.append(t)
                continue
            m = re.search(r"pci_nvme_setfeat cid \d+ nsid 0x\w+ fid 0x(\w+) save 0x\w+ cdw11 0x(\w+)", line)
            if m:
                setfeat.append((int(m[1], 16), int(m[2], 16)))
                continue
            if "pci_nvme_mmio_shutdown_set" in line:
                shutdowns += 1
                continue
            m = re.search(r"pci_nvme_enqueue_req_completion cid \d+ cqid (\d+)", line)
            if m and int(m[1]):
                io_done += 1

    # The host: records in instances/hmb, per generation (hmb_state).
    # hmb_state is written on every CPU that carries records, before them.
    # An epoch is one producer generation seen by one consumer: every CPU
    # sees the same sequence of them (a reallocated area starts at
    # generation 1 again, so the generation alone is not a key).
    cpu_gen = collections.defaultdict(int)
    cpu_epoch = collections.defaultdict(int)
    clock = None
    gens = []
    recs = collections.defaultdict(list)   # (gen, core) -> [(seq, ev, payload)]
    lost = collections.Counter()
    overwritten = 0
    with open(f"{run}/trace.txt", errors="replace") as f:
        for line in f:
            m = PIPE_LOST.search(line)
            if m:
                # trace_pipe (resets) fell behind and ftrace dropped these.
                overwritten += int(m[2])
                continue
            m = ENTRIES.match(line)
            if m:
                # The instance's own buffer overwrote its oldest events:
                # what they held is lost to ftrace, not to hmb_trace, and
                # no count of ours can say which they were.
                overwritten += int(m[2]) - int(m[1])
                continue
            c = CPU.search(line)
            gen = cpu_epoch[c[1]] if c else 0
            m = STATE.search(line)
            if m:
                g = int(m[4])
                if g != cpu_gen[c[1]]:
                    cpu_gen[c[1]] = g
                    cpu_epoch[c[1]] += 1
                    if cpu_epoch[c[1]] > len(gens):
                        gens.append(g)
                continue
            m = CLOCK.search(line)
            if m:
                # The fit to "local" (a module fits every trace clock and
                # says which; before that, "local" only): the clock the
                # guest's marks measure below.
                if CLOCK_OF.search(line)[1] in (None, "local"):
                    clock = m
                continue
            m = LOST.search(line)
            if m:
                lost[(gen, int(m[2]), m[4])] += int(m[3])
                continue
            m = REC.search(line)
            if m:
                payload = [int(x, 16) for x in m[7].split()]
                recs[(gen, int(m[2]))].append((int(m[3]), int(m[5]), payload, int(m[4])))

    if scenario in ("dump", "hang", "assert"):
        # Nobody traced generation 1: the crash dump of the reset (hang:
        # the timeout's; assert: the firmware's restart) is its only
        # reader. Its records and losses stand for generation 1 in
        # every check below, as if a trace had drained them.
        try:
            with open(f"{run}/coredump.bin", "rb") as f:
                d = parse_dump(f.read())
        except (OSError, DumpError):
            d = {"header": {"producer_gen": 0}, "records": [], "lost": []}
        # The trace itself counts all of generation 1 lost to the reset
        # (before generation 2's hmb_state: epoch 0), never delivered.
        trace_lost1 = {c: n for (e, c, _), n in lost.items() if e == 0}
        written1 = {c: n for (g, c), (n, _) in fw_core.items() if g == 1}
        check(f"nobody tracing: the trace counts generation 1 lost to the reset, every record "
              f"the device wrote ({trace_lost1}, written {written1})",
              bool(written1) and trace_lost1 == written1)
        recs = collections.defaultdict(list, {(e + 1, c): v for (e, c), v in recs.items()})
        lost = collections.Counter({(e + 1, c, r): n for (e, c, r), n in lost.items() if e})
        gens.insert(0, d["header"]["producer_gen"])
        for r in d["records"]:
            recs[(1, r["core"])].append((r["seq"], r["event_id"], list(r["payload"]), r["ts"]))
        for x in d["lost"]:
            lost[(1, x["core"], LOST_REASONS[x["reason"]])] += x["count"]
        # The oldest records a full share left out (coredump_kb=64).
        for c in d.get("cores", []):
            lost[(1, c["core"], "skipped")] += c["skipped"]
        # What the firmware wrote after the dump (the reset's own commands,
        # before the HMB went) is in neither: lost to the reset.
        after = {c["core"]: written1.get(c["core"], 0) - c["end_seq"] for c in d.get("cores", [])}
        print(f"figures: dump: records the firmware wrote after the dump, per core {after}")
        for c, n in after.items():
            lost[(1, c, "reset")] += max(n, 0)
    if scenario != "record":
        check(f"the hmb instance's buffer kept every event ({overwritten} overwritten by ftrace: "
              "if not 0, the records below are incomplete for that reason alone; "
              "raise buffer_size_kb in guest-ssd.sh)", overwritten == 0)
    nrec = sum(len(v) for v in recs.values())
    # The guest's trace clock against QEMU's virtual clock (mono reads the
    # HPET under TCG): markers in a "local" and a "mono" instance.
    marks = {}
    for name in ("local", "mono"):
        try:
            with open(f"{run}/clk-{name}.txt") as f:
                for line in f:
                    m = MARK.search(line)
                    if m:
                        marks.setdefault((name, m[3]), []).append(int(m[1]) * 10**6 + int(m[2]))
        except OSError:
            pass
    guest_ppm = None
    # Triplets (local, mono, local) in order; the tightest of each label.
    best = {}
    for w in ("start", "end"):
        loc, mono = marks.get(("local", w), []), marks.get(("mono", w), [])
        trip = [(loc[2 * i], mono[i], loc[2 * i + 1])
                for i in range(min(len(mono), len(loc) // 2))]
        if trip:
            best[w] = min(trip, key=lambda t: t[2] - t[0])
    if len(best) == 2:
        span = best["end"][1] - best["start"][1]
        loc = {w: (best[w][0] + best[w][2]) / 2 for w in best}
        guest_ppm = ((loc["end"] - loc["start"]) / span - 1) * 1e6
        # The local pair brackets the mono mark; each is read to 1 us.
        guest_err = (2 + sum((t[2] - t[0]) / 2 for t in best.values())) / span * 1e6
        print(f"figures: the guest's trace clock (local) runs {guest_ppm:+.1f} ppm "
              f"(+-{guest_err:.1f}) against QEMU's virtual clock (mono/HPET) over "
              f"{span / 1e6:.1f} s")
    if clock:
        # mult: host ns per firmware tick, 32.32 fixed point; the device's
        # clock runs at 1 GHz * (1 + drift_ppm) of QEMU's virtual clock.
        mult, slope_err = int(clock[1]), int(clock[2])
        ppm = (2**32 / mult - 1) * 1e6
        ppm_err = slope_err / mult * 1e6
        print(f"figures: last clock fit: {clock[5]} samples, err_ns {clock[3]}, "
              f"rtt_min_ns {clock[4]}, fitted drift {ppm:+.1f} ppm, stated slope bound "
              f"+-{ppm_err:.1f} ppm")
    print(f"figures: device fetched {len(io_cmds)} I/O commands, completed {io_done}, "
          f"admin opcodes {dict(sorted(admin_opc.items()))}; host drained {nrec} records "
          f"in generations {gens}; lost {dict(lost) or 0}")
    print(f"figures: Set Features (fid, cdw11) in order: {setfeat}")

    if scenario == "maxd1":
        # nvme_hmb_trace_place() with no area: C2h EN=0, then the data HMB.
        check(f"HMMAXD=1: the vendor feature says no trace area (C2h EN=0) right before "
              f"the HMB enable ({setfeat})",
              (0xc2, 0) in setfeat and
              setfeat[setfeat.index((0xc2, 0)) + 1:][:1] == [(0x0d, 1)] and
              not any(fid == 0xc2 and dw & 1 for fid, dw in setfeat))
        check(f"HMMAXD=1: no record drained ({nrec})", nrec == 0)
        check(f"rmmod nvme shut the controller down ({shutdowns} CC.SHN)", shutdowns == 1)
        return 1 if failed else 0

    # nvme_hmb_trace_place() before nvme_set_host_mem(): C2h EN=1 right before 0Dh EHM=1.
    places = [i for i, (fid, dw) in enumerate(setfeat) if fid == 0xc2 and dw & 1]
    if admin_opc[0x7c]:
        # QEMU's controller has shadow doorbells: a reset forgets them, and
        # I/O sent before they are set again can leave EventIdx behind the
        # shadow tail, after which that queue is never rung again.
        check(f"no I/O command fetched between a Create I/O SQ and the next Doorbell Buffer "
              f"Config ({dbbuf_early} of {len(io_cmds)}; {admin_opc[0x7c]} 7Ch)",
              dbbuf_early == 0)
    check("nvme-pci placed the trace area (vendor feature C2h EN=1) right before every "
          "HMB enable (0Dh EHM=1)",
          bool(places) and all(i + 1 < len(setfeat) and setfeat[i + 1][0] == 0x0d and
                               setfeat[i + 1][1] & 1 for i in places) and
          sum(1 for fid, dw in setfeat if fid == 0x0d and dw & 1) == len(places))

    # Exact accounting: per core and generation, seqs 0..N-1 with no gap, or gaps told.
    gaps = 0
    for (g, c), v in recs.items():
        seqs = sorted(s for s, *_ in v)
        told = sum(n for (lg, lc, _), n in lost.items() if lg == g and lc == c)
        if seqs != list(range(seqs[0], seqs[0] + len(seqs))) or seqs[0] != 0:
            if told == 0:
                gaps += 1
    check(f"every core's records of every generation are 0..N-1 without a gap or with the "
          f"gap counted ({len(recs)} core rings, lost {sum(lost.values())})", gaps == 0)

    fetch = collections.Counter()
    done = collections.Counter()
    fetch_opc = collections.Counter()
    join_bad = 0
    admin_unfetched, admin_open = [], []
    for (g, c), v in recs.items():
        open_cmds = {}
        for s, ev, p, ts in sorted(v):
            if ev == FETCH:
                q, cid, opc = le(p, 0, 2), le(p, 2, 2), p[fetch_opc_at]
                if q:
                    fetch[g] += 1
                    fetch_opc[opc] += 1
                open_cmds[(q, cid)] = ts
            elif ev == COMPLETE:
                q, cid = le(p, 0, 2), le(p, 2, 2)
                if q:
                    done[g] += 1
                if open_cmds.pop((q, cid), None) is None:
                    if q:
                        join_bad += 1
                    else:
                        # The Set Features 0Dh that started the producer
                        # was fetched before there was an area.
                        admin_unfetched.append((g, c, cid))
        join_bad += sum(1 for (q, _) in open_cmds if q)
        admin_open.extend((g, c, cid) for (q, cid) in open_cmds if not q)
    dev_opc = collections.Counter(o for _, _, o in io_cmds)
    print(f"figures: I/O cmd_fetch records per generation {dict(fetch)}, cmd_complete "
          f"{dict(done)}; by opcode {dict(fetch_opc)} (device: {dict(dev_opc)})")
    print(f"figures: admin completions without a fetch record {admin_unfetched} "
          f"(the HMB enable itself), admin fetches never completed {admin_open} "
          f"(asynchronous event requests; a STOP, completed once stopped)")
    # ctrl: START is fetched while the firmware is stopped, completed after;
    # freeze: the re-arm (FREEZE_REARM) is fetched while frozen (rc 2),
    # completed after.
    rearm = sum(1 for i, (w, q, cid, _, _, rc) in enumerate(fw_cmds)
                if w == "fetch" and not q and rc == RC_FROZEN and
                any(w2 == "complete" and (q2, c2) == (0, cid) and rc2 == 0
                    for w2, q2, c2, _, _, rc2 in fw_cmds[i + 1:i + 50]))
    check(f"at most one admin completion per generation without its fetch (the enable"
          f"{', and START' if scenario == 'ctrl' else ''}"
          f"{f', and {rearm} fetched while frozen' if freezes else ''})",
          len(admin_unfetched) <= len(set(gens)) + (scenario == "ctrl") + rearm)
    # A record lost (counted: the tail a reset destroyed before it was
    # drained) can leave one command's fetch or completion alone, and no
    # more; without losses every command must join.
    nlost = sum(lost.values())
    # assert: an I/O command in flight at the assert has its fetch record
    # in generation 1 and its completion's, if recorded (not while the
    # firmware halted), in generation 2: each such record is alone.
    straddle = 0
    if assert_at:
        open_at = {}
        for i, (w, q, cid, opc, tick, rc) in enumerate(fw_cmds):
            if not q:
                continue
            if i < assert_at[0]:
                if w == "fetch":
                    open_at[(q, cid)] = rc == 0
                else:
                    open_at.pop((q, cid), None)
            elif w == "complete" and (q, cid) in open_at:
                straddle += open_at.pop((q, cid)) + (rc == 0)
        print(f"figures: I/O records alone because their command was in flight at the "
              f"assert: {straddle}")
    # The freeze: a command whose fetch was written before a core stopped
    # and whose completion the freeze kept unwritten (rc 2), or the other
    # way round after the re-arm, has one record alone: nothing is lost.
    frozen_alone = 0
    if freezes:
        pending = collections.defaultdict(list)
        for w, q, cid, opc, tick, rc in fw_cmds:
            if not q:
                continue
            if w == "fetch":
                pending[(q, cid)].append(rc)
            elif pending[(q, cid)]:
                frc = pending[(q, cid)].pop(0)
                frozen_alone += {frc, rc} == {0, RC_FROZEN}
        print(f"figures: I/O records alone because the freeze kept their command's other "
              f"record unwritten: {frozen_alone}")
    check(f"every I/O cmd_fetch joins its cmd_complete on the same core ({join_bad} "
          f"unmatched, at most the {nlost} records counted lost"
          f"{f' and the {straddle} of commands in flight at the assert' if assert_at else ''}"
          f"{f' and the {frozen_alone} the freeze left alone' if freezes else ''})",
          join_bad <= nlost + straddle + frozen_alone)
    # The device's own account: which I/O fetches its firmware recorded.
    fw_io_fetch = [c for c in fw_cmds if c[0] == "fetch" and c[1]]
    fw_rec_opc = collections.Counter(c[3] for c in fw_io_fetch if c[5] == 0)
    # A command held at a hang (hmb.hang_qid) is fetched, never processed.
    check(f"the firmware's account covers every I/O command the device fetched "
          f"({len(fw_io_fetch)} of {len(io_cmds)} processed + {len(held)} held)",
          len(fw_io_fetch) == len(io_cmds) + len(held))
    missing = {o: n - fetch_opc.get(o, 0) for o, n in fw_rec_opc.items()}
    check(f"one cmd_fetch record per I/O fetch the firmware recorded "
          f"({sum(fetch.values())} records, {sum(fw_rec_opc.values())} recorded, same opcodes; "
          f"{sum(missing.values())} missing, at most the {nlost} records counted lost)",
          set(fetch_opc) <= set(fw_rec_opc) and all(v >= 0 for v in missing.values()) and
          sum(missing.values()) <= nlost)
    unrec = [c for c in fw_io_fetch if c[5] != 0]
    print(f"figures: I/O fetches the firmware did not record (stopped): {len(unrec)}; "
          f"record errors {sum(1 for c in fw_cmds if c[5] < 0)}")
    check("the firmware had no record error", all(c[5] >= 0 for c in fw_cmds))
    if scenario in ("record", "reset"):
        check(f"every I/O command before the final STOP was recorded "
              f"({len(fw_io_fetch[:fw_stop_at[-1] if fw_stop_at else 0])} commands)",
              bool(fw_stop_at) and
              all(c[5] == 0 for c in fw_cmds[:fw_stop_at[-1]] if c[0] == "fetch" and c[1]))

    # Exact accounting against the device: per generation and core, the
    # records drained plus those counted lost are the records the producer
    # wrote (its next_seq, told at STOP and at the end), none beyond.
    acct, acct_bad = [], []
    for i, g in enumerate(gens):
        for (fg, c), (n, dropped) in sorted(fw_core.items()):
            if fg != g:
                continue
            seqs = [s for s, *_ in recs.get((i + 1, c), [])]
            nlost = sum(v for (lg, lc, _), v in lost.items() if lg == i + 1 and lc == c)
            acct.append(f"gen {g} core {c}: {len(seqs)} drained + {nlost} lost = {n} written")
            if (len(seqs) + nlost != n or len(set(seqs)) != len(seqs) or
                    any(s >= n for s in seqs) or dropped):
                acct_bad.append(acct[-1] + (f", dropped {dropped}" if dropped else ""))
    print("figures: " + "; ".join(acct))
    check(f"exact accounting: every core's records drained + lost = records the device "
          f"wrote, in every generation ({len(acct)} core rings; "
          f"{'; '.join(acct_bad) or 'all equal'})",
          bool(acct) and not acct_bad and set(fw_gens) == set(gens))
    if scenario == "freeze":
        check_freeze(check, f"{run}/coredump.bin", fw_cmds, slow, freezes, freeze_cores,
                     {c: n for (g, c), (n, _) in fw_core.items() if g == 1})
    if scenario == "ctrl":
        check(f"RING_MODE stop, then overwrite: the device froze nothing (no ring filled; "
              f"{[f[0] for f in freezes]})", not freezes)
    if scenario == "hang":
        check(f"the device held commands of the hung queue ({len(held)}), and the controller "
              f"reset ended the hang", bool(held))
    if scenario == "assert":
        check(f"the firmware asserted once, in generation 1 ({asserted})",
              len(asserted) == 1 and asserted[0][0] == 1)
        check(f"a firmware restart is no host reset: one HMB enable, no MR=1 "
              f"({[dw for fid, dw in setfeat if fid == 0x0d]})",
              sum(1 for fid, dw in setfeat if fid == 0x0d and dw & 1) == 1)
    if scenario in ("reset", "dump", "hang", "assert"):
        check(f"the {'assert' if scenario == 'assert' else 'reset'} is a new producer "
              f"generation (generations in order {gens})", gens == [1, 2])
        if scenario != "assert":
            check("the driver re-placed the area and re-enabled the HMB with MR=1 after the "
                  "reset", any(fid == 0x0d and dw == 0x3 for fid, dw in setfeat))
        # ABI "Producer reset": the new generation's core descriptors name
        # the old generation and how far it got.
        prev = {c: v for (g, c), v in fw_prev.items() if g == 2}
        want = {c: (1, n) for (g, c), (n, _) in fw_core.items() if g == 1}
        print(f"figures: generation 2's (prev_gen, prev_next_seq) per core {prev}, "
              f"generation 1's final next_seq {want}")
        check("generation 2's prev_gen is 1 and prev_next_seq each core's final next_seq "
              "of generation 1, on every core", bool(prev) and prev == want)
        check_dump(check, f"{run}/coredump.bin", scenario, 1, dict(
            (c, v) for (e, c), v in recs.items() if e == 1) if scenario == "reset" else {},
            {c: n for (g, c), (n, _) in fw_core.items() if g == 1}, fw_cmds, fw_gen_end,
            held=held if scenario == "hang" else None,
            fw_restart=asserted[0][1:] if scenario == "assert" and asserted else None)
    if scenario == "ctrl":
        # The PCI remove after the trace caught up: nothing undelivered.
        last = len(gens)
        check_dump(check, f"{run}/coredump-remove.bin", "PCI remove", gens[-1] if gens else 0,
                   dict((c, v) for (e, c), v in recs.items() if e == last),
                   {c: n for (g, c), (n, _) in fw_core.items() if gens and g == gens[-1]},
                   fw_cmds, fw_gen_end)
    if scenario == "resets":
        check(f"8 resets: 9 producer generations, each drained (generations in order {gens})",
              gens == list(range(1, 10)))
    if scenario == "quiet":
        at = {b: (t, n) for b, t, n in dev_marks}
        check(f"the guest's 6 marks are in the device's log ({sorted(at)})",
              sorted(at) == list(MARKS))
        if sorted(at) == list(MARKS):
            def c1(a, b):
                return at[b][1] - at[a][1]
            idle = at[1002][0] - at[1001][0]
            traced = at[1004][0] - at[1003][0]
            after = at[1006][0] - at[1005][0]
            before = at[1001][1]
            print(f"figures: C1h control commands: {before} before the first mark (modules "
                  f"loading), {c1(1001, 1002)} in {idle:.1f} s nobody tracing, "
                  f"{c1(1003, 1004)} in {traced:.1f} s tracing "
                  f"({c1(1003, 1004) / traced:.1f}/s), {c1(1004, 1005)} while tracing "
                  f"stopped, {c1(1005, 1006)} in {after:.1f} s after")
            # The one calibration run at attach, for the crash dump's
            # clock fit: at most 32 answered bursts of 4 (hmb_trace_clock.c).
            check(f"nobody tracing for {idle:.1f} s after the modules loaded: no C1h command "
                  f"({c1(1001, 1002)}) but the attach's calibration before ({before}, at "
                  f"most 128)", c1(1001, 1002) == 0 and before <= 128 and idle >= 19)
            check(f"tracing: the clock sync sends C1h commands ({c1(1003, 1004)})",
                  c1(1003, 1004) > 0)
            check(f"tracing stopped: no C1h command in the {after:.1f} s after "
                  f"({c1(1005, 1006)})", c1(1005, 1006) == 0)
    if scenario == "ctrl":
        echoes = [(c, le(p, 0, 8)) for (g, c), v in recs.items() for s, ev, p, ts in v
                  if ev == ECHO]
        check(f"ECHO: one hmb_echo with cookie 4242 on core 1 ({echoes})", echoes == [(1, 4242)])
        # Before the final STOP (taken before the trace is read), the only
        # I/O fetches not recorded are the round run while stopped.
        before = [c for c in fw_cmds[:fw_stop_at[-1] if fw_stop_at else 0]
                  if c[0] == "fetch" and c[1]]
        check(f"STOP: exactly the I/O round run while stopped has no records "
              f"({len(before)} fetched before the final STOP, "
              f"{sum(1 for c in before if c[5] == 0)} recorded, one round {IO_ROUND})",
              sum(1 for c in before if c[5] != 0) == IO_ROUND)
        check(f"every control command the device got came from the driver "
              f"({admin_opc.get(0xc1, 0)} of opcode C1h)", admin_opc.get(0xc1, 0) > 0)
    if clock and guest_ppm is not None:
        drift = float(open(f"{run}/drift-ppm").read())
        want = ((1 + drift / 1e6) / (1 + guest_ppm / 1e6) - 1) * 1e6
        check(f"the clock fit's rate ({ppm:+.1f} ppm) is the device's drift against the "
              f"guest's trace clock ({want:+.1f} ppm = {drift:+.0f} ppm set, guest clock "
              f"{guest_ppm:+.1f}) within the stated bound +-{ppm_err:.1f} ppm + "
              f"{guest_err:.1f} ppm of the guest's marks", abs(ppm - want) <= ppm_err + guest_err)
    else:
        check("a clock fit and the guest clock marks are in the trace", False)
    if truth_json:
        # The device's commands with the stamps its firmware gave them, for
        # tests/e2e/verify_cmd_join.py (fetch i of a (qid, cid) pairs with
        # completion i of it).
        pending = collections.defaultdict(list)
        cmds = []
        for what, q, cid, opc, tick, rc in fw_cmds:
            if what == "fetch":
                e = {"qid": q, "cid": cid, "opcode": opc, "fetch_tick": tick,
                     "fetch_recorded": rc == 0}
                pending[(q, cid)].append(e)
                cmds.append(e)
            elif pending[(q, cid)]:
                e = pending[(q, cid)].pop(0)
                e["complete_tick"] = tick
                e["complete_recorded"] = rc == 0
        with open(truth_json, "w") as f:
            json.dump({"qemu_nvme_device": {"commands": cmds,
                                            "completed": sum("complete_tick" in e for e in cmds)}},
                      f)
    check(f"rmmod nvme shut the controller down ({shutdowns} CC.SHN)", shutdowns == 1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
