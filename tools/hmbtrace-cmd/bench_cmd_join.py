#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Benchmark of the command join: its cost per command next to `trace-cmd report`.

    tools/hmbtrace-cmd/bench_cmd_join.py --template build/qemu-runs/cmd-join/cmd-join.dat \\
        --cmd build/tools/hmbtrace-cmd/hmbtrace-cmd [--commands 1000000] [--out /tmp/x.dat]

Writes a synthetic capture of --commands host NVMe commands (4 I/O queues,
64 tags each, cid = genctr << 12 | tag; nvme_setup_cmd and
nvme_complete_rq in the top buffer) each served by the simulated firmware
(cmd_fetch and cmd_complete records of dev 0 in the hmb instance, core =
(qid - 1) mod 2, a clock drifting 40 ppm with hmb_clock fits every 100 ms),
taking the event formats, dictionary and header from --template, a capture
of the cmd-join scenario (converted here to an uncompressed version 6 file
with `trace-cmd convert`). Then times, on that file (best of --runs):

  report   trace-cmd report -i FILE > /dev/null (the baseline: one pass)
  stat     hmbtrace-cmd stat --no-commands -i FILE (reading, no join)
  join     hmbtrace-cmd stat -i FILE (the same plus the command join)

and prints join - stat per command, and the ratios to report. Times are
wall clock on this machine: compare the ratios, not the seconds.
"""
import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                                'plugins', 'traceevent', 'testdata'))
from make_clock_capture import (PAGE, common, events_of, formats_of, pages_of, parse,  # noqa: E402
                                with_dynamic)


def event_ids(f):
    ids = {}
    for sysname, formats in f['systems']:
        for text in formats:
            name = text.split(b'name: ', 1)[1].split(b'\n', 1)[0].decode()
            ids[(sysname.decode(), name)] = int(text.split(b'ID: ', 1)[1].split(b'\n', 1)[0])
    return ids


def generate(template, out_path, n, no_firmware=(), no_completion=(), markers=(),
             trace_clock=None):
    """Writes the capture. For fixtures: commands whose index is in no_firmware get
    no firmware records, those in no_completion no nvme_complete_rq; markers are
    (host ns, text) ftrace:print lines in the top buffer (CPU 0, pid 4242);
    trace_clock (e.g. 'boot') replaces the capture's selected clock."""
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
        top[core].append((s, setup(qid, cid, opc)))
        if i not in no_completion:
            top[core].append((hc, done(qid, cid)))
        last = hc
        if i in no_firmware:
            continue
        fetch = struct.pack('<HHBIQI', qid, cid, opc, 1, i * 8, 7)
        complete = struct.pack('<HHHI', qid, cid, 0, fc - fe)
        hmb[core].append((fe + 20000, record(core, seq[core], fe, 1, fetch)))
        seq[core] += 1
        hmb[core].append((fc + 20000, record(core, seq[core], fc, 2, complete)))
        seq[core] += 1
    if markers:
        (id_print,) = [int(t.split(b'ID: ', 1)[1].split(b'\n', 1)[0]) for t in f['ftrace']
                       if b'name: print\n' in t]
        for ts, text in markers:
            top[0].append((ts, struct.pack('<HBBiQ', id_print, 0, 0, 4242, 0) +
                           text.encode() + b'\n\0'))
    ref = h0
    while ref < last + 10**8:
        for c in (0, 1):
            hmb[c].append((ref, clock(ref)))
        ref += 10**8

    if trace_clock:
        def pick(text):
            names = text.replace(b'[', b'').replace(b']', b'').split()
            return b' '.join(b'[%s]' % c if c == trace_clock.encode() else c
                             for c in names) + b'\n'
        f['clock'], f['top_clock'] = pick(f['clock']), pick(f['top_clock'])
        f['options'] = [(oid, pick(data) if oid == 4 and data.strip() else data) for oid, data in f['options']]
    out = formats_of(f, f['systems'])
    out += struct.pack('<I', 0)  # no kallsyms
    out += struct.pack('<I', 0)  # no printk formats
    out += struct.pack('<Q', len(f['cmdlines'])) + f['cmdlines']
    cpus = 2
    out += struct.pack('<I', cpus) + b'options  \0'
    buffer_at = None
    for oid, data in f['options']:
        if oid == 3 and buffer_at is not None:
            continue  # one instance: hmb
        out += struct.pack('<HI', oid, len(data))
        if oid == 3:
            buffer_at = len(out)
        out += data
    out += struct.pack('<H', 0)

    def flyrecord(cpu_events):
        nonlocal out
        out += b'flyrecord\0'
        table = len(out)
        out += bytes(16 * cpus)
        return table

    def pages(table, cpu_events, clock_text):
        nonlocal out
        out += struct.pack('<Q', len(clock_text)) + clock_text
        for c in range(cpus):
            out += bytes(-len(out) % PAGE)
            data = b''.join(pages_of(sorted(cpu_events[c], key=lambda e: e[0])))
            struct.pack_into('<QQ', out, table + 16 * c, len(out), len(data))
            out += data

    table = flyrecord(top)
    pages(table, top, f['top_clock'])
    struct.pack_into('<Q', out, buffer_at, len(out))
    table = flyrecord(hmb)
    pages(table, hmb, f['clock'])
    with open(out_path, 'wb') as fh:
        fh.write(out)
    return len(out)


def timed(argv, runs):
    best = None
    for _ in range(runs):
        t0 = time.monotonic()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        dt = time.monotonic() - t0
        best = dt if best is None else min(best, dt)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--template', required=True)
    ap.add_argument('--cmd', required=True, help='hmbtrace-cmd')
    ap.add_argument('--commands', type=int, default=1000000)
    ap.add_argument('--runs', type=int, default=2)
    ap.add_argument('--out', help='keep the synthetic capture here')
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        v6 = os.path.join(tmp, 'template6.dat')
        subprocess.run(['trace-cmd', 'convert', '-i', args.template, '-o', v6,
                        '--file-version', '6', '--compression', 'none'],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        dat = args.out or os.path.join(tmp, 'bench.dat')
        t0 = time.monotonic()
        size = generate(v6, dat, args.commands)
        print('capture: %d commands, %d bytes, written in %.1f s' %
              (args.commands, size, time.monotonic() - t0))
        out = subprocess.run([args.cmd, 'stat', '-i', dat, '--json'], capture_output=True,
                             text=True, check=True)
        import json
        c = json.loads(out.stdout)['commands']
        print('join: host %d, joined %d, partial %d, not joined %d' %
              (c['host_commands'], c['joined'], c['partial'], c['unjoined']))
        report = timed(['trace-cmd', 'report', '-i', dat], args.runs)
        stat = timed([args.cmd, 'stat', '--no-commands', '-i', dat], args.runs)
        join = timed([args.cmd, 'stat', '-i', dat], args.runs)
        n = args.commands
        print('trace-cmd report        %7.2f s  %7.0f ns/command' % (report, report * 1e9 / n))
        print('stat --no-commands      %7.2f s  %7.0f ns/command  %.2fx report' %
              (stat, stat * 1e9 / n, stat / report))
        print('stat (with the join)    %7.2f s  %7.0f ns/command  %.2fx report' %
              (join, join * 1e9 / n, join / report))
        print('the join alone          %7.2f s  %7.0f ns/command  %.2fx report' %
              (join - stat, (join - stat) * 1e9 / n, (join - stat) / report))
    return 0


if __name__ == '__main__':
    sys.exit(main())
