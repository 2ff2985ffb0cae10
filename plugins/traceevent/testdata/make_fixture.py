#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Cut a small trace.dat fixture out of a real `trace-cmd record -B hmb` capture.

Not run by the tests: it documents how testdata/record-small.dat was made.

    trace-cmd convert -i build/e2e/record/record.dat -o /tmp/v6.dat \\
        --file-version 6 --compression none
    plugins/traceevent/testdata/make_fixture.py /tmp/v6.dat \\
        plugins/traceevent/testdata/record-small.dat 86 95

keeps, of the "hmb" instance buffer of a version 6 (uncompressed) file, the
ring-buffer pages [first, last) of every CPU, drops kallsyms, and rewrites
the file offsets (trace-cmd.dat(5), version 6). Everything else - header
page, event formats, options - is copied unchanged.
"""
import struct
import sys

PAGE = 4096


class Reader:
    def __init__(self, data):
        self.d = data
        self.p = 0

    def take(self, n):
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def num(self, fmt):
        v = struct.unpack_from('<' + fmt, self.d, self.p)[0]
        self.p += struct.calcsize(fmt)
        return v

    def skip(self, fmt):
        """Skips a size field and the bytes it counts."""
        n = self.num(fmt)
        self.p += n

    def sized(self, fmt):
        """A size field and the bytes it counts."""
        return self.take(self.num(fmt))

    def cstr(self):
        e = self.d.index(b'\0', self.p)
        s = self.d[self.p:e]
        self.p = e + 1
        return s


def main(src, dst, first, last):
    d = open(src, 'rb').read()
    r = Reader(d)
    magic = r.take(10)
    assert magic == b'\x17\x08Dtracing' and r.take(2) == b'6\0', 'need v6'
    r.take(6)  # endian, long size, page size
    for _ in range(2):  # header_page, header_event
        r.cstr()
        r.skip('Q')
    for _ in range(r.num('I')):  # ftrace formats
        r.skip('Q')
    for _ in range(r.num('I')):  # event systems
        r.cstr()
        for _ in range(r.num('I')):
            r.skip('Q')
    kallsyms = r.p
    r.skip('I')
    after_kallsyms = r.p
    r.skip('I')  # trace_printk
    r.skip('Q')  # cmdlines
    cpus = r.num('I')
    assert r.take(10) == b'options  \0'
    buffer_opt = None
    while True:
        oid = r.num('H')
        if oid == 0:
            break
        size = r.num('I')
        if oid == 3:  # TRACECMD_OPTION_BUFFER: u64 offset, name
            assert buffer_opt is None, 'one instance buffer expected'
            buffer_opt = (r.p, d[r.p + 8:r.p + size])
        r.p += size
    assert buffer_opt, 'no instance buffer'
    top_fly = r.p
    # The top buffer is empty: "flyrecord", cpus x (0, 0), clock.
    r.take(10)
    for _ in range(cpus):
        assert r.num('Q') == 0 and r.num('Q') == 0, 'top buffer not empty'
    r.skip('Q')
    top_end = r.p
    old_buffer = struct.unpack_from('<Q', d, buffer_opt[0])[0]
    r.p = old_buffer
    assert r.take(10) == b'flyrecord\0'
    pairs = [(r.num('Q'), r.num('Q')) for _ in range(cpus)]
    clock = r.take(r.num('Q'))

    out = bytearray(d[:kallsyms])
    out += struct.pack('<I', 0)
    shift = after_kallsyms - len(out)
    out += d[after_kallsyms:top_end]
    new_buffer = len(out)
    struct.pack_into('<Q', out, buffer_opt[0] - shift, new_buffer)
    out += b'flyrecord\0'
    table = len(out)
    out += bytes(16 * cpus)
    out += struct.pack('<Q', len(clock)) + clock
    for cpu, (off, size) in enumerate(pairs):
        out += bytes(-len(out) % PAGE)
        pages = d[off + first * PAGE:off + min(last * PAGE, size)]
        struct.pack_into('<QQ', out, table + 16 * cpu, len(out), len(pages))
        out += pages
    open(dst, 'wb').write(out)
    print(f'{dst}: {len(out)} bytes, pages [{first}, {last}) of {cpus} CPUs')


if __name__ == '__main__':
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
