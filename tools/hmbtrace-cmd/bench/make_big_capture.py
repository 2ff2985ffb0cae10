#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write a long synthetic trace.dat for the readers' benchmark.

    PYTHONPATH=tests/lib make_big_capture.py RECORDS OUT.dat [--no-kallsyms] [--clock]

Repeats the firmware records of tests/data/record-small.dat
(a real capture of hmb-fwsim's mix: cmd_fetch/cmd_complete pairs, NAND
operations with latencies, GC, thermal counters, logs) until OUT.dat holds
at least RECORDS hmb_record events. Repeat r is the original shifted by r
times its length in both host and firmware time, with each core's sequence
numbers continued, so the capture has no gaps and its commands pair up.
The hmb_state and dictionary events of the original come once, first.

A real `trace-cmd record` capture carries the machine's kallsyms, which
libtraceevent parses when the file is opened; this one carries
/proc/kallsyms too (unless --no-kallsyms or it cannot be read), so the
benchmark pays what a user pays.

With --clock the formats include hmb_clock (clock-small.dat's) and each
CPU starts with one clock fit (1 ns per tick, 1 ppm slope error) that puts
the record drained soonest after it happened 200 us before its drain: a
capture hmbtrace-cmd retime can retime.

The file is written with hmbtest.tracedat (tests/lib/), a CPU's pages at a
time, so memory stays small at 10 M records.
"""
import os
import struct
import sys

from hmbtest.tracedat import (common, event_ids, events_of, header_of, pages_of, parse,
                              write_capture)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'tests', 'data')


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    want, dst = int(argv[1]), argv[2]
    kallsyms = b''
    if '--no-kallsyms' not in argv:
        try:
            kallsyms = open('/proc/kallsyms', 'rb').read()
        except OSError:
            pass
    f = parse(os.path.join(DATA, 'record-small.dat'))
    id_record = event_ids(f)[('hmb', 'hmb_record')]
    per_cpu = [[ev for page in cpu for ev in events_of(page)] for cpu in f['pages']]
    records = [[(ts, d) for ts, d in evs if struct.unpack_from('<H', d)[0] == id_record]
               for evs in per_cpu]
    others = [[(ts, d) for ts, d in evs if struct.unpack_from('<H', d)[0] != id_record]
              for evs in per_cpu]
    n = sum(len(r) for r in records)
    reps = -(-want // n)
    all_ts = [ts for evs in per_cpu for ts, _ in evs]
    t0, span = min(all_ts), max(all_ts) - min(all_ts) + 1000
    # Per core: the sequence numbers one repeat uses.
    seq_lo, seq_hi = {}, {}
    for evs in records:
        for _, d in evs:
            seq, core = struct.unpack_from('<Q', d, 8)[0], struct.unpack_from('<H', d, 26)[0]
            seq_lo[core] = min(seq_lo.get(core, seq), seq)
            seq_hi[core] = max(seq_hi.get(core, seq), seq)
    seq_span = {c: seq_hi[c] - seq_lo[c] + 1 for c in seq_lo}

    def repeat(evs, r):
        out = []
        for ts, d in evs:
            d = bytearray(d)
            seq, fw_ts = struct.unpack_from('<QQ', d, 8)
            core = struct.unpack_from('<H', d, 26)[0]
            struct.pack_into('<QQ', d, 8, seq + r * seq_span[core], fw_ts + r * span)
            out.append((ts + r * span, bytes(d)))
        return out

    systems = f['systems']
    if '--clock' in argv:
        clock_file = parse(os.path.join(DATA, 'clock-small.dat'))
        systems = clock_file['systems']
        ids = event_ids(clock_file)
        id_state, id_clock = ids[('hmb', 'hmb_state')], ids[('hmb', 'hmb_clock')]
        first = min((ev for evs in records for ev in evs), key=lambda e: e[0])
        gen = next(struct.unpack_from('<I', d, 16)[0] for evs in others for _, d in evs
                   if struct.unpack_from('<H', d)[0] == id_state)
        tick = struct.unpack_from('<Q', first[1], 16)[0]
        # Repeats shift host and firmware time alike: 1 ns per tick; the
        # offset puts the record drained soonest 200 us after it happened.
        lead = min(ts - struct.unpack_from('<Q', d, 16)[0] for evs in records for ts, d in evs)
        fit = (common(id_clock) +
               struct.pack('<QQQQQQQIIIIHB', tick, tick + lead - 200000, 1 << 32, 4295,
                           tick - 10**9, tick + 10**9, 5 * 10**8, 2000, 3000, 16, gen, 0, 0) +
               bytes(5))
        for evs in others:
            evs.append((t0, fit))

    def pieces(c):
        """CPU c's pages, a repeat at a time; the first with the other events."""
        for r in range(reps):
            evs = repeat(records[c], r)
            if r == 0:
                evs = sorted(others[c] + evs, key=lambda e: e[0])
            yield b''.join(pages_of(evs))

    head, table = header_of(f, systems, kallsyms)
    pos = write_capture(dst, head, table, (pieces(c) for c in range(f['cpus'])))
    print(f'{dst}: {n * reps} records ({reps} x {n}), {pos} bytes'
          f'{", with /proc/kallsyms" if kallsyms else ""}')


if __name__ == '__main__':
    main(sys.argv)
