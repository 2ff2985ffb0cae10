#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Unit test of tests/lib/hmbtest, the fixture scripts' one set of helpers (meson test hmbtest_test, suite unit).

    PYTHONPATH=tests/lib python3 tests/lib/hmbtest_test.py [-v]

The trace.dat writer: every committed fixture made by a script of the
tree comes back byte for byte from its committed inputs (clock-small.dat,
cmd-join-small.dat, cmd-join-boot.dat), and cutting a real capture whole
gives it back (record-small.dat, markers-small.dat).
"""
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import unittest


ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
DATA = os.path.join(ROOT, 'tests', 'data')
CMD_DATA = os.path.join(ROOT, 'tools', 'hmbtrace-cmd', 'testdata')


def run_script(*argv):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, 'tests', 'lib')] + os.environ.get('PYTHONPATH', '').split(os.pathsep)))
    subprocess.run([sys.executable] + list(argv), check=True, env=env,
                   stdout=subprocess.DEVNULL)


class Writer(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='hmbtest-')

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def assertSameFile(self, made, committed):
        self.assertTrue(filecmp.cmp(made, committed, shallow=False),
                        f'{made} differs from the committed {committed}: the trace.dat '
                        f'writer (hmbtest.tracedat) or its script changed the bytes')

    def test_clock_capture(self):
        out = os.path.join(self.tmp, 'clock-small.dat')
        run_script(os.path.join(DATA, 'make_clock_capture.py'),
                   os.path.join(DATA, 'record-small.dat'), os.path.join(DATA, 'hmb_clock.format'),
                   out)
        self.assertSameFile(out, os.path.join(DATA, 'clock-small.dat'))

    def test_cmd_join_fixtures(self):
        run_script(os.path.join(CMD_DATA, 'make_cmd_join_fixture.py'),
                   os.path.join(CMD_DATA, 'cmd-join-small.dat'), self.tmp)
        for name in ('cmd-join-small.dat', 'cmd-join-boot.dat'):
            self.assertSameFile(os.path.join(self.tmp, name), os.path.join(CMD_DATA, name))

    def test_cut_whole(self):
        for src in (os.path.join(DATA, 'record-small.dat'),
                    os.path.join(CMD_DATA, 'markers-small.dat')):
            out = os.path.join(self.tmp, os.path.basename(src))
            run_script(os.path.join(DATA, 'make_fixture.py'), src, out, '0', '1000')
            self.assertSameFile(out, src)


if __name__ == '__main__':
    unittest.main()
