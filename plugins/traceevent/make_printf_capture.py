#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write a trace.dat holding the records of a firmware's trace area, as
hmb_trace.ko would have republished them, for the plugin's tokenized
printf test (plugin_hmb_printf_test.sh).

    PYTHONPATH=tests/lib make_printf_capture.py AREA.hmbdump TEMPLATE.dat OUT.dat

AREA.hmbdump is the sample firmware's area made a crash dump
(tools/hmbtrace-cmd/dict/area_dump_testutil.cc): its build id, producer
generation, dictionary (the area's: empty unless the firmware embeds one)
and every record, as the producer wrote them. TEMPLATE.dat is a real
capture's (tests/data/clock-small.dat, whose formats have hmb_clock;
made from the real capture record-small.dat): header page, ftrace and hmb
event formats, options. The "hmb" instance's ring buffer is written anew
on CPU 0, as the module emits it on attach: hmb_state (attached), the
dictionary in hmb_dict chunks of 1 KiB, one clock fit (hmb_clock: tick t
happened at host 1 s + t ns, bound 3 us), then each record drained 100 us
after it happened (1 ns ticks), so that hmbtrace-cmd retime can retime it.
"""
import struct
import sys

from hmbtest import dump
from hmbtest.tracedat import common, event_ids, header_of, pages_of, parse, with_dynamic, \
    write_capture

ATTACHED = 0


def main(dump_path, template, dst):
    d = dump.parse(open(dump_path, 'rb').read())
    h = d['header']
    build_id = bytes.fromhex(h['build_id'])
    gen = h['producer_gen']
    dictionary = d['sections'][dump.SEC_DICT][1]
    f = parse(template)
    ids = event_ids(f)
    id_state, id_dict, id_record, id_clock = (
        ids[('hmb', n)] for n in ('hmb_state', 'hmb_dict', 'hmb_record', 'hmb_clock'))
    name = b'printf_sample_fw'.ljust(32, b'\0')
    state = (common(id_state) + struct.pack('<QIHHB', h['clock_hz'], gen, 0, h['nr_cores'],
                                            ATTACHED) + build_id + name)
    t0 = 1000000000
    events = [(t0, state)]
    for off in range(0, len(dictionary), 1024):
        part = dictionary[off:off + 1024]
        fixed = common(id_dict) + struct.pack('<IIIH', gen, len(dictionary), off, 0) + build_id
        events.append((t0, with_dynamic(fixed, 48, 44, part)))
    # tick_ref, host_ref, mult (1 ns per tick), slope error, ticks sampled,
    # half gap, error and rtt_min (ns), samples, gen, dev, flags: as
    # tests/data/make_clock_capture.py lays out TRACE_EVENT(hmb_clock).
    last = max([r['ts'] for r in d['records']] + [0])
    fit = (common(id_clock) +
           struct.pack('<QQQQQQQIIIIHB', 0, t0, 1 << 32, 4295, 0, last, 1000, 2000, 3000, 16,
                       gen, 0, 0) + bytes(5))
    events.append((t0, fit))
    for r in d['records']:
        fixed = common(id_record) + struct.pack('<QQHHHH', r['seq'], r['ts'], 0, r['core'],
                                                r['event_id'], r['len'])
        events.append((t0 + r['ts'] + 100000, with_dynamic(fixed, 40, 32, r['payload'])))
    cpus = [pages_of(events)] + [[] for _ in range(f['cpus'] - 1)]
    head, table = header_of(f, f['systems'], b'')
    write_capture(dst, head, table, cpus)
    print(f'{dst}: {len(d["records"])} records, dictionary of {len(dictionary)} bytes, '
          f'build id {h["build_id"]}')


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
