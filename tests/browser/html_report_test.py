#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The HTML report of `hmbtrace-cmd stat --html`, opened in a real browser.

    html_report_test.py HMBTRACE_CMD CAPTURE OUTDIR [--chromium PATH] [--causes DUMP]

Writes OUTDIR/report.html from CAPTURE, opens it in headless Chromium from
a file:// URL with the network off (a network namespace of its own when
`unshare -n` works, and a dead proxy in any case; every request the page
makes is checked to be the file itself), and checks the DOM against what
`hmbtrace-cmd stat --json`, `--commands-json` and `report --cmd` say of the
same capture: the charts have their bars (and their counts add up), the
activity rows and markers are there, the table of slowest commands has its
rows, in order, a filter narrows it, sorting orders it, pages page, and a
click shows a command's story. Clicks and typing go through Chromium's
input events, as a person's would. Leaves OUTDIR/report.png, a screenshot
of the whole page. With --causes, a capture with command attribution (the
die model's crash dump, die_model_dump) goes to OUTDIR/causes.html: its
command causes section has a bar per tail command as stat --json lists
them, a segment per stage, and a click shows the command's path.

Driven over the DevTools protocol on a pipe (--remote-debugging-pipe):
Python's standard library only, no npm. Prints one "ok"/"not ok" line per
check and ends with "N passed, M failed"; exit status 1 on any failure.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import time


class Browser:
    """Headless Chromium over the DevTools protocol on fds 3 (to it) and 4."""

    def __init__(self, chromium, profile, netns):
        to_r, self._to_w = os.pipe()
        self._from_r, from_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4.
        args = [chromium, '--headless=new', '--no-sandbox', '--disable-gpu',
                '--remote-debugging-pipe', '--user-data-dir=' + profile,
                '--no-first-run', '--no-default-browser-check', '--disable-extensions',
                '--disable-background-networking', '--disable-component-update',
                '--disable-sync', '--disable-features=MediaRouter,OptimizationHints',
                # No network even outside a namespace: every proxied
                # request goes to a port nobody listens on.
                '--proxy-server=127.0.0.1:9', '--proxy-bypass-list=<-loopback>',
                '--window-size=1400,1000', 'about:blank']
        if netns:
            args = ['unshare', '-n', '--'] + args

        def fds():
            # Through fresh copies: a pipe end may already be fd 3 or 4,
            # and dup2 onto itself would leave it close-on-exec.
            r, w = os.dup(to_r), os.dup(from_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        # The other fds are close-on-exec (PEP 446): only 3 and 4 pass.
        with open(profile + '.log', 'w') as log:
            self.proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=log)
        os.close(to_r)
        os.close(from_w)
        self._buf = b''
        self._id = 0
        self.events = []
        self.session = None

    def _read_message(self):
        while b'\0' not in self._buf:
            chunk = os.read(self._from_r, 1 << 16)
            if not chunk:
                raise RuntimeError('chromium closed the DevTools pipe (see its log)')
            self._buf += chunk
        msg, self._buf = self._buf.split(b'\0', 1)
        return json.loads(msg)

    def call(self, method, params=None, session=True):
        self._id += 1
        msg = {'id': self._id, 'method': method, 'params': params or {}}
        if session and self.session:
            msg['sessionId'] = self.session
        os.write(self._to_w, json.dumps(msg).encode() + b'\0')
        while True:
            m = self._read_message()
            if m.get('id') == self._id:
                if 'error' in m:
                    raise RuntimeError(f'{method}: {m["error"]}')
                return m.get('result', {})
            self.events.append(m)

    def wait_event(self, method, tries=2000):
        for _ in range(tries):
            for i, e in enumerate(self.events):
                if e.get('method') == method:
                    return self.events.pop(i)
            self.events.append(self._read_message())
        raise RuntimeError('no ' + method)

    def eval(self, expr):
        r = self.call('Runtime.evaluate', {'expression': expr, 'returnByValue': True,
                                           'awaitPromise': True})
        if 'exceptionDetails' in r:
            raise RuntimeError(f'{expr[:80]}: {r["exceptionDetails"]}')
        return r['result'].get('value')

    def click(self, selector):
        """A mouse click at the middle of the element, as a person's."""
        box = self.eval(f'''(() => {{
            const e = document.querySelector({json.dumps(selector)});
            if (!e) return null;
            e.scrollIntoView({{block: 'center'}});
            const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2];
        }})()''')
        if box is None:
            raise RuntimeError('nothing matches ' + selector)
        for kind in ('mousePressed', 'mouseReleased'):
            self.call('Input.dispatchMouseEvent', {'type': kind, 'x': box[0], 'y': box[1],
                                                   'button': 'left', 'clickCount': 1})

    def type_into(self, selector, text):
        self.eval(f'document.querySelector({json.dumps(selector)}).focus()')
        self.call('Input.insertText', {'text': text})

    def close(self):
        try:
            self.call('Browser.close', session=False)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what, detail=''):
        n = self.passed + self.failed + 1
        if ok:
            self.passed += 1
            print(f'ok {n} - {what}')
        else:
            self.failed += 1
            print(f'not ok {n} - {what}' + (f': {detail}' if detail else ''))
        return ok


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    tool, capture, outdir = argv[1], os.path.abspath(argv[2]), os.path.abspath(argv[3])
    chromium = argv[argv.index('--chromium') + 1] if '--chromium' in argv else '/usr/bin/chromium'
    if not os.access(chromium, os.X_OK):
        print(f'html_report_test: no {chromium}: install it with scripts/install-deps.sh --browser')
        print('0 passed, 1 failed')
        return 1
    os.makedirs(outdir, exist_ok=True)
    report = os.path.join(outdir, 'report.html')
    cmds_json = os.path.join(outdir, 'commands.json')
    run([tool, 'stat', '-i', capture, '--html', report, '--commands-json', cmds_json])
    stat = json.loads(run([tool, 'stat', '-i', capture, '--json']))
    with open(cmds_json) as f:
        cmds = json.load(f)

    c = Checks()
    profile = os.path.join(outdir, 'chromium-profile')
    shutil.rmtree(profile, ignore_errors=True)
    netns = subprocess.run(['unshare', '-n', 'true'], capture_output=True).returncode == 0
    b = Browser(chromium, profile, netns)
    try:
        check_page(b, c, report, stat, cmds, tool, capture, outdir, netns)
    except Exception as e:  # noqa: BLE001 - one failure, reported as such
        c.check(False, 'the browser session ran to its end', repr(e))
    finally:
        b.close()
    if '--causes' in argv:
        dump = os.path.abspath(argv[argv.index('--causes') + 1])
        causes = os.path.join(outdir, 'causes.html')
        run([tool, 'stat', '-i', dump, '--html', causes])
        causes_stat = json.loads(run([tool, 'stat', '-i', dump, '--json']))
        shutil.rmtree(profile, ignore_errors=True)
        b = Browser(chromium, profile, netns)
        try:
            check_causes(b, c, causes, causes_stat, outdir)
        except Exception as e:  # noqa: BLE001 - one failure, reported as such
            c.check(False, 'the browser session on the causes page ran to its end', repr(e))
        finally:
            b.close()
    print(f'{c.passed} passed, {c.failed} failed')
    return 0 if c.failed == 0 else 1


