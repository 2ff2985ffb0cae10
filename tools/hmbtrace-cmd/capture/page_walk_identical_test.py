# SPDX-License-Identifier: GPL-2.0-only
"""Every reader gives the same bytes whether a capture's events are read
from its pages (capture/ftrace_file_pages_c.h) or through libtracecmd's
iteration, the reference (HMBTRACE_REFERENCE_WALK=1,
capture/tracecmd_walk_c.h): report, stat (text, --json, --html), export
(protobuf, --compress, JSON) and retime, on every capture named and on
what retime made of each (its records carry the retime mark, which the
page walk's fast lane reads itself: decode/hmb_events.h); exit status,
stdout, stderr and the files written compared byte for byte.

Usage: page_walk_identical_test.py HMBTRACE_CMD WORKDIR CAPTURE...
"""
import os
import shutil
import subprocess
import sys

REFERENCE_ENV = 'HMBTRACE_REFERENCE_WALK'

# (name, arguments with {i} the capture and {o} the output file, output suffix or None)
COMMANDS = [
    ('report', ['report', '-i', '{i}'], None),
    ('report --raw', ['report', '--raw', '-i', '{i}'], None),
    ('stat', ['stat', '-i', '{i}'], None),
    ('stat --json', ['stat', '--json', '-i', '{i}'], None),
    ('stat --html', ['stat', '--html', '{o}', '-i', '{i}'], '.html'),
    ('export', ['export', '-q', '-i', '{i}', '-o', '{o}'], '.pftrace'),
    ('export --compress', ['export', '-q', '--compress', '-i', '{i}', '-o', '{o}'], '.pftrace'),
    ('export json', ['export', '-q', '-i', '{i}', '-o', '{o}'], '.json'),
    ('retime', ['retime', '-q', '-i', '{i}', '-o', '{o}'], '.dat'),
]

failures = []


def run(cmd, args, out, reference):
    env = dict(os.environ)
    env.pop(REFERENCE_ENV, None)
    if reference:
        env[REFERENCE_ENV] = '1'
    if out and os.path.exists(out):
        os.remove(out)
    p = subprocess.run([cmd] + args, env=env, capture_output=True, check=False)
    data = None
    if out and os.path.exists(out):
        with open(out, 'rb') as f:
            data = f.read()
    return p.returncode, p.stdout, p.stderr, data


def main():
    cmd, work = sys.argv[1], sys.argv[2]
    captures = sys.argv[3:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    compared = 0
    queue = list(captures)  # then what retime made of each
    for capture in queue:
        for name, template, suffix in COMMANDS:
            out = os.path.join(work, 'out' + suffix) if suffix else None
            args = [a.format(i=capture, o=out) for a in template]
            pages = run(cmd, args, out, reference=False)
            reference = run(cmd, args, out, reference=True)
            what = f'{os.path.basename(capture)}: {name}'
            if pages == reference:
                print(f'ok    {what} (exit {pages[0]}, {len(pages[1])} B out, '
                      f'{len(pages[3] or b"")} B file)')
                compared += 1
                if name == 'retime' and pages[0] == 0 and capture in captures:
                    path = os.path.join(work, 'retimed-' + os.path.basename(capture))
                    with open(path, 'wb') as f:
                        f.write(pages[3])
                    queue.append(path)
                continue
            parts = [label for label, a, b in zip(('exit status', 'stdout', 'stderr', 'file'),
                                                  pages, reference) if a != b]
            print(f'FAIL  {what}: {", ".join(parts)} differ')
            if pages[2] != reference[2]:
                print('      pages stderr: ' + pages[2].decode(errors='replace')[:400])
                print('      reference stderr: ' + reference[2].decode(errors='replace')[:400])
            failures.append(what)
    # A command that failed alike both ways compares nothing of worth: each
    # capture must be read by most of them.
    if compared == 0:
        failures.append('nothing compared')
    if failures:
        print(f'{len(failures)} failed')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
