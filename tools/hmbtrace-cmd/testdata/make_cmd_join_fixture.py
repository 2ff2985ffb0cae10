#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes the small command-join fixtures of the export tests.

    PYTHONPATH=tests/lib tools/hmbtrace-cmd/testdata/make_cmd_join_fixture.py TEMPLATE OUTDIR

TEMPLATE: a capture of the cmd-join e2e scenario converted to an uncompressed
version 6 file (`trace-cmd convert -i cmd-join.dat -o T --file-version 6
--compression none`), or one of the fixtures it wrote (they give themselves
back byte for byte: tests/lib/fixtures_test.py). Writes, with
hmbtest.cmd_join_capture (tests/lib/: 4 I/O queues, dev 0 firmware on cores
0 and 1, hmb_clock fits):

  cmd-join-small.dat  24 host commands on the "local" trace clock; commands 5
                      and 17 have no firmware record (unjoined: "no firmware
                      record"), command 23 no nvme_complete_rq; two
                      trace_marker lines in the top buffer ("fixture start" at
                      1.000002 s, "fixture mid" at 1.000012 s, pid 4242).
  cmd-join-boot.dat   the same 24 commands, all served, on the "boot" clock.
  cmd-join-instance.dat  the same 24 commands, all served, with the nvme events
                      in the hmb instance (`trace-cmd record -B hmb -e hmb -e
                      nvme:...`) on "local", none in the top buffer, which is
                      on "boot" (no fit: the join must take the instance's).
"""
import os
import sys

from hmbtest.cmd_join_capture import generate

MARKERS = ((1_000_002_000, 'fixture start'), (1_000_012_000, 'fixture mid'))


def main():
    template, outdir = sys.argv[1], sys.argv[2]
    generate(template, os.path.join(outdir, 'cmd-join-small.dat'), 24, no_firmware={5, 17},
             no_completion={23}, markers=MARKERS)
    generate(template, os.path.join(outdir, 'cmd-join-boot.dat'), 24, trace_clock='boot')
    generate(template, os.path.join(outdir, 'cmd-join-instance.dat'), 24, host_in_instance=True,
             top_clock='boot')


if __name__ == '__main__':
    main()
