# SPDX-License-Identifier: GPL-2.0-only
"""trace-cmd's trace.dat, version 6 uncompressed (trace-cmd.dat(5)), read and
written by the scripts that make the test fixtures and benchmark captures.

Reading: parse() splits a file into its sections and the "hmb" instance's
ring-buffer pages; events_of() walks one page. Writing: pages_of() lays out
events as the kernel's ring buffer does (as libtraceevent's kbuffer reads
them), header_of()/options_of() write everything before the CPU data, and
CpuData appends each CPU's pages and fills the flyrecord table. A capture
recorded with trace-cmd 3.1 is version 7 (compressed): convert it first,
`trace-cmd convert -i IN -o OUT --file-version 6 --compression none`.
"""
import io
import struct

MAGIC = b'\x17\x08Dtracing'
PAGE = 4096
PAGE_HEADER = 16            # u64 time stamp, u64 commit
PAGE_DATA = PAGE - PAGE_HEADER
TS_SHIFT = 27               # a time delta wider than this takes a TIME_EXTEND
TYPE_PADDING = 29
TYPE_TIME_EXTEND = 30
OPTION_BUFFER = 3           # TRACECMD_OPTION_BUFFER: u64 offset, instance name
OPTION_TRACECLOCK = 4


class Reader:
    """A cursor over little-endian bytes."""

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

    def sized(self, fmt):
        """A size field and the bytes it counts."""
        return self.take(self.num(fmt))

    def cstr(self):
        e = self.d.index(b'\0', self.p)
        s = self.d[self.p:e]
        self.p = e + 1
        return s


def parse(path):
    """The sections of a version 6 trace.dat with one instance buffer, and
    that instance's pages: a dict with init, headers, ftrace, systems,
    kallsyms, printk, cmdlines, cpus, options [(id, data)], top_pairs and
    top_clock (the top buffer), clock and pages (per CPU, PAGE-sized)."""
    d = open(path, 'rb').read()
    r = Reader(d)
    f = {}
    if r.take(10) != MAGIC or r.take(2) != b'6\0':
        raise ValueError(f'{path}: not a version 6 trace.dat; convert it with trace-cmd '
                         f'convert --file-version 6 --compression none')
    f['init'] = r.take(6)  # endian, long size, page size
    f['headers'] = [(r.cstr(), r.sized('Q')) for _ in range(2)]  # header_page, header_event
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
    f['top_pairs'] = [(r.num('Q'), r.num('Q')) for _ in range(cpus)]
    f['top_clock'] = r.sized('Q')
    buffers = [data for oid, data in f['options'] if oid == OPTION_BUFFER]
    if len(buffers) != 1:
        raise ValueError(f'{path}: {len(buffers)} instance buffers, expected one (-B hmb)')
    r.p = struct.unpack_from('<Q', buffers[0])[0]
    assert r.take(10) == b'flyrecord\0'
    pairs = [(r.num('Q'), r.num('Q')) for _ in range(cpus)]
    f['clock'] = r.sized('Q')
    f['pages'] = [[d[off + i:off + i + PAGE] for i in range(0, size, PAGE)]
                  for off, size in pairs]
    return f


def event_ids(f):
    """{(system, name): id} of the events whose formats f carries (the
    ftrace ones under system 'ftrace')."""
    ids = {}
    for sysname, formats in [(b'ftrace', f['ftrace'])] + f['systems']:
        for text in formats:
            name = text.split(b'name: ', 1)[1].split(b'\n', 1)[0].decode()
            ids[(sysname.decode(), name)] = int(text.split(b'ID: ', 1)[1].split(b'\n', 1)[0])
    return ids


def events_of(page):
    """(ts, data) of the events of one ring-buffer page."""
    ts, commit = struct.unpack_from('<QQ', page)
    commit &= (1 << 27) - 1
    p, out = PAGE_HEADER, []
    while p < PAGE_HEADER + commit:
        (h,) = struct.unpack_from('<I', page, p)
        type_len, delta = h & 31, h >> 5
        p += 4
        if type_len == TYPE_TIME_EXTEND:
            (hi,) = struct.unpack_from('<I', page, p)
            ts += (hi << TS_SHIFT) + delta
            p += 4
            continue
        if type_len == TYPE_PADDING:
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
    """A file's start: magic, f's init and headers (parse()), the ftrace
    formats and these event systems [(name, [format text])]."""
    out = bytearray(MAGIC + b'6\0' + f['init'])
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


