#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write clock-small.dat: a synthetic trace.dat with hmb_clock events.

Not run by the tests: it documents how testdata/clock-small.dat was made,
and makes it again (the output is the same byte for byte):

    PYTHONPATH=tests/lib tests/data/make_clock_capture.py \\
        tests/data/record-small.dat tests/data/hmb_clock.format \\
        tests/data/clock-small.dat

Until a guest capture with the module's clock fits exists, this is how the
tests get one. Everything but the "hmb" instance's events comes from
record-small.dat, a real capture (version 6, uncompressed): header page,
ftrace and hmb event formats (hmb_clock's added from hmb_clock.format, laid
out as the kernel lays out TRACE_EVENT(hmb_clock)), options. The firmware
dictionary and record payloads are taken from that capture's events; the
instance's ring-buffer pages are written anew (kernel ring-buffer page
format, as libtraceevent's kbuffer reads it) with this timeline, dev 0,
firmware core k drained on CPU k, clock_hz 1 GHz, the firmware clock 50 ppm
fast (times in host seconds; "drained" is the ftrace time):

  1.000000  both CPUs   hmb_state attached gen 1 + dictionary
  1.000100  CPU 0       core 0 seq 0..2, happened 0.9990.. : no fit yet
  1.000200  both CPUs   hmb_clock gen 1 (fit A)
  1.002000  CPU 1       MARKER "host write"
  1.002500  CPU 0       core 0 seq 3 happened 1.001700 (before the marker),
                        seq 4 happened 1.002300 (after it)
  1.003500  CPU 1       core 1 seq 0..1, happened 1.003000, 1.003100
  1.100000  both CPUs   hmb_clock gen 1, stale (fit A re-published)
  1.100400  CPU 0       core 0 seq 5 happened 1.100100: stale fit
  1.200500  both CPUs   hmb_state reset gen 2 (the firmware clock restarts
                        at 0 at 1.2) + dictionary
  1.200500  CPU 0       core 0 seq 0 (gen 2) happened 1.200200: no fit of gen 2
  1.201000  both CPUs   hmb_clock gen 2 (fit B)
  1.201500  CPU 0       core 0 seq 1 (gen 2) happened 1.201200
  1.400000  CPU 0       MARKER "checkpoint"
  1.510000  CPU 0       MARKER "after the checkpoint"
  1.520000  CPU 1       core 1 seq 0 (gen 2) happened 1.300000: drained
                        220 ms late, past a 100 ms reorder margin
