# SPDX-License-Identifier: GPL-2.0-only
"""A synthetic capture of host NVMe commands served by the simulated
firmware, for the command join's fixtures
(tools/hmbtrace-cmd/testdata/make_cmd_join_fixture.py) and benchmark
(tools/hmbtrace-cmd/bench/bench_cmd_join.py).

generate() writes N host commands (4 I/O queues, 64 tags each, cid =
genctr << 12 | tag; nvme_setup_cmd and nvme_complete_rq in the top
buffer), each served by the firmware (cmd_fetch and cmd_complete records
of dev 0 in the hmb instance, core = (qid - 1) mod 2, a clock drifting
40 ppm with hmb_clock fits every 100 ms), taking the event formats,
dictionary and header from a template: a capture of the cmd-join e2e
scenario as a version 6 uncompressed file (hmbtest.tracedat).
"""
import random
import struct

from hmbtest.tracedat import (CpuData, OPTION_TRACECLOCK, common, event_ids, events_of,
                              flyrecord, options_of, pages_of, parse, point_here,
                              with_dynamic)


def generate(template, out_path, n, no_firmware=(), no_completion=(), markers=(),
             trace_clock=None, host_in_instance=False, top_clock=None):
    """Writes the capture; returns its size. For fixtures: commands whose
    index is in no_firmware get no firmware records, those in no_completion
    no nvme_complete_rq; markers are (host ns, text) ftrace:print lines in
    the top buffer (CPU 0, pid 4242); trace_clock (e.g. 'boot') replaces
    the capture's selected clock; host_in_instance puts the nvme events in
    the hmb instance (`trace-cmd record -B hmb -e hmb -e nvme:...`), none in
    the top buffer; top_clock replaces the top buffer's clock only."""
    f = parse(template)
    ids = event_ids(f)
    id_state, id_dict = ids[('hmb', 'hmb_state')], ids[('hmb', 'hmb_dict')]
    id_record, id_clock = ids[('hmb', 'hmb_record')], ids[('hmb', 'hmb_clock')]
    id_setup, id_done = ids[('nvme', 'nvme_setup_cmd')], ids[('nvme', 'nvme_complete_rq')]
    originals = [ev for cpu in f['pages'] for page in cpu for ev in events_of(page)]
    by_id = {}
    for _, data in originals:
        by_id.setdefault(struct.unpack_from('<H', data)[0], []).append(data)
    state0 = by_id[id_state][0]
    dict_events = [d for d in by_id[id_dict] if struct.unpack_from('<I', d, 8)[0] ==
                   struct.unpack_from('<I', state0, 16)[0]]
    seen, dicts = set(), []
    for d in dict_events:
        off = struct.unpack_from('<I', d, 16)[0]
        if off not in seen:
            seen.add(off)
            dicts.append(d)
    gen = struct.unpack_from('<I', state0, 16)[0]

    ppm = 40
    mult = round((1 << 32) / (1 + ppm * 1e-6))
    h0, f0 = 1_000_000_000, 77_000_000_000

    def fw(host):
        return f0 + -(-((host - h0) << 32) // mult)

    def clock(ref):
        return (common(id_clock) +
                struct.pack('<QQQQQQQIIIIHB', fw(ref), ref, mult, 0, fw(ref - 10**8), fw(ref),
                            1000, 2000, 3000, 16, gen, 0, 0) + bytes(5))

    def record(core, seq, happened, event_id, payload):
        fixed = common(id_record) + struct.pack('<QQHHHH', seq, fw(happened), 0, core, event_id,
                                                len(payload))
        return with_dynamic(fixed, 40, 32, payload)

    def setup(qid, cid, opcode):
        return (common(id_setup) + b'nvme0n1'.ljust(32, b'\0') +
                struct.pack('<iiBBBxHxxIB', 0, qid, opcode, 0, 0, cid, 1, 0) + bytes(24))

    def done(qid, cid):
        return (common(id_done) + b'nvme0n1'.ljust(32, b'\0') +
                struct.pack('<iiixxxxQBBH', 0, qid, cid, 0, 0, 0, 0))

    top = {0: [], 1: []}
    hmb = {0: [], 1: []}
    host = hmb if host_in_instance else top
    for c in (0, 1):
        hmb[c].append((h0, state0))
        hmb[c].extend((h0, d) for d in dicts)
    rng = random.Random(1)
    seq = [0, 0]
    genctr = {}
    t = h0 + 1000
    last = t
    for i in range(n):
        qid = 1 + i % 4
        tag = (i // 4) % 64
        g = genctr.get((qid, tag), 0)
        genctr[(qid, tag)] = (g + 1) % 16
        cid = g << 12 | tag
        core = (qid - 1) % 2
        opc = rng.choice((1, 2))
        t += 1000  # a command every us
        lat = 40000 + rng.randrange(20000)
        s, fe, fc, hc = t, t + 5000, t + lat - 5000, t + lat
        host[core].append((s, setup(qid, cid, opc)))
        if i not in no_completion:
            host[core].append((hc, done(qid, cid)))
        last = hc
        if i in no_firmware:
            continue
        fetch = struct.pack('<HHBIQI', qid, cid, opc, 1, i * 8, 7)
        complete = struct.pack('<HHHI', qid, cid, 0, fc - fe)
        hmb[core].append((fe + 20000, record(core, seq[core], fe, 1, fetch)))
        seq[core] += 1
        hmb[core].append((fc + 20000, record(core, seq[core], fc, 2, complete)))
        seq[core] += 1
    for ts, text in markers:
        top[0].append((ts, common(ids[('ftrace', 'print')], 4242) + struct.pack('<Q', 0) +
                       text.encode() + b'\n\0'))
    ref = h0
    while ref < last + 10**8:
        for c in (0, 1):
            hmb[c].append((ref, clock(ref)))
        ref += 10**8

    def pick(text, clock=trace_clock):
        names = text.replace(b'[', b'').replace(b']', b'').split()
        return b' '.join(b'[%s]' % c if c == clock.encode() else c for c in names) + b'\n'

    if top_clock:
        f['top_clock'] = pick(f['top_clock'], top_clock)
    if trace_clock:
        f['clock'], f['top_clock'] = pick(f['clock']), pick(f['top_clock'])
        f['options'] = [(oid, pick(data) if oid == OPTION_TRACECLOCK and data.strip() else data)
                        for oid, data in f['options']]
    f['cpus'] = 2
    out, buffer_at = options_of(f, f['systems'], kallsyms=b'', printk=b'')
    with open(out_path, 'wb') as fh:
        fh.write(out)
        for cpu_events, clock_text in ((top, f['top_clock']), (hmb, f['clock'])):
            if cpu_events is hmb:
                point_here(fh, buffer_at)
            cpus = CpuData(fh, flyrecord(fh, f['cpus'], clock_text))
            for c in range(f['cpus']):
                cpus.cpu(pages_of(sorted(cpu_events[c], key=lambda e: e[0])))
            cpus.close()
        return fh.tell()
