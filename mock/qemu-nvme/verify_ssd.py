#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host checks of a mock/qemu-nvme scenario: what the guest drained into
instances/hmb (trace.txt) against what the reference SSD did (QEMU's own
trace of the commands it fetched and completed and the Set Features it got,
qemu-nvme.log). Prints one ok/not ok line per check and the figures."""

import collections
import re
import sys

IO_ROUND = 2 * (128 + 32)
FETCH, COMPLETE, NAND_READ, NAND_PROG, THERMAL, ECHO = 1, 2, 3, 4, 8, 11

CPU = re.compile(r"\[(\d+)\]")
REC = re.compile(r"hmb_record: dev=(\d+) core=(\d+) seq=(\d+) fw_ts=(\d+) "
                 r"event_id=(\d+) len=(\d+) payload=(.*)$")
LOST = re.compile(r"hmb_lost: dev=(\d+) core=(\d+) count=(\d+) reason=(\w+) at_seq=(\d+)")
CLOCK = re.compile(r"hmb_clock: .* mult=(\d+) .* err_ns=(\d+) rtt_min_ns=(\d+) samples=(\d+)")
STATE = re.compile(r"hmb_state: dev=(\d+) name=(\S+) state=(\w+) producer_gen=(\d+)")


def le(b, off, n):
    return int.from_bytes(bytes(b[off:off + n]), "little")


def main():
    scenario, run = sys.argv[1], sys.argv[2]
    failed = 0

    def check(what, cond):
        nonlocal failed
        print(("ok - " if cond else "not ok - ") + what)
        failed += 0 if cond else 1

    # The device: QEMU's trace points.
    io_cmds, admin_opc, setfeat, io_done = [], collections.Counter(), [], 0
    shutdowns = 0
    with open(f"{run}/qemu-nvme.log", errors="replace") as f:
        for line in f:
            m = re.search(r"pci_nvme_io_cmd cid (\d+) nsid 0x\w+ sqid (\d+) opc 0x(\w+)", line)
            if m:
                io_cmds.append((int(m[2]), int(m[1]), int(m[3], 16)))
                continue
            m = re.search(r"pci_nvme_admin_cmd cid \d+ sqid \d+ opc 0x(\w+)", line)
            if m:
                admin_opc[int(m[1], 16)] += 1
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
    with open(f"{run}/trace.txt", errors="replace") as f:
        for line in f:
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

    nrec = sum(len(v) for v in recs.values())
    if clock:
        # mult: host ns per firmware tick, 32.32 fixed point; the device's
        # clock runs at 1 GHz * (1 + drift_ppm) of QEMU's virtual clock.
        ppm = (2**32 / int(clock[1]) - 1) * 1e6
        print(f"figures: last clock fit: {clock[4]} samples, err_ns {clock[2]}, "
              f"rtt_min_ns {clock[3]}, fitted drift {ppm:+.0f} ppm")
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
                q, cid, opc = le(p, 0, 2), le(p, 2, 2), p[4]
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
          f"(asynchronous event requests)")
    # ctrl: START is fetched while the firmware is stopped, completed after.
    check(f"at most one admin completion per generation without its fetch (the enable"
          f"{', and START' if scenario == 'ctrl' else ''})",
          len(admin_unfetched) <= len(set(gens)) + (scenario == "ctrl"))
    check(f"every I/O cmd_fetch joins its cmd_complete on the same core ({join_bad} unmatched)",
          join_bad == 0)
    if scenario in ("record", "reset"):
        check(f"one cmd_fetch record per I/O command the device fetched "
              f"({sum(fetch.values())} records, {len(io_cmds)} commands), same opcodes",
              sum(fetch.values()) == len(io_cmds) and fetch_opc == dev_opc)
    if scenario == "reset":
        check(f"the reset is a new producer generation (generations in order {gens})",
              gens == [1, 2])
        check("the driver re-placed the area and re-enabled the HMB with MR=1 after the reset",
              any(fid == 0x0d and dw == 0x3 for fid, dw in setfeat))
    if scenario == "ctrl":
        echoes = [(c, le(p, 0, 8)) for (g, c), v in recs.items() for s, ev, p, ts in v
                  if ev == ECHO]
        check(f"ECHO: one hmb_echo with cookie 4242 on core 1 ({echoes})", echoes == [(1, 4242)])
        # guest-ssd.sh's io_round: 2 CPUs x (128 reads + 32 writes).
        check(f"STOP: exactly the I/O round run while stopped has no records "
              f"({len(io_cmds)} fetched, {sum(fetch.values())} recorded, one round "
              f"{IO_ROUND})", len(io_cmds) - sum(fetch.values()) == IO_ROUND)
        check(f"every control command the device got came from the driver "
              f"({admin_opc.get(0xc1, 0)} of opcode C1h)", admin_opc.get(0xc1, 0) > 0)
    check(f"rmmod nvme shut the controller down ({shutdowns} CC.SHN)", shutdowns == 1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
