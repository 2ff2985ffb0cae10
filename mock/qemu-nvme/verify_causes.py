#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host checks of run-ssd.sh causes / causes-off: why each slow command was
slow, as hmbtrace-cmd stat says it from the firmware's records (ABI 1.2
command attribution), against the reference SSD's own account of its die
model (patch 0004: pci_nvme_hmbt_cause in qemu-nvme.log, one line per
completion, computed from the model's schedule, not from its records).

causes (GC, read retries, thermal throttling on):
  (a) per opcode, every command above its p99 latency (stat's tail, listed
      in command_causes.opcodes[].tail.slowest) is one the device completed
      (qid, cid, fetch tick), and the cause stat names for its longest wait
      or rework (and that delay's stage) is the device's for at least 99 %
      of them; the device's
      tail has each of the three causes, so that a wrong blame can show;
  (b) each tail command's stages add up to its firmware time: exactly in
      ticks (the span fetch -> complete), and in host time the split's
      firmware part (the join's converted fetch and completion,
      --commands-json) within the two records' stated clock bounds.
causes-off (--off; the same load, the three causes switched off):
  (c) the device blamed nothing but queueing; stat blames a cause above
      queueing (anything but queueing or none) for at most 1 % of the
      commands of every opcode (command_causes.opcodes[].main_causes).
Both: the device modelled every I/O command (no overflow, no dropped
activity), and stat left nothing unattributed.

Usage: verify_causes.py [--off] RUN_DIR   (stat.json, commands.json,
qemu-nvme.log in RUN_DIR)"""

import collections
import json
import re
import sys

TRUTH = re.compile(r"pci_nvme_hmbt_cause qid (\d+) cid (\d+) opc 0x(\w+) fetch (\d+) "
                   r"latency (\d+) staged (\d+) longest (\w+) cause (\w+) delay (\d+)")
CAUSES = re.compile(r"pci_nvme_hmbt_causes (\w+) (\d+) (\d+) (\d+)")
# What may be blamed without a cause of the device's own.
NO_BLAME = ("queueing", "none")
DEVICE_CAUSES = ("gc_erase", "read_retry", "thermal_throttle")
OPC = {"read": 2, "write": 1}
RATE_PPM = 2000


def main():
    args = sys.argv[1:]
    off = args[:1] == ["--off"]
    if off:
        args = args[1:]
    run = args[0]
    failed = 0

    def check(what, cond):
        nonlocal failed
        print(("ok - " if cond else "not ok - ") + what)
        failed += 0 if cond else 1

    truth = {}
    config, overflow, pending_full, background = None, 0, 0, None
    with open(f"{run}/qemu-nvme.log", errors="replace") as f:
        for line in f:
            m = TRUTH.search(line)
            if m:
                q, cid, opc, fetch, lat, staged = (int(m[1]), int(m[2]), int(m[3], 16),
                                                   int(m[4]), int(m[5]), int(m[6]))
                truth[(q, cid, fetch)] = {"opc": opc, "latency": lat, "staged": staged,
                                          "longest": m[7], "cause": m[8], "delay": int(m[9])}
                continue
            m = CAUSES.search(line)
            if m:
                a, b = int(m[2]), int(m[3])
                if m[1] == "config":
                    config = a
                elif m[1] == "dropped":
                    # At every stop: commands unmodelled, activities dropped.
                    overflow, pending_full = max(overflow, a), max(pending_full, b)
                elif m[1] in ("unmodelled", "pending_full"):
                    overflow += m[1] == "unmodelled"
                    pending_full += m[1] == "pending_full"
                elif m[1] == "background":
                    background = (a, b)
    rw = [t for t in truth.values() if t["opc"] in (1, 2)]
    dev_causes = collections.Counter(t["cause"] for t in rw)
    print(f"figures: the device completed {len(truth)} modelled commands ({len(rw)} reads and "
          f"writes); its causes (longest delay) {dict(dev_causes)}; erases, throttle periods "
          f"{background}; causes switched on (gc 1, retry 2, throttle 4): {config}")
    want = 0 if off else 7
    check(f"the device's die model ran with the causes {'off' if off else 'on'} "
          f"(config {config}, expected {want})", config == want)
    check(f"the device modelled every I/O command and kept every activity "
          f"({overflow} overflows, {pending_full} activities dropped)",
          overflow == 0 and pending_full == 0 and len(rw) > 0)
    bad_sum = [k for k, t in truth.items() if t["opc"] in (1, 2) and t["staged"] != t["latency"]]
    check(f"the device's schedule tiles every read and write: stages sum to the latency "
          f"({len(bad_sum)} not)", not bad_sum)

    with open(f"{run}/stat.json") as f:
        stat = json.load(f)
    cc = stat.get("command_causes")
    if not cc:
        check("stat --json has command_causes (the capture's attribution records)", False)
        return 1
    un = cc.get("unattributed", {})
    print(f"figures: stat: {cc.get('records')} attribution records, unattributed {un}")
    check(f"stat left nothing unattributed ({sum(un.values())})", sum(un.values()) == 0)
    ops = {o["opcode"]: o for o in cc.get("opcodes", [])}
    check(f"stat has reads and writes ({sorted(ops)})", "read" in ops and "write" in ops)

    if off:
        bad = {}
        for name, o in sorted(ops.items()):
            mc = o.get("main_causes")
            if mc is None:
                check(f"stat --json: {name}: main_causes over all commands", False)
                continue
            n = sum(mc.values())
            blamed = sum(v for k, v in mc.items() if k not in NO_BLAME)
            print(f"figures: causes-off: {name}: {n} commands, main causes {mc}, "
                  f"blamed above queueing {blamed} ({100.0 * blamed / max(n, 1):.2f} %)")
            if blamed * 100 > n:
                bad[name] = blamed
        check(f"causes off: stat blames a cause above queueing for at most 1 % of the "
              f"commands of any opcode ({bad or 'none over'})", not bad and ops)
        check(f"causes off: the device blamed nothing but queueing "
              f"({dict(dev_causes)})", set(dev_causes) <= set(NO_BLAME))
        return 1 if failed else 0

    # The join: each host command's firmware fetch and completion, converted.
    with open(f"{run}/commands.json") as f:
        joined = {}
        for c in json.load(f)["commands"]:
            fe, co = c.get("fetch"), c.get("complete")
            if fe and co and fe.get("host_ns") is not None and co.get("host_ns") is not None:
                joined[(c["qid"], c["cid"], fe["fw_ts"])] = (fe, co)
    # Firmware ticks to host ns: the device's clock is 1 GHz (hmbtrace.c,
    # HMBT_CLOCK_HZ); it drifts 150 ppm (run-ssd.sh) and a TCG guest's trace
    # clock is off by up to ~1500 ppm more (verify_ssd.py's fit figures):
    # RATE_PPM of the stages' length is allowed on top of the records'
    # stated bounds. (Each record is converted with the fit window of its
    # own time: the two ends of one command may use different windows, so
    # the split itself is only good to the two bounds.)
    print(f"figures: {len(joined)} host commands joined")
    # The device's records begin at the HMB enable, the host's nvme events
    # when the recording starts: commands fetched before are not joined.
    first_joined = min((k[2] for k in joined), default=0)
    before = 0

    total = matched = 0
    per_cause = collections.defaultdict(lambda: [0, 0])   # device cause -> [tail, matched]
    mismatches, unknown, tile_bad, split_bad, split_n, split_err = [], [], [], [], 0, []
    dev_tail = collections.Counter()
    for name in ("read", "write"):
        o = ops.get(name)
        if not o:
            continue
        tail = o.get("tail", {})
        slow = tail.get("slowest")
        if slow is None:
            check(f"stat --json: {name}: tail.slowest lists the commands above p99", False)
            continue
        # stat's own tail: as many commands as it counts above its p99.
        left_out = tail.get("slowest_truncated", 0)
        check(f"{name}: stat lists every command above its p99 "
              f"({len(slow)} listed, {left_out} left out, {tail.get('commands')} counted)",
              len(slow) == tail.get("commands") and not left_out and len(slow) > 0)
        # The device's own p99 (nearest rank, as stat defines it), over the
        # commands it completed while the capture ran.
        lat = sorted(t["latency"] for t in truth.values() if t["opc"] == OPC[name])
        p99 = lat[max((len(lat) * 99 + 99) // 100 - 1, 0)] if lat else 0
        n_ok = 0
        for s in slow:
            key = (s["qid"], s["cid"], s["fetch"])
            t = truth.get(key)
            if t is None:
                unknown.append(key)
                continue
            total += 1
            dev_tail[t["cause"]] += 1
            per_cause[t["cause"]][0] += 1
            # The cause, and the delay it was the cause of.
            if s["main_cause"] == t["cause"] and s.get("longest_delay") == t["longest"]:
                matched += 1
                n_ok += 1
                per_cause[t["cause"]][1] += 1
            else:
                mismatches.append(f"q{key[0]} cid {key[1]} fetch {key[2]}: stat "
                                  f"{s['main_cause']} ({s.get('longest_delay')}), device "
                                  f"{t['cause']} ({t['longest']} {t['delay']})")
            # (b) the stages tile the command's firmware time.
            staged = sum(st["end"] - st["begin"] for st in s.get("stages", []))
            if staged != s["latency"] or s["latency"] != t["latency"]:
                tile_bad.append(f"q{key[0]} cid {key[1]}: stages {staged}, stat latency "
                                f"{s['latency']}, device {t['latency']}")
            j = joined.get(key)
            if not j and key[2] < first_joined:
                before += 1
            elif not j:
                split_bad.append(f"q{key[0]} cid {key[1]} fetch {key[2]}: not joined")
            else:
                fe, co = j
                split = co["host_ns"] - fe["host_ns"]
                bound = fe["bound_ns"] + co["bound_ns"]
                split_n += 1
                bound += staged * RATE_PPM / 1e6
                split_err.append(abs(staged - split) / bound if bound else float("inf"))
                if abs(staged - split) > bound:
                    split_bad.append(f"q{key[0]} cid {key[1]}: stages {staged} ns, "
                                     f"split {split} ns, bound {bound:.0f} ns")
        print(f"figures: {name}: {len(slow)} commands above stat's p99 "
              f"({tail.get('p99')} {o.get('unit')}; the device's p99 {p99} ticks over "
              f"{len(lat)} commands), {n_ok} with the device's cause")
    print("figures: tail causes (device's: tail, stat agrees): " +
          ", ".join(f"{c} {v[1]}/{v[0]}" for c, v in sorted(per_cause.items())))
    for m in mismatches[:10]:
        print(f"# mismatch: {m}")
    check(f"every tail command stat lists is one the device completed ({len(unknown)} not: "
          f"{unknown[:5]})", not unknown and total > 0)
    check(f"the cause stat names for each tail command's longest wait is the device's for "
          f">= 99 % ({matched} of {total}, {100.0 * matched / max(total, 1):.1f} %)",
          total > 0 and matched * 100 >= 99 * total)
    check(f"the device's tail has every cause, so a wrong blame would show "
          f"({dict(dev_tail)})", all(dev_tail[c] > 0 for c in DEVICE_CAUSES))
    check(f"each tail command's stages add up to its firmware time, fetch to completion, in "
          f"ticks ({len(tile_bad)} not: {tile_bad[:3]})", not tile_bad and total > 0)
    check(f"... and to the split's firmware part in host time within the records' clock "
          f"bounds + {RATE_PPM} ppm ({split_n} joined, {before} fetched before the host's "
          f"capture began; largest error {max(split_err, default=0) * 100:.0f} % of its "
          f"bound; {len(split_bad)} not: {split_bad[:3]})",
          not split_bad and split_n > 0 and split_n + before == total)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