def open_page(b, c, path, label=None):
    """Opens `path` in a new target and checks that the page drew itself."""
    target = b.call('Target.createTarget', {'url': 'about:blank'}, session=False)['targetId']
    b.session = b.call('Target.attachToTarget', {'targetId': target, 'flatten': True},
                       session=False)['sessionId']
    for domain in ('Page', 'Runtime', 'Network', 'Log'):
        b.call(domain + '.enable')
    b.call('Page.navigate', {'url': 'file://' + path})
    b.wait_event('Page.loadEventFired')
    ready = None
    for _ in range(200):  # a bound on tries, not a timed assertion
        ready = b.eval('document.body.dataset.ready || null')
        if ready:
            break
        time.sleep(0.05)
    c.check(ready == '1', label or f'{os.path.basename(path)}: the page drew every section')


def check_causes(b, c, path, stat, outdir):
    open_page(b, c, path)
    errors = [e['params'] for e in b.events if e.get('method') == 'Runtime.exceptionThrown']
    c.check(not errors, 'causes page: no script error', json.dumps(errors)[:500])
    # One bar per tail command stat --json lists (at most cause_bars_max),
    # slowest first, and a segment per stage, colored.
    bars_max = b.eval('JSON.parse(document.getElementById("hmbtrace-data").textContent).cause_bars_max')
    want = {op['opcode']: [[x['qid'], x['cid'], len(x['stages'])]
                           for x in op['tail']['slowest'][:bars_max]]
            for op in stat['command_causes']['opcodes'] if op['tail']['slowest']}
    got = b.eval('''Object.fromEntries([...document.querySelectorAll('#causes .cause-opcode')].map(
        (o) => [o.dataset.opcode, [...o.querySelectorAll('.cause-row')].map((r) => [
          Number(r.dataset.qid), Number(r.dataset.cid), r.querySelectorAll('.stage').length])]))''')
    c.check(want and got == want,
            'causes: a bar per command above p99 as stat --json lists it, a segment per stage',
            f'want {str(want)[:200]}, got {str(got)[:200]}')
    shown = b.eval('''[...document.querySelectorAll('#causes .stage')].filter((s) => {
        const r = s.getBoundingClientRect(); return r.width > 0 && r.height > 0 &&
          getComputedStyle(s).backgroundColor !== 'rgba(0, 0, 0, 0)'; }).length''')
    total = sum(n for rows in want.values() for _, _, n in rows)
    # A stage of a few ticks in a bar of milliseconds may round to no width.
    c.check(total and shown >= total * 0.5, 'causes: the segments render, colored',
            f'{shown} of {total} visible')
    # A click on the slowest command's bar shows its path: every stage,
    # with the cause of each wait.
    top = next(op for op in stat['command_causes']['opcodes'] if op['tail']['slowest'])
    first = top['tail']['slowest'][0]
    hidden = b.eval("document.querySelector('#causes .cause-path').hidden")
    b.click('#causes .cause-row .stagebar')
    text = b.eval('''(() => { const p = document.querySelector('#causes .cause-path');
                             return p && !p.hidden ? p.textContent : null; })()''')
    ok = (hidden and text is not None and f"qid {first['qid']} cid {first['cid']}" in text and
          f"main cause {first['main_cause']}" in text and
          all(s['name'] in text for s in first['stages']) and
          all('waited: ' + s['cause'] in text for s in first['stages'] if s['cause']))
    c.check(ok, 'causes: a click on the slowest bar shows its path, stages and causes',
            f'text {text!r:.300}')
    shot = b.call('Page.captureScreenshot', {'format': 'png'})['data']
    with open(os.path.join(outdir, 'causes.png'), 'wb') as f:
        f.write(base64.b64decode(shot))


