#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Cut a small trace.dat fixture out of a real `trace-cmd record -B hmb` capture.

Not run by the tests: it documents how record-small.dat (and
tools/hmbtrace-cmd/testdata/markers-small.dat) were made; the unit test
tests/lib/fixtures_test.py checks that cutting a fixture whole gives it
back byte for byte.

    trace-cmd convert -i build/e2e/record/record.dat -o /tmp/v6.dat \\
        --file-version 6 --compression none
    PYTHONPATH=tests/lib tests/data/make_fixture.py /tmp/v6.dat \\
        tests/data/record-small.dat 86 95

keeps, of the "hmb" instance buffer of a version 6 (uncompressed) file, the
ring-buffer pages [first, last) of every CPU, drops kallsyms, and rewrites
the file offsets (trace-cmd.dat(5), version 6). Everything else - header
page, event formats, options - is copied unchanged.
"""
import sys

from hmbtest.tracedat import header_of, parse, write_capture


def main(src, dst, first, last):
    f = parse(src)
    assert not any(off or size for off, size in f['top_pairs']), 'top buffer not empty'
    head, table = header_of(f, f['systems'], b'')
    size = write_capture(dst, head, table, [pages[first:last] for pages in f['pages']])
    print(f'{dst}: {size} bytes, pages [{first}, {last}) of {f["cpus"]} CPUs')


if __name__ == '__main__':
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
