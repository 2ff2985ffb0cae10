#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write a long synthetic trace.dat for the readers' benchmark.

    PYTHONPATH=tests/lib make_big_capture.py RECORDS OUT.dat [--no-kallsyms]

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

The file is written with hmbtest.tracedat (tests/lib/), a CPU's pages at a
time, so memory stays small at 10 M records.
"""
import os
import struct
import sys

from hmbtest.tracedat import event_ids, events_of, header_of, pages_of, parse, write_capture

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
    span = max(all_ts) - min(all_ts) + 1000
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

    def pieces(c):
        """CPU c's pages, a repeat at a time; the first with the other events."""
        for r in range(reps):
            evs = repeat(records[c], r)
            if r == 0:
                evs = sorted(others[c] + evs, key=lambda e: e[0])
            yield b''.join(pages_of(evs))

    head, table = header_of(f, f['systems'], kallsyms)
    pos = write_capture(dst, head, table, (pieces(c) for c in range(f['cpus'])))
    print(f'{dst}: {n * reps} records ({reps} x {n}), {pos} bytes'
          f'{", with /proc/kallsyms" if kallsyms else ""}')


if __name__ == '__main__':
    main(sys.argv)
