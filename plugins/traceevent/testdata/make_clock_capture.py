#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write clock-small.dat: a synthetic trace.dat with hmb_clock events.

Not run by the tests: it documents how testdata/clock-small.dat was made,
and makes it again (the output is the same byte for byte):

    plugins/traceevent/testdata/make_clock_capture.py \\
        plugins/traceevent/testdata/record-small.dat \\
        plugins/traceevent/testdata/hmb_clock.format \\
        plugins/traceevent/testdata/clock-small.dat

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

from make_fixture import Reader  # the trace.dat reader both scripts use

PAGE = 4096
PAGE_DATA = PAGE - 16
TS_SHIFT = 27
ID_STATE, ID_DICT, ID_RECORD, ID_CLOCK, ID_PRINT = 1360, 1359, 1362, 1363, 5
TYPE_TIME_EXTEND = 30


def parse(path):
    """The sections of a version 6 trace.dat, and its instance's pages."""
    d = open(path, 'rb').read()
    r = Reader(d)
    f = {}
    assert r.take(10) == b'\x17\x08Dtracing' and r.take(2) == b'6\0', 'need v6'
    f['init'] = r.take(6)
    f['headers'] = []
    for _ in range(2):
        f['headers'].append((r.cstr(), r.sized('Q')))
    f['ftrace'] = [r.sized('Q') for _ in range(r.num('I'))]
    f['systems'] = []
    for _ in range(r.num('I')):
        name = r.cstr()
        f['systems'].append((name, [r.sized('Q') for _ in range(r.num('I'))]))
    f['kallsyms'] = r.sized('I')
    f['printk'] = r.sized('I')
    f['cmdlines'] = r.sized('Q')
    cpus = f['cpus'] = r.num('I')
    assert r.take(10) == b'options  \0'
    f['options'] = []
    while True:
        oid = r.num('H')
        if oid == 0:
            break
        f['options'].append((oid, r.sized('I')))
    assert r.take(10) == b'flyrecord\0'
    for _ in range(cpus):
        r.num('Q'), r.num('Q')
    f['top_clock'] = r.sized('Q')
    (buf,) = [data for oid, data in f['options'] if oid == 3]
    r.p = struct.unpack_from('<Q', buf)[0]
    assert r.take(10) == b'flyrecord\0'
    pairs = [(r.num('Q'), r.num('Q')) for _ in range(cpus)]
    f['clock'] = r.sized('Q')
    f['pages'] = [[d[off + i:off + i + PAGE] for i in range(0, size, PAGE)]
                  for off, size in pairs]
    return f


def events_of(page):
    """(ts, data) of the events of one ring-buffer page."""
    ts, commit = struct.unpack_from('<QQ', page)
    commit &= (1 << 27) - 1
    p, out = 16, []
    while p < 16 + commit:
        (h,) = struct.unpack_from('<I', page, p)
        type_len, delta = h & 31, h >> 5
        p += 4
        if type_len == TYPE_TIME_EXTEND:
            (hi,) = struct.unpack_from('<I', page, p)
            ts += (hi << TS_SHIFT) + delta
            p += 4
            continue
        if type_len == 29:  # padding
            break
        ts += delta
        if type_len == 0:
            (n,) = struct.unpack_from('<I', page, p)
            n = (n - 4 + 3) & ~3
            p += 4
        else:
            n = type_len * 4
        out.append((ts, page[p:p + n]))
        p += n
    return out