"""
import struct
import sys

from hmbtest.tracedat import (common, event_ids, events_of, header_of, pages_of, parse,
                              with_dynamic, write_capture)


def main(src, clock_format, dst):
    f = parse(src)
    text = b''.join(l + b'\n' for l in open(clock_format, 'rb').read().splitlines()
                    if not l.startswith(b'#'))
    systems = [(sysname, formats + [text] if sysname == b'hmb' else formats)
               for sysname, formats in f['systems']]
    ids = event_ids(dict(f, systems=systems))
    id_state, id_dict, id_record, id_clock = (ids[('hmb', n)] for n in (
        'hmb_state', 'hmb_dict', 'hmb_record', 'hmb_clock'))
    id_print = ids[('ftrace', 'print')]
    originals = [ev for cpu in f['pages'] for page in cpu for ev in events_of(page)]
    by_id = {}
    for ts, data in originals:
        by_id.setdefault(struct.unpack_from('<H', data)[0], []).append(data)
    state0 = by_id[id_state][0]
    build_id, name = state0[25:45], state0[45:77]
    chunks = {}
    for data in by_id[id_dict]:
        gen, total, off = struct.unpack_from('<III', data, 8)
        loc = struct.unpack_from('<I', data, 44)[0]
        chunks[off] = data[loc & 0xffff:(loc & 0xffff) + (loc >> 16)]
    dictionary = b''.join(chunks[o] for o in sorted(chunks))
    assert len(dictionary) == total, 'the fixture carries a whole dictionary'
    payloads = [(struct.unpack_from('<H', d, 28)[0],
                 d[(lambda loc: slice(loc & 0xffff, (loc & 0xffff) + (loc >> 16)))(
                     struct.unpack_from('<I', d, 32)[0])]) for d in by_id[id_record][:64]]

    ns = lambda s: round(s * 1e9)
    ppm = 50
    mult = round((1 << 32) / (1 + ppm * 1e-6))
    # Firmware clocks: gen 1 reads 9 s at host 1 s; gen 2 restarts at 0 at host 1.2 s.
    clocks = {1: (ns(1.0), ns(9.0)), 2: (ns(1.2), 0)}

    def fw(gen, host):
        h0, f0 = clocks[gen]
        return f0 + -(-(ns(host) - h0 << 32) // mult)  # rounded up: converts back exactly

    def state(st, gen):
        return (common(id_state) + struct.pack('<QIHHB', 1000000000, gen, 0, 4, st) +
                build_id + name)

    def dict_chunks(gen):
        out = []
        for off in range(0, len(dictionary), 1024):
            part = dictionary[off:off + 1024]
            fixed = common(id_dict) + struct.pack('<IIIH', gen, len(dictionary), off, 0) + build_id
            out.append(with_dynamic(fixed, 48, 44, part))
        return out

    def clock(gen, first, last, ref, half_gap_s, slope_ppm, flags=0, samples=16):
        tick_first, tick_last, tick_ref = fw(gen, first), fw(gen, last), fw(gen, ref)
        return (common(id_clock) +
                struct.pack('<QQQQQQQIIIIHB', tick_ref, ns(ref), mult,
                            round(slope_ppm * 1e-6 * (1 << 32)), tick_first, tick_last,
                            round(half_gap_s * 1e9), 2000, 3000, samples, gen, 0, flags) +
                bytes(5))

    counter = iter(range(len(payloads)))

    def record(gen, core, seq, happened):
        event_id, payload = payloads[next(counter)]
        fixed = common(id_record) + struct.pack('<QQHHHH', seq, fw(gen, happened), 0, core,
                                                event_id, len(payload))
        return with_dynamic(fixed, 40, 32, payload)

    def marker(text):
        return common(id_print) + struct.pack('<Q', 0) + text.encode() + b'\n\0'

    cpu = {0: [], 1: []}

    def at(c, t, *datas):
        cpu[c].extend((ns(t), d) for d in datas)

    for c in (0, 1):
        at(c, 1.0, state(0, 1), *dict_chunks(1))
    at(0, 1.0001, *(record(1, 0, s, 0.9990 + s * 1e-4) for s in range(3)))
    for c in (0, 1):
        at(c, 1.0002, clock(1, 0.0, 0.9, 0.5, 0.05, 1))
    at(1, 1.002, marker('host write'))
    at(0, 1.0025, record(1, 0, 3, 1.0017), record(1, 0, 4, 1.0023))
    at(1, 1.0035, record(1, 1, 0, 1.0030), record(1, 1, 1, 1.0031))
    for c in (0, 1):
        at(c, 1.1, clock(1, 0.0, 0.9, 0.5, 0.05, 1, flags=1))
    at(0, 1.1004, record(1, 0, 5, 1.1001))
    for c in (0, 1):
        at(c, 1.2005, state(1, 2), *dict_chunks(2))
    at(0, 1.2005, record(2, 0, 0, 1.2002))
    for c in (0, 1):
        at(c, 1.201, clock(2, 1.2003, 1.2009, 1.2009, 0.0001, 50, samples=4))
    at(0, 1.2015, record(2, 0, 1, 1.2012))
    at(0, 1.4, marker('checkpoint'))
    at(0, 1.51, marker('after the checkpoint'))
    at(1, 1.52, record(2, 1, 0, 1.3))

    head, table = header_of(f, systems, f['kallsyms'])
    size = write_capture(dst, head, table, [pages_of(sorted(cpu[c], key=lambda e: e[0]))
                                            for c in range(f['cpus'])])
    print(f'{dst}: {size} bytes')


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