def options_of(f, systems, kallsyms, printk=None):
    """The file up to its first flyrecord section: formats_of(), kallsyms,
    printk formats (f's when None), f's cmdlines, CPU count and options.
    Returns (bytes, where the instance buffer option's offset goes)."""
    printk = f['printk'] if printk is None else printk
    out = formats_of(f, systems)
    out += struct.pack('<I', len(kallsyms)) + kallsyms
    out += struct.pack('<I', len(printk)) + printk
    out += struct.pack('<Q', len(f['cmdlines'])) + f['cmdlines']
    out += struct.pack('<I', f['cpus']) + b'options  \0'
    buffer_at = None
    for oid, data in f['options']:
        out += struct.pack('<HI', oid, len(data))
        if oid == OPTION_BUFFER:
            buffer_at = len(out)
        out += data
    out += struct.pack('<H', 0)
    return out, buffer_at


def flyrecord(fh, cpus, clock):
    """Writes a flyrecord section's head to a binary file, at its end: the
    CPU table, zero, and the trace clock text. Returns the table's offset
    (for CpuData)."""
    fh.write(b'flyrecord\0')
    table = fh.tell()
    fh.write(bytes(16 * cpus))
    fh.write(struct.pack('<Q', len(clock)) + clock)
    return table


def point_here(fh, at):
    """Writes fh's end offset as the u64 at `at` (the instance buffer
    option: options_of()), and leaves fh at its end."""
    end = fh.tell()
    fh.seek(at)
    fh.write(struct.pack('<Q', end))
    fh.seek(end)


def header_of(f, systems, kallsyms):
    """The file up to its first CPU's data: options_of() with these event
    systems and kallsyms, the top buffer empty, the instance's flyrecord
    head. Returns (bytes, the instance's CPU table offset)."""
    out, buffer_at = options_of(f, systems, kallsyms)
    fh = io.BytesIO()
    fh.write(out)
    flyrecord(fh, f['cpus'], f['top_clock'])
    point_here(fh, buffer_at)
    table = flyrecord(fh, f['cpus'], f['clock'])
    return fh.getvalue(), table


class CpuData:
    """Appends each CPU's ring-buffer data of one flyrecord section to a
    binary file positioned at its end, each CPU from a page boundary, and
    writes the section's table at `table` (CPU c's offset and size at
    table + 16 * c) on close(). For a large capture: data can come in
    pieces, a CPU at a time."""

    def __init__(self, fh, table):
        self.fh, self.table, self.where = fh, table, []
        self.pos = fh.tell()

    def cpu(self, pieces):
        pad = -self.pos % PAGE
        self.fh.write(bytes(pad))
        self.pos += pad
        start = self.pos
        for data in pieces:
            self.fh.write(data)
            self.pos += len(data)
        self.where.append((start, self.pos - start))

    def close(self):
        self.fh.seek(self.table)
        self.fh.write(b''.join(struct.pack('<QQ', off, size) for off, size in self.where))
        self.fh.seek(self.pos)


def write_capture(path, head, table, cpus):
    """Writes a file of one flyrecord section to fill: head (header_of()),
    then CPU c's data from cpus[c], an iterable of byte strings (CpuData).
    Returns the file's size."""
    with open(path, 'wb') as fh:
        fh.write(head)
        data = CpuData(fh, table)
        for pieces in cpus:
            data.cpu(pieces)
        data.close()
        return fh.tell()


def common(event_id, pid=0):
    """An event's common fields: type, flags, preempt count, pid."""
    return struct.pack('<HBBi', event_id, 0, 0, pid)


def with_dynamic(fixed, size, dyn_off, payload):
    """An event of `size` fixed bytes whose __data_loc at dyn_off holds payload."""
    fixed = fixed + bytes(size - len(fixed))
    loc = struct.pack('<I', len(payload) << 16 | size)
    return fixed[:dyn_off] + loc + fixed[dyn_off + 4:] + payload