def pages_of(events):
    """Ring-buffer pages holding `events`, (ts, data) in time order."""
    pages, body, base, last = [], b'', None, None

    def flush():
        if base is not None:
            pages.append(struct.pack('<QQ', base, len(body)) + body +
                         bytes(PAGE_DATA - len(body)))

    for ts, data in events:
        n = (len(data) + 3) & ~3
        data = data + bytes(n - len(data))
        # Up to 28 words the length is the header's type_len; longer, a word of its own.
        type_len, extra = (n // 4, b'') if n <= 28 * 4 else (0, struct.pack('<I', n + 4))
        if base is None or len(body) + 8 + len(extra) + n + 4 > PAGE_DATA:
            flush()
            body, base, last = b'', ts, ts
        delta = ts - last
        if delta >= 1 << TS_SHIFT:
            body += struct.pack('<II', TYPE_TIME_EXTEND | (delta & ((1 << TS_SHIFT) - 1)) << 5,
                                delta >> TS_SHIFT)
            delta = 0
        body += struct.pack('<I', type_len | delta << 5) + extra + data
        last = ts
    flush()
    return pages


def formats_of(f, systems):
    """A version 6 file's start (trace-cmd.dat(5)): magic, f's init and
    headers (parse()), the ftrace formats and these event systems."""
    out = bytearray(b'\x17\x08Dtracing6\0' + f['init'])
    for name, text in f['headers']:
        out += name + b'\0' + struct.pack('<Q', len(text)) + text
    out += struct.pack('<I', len(f['ftrace']))
    for text in f['ftrace']:
        out += struct.pack('<Q', len(text)) + text
    out += struct.pack('<I', len(systems))
    for sysname, formats in systems:
        out += sysname + b'\0' + struct.pack('<I', len(formats))
        for text in formats:
            out += struct.pack('<Q', len(text)) + text
    return out


def header_of(f, systems, kallsyms):
    """The file up to its first CPU's data (trace-cmd.dat(5), version 6): f's
    parts (parse()) with these event systems and kallsyms; the top buffer
    empty, the instance's CPU table zero. Returns (bytes, the table's offset):
    CPU c's (offset, size) go at table + 16 * c."""
    out = formats_of(f, systems)
    out += struct.pack('<I', len(kallsyms)) + kallsyms
    out += struct.pack('<I', len(f['printk'])) + f['printk']
    out += struct.pack('<Q', len(f['cmdlines'])) + f['cmdlines']
    out += struct.pack('<I', f['cpus']) + b'options  \0'
    buffer_at = None
    for oid, data in f['options']:
        out += struct.pack('<HI', oid, len(data))
        if oid == 3:
            buffer_at = len(out)
        out += data
    out += struct.pack('<H', 0)
    out += b'flyrecord\0' + bytes(16 * f['cpus'])
    out += struct.pack('<Q', len(f['top_clock'])) + f['top_clock']
    struct.pack_into('<Q', out, buffer_at, len(out))
    out += b'flyrecord\0'
    table = len(out)
    out += bytes(16 * f['cpus'])
    out += struct.pack('<Q', len(f['clock'])) + f['clock']
    return out, table


def common(event_id):
    return struct.pack('<HBBi', event_id, 0, 0, 0)


def with_dynamic(fixed, size, dyn_off, payload):
    """An event of `size` fixed bytes whose __data_loc at dyn_off holds payload."""
    fixed = fixed + bytes(size - len(fixed))
    loc = struct.pack('<I', len(payload) << 16 | size)
    return fixed[:dyn_off] + loc + fixed[dyn_off + 4:] + payload


def main(src, clock_format, dst):
    f = parse(src)
    originals = [ev for cpu in f['pages'] for page in cpu for ev in events_of(page)]
    by_id = {}
    for ts, data in originals:
        by_id.setdefault(struct.unpack_from('<H', data)[0], []).append(data)
    state0 = by_id[ID_STATE][0]
    build_id, name = state0[25:45], state0[45:77]
    chunks = {}
    for data in by_id[ID_DICT]:
        gen, total, off = struct.unpack_from('<III', data, 8)
        loc = struct.unpack_from('<I', data, 44)[0]
        chunks[off] = data[loc & 0xffff:(loc & 0xffff) + (loc >> 16)]
    dictionary = b''.join(chunks[o] for o in sorted(chunks))
    assert len(dictionary) == total, 'the fixture carries a whole dictionary'
    payloads = [(struct.unpack_from('<H', d, 28)[0],
                 d[(lambda loc: slice(loc & 0xffff, (loc & 0xffff) + (loc >> 16)))(
                     struct.unpack_from('<I', d, 32)[0])]) for d in by_id[ID_RECORD][:64]]

    ns = lambda s: round(s * 1e9)
    ppm = 50
    mult = round((1 << 32) / (1 + ppm * 1e-6))
    # Firmware clocks: gen 1 reads 9 s at host 1 s; gen 2 restarts at 0 at host 1.2 s.
    clocks = {1: (ns(1.0), ns(9.0)), 2: (ns(1.2), 0)}

    def fw(gen, host):
        h0, f0 = clocks[gen]
        return f0 + -(-(ns(host) - h0 << 32) // mult)  # rounded up: converts back exactly

    def state(st, gen):
        return (common(ID_STATE) + struct.pack('<QIHHB', 1000000000, gen, 0, 4, st) +
                build_id + name)

    def dict_chunks(gen):
        out = []
        for off in range(0, len(dictionary), 1024):
            part = dictionary[off:off + 1024]
            fixed = common(ID_DICT) + struct.pack('<IIIH', gen, len(dictionary), off, 0) + build_id
            out.append(with_dynamic(fixed, 48, 44, part))
        return out

    def clock(gen, first, last, ref, half_gap_s, slope_ppm, flags=0, samples=16):
        tick_first, tick_last, tick_ref = fw(gen, first), fw(gen, last), fw(gen, ref)
        return (common(ID_CLOCK) +
                struct.pack('<QQQQQQQIIIIHB', tick_ref, ns(ref), mult,
                            round(slope_ppm * 1e-6 * (1 << 32)), tick_first, tick_last,
                            round(half_gap_s * 1e9), 2000, 3000, samples, gen, 0, flags) +
                bytes(5))

    counter = iter(range(len(payloads)))

    def record(gen, core, seq, happened):
        event_id, payload = payloads[next(counter)]
        fixed = common(ID_RECORD) + struct.pack('<QQHHHH', seq, fw(gen, happened), 0, core,
                                                event_id, len(payload))
        return with_dynamic(fixed, 40, 32, payload)

    def marker(text):
        return common(ID_PRINT) + struct.pack('<Q', 0) + text.encode() + b'\n\0'

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

    systems = []
    for sysname, formats in f['systems']:
        if sysname == b'hmb':
            text = b''.join(l + b'\n' for l in open(clock_format, 'rb').read().splitlines()
                            if not l.startswith(b'#'))
            formats = formats + [text]
        systems.append((sysname, formats))

    out, table = header_of(f, systems, f['kallsyms'])
    for c in range(f['cpus']):
        out += bytes(-len(out) % PAGE)
        pages = b''.join(pages_of(sorted(cpu[c], key=lambda e: e[0])))
        struct.pack_into('<QQ', out, table + 16 * c, len(out), len(pages))
        out += pages
    open(dst, 'wb').write(out)
    print(f'{dst}: {len(out)} bytes')


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