def check_page(b, c, report, stat, cmds, tool, capture, outdir, netns):
    open_page(b, c, report, 'the page drew every section')
    url = 'file://' + report

    # Nothing but the file itself was asked for, and nothing failed.
    requests = [e['params']['request']['url'] for e in b.events
                if e.get('method') == 'Network.requestWillBeSent']
    c.check(requests == [url], 'the page loads nothing but itself' +
            (' (in a network namespace with no network)' if netns else ' (network off by proxy)'),
            f'requests: {requests}')
    errors = [e['params'] for e in b.events
              if e.get('method') == 'Runtime.exceptionThrown' or
              (e.get('method') == 'Runtime.consoleAPICalled' and e['params']['type'] == 'error') or
              (e.get('method') == 'Log.entryAdded' and e['params']['entry']['level'] == 'error')]
    c.check(not errors, 'no script error, no console error', json.dumps(errors)[:500])

    # Latency per event: one chart per metric, its bars adding up to the
    # metric's count over all cores (stat --json).
    want = {}
    for d in stat['devices']:
        for core in d['cores']:
            for lat in core['latency']:
                want[lat['name']] = want.get(lat['name'], 0) + lat['count']
    got = b.eval('''Object.fromEntries([...document.querySelectorAll('#latency .hist-chart')].map(
        (ch) => [ch.dataset.name, [...ch.querySelectorAll('rect.bar')].reduce(
            (s, r) => s + Number(r.dataset.count), 0)]))''')
    c.check(want and got == want, 'latency charts: one per metric, bars add up to its count',
            f'want {want}, got {got}')
    pct = b.eval('''[...document.querySelectorAll('#latency .hist-chart')].map(
        (ch) => ch.querySelectorAll('line.pct').length)''')
    c.check(pct and all(n == 3 for n in pct), 'latency charts mark p50, p90 and p99', str(pct))

    # The join's split per opcode: four charts each, bars adding up to the
    # count stat prints.
    split = {}
    for row in cmds['summary']['latency_split']:
        split.setdefault(row['opcode'], []).append(row['count'])
    got = b.eval('''Object.fromEntries([...document.querySelectorAll('#commands .opcode')].map(
        (op) => [op.dataset.opcode, [...op.querySelectorAll('.hist-chart')].map(
            (ch) => [...ch.querySelectorAll('rect.bar')].reduce((s, r) => s + Number(r.dataset.count), 0))]))''')
    c.check(split and got == split, 'NVMe split: four charts per opcode, bars add up to the joined count',
            f'want {split}, got {got}')
    stacked = b.eval('''[...document.querySelectorAll('#commands .opcode svg.splitbar-chart')].map(
        (s) => s.querySelectorAll('rect.bar').length)''')
    c.check(stacked and all(n == 3 for n in stacked), 'NVMe split: the median split bar has its three phases',
            str(stacked))

    # Activity: one row per core, its bars adding up to its records; the
    # markers on the same axis.
    want = {f"{d['dev']}:{core['core']}": core['records'] for d in stat['devices'] for core in d['cores']}
    got = b.eval('''Object.fromEntries([...document.querySelectorAll('#activity g.core-row')].map(
        (g) => [g.dataset.dev + ':' + g.dataset.core, [...g.querySelectorAll('rect.act')].reduce(
            (s, r) => s + Number(r.dataset.count), 0)]))''')
    c.check(got == want, 'activity: one row per core, bars add up to its records', f'want {want}, got {got}')
    markers = b.eval('''[...document.querySelectorAll('#activity g.marker-mark title')].map((t) => t.textContent)''')
    c.check(len(markers) == stat['markers'] and stat['markers'] > 0 and
            any('fixture start' in m for m in markers) if 'cmd-join-small' in capture else
            len(markers) == stat['markers'],
            'activity: every trace_marker line on the time axis', str(markers))

    # The table: the slowest completed commands, longest first.
    done = [x for x in cmds['commands'] if x['complete_ns'] is not None]
    totals = sorted((x['complete_ns'] - x['setup_ns'] for x in done), reverse=True)

    def rows():
        return b.eval('''[...document.querySelectorAll('#slowest-table tbody tr.cmd')].map((tr) => ({
            total: Number(tr.dataset.total), id: tr.dataset.id,
            cells: [...tr.children].map((td) => td.textContent)}))''')

    def info():
        return b.eval("document.getElementById('page-info').textContent")

    r = rows()
    c.check([x['total'] for x in r] == totals[:25],
            'table: the first page holds the 25 slowest commands, longest first',
            f'got {[x["total"] for x in r]}, want {totals[:25]}')
    c.check(f'of {len(done)}' in info(), 'table: the pager counts every completed command', info())

    b.click('#slowest-table th[data-key="total_ns"]')
    r = rows()
    c.check([x['total'] for x in r] == sorted(totals)[:25],
            'table: a click on "host total" sorts it shortest first', str([x['total'] for x in r]))
    b.click('#slowest-table th[data-key="total_ns"]')
    b.click('#slowest-table th[data-key="qid"]')
    r = rows()
    qids = [int(x['cells'][3]) for x in r]
    c.check(qids == sorted(qids, reverse=True) and len(set(qids)) > 1,
            'table: a click on "qid" sorts by queue', str(qids))
    b.click('#slowest-table th[data-key="total_ns"]')

    # Filters narrow it to what the capture says.
    reads = [x for x in done if x['opcode'] == 2]
    b.eval('''(() => { const s = document.getElementById('f-opcode'); s.value = 'read';
                       s.dispatchEvent(new Event('change')); })()''')
    r = rows()
    c.check(len(r) == len(reads) and 0 < len(reads) < len(done) and all(x['cells'][2] == 'read' for x in r),
            f'table: the opcode filter "read" narrows it to the {len(reads)} reads', f'{len(r)} rows')
    b.eval('''(() => { const s = document.getElementById('f-queue'); s.value = '1';
                       s.dispatchEvent(new Event('change')); })()''')
    r = rows()
    want_q = [x for x in reads if x['qid'] == 1]
    c.check(len(r) == len(want_q) and all(x['cells'][3] == '1' for x in r),
            f'table: opcode and queue filters together leave {len(want_q)}', f'{len(r)} rows')
    b.eval('''(() => { for (const id of ['f-opcode', 'f-queue']) { const s = document.getElementById(id);
                       s.value = ''; s.dispatchEvent(new Event('change')); } })()''')
    core1 = [x for x in done if x['fetch'] and x['fetch']['core'] == 1 or
             (not x['fetch'] and x['complete'] and x['complete']['core'] == 1)]
    b.eval('''(() => { const s = document.getElementById('f-core'); s.value = '1';
                       s.dispatchEvent(new Event('change')); })()''')
    r = rows()
    c.check(len(r) == min(len(core1), 25) and 0 < len(core1) and all(x['cells'][5] == '1' for x in r),
            f'table: the core filter leaves the {len(core1)} commands of core 1', f'{len(r)} rows')
    b.eval('''(() => { const s = document.getElementById('f-core'); s.value = '';
                       s.dispatchEvent(new Event('change')); })()''')
    median = totals[len(totals) // 2]
    b.type_into('#f-min', str(median / 1000))
    r = rows()
    want_n = len([t for t in totals if t >= median])
    c.check(len(r) == min(want_n, 25) and all(x['total'] >= median for x in r),
            f'table: typing a lower bound of {median / 1000} µs leaves the {want_n} at or above it',
            f'{len(r)} rows')
    b.type_into('#f-max', str(totals[1] / 1000))
    r = rows()
    want_n = len([t for t in totals if median <= t <= totals[1]])
    c.check(len(r) == min(want_n, 25) and all(median <= x['total'] <= totals[1] for x in r),
            'table: a latency range leaves the commands inside it', f'{len(r)} rows, want {want_n}')
    b.eval('''(() => { for (const id of ['f-min', 'f-max']) { const s = document.getElementById(id);
                       s.value = ''; s.dispatchEvent(new Event('input')); } })()''')

    # Pages.
    b.eval('''(() => { const s = document.getElementById('per-page'); s.value = '10';
                       s.dispatchEvent(new Event('change')); })()''')
    first = [x['total'] for x in rows()]
    b.click('#page-next')
    second = [x['total'] for x in rows()]
    c.check(first == totals[:10] and second == totals[10:20] and info().startswith('11–20 of'),
            'table: 10 per page, "next" shows the 11th to the 20th', f'{second} / {info()}')
    b.click('#page-prev')

    # A click on a row shows its story, as report --cmd tells it.
    top = rows()[0]
    qid, cid = top['id'].split('@')[0].split(':')
    b.click('#slowest-table tbody tr.cmd')
    story = b.eval('''(() => { const p = document.querySelector('#slowest-table tr.story pre');
                              return p ? p.textContent : null; })()''')
    told = run([tool, 'report', '-i', capture, '--cmd', f'{qid}:{cid}'])
    c.check(story is not None and story.strip() != '' and story in told,
            f'table: a click on the slowest command shows its story (report --cmd {qid}:{cid})',
            f'story {story!r:.300}')

    # The whole page, for a person to look at (with that story open).
    b.eval('window.scrollTo(0, 0)')
    height = b.eval('document.documentElement.scrollHeight')
    b.call('Emulation.setDeviceMetricsOverride', {'width': 1400, 'height': min(height, 6000),
                                                  'deviceScaleFactor': 1, 'mobile': False})
    shot = b.call('Page.captureScreenshot', {'format': 'png'})['data']
    with open(os.path.join(outdir, 'report.png'), 'wb') as f:
        f.write(base64.b64decode(shot))


if __name__ == '__main__':
    sys.exit(main(sys.argv))
