#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Unit test of tests/lib/hmbtest, the e2e verifiers' and fixture scripts'
one set of helpers (meson test hmbtest_test, suite unit).

    PYTHONPATH=tests/lib python3 tests/lib/hmbtest_test.py [-v]

The trace.dat writer: every committed fixture made by a script of the
tree comes back byte for byte from its committed inputs (clock-small.dat,
cmd-join-small.dat, cmd-join-boot.dat, cmd-join-instance.dat),
and cutting a real capture whole
gives it back (record-small.dat, markers-small.dat). The readers: the
report parser finds in `trace-cmd report -R -t -N` of record-small.dat
each core's records in sequence, as many as the C++ tests count
(tools/hmbtrace-cmd/fixture_testutil.h), the format loader the names of
hmb_lost's reasons and hmb_state's states.
"""
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from hmbtest import formats, report
from hmbtest.check import Failures, report_problems

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
        for name in ('cmd-join-small.dat', 'cmd-join-boot.dat', 'cmd-join-instance.dat'):
            self.assertSameFile(os.path.join(self.tmp, name), os.path.join(CMD_DATA, name))

    def test_cut_whole(self):
        for src in (os.path.join(DATA, 'record-small.dat'),
                    os.path.join(CMD_DATA, 'markers-small.dat')):
            out = os.path.join(self.tmp, os.path.basename(src))
            run_script(os.path.join(DATA, 'make_fixture.py'), src, out, '0', '1000')
            self.assertSameFile(out, src)


class Readers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='hmbtest-')
        dat = os.path.join(DATA, 'record-small.dat')
        cls.txt = os.path.join(cls.tmp, 'record-small.txt')
        with open(cls.txt, 'w') as fh:
            subprocess.run(['trace-cmd', 'report', '-R', '-t', '-N', '-i', dat], stdout=fh,
                           stderr=subprocess.DEVNULL, check=True)
        with open(os.path.join(cls.tmp, 'record-small.formats'), 'w') as fh:
            subprocess.run(['trace-cmd', 'dump', '--events', dat], stdout=fh,
                           stderr=subprocess.DEVNULL, check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_report(self):
        events = report.parse_report(self.txt)
        streams, seg = report.core_streams(events)
        seqs = {k: [e.f['seq'] for e in report.records_of(evs)] for k, evs in streams.items()}
        # fixture_testutil.h: kFixtureRecordsPerCore.
        self.assertEqual({k: len(v) for k, v in seqs.items()}, {0: 259, 1: 257, 2: 250, 3: 269})
        for k, v in seqs.items():
            self.assertEqual(v, list(range(v[0], v[0] + len(v))), f'core {k}')
            self.assertTrue(all(e.cpu == k % 2 for e in streams[k]), f'core {k} CPU')
        states = [e for e in events if e.name == 'hmb_state']
        self.assertEqual(len(states), 2)
        self.assertTrue(all(len(e.f['build_id']) == 20 for e in states))
        self.assertEqual(len([e for e in events if e.name == 'hmb_dict']), 8)
        light = report.parse_report(self.txt, light=True)
        self.assertEqual([(e.cpu, e.ts, e.name) for e in light],
                         [(e.cpu, e.ts, e.name) for e in events if e.name != 'hmb_dict'])

    def test_trace_pipe_line(self):
        self.assertEqual(report.parse_line(
            '  <idle>-0  [001] d.h2.  123.000456: hmb_record: dev=0 core=1 seq=5'),
            (1, 123000456000, 'hmb_record', 'dev=0 core=1 seq=5'))

    def test_formats(self):
        text = formats.load_lost_reasons(self.txt)
        self.assertEqual(formats.LOST_REASONS,
                         {0: 'overwritten', 1: 'torn', 2: 'invalid', 3: 'reset'})
        self.assertEqual(formats.reason_name(3), 'reset')
        states = formats.symbolic(text, 'hmb_state', 'state')
        self.assertEqual((states.get(0), states.get(1)), ('attached', 'reset'))

    def test_status(self):
        path = os.path.join(self.tmp, 'status.txt')
        with open(path, 'w') as fh:
            fh.write('state: attached\ndelivered: 5 6\nresets: 1\n')
        st = report.parse_status(path)
        self.assertEqual(st['delivered'], [5, 6])
        self.assertEqual(report.status_scalar(st, 'resets'), 1)
        self.assertEqual(st['state'], 'attached')


class Check(unittest.TestCase):
    def test_failures(self):
        F = Failures()
        with open(os.devnull, 'w') as null:
            saved, sys.stdout = sys.stdout, null
            try:
                F.check(True, 'ok', 'bad')
                report_problems(F, ['one', 'two'], 'none')
            finally:
                sys.stdout = saved
        self.assertEqual((F.passed, F.count), (1, 2))


if __name__ == '__main__':
    unittest.main()
