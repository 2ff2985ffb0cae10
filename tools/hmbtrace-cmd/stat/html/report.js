// SPDX-License-Identifier: GPL-2.0-only
//
// The HTML report's page: reads the data hmbtrace-cmd stat --html put in
// #hmbtrace-data and draws it. Charts are SVG made here; the table of
// slowest commands sorts, filters and pages in place. No library, no
// network.
'use strict';
(function () {
  const data = JSON.parse(document.getElementById('hmbtrace-data').textContent);
  const stat = data.stat;
  const SVGNS = 'http://www.w3.org/2000/svg';

  // ---- helpers
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'style') e.style.cssText = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  function sv(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function tip(node, text) { node.append(sv('title', {}, text)); return node; }
  const num = (n) => (n === null || n === undefined) ? '–' : Number(n).toLocaleString('en-US');
  function fmtNs(ns) {
    if (ns === null || ns === undefined) return '–';
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toPrecision(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toPrecision(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toPrecision(3) + ' µs';
    return Math.round(ns) + ' ns';
  }
  function fmtTicks(t) {
    const units = [['T', 1024 ** 4], ['G', 1024 ** 3], ['M', 1024 ** 2], ['K', 1024]];
    for (const [u, v] of units) if (t >= v) return (t / v).toPrecision(3) + u;
    return String(t);
  }
  const fmtUnit = (v, unit) => unit === 'ns' ? fmtNs(v) : fmtTicks(v) + ' ticks';
  const hostTime = (ns) => (ns / 1e9).toFixed(6);
  function table(head, rows, cls) {
    const t = el('table', { class: cls || '' });
    t.append(el('thead', {}, el('tr', {}, ...head.map((h, i) =>
      el('th', { class: i === 0 ? 'l' : null, text: h })))));
    const tb = el('tbody');
    for (const r of rows)
      tb.append(el('tr', {}, ...r.map((c, i) =>
        c instanceof Node ? el('td', { class: i === 0 ? 'l' : null }, c)
          : el('td', { class: i === 0 ? 'l' : null, text: c }))));
    t.append(tb);
    return el('div', { class: 'tablewrap' }, t);
  }
  function tile(value, label) { return el('div', { class: 'tile' }, el('b', { text: value }), el('span', { text: label })); }
  const sectionOf = (id) => document.getElementById(id);
  const devices = stat.devices || [];

  // ---- the capture summary
  function renderSummary() {
    const s = sectionOf('summary');
    document.getElementById('file').textContent = data.file;
    let lost = 0, cores = 0;
    for (const d of devices) for (const c of d.cores) { lost += c.lost.total; cores++; }
    const span = stat.last_ts_ns !== undefined ? stat.last_ts_ns - stat.first_ts_ns : null;
    s.append(el('div', { class: 'tiles' },
      tile(num(stat.records), 'firmware records'),
      tile(num(lost), 'records lost'),
      tile(num(devices.length), 'devices'),
      tile(num(cores), 'firmware cores'),
      tile(span === null ? '–' : fmtNs(span), 'host time span'),
      tile(num(stat.markers), 'trace_marker lines'),
      tile(data.commands && data.commands.host_events_recorded ? num(data.commands.host_commands) : '–',
        'host NVMe commands')));
    if (span !== null)
      s.append(el('div', { class: 'note', text: 'host time ' + hostTime(stat.first_ts_ns) + ' .. ' +
        hostTime(stat.last_ts_ns) + ' s (ftrace clock); percentiles of event latencies within ' +
        (stat.percentile_relative_error * 100).toFixed(1) + ' % (log-linear histograms)' }));
    const warns = [];
    for (const [cpu, n] of Object.entries(stat.ftrace_missed_events || {}))
      warns.push('ftrace dropped ' + n + ' events on CPU ' + cpu + ' (raise buffer_size_kb)');
    for (const [what, n] of Object.entries(stat.malformed || {})) warns.push(n + ' malformed ' + what);
    for (const [what, n] of Object.entries(stat.dictionary_problems || {}))
      if (n) warns.push('dictionary chunks rejected: ' + what + ' ' + n);
    for (const m of stat.dictionary_messages || []) warns.push(m);
    for (const w of warns) s.append(el('p', { class: 'warn', text: 'warning: ' + w }));

    s.append(el('h3', { text: 'Devices' }));
    s.append(table(['dev', 'name', 'clock', 'producer_gens', 'cores', 'state', 'build id', 'dictionary'],
      devices.map((d) => [String(d.dev), d.name || '–', d.clock_hz ? num(d.clock_hz) + ' Hz' : 'unknown',
        (d.producer_gens || []).join(' ') || '–', num(d.nr_cores), d.state || '–',
        d.build_id ? d.build_id.slice(0, 16) + '…' : '–', num(d.dictionary_events) + ' events'])));

    const clocked = devices.filter((d) => d.clock);
    if (clocked.length) {
      s.append(el('h3', { text: 'Clock fits (firmware time → host time)' }));
      s.append(table(['dev', 'fits', 'stale', 'refused', 'producer_gens', 'records converted',
        'bound median', 'bound max', 'drain delay median', 'drain delay max', 'not converted', 'after their drain'],
      clocked.map((d) => {
        const c = d.clock;
        const nc = c.records_not_converted || {};
        const ncText = Object.entries(nc).filter(([k, v]) => k !== 'total' && v)
          .map(([k, v]) => k + ' ' + v).join(', ');
        const after = el('span', { class: c.records_after_their_drain ? 'bad' : '', text: num(c.records_after_their_drain) });
        return [String(d.dev), num(c.fits), num(c.stale_fits), num(c.refused_fits),
          (c.producer_gens || []).join(' ') || '–', num(c.records_converted),
          c.bound_ns ? fmtNs(c.bound_ns.median) : '–', c.bound_ns ? fmtNs(c.bound_ns.max) : '–',
          c.drain_delay_ns ? fmtNs(c.drain_delay_ns.median) : '–',
          c.drain_delay_ns ? fmtNs(c.drain_delay_ns.max) : '–',
          num(nc.total) + (ncText ? ' (' + ncText + ')' : ''), after];
      })));
    }

    s.append(el('h3', { text: 'Firmware cores: records and losses by reason' }));
    const reasons = [];
    for (const d of devices) for (const c of d.cores)
      for (const r of Object.keys(c.lost)) if (r !== 'total' && !reasons.includes(r)) reasons.push(r);
    const rows = [];
    for (const d of devices) for (const c of d.cores) {
      const check = el('span', { class: c.seq_check === 'agrees' ? 'good' : 'bad', text: c.seq_check });
      if (c.seq_check !== 'agrees')
        check.title = c.seq_gaps_without_hmb_lost + ' missing without hmb_lost, ' +
          c.hmb_lost_not_in_seq + ' counted by hmb_lost but not missing';
      const top = Object.entries(c.events).sort((a, b) => b[1] - a[1]).slice(0, 4)
        .map(([n, k]) => n + ' ' + k).join(', ');
      rows.push(['dev ' + d.dev + ' core ' + c.core, num(c.records),
        c.first_seq === null ? '–' : c.first_seq + '..' + c.last_seq,
        (c.producer_gens || []).join(' ') || '–',
        el('span', { class: c.lost.total ? 'bad' : '', text: num(c.lost.total) }),
        ...reasons.map((r) => num(c.lost[r] || 0)), check, top]);
    }
    const t = table(['core', 'records', 'seq', 'producer_gens', 'lost', ...reasons.map((r) => 'lost: ' + r),
      'seq check', 'most frequent events'], rows, 'cores');
    for (const td of t.querySelectorAll('tbody td:last-child')) td.className = 'l';
    s.append(t);
  }

  // ---- log-scale histograms
  // Log2 buckets as stat's (bucket 0: the value 0; bucket k: [2^(k-1), 2^k)),
  // each the same width: the x axis is log2 of the value.
  const bucketOf = (v) => v < 1 ? 0 : Math.floor(Math.log2(v)) + 1;
  function histChart(o) {
    const W = o.width || 360, H = 160, L = 44, R = 12, T = 22, B = 36;
    const buckets = o.buckets || [];
    const box = el('div', { class: 'chart hist-chart', 'data-name': o.name });
    box.append(el('div', { class: 'title', text: o.title }));
    if (o.sub) box.append(el('div', { class: 'sub', text: o.sub }));
    const s = sv('svg', { class: 'hist', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img',
      'aria-label': o.title });
    box.append(s);
    if (!buckets.length) { s.append(sv('text', { x: L, y: H / 2 }, 'no values')); return box; }
    const idx = buckets.map((b) => bucketOf(b.low));
    const first = Math.min(...idx), last = Math.max(...idx);
    const n = last - first + 1, bw = (W - L - R) / n;
    const peak = Math.max(...buckets.map((b) => b.count));
    const y = (c) => T + (H - T - B) * (1 - c / peak);
    for (const f of [0, 0.5, 1]) {
      s.append(sv('line', { class: 'gridline', x1: L, x2: W - R, y1: y(peak * f), y2: y(peak * f) }));
      s.append(sv('text', { x: L - 4, y: y(peak * f) + 4, 'text-anchor': 'end' }, fmtTicks(Math.round(peak * f))));
    }
    buckets.forEach((b, i) => {
      const x = L + (idx[i] - first) * bw;
      const r = sv('rect', { class: 'bar ' + (o.cls || 'phase-host'), x: x + 1, y: y(b.count),
        width: Math.max(bw - 2, 1), height: H - B - y(b.count), 'data-count': b.count, 'data-low': b.low });
      tip(r, '[' + fmtUnit(b.low, o.unit) + ', ' + (b.high === null ? '∞' : fmtUnit(b.high, o.unit)) + '): ' + num(b.count));
      s.append(r);
    });
    s.append(sv('line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
    // A label every `step` buckets, at least 72 px apart.
    const step = Math.max(1, Math.ceil(72 / bw));
    for (let k = first; k <= last + 1; k += step) {
      const x = L + (k - first) * bw;
      const low = k === 0 ? 0 : 2 ** (k - 1);
      const anchor = k === first ? 'start' : k === last + 1 ? 'end' : 'middle';
      s.append(sv('line', { class: 'axis', x1: x, x2: x, y1: H - B, y2: H - B + 4 }));
      s.append(sv('text', { x, y: H - B + 15, 'text-anchor': anchor }, o.unit === 'ns' ? fmtNs(low) : fmtTicks(low)));
    }
    // Percentiles where they fall on the log axis; marks that fall
    // together share one label ("p50 p90").
    const marks = (o.marks || []).filter((m) => m.value !== undefined && m.value !== null);
    const labels = [];
    for (const m of marks) {
      const v = Math.max(m.value, 0);
      const k = bucketOf(v);
      const frac = v < 1 ? 0.5 : Math.log2(v) - (k - 1);
      const x = L + (k - first + frac) * bw;
      const line = sv('line', { class: 'pct ' + m.label, x1: x, x2: x, y1: T - 2, y2: H - B, 'data-value': v });
      tip(line, m.label + ' ' + fmtUnit(v, o.unit));
      s.append(line);
      const near = labels.find((l) => Math.abs(l.x - x) < 22);
      if (near) near.text += ' ' + m.label;
      else labels.push({ x, text: m.label, cls: m.label });
    }
    labels.forEach((l, i) => {
      const right = l.x > W - R - 60;
      s.append(sv('text', { class: 'pctlabel ' + l.cls, x: right ? l.x - 3 : l.x + 3, y: T - 6 + (i % 2) * 9,
        'text-anchor': right ? 'end' : 'start' }, l.text));
    });
    return box;
  }
  const pctMarks = (p, suffix) => ['p50', 'p90', 'p99'].map((k) => ({ label: k, value: p[k + (suffix || '')] }));
  function pctSub(p, unit, suffix) {
    suffix = suffix || '';
    return 'p50 ' + fmtUnit(p['p50' + suffix], unit) + ' · p90 ' + fmtUnit(p['p90' + suffix], unit) +
      ' · p99 ' + fmtUnit(p['p99' + suffix], unit) + ' · max ' + fmtUnit(p['max' + suffix], unit);
  }

  // ---- NVMe commands: the join's split per opcode
  const PHASES = [
    { cls: 'phase-host', label: 'host submit → fw fetch (host, queue)' },
    { cls: 'phase-fw', label: 'fw fetch → fw complete (firmware, NAND)' },
    { cls: 'phase-back', label: 'fw complete → host completion (host)' },
    { cls: 'phase-total', label: 'host total' }];
  function legend() {
    const l = el('div', { class: 'legend' });
    for (const p of PHASES.slice(0, 3)) l.append(el('i', { class: p.cls }), p.label);
    return l;
  }
  function renderCommands() {
    const s = sectionOf('commands');
    const c = data.commands;
    if (!c) { s.append(el('p', { class: 'note', text: 'Left out (--no-commands).' })); return; }
    if (!c.host_events_recorded) {
      s.append(el('p', { class: 'note', text: 'No nvme:nvme_setup_cmd / nvme:nvme_complete_rq events in the capture: ' +
        'record them with `hmbtrace-cmd record` (default) to see each host command joined to its firmware records.' }));
      return;
    }
    s.append(el('div', { class: 'tiles' }, tile(num(c.host_commands), 'host commands'), tile(num(c.joined), 'joined'),
      tile(num(c.partial), 'partial'), tile(num(c.unjoined), 'not joined'), tile(num(c.matched_by_order), 'records matched by order'),
      tile(num(c.fw_command_records), 'firmware command records')));
    const why = Object.entries(c.host_unmatched).map(([k, v]) => k + ': ' + v);
    if (why.length) s.append(el('p', { class: 'note', text: 'Host commands not fully joined — ' + why.join(', ') }));
    const fwWhy = Object.entries(c.fw_unmatched).map(([k, v]) => k + ': ' + v);
    if (fwWhy.length) s.append(el('p', { class: 'note', text: 'Firmware command records not joined — ' + fwWhy.join(', ') }));
    s.append(el('p', { class: 'note', text: 'Each joined command split at its firmware fetch and completion ' +
      '(converted to host time). NAND operations name no command: their latencies are under "Latency per event" (nand_*). ' +
      'Percentiles are nearest-rank over the joined commands, as hmbtrace-cmd stat prints them.' }));
    s.append(legend());
    for (const op of data.opcode_latency) {
      const card = el('div', { class: 'opcode', 'data-opcode': op.opcode });
      card.append(el('h3', { text: op.opcode + ' — ' + num(op.count) + ' joined commands' }));
      // The median of each phase, end to end.
      const med = op.phases.slice(0, 3).map((p) => p.p50_ns || 0);
      const sum = med.reduce((a, b) => a + b, 0) || 1;
      const W = 700, bar = sv('svg', { class: 'splitbar-chart', width: W, height: 34, viewBox: `0 0 ${W} 34` });
      let x = 0;
      med.forEach((m, i) => {
        const w = (W - 2) * m / sum;
        const r = sv('rect', { class: 'bar ' + PHASES[i].cls, x: x + 1, y: 2, width: Math.max(w, 0.5), height: 16 });
        tip(r, PHASES[i].label + ': p50 ' + fmtNs(m));
        bar.append(r);
        if (w > 60) bar.append(sv('text', { x: x + 4, y: 30 }, fmtNs(m)));
        x += w;
      });
      card.append(el('div', { class: 'note', text: 'medians: ' + PHASES.slice(0, 3).map((p, i) =>
        p.label.split(' (')[0] + ' ' + fmtNs(med[i])).join(' · ') }), bar);
      const g = el('div', { class: 'grid' });
      op.phases.forEach((p, i) => g.append(histChart({
        name: op.opcode + ': ' + p.phase, title: PHASES[i].label, sub: pctSub(p, 'ns', '_ns'), unit: 'ns',
        buckets: p.buckets, marks: pctMarks(p, '_ns'), cls: PHASES[i].cls, width: 320 })));
      card.append(g);
      s.append(card);
    }
  }

  // ---- latency per event (all cores of a device together)
  function renderLatency() {
    const s = sectionOf('latency');
    const list = data.event_latency || [];
    if (!list.length) { s.append(el('p', { class: 'note', text: 'No event with a latency field or a begin/end pair.' })); return; }
    s.append(el('p', { class: 'note', text: 'Every event with a latency field (event.field) and every begin→end pair of ' +
      'the dictionary, all cores of a device together; p50/p90/p99 marked.' }));
    for (const dev of [...new Set(list.map((l) => l.dev))]) {
      if (devices.length > 1) s.append(el('h3', { text: 'dev ' + dev }));
      const g = el('div', { class: 'grid' });
      for (const l of list.filter((x) => x.dev === dev))
        g.append(histChart({ name: l.name, title: l.name + (l.name.startsWith('nand') ? '  (NAND)' : ''),
          sub: num(l.count) + ' values · ' + pctSub(l, l.unit), unit: l.unit, buckets: l.buckets,
          marks: pctMarks(l), cls: l.name.startsWith('nand') ? 'phase-fw' : 'phase-host' }));
      s.append(g);
    }
  }

  // ---- activity per core over host time, losses, resets, markers
  function renderActivity() {
    const s = sectionOf('activity');
    const rows = [];
    for (const d of devices) for (const c of d.cores) if (c.activity) rows.push({ dev: d.dev, core: c.core, a: c.activity });
    const tl = data.timeline || { markers: [], losses: [], states: [] };
    if (!rows.length || stat.first_ts_ns === undefined) { s.append(el('p', { class: 'note', text: 'No records.' })); return; }
    const begin = rows[0].a.begin_ns, binNs = rows[0].a.bin_ns, bins = rows[0].a.records.length;
    const end = begin + binNs * bins;
    const W = 1100, L = 120, R = 16, rowH = 46, markerH = 70, T = 8, B = 26;
    const H = T + rows.length * rowH + markerH + B;
    const xOf = (ts) => L + (W - L - R) * Math.min(Math.max((ts - begin) / (end - begin), 0), 1);
    s.append(el('p', { class: 'note', text: 'Records per ' + fmtNs(binNs) + ' of host time, each core scaled to the ' +
      'busiest slice of all; ▲ records lost (hmb_lost, at the time it was reported), dashed lines firmware state ' +
      'changes (a reset starts a new producer_gen); the bottom row is the trace_marker lines. Hover for details.' }));
    const svg = sv('svg', { class: 'activity', width: W, height: H, viewBox: `0 0 ${W} ${H}` });
    const peak = Math.max(1, ...rows.map((r) => Math.max(...r.a.records)));
    rows.forEach((r, i) => {
      const y0 = T + i * rowH;
      const g = sv('g', { class: 'core-row', 'data-dev': r.dev, 'data-core': r.core });
      g.append(sv('text', { x: L - 8, y: y0 + rowH / 2 + 4, 'text-anchor': 'end' }, 'dev ' + r.dev + ' core ' + r.core));
      g.append(sv('line', { class: 'gridline', x1: L, x2: W - R, y1: y0 + rowH - 4, y2: y0 + rowH - 4 }));
      const bw = (W - L - R) / bins;
      r.a.records.forEach((n, k) => {
        if (!n) return;
        const h = (rowH - 10) * n / peak;
        const rect = sv('rect', { class: 'act phase-host', x: L + k * bw + 0.5, y: y0 + rowH - 4 - h,
          width: Math.max(bw - 1, 0.5), height: h, 'data-count': n });
        tip(rect, hostTime(begin + k * binNs) + ' s: ' + num(n) + ' records');
        g.append(rect);
      });
      for (const l of tl.losses.filter((x) => x.dev === r.dev && x.core === r.core)) {
        const x = xOf(l.ts_ns), yb = y0 + rowH - 4;
        const m = sv('path', { class: 'loss', d: `M${x} ${yb - 12} l-5 10 h10 z` });
        tip(m, hostTime(l.ts_ns) + ' s: ' + num(l.count) + ' records lost (' + l.reason + ')');
        g.append(m);
      }
      svg.append(g);
    });
    const yM = T + rows.length * rowH;
    svg.append(sv('text', { x: L - 8, y: yM + 18, 'text-anchor': 'end' }, 'trace_marker'));
    tl.markers.forEach((m, i) => {
      const x = xOf(m.ts_ns);
      const g = sv('g', { class: 'marker-mark' });
      g.append(sv('line', { class: 'marker', x1: x, x2: x, y1: yM + 4, y2: yM + 24 }));
      const right = x > W - R - 160;
      g.append(sv('text', { class: 'markerlabel', x: right ? x - 3 : x + 3, y: yM + 36 + (i % 3) * 12,
        'text-anchor': right ? 'end' : 'start' }, m.text.length > 28 ? m.text.slice(0, 27) + '…' : m.text));
      tip(g, hostTime(m.ts_ns) + ' s: ' + m.text);
      svg.append(g);
    });
    for (const st of tl.states) {
      const x = xOf(st.ts_ns);
      const g = sv('g', { class: 'state-mark' });
      g.append(sv('line', { class: 'state', x1: x, x2: x, y1: T, y2: yM }));
      const right = x > W - R - 120;
      g.append(sv('text', { class: 'statelabel', x: right ? x - 3 : x + 3, y: T + 10,
        'text-anchor': right ? 'end' : 'start' }, st.state + ' gen ' + st.producer_gen));
      tip(g, hostTime(st.ts_ns) + ' s: dev ' + st.dev + ' ' + st.state + ', producer_gen ' + st.producer_gen);
      svg.append(g);
    }
    const yA = H - B;
    svg.append(sv('line', { class: 'axis', x1: L, x2: W - R, y1: yA, y2: yA }));
    for (let k = 0; k <= 5; k++) {
      const ts = begin + (end - begin) * k / 5, x = xOf(ts);
      svg.append(sv('line', { class: 'axis', x1: x, x2: x, y1: yA, y2: yA + 4 }));
      svg.append(sv('text', { x, y: yA + 16, 'text-anchor': k === 0 ? 'start' : k === 5 ? 'end' : 'middle' },
        k === 0 ? hostTime(ts) + ' s' : '+' + fmtNs(ts - begin)));
    }
    s.append(svg);
    const left = [];
    if (tl.markers_total > tl.markers.length) left.push((tl.markers_total - tl.markers.length) + ' markers');
    if (tl.losses_total > tl.losses.length) left.push((tl.losses_total - tl.losses.length) + ' hmb_lost events');
    if (tl.states_total > tl.states.length) left.push((tl.states_total - tl.states.length) + ' state changes');
    if (left.length) s.append(el('p', { class: 'note', text: 'Not drawn (the report keeps the first of each): ' + left.join(', ') }));
  }

  // ---- the slowest host commands
  const COLS = [
    { key: 'setup_ns', label: 'host time', get: (c) => c.setup_ns, show: (c) => hostTime(c.setup_ns) },
    { key: 'opcode', label: 'opcode', get: (c) => c.opcode, show: (c) => c.opcode, left: true },
    { key: 'qid', label: 'qid', get: (c) => c.qid, show: (c) => String(c.qid) },
    { key: 'cid', label: 'cid', get: (c) => c.cid, show: (c) => String(c.cid) },
    { key: 'core', label: 'core', get: (c) => c.core === null ? -1 : c.core, show: (c) => c.core === null ? '–' : String(c.core) },
    { key: 'total_ns', label: 'host total', get: (c) => c.total_ns, show: (c) => fmtNs(c.total_ns) },
    { key: 'submit', label: 'submit → fetch', get: (c) => c.split ? c.split[0] : -1, show: (c) => c.split ? fmtNs(c.split[0]) : '–' },
    { key: 'firmware', label: 'fetch → complete', get: (c) => c.split ? c.split[1] : -1, show: (c) => c.split ? fmtNs(c.split[1]) : '–' },
    { key: 'back', label: 'complete → host', get: (c) => c.split ? c.split[2] : -1, show: (c) => c.split ? fmtNs(c.split[2]) : '–' },
  ];
  function renderSlowest() {
    const s = sectionOf('slowest');
    const all = data.slowest || [];
    if (!data.commands || !data.commands.host_events_recorded) {
      s.append(el('p', { class: 'note', text: 'No host NVMe commands in the capture.' }));
      return;
    }
    const completed = data.commands.host_commands;
    s.append(el('p', { class: 'note', text: 'The ' + num(all.length) + ' slowest completed host commands (at most ' +
      num(data.slowest_max) + ') of ' + num(completed) + ', by host total (nvme_setup_cmd → nvme_complete_rq). ' +
      'Click a row for its story (hmbtrace-cmd report --cmd QID:CID): the host events and the firmware records of its core ' +
      'meanwhile, * marking the ones joined to it (at most ' + data.story_records_max + ' records). Click a header to sort.' }));
    const state = { key: 'total_ns', dir: -1, page: 0, per: 25, open: new Set() };
    const uniq = (f) => [...new Set(all.map(f).filter((v) => v !== null))].sort((a, b) => a < b ? -1 : a > b ? 1 : 0);
    const select = (id, label, values) => {
      const sel = el('select', { id }, el('option', { value: '', text: 'all' }), ...values.map((v) => el('option', { value: String(v), text: String(v) })));
      return [el('label', { for: id }, label, sel), sel];
    };
    const [lOp, fOp] = select('f-opcode', 'opcode', uniq((c) => c.opcode));
    const [lQ, fQ] = select('f-queue', 'queue (qid)', uniq((c) => c.qid));
    const [lC, fC] = select('f-core', 'firmware core', uniq((c) => c.core));
    const fMin = el('input', { id: 'f-min', type: 'number', min: '0', step: 'any', placeholder: 'µs' });
    const fMax = el('input', { id: 'f-max', type: 'number', min: '0', step: 'any', placeholder: 'µs' });
    const fPer = el('select', { id: 'per-page' }, ...[10, 25, 50, 100].map((n) => el('option', { value: n, text: n, selected: n === 25 ? '' : null })));
    s.append(el('div', { class: 'controls' }, lOp, lQ, lC,
      el('label', { for: 'f-min' }, 'host total ≥ (µs)', fMin), el('label', { for: 'f-max' }, 'host total ≤ (µs)', fMax),
      el('label', { for: 'per-page' }, 'rows per page', fPer)));
    s.append(legend());
    const tbl = el('table', { id: 'slowest-table' });
    const headRow = el('tr', {}, el('th', { class: 'l', text: '' }), ...COLS.map((c) => el('th', { class: c.left ? 'l' : null, 'data-key': c.key, text: c.label })),
      el('th', { class: 'l', text: 'split' }), el('th', { class: 'l', text: 'status / join' }));
    tbl.append(el('thead', {}, headRow));
    const body = el('tbody');
    tbl.append(body);
    s.append(el('div', { class: 'tablewrap' }, tbl));
    const pager = el('div', { class: 'pager' });
    const prev = el('button', { id: 'page-prev', type: 'button', text: '‹ previous' });
    const next = el('button', { id: 'page-next', type: 'button', text: 'next ›' });
    const info = el('span', { id: 'page-info' });
    pager.append(prev, info, next);
    s.append(pager);

    function filtered() {
      const min = fMin.value === '' ? null : Number(fMin.value) * 1000;
      const max = fMax.value === '' ? null : Number(fMax.value) * 1000;
      return all.filter((c) => (fOp.value === '' || c.opcode === fOp.value) &&
        (fQ.value === '' || String(c.qid) === fQ.value) &&
        (fC.value === '' || String(c.core) === fC.value) &&
        (min === null || c.total_ns >= min) && (max === null || c.total_ns <= max));
    }
    function splitBar(c) {
      const b = el('span', { class: 'splitbar' });
      if (!c.split) return b;
      const sum = c.split[0] + c.split[1] + c.split[2] || 1;
      c.split.forEach((v, i) => b.append(el('span', { class: PHASES[i].cls, style: 'width:' + (100 * v / sum).toFixed(2) + '%',
        title: PHASES[i].label + ': ' + fmtNs(v) })));
      return b;
    }
    function draw() {
      const col = COLS.find((c) => c.key === state.key);
      const rows = filtered().sort((a, b) => {
        const x = col.get(a), y = col.get(b);
        const o = x < y ? -1 : x > y ? 1 : 0;
        return o * state.dir || (b.total_ns - a.total_ns);
      });
      const pages = Math.max(1, Math.ceil(rows.length / state.per));
      state.page = Math.min(state.page, pages - 1);
      const from = state.page * state.per, shown = rows.slice(from, from + state.per);
      body.textContent = '';
      for (const c of shown) {
        const id = c.qid + ':' + c.cid + '@' + c.setup_ns;
        const open = state.open.has(id);
        const status = c.status ? 'status 0x' + c.status.toString(16) : 'ok';
        const tr = el('tr', { class: 'cmd', 'data-id': id, 'data-total': c.total_ns },
          el('td', { class: 'l', text: open ? '▾' : '▸' }),
          ...COLS.map((k) => el('td', { class: k.left ? 'l' : null, text: k.show(c) })),
          el('td', { class: 'l' }, splitBar(c)),
          el('td', { class: 'l' + (c.why ? ' warn' : ''), text: c.why ? (c.status ? status + '; ' : '') + c.why : status }));
        tr.addEventListener('click', () => { if (open) state.open.delete(id); else state.open.add(id); draw(); });
        body.append(tr);
        if (open)
          body.append(el('tr', { class: 'story' }, el('td', { colspan: COLS.length + 3 },
            el('pre', { text: c.story || '(no story)' }))));
      }
      info.textContent = rows.length ? (from + 1) + '–' + (from + shown.length) + ' of ' + rows.length +
        (rows.length !== all.length ? ' (filtered from ' + all.length + ')' : '') + ' · page ' + (state.page + 1) + ' of ' + pages
        : 'no command matches the filters (of ' + all.length + ')';
      prev.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
      for (const th of headRow.querySelectorAll('th[data-key]'))
        if (th.dataset.key === state.key) th.setAttribute('aria-sort', state.dir > 0 ? 'ascending' : 'descending');
        else th.removeAttribute('aria-sort');
    }
    for (const th of headRow.querySelectorAll('th[data-key]'))
      th.addEventListener('click', () => {
        if (state.key === th.dataset.key) state.dir = -state.dir;
        else { state.key = th.dataset.key; state.dir = th.dataset.key === 'opcode' ? 1 : -1; }
        state.page = 0;
        draw();
      });
    for (const f of [fOp, fQ, fC, fMin, fMax])
      f.addEventListener(f.tagName === 'SELECT' ? 'change' : 'input', () => { state.page = 0; draw(); });
    fPer.addEventListener('change', () => { state.per = Number(fPer.value); state.page = 0; draw(); });
    prev.addEventListener('click', () => { state.page--; draw(); });
    next.addEventListener('click', () => { state.page++; draw(); });
    draw();
  }

  // ---- command causes (ABI 1.2 attribution): the tail's stage bars
  // Colors by stage, or by cause for a wait or rework: a fixed palette in
  // order of first use, so one page never gives two keys one color.
  const CAUSE_PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1',
    '#ff9da7', '#9c755f', '#bab0ac', '#1b9e77', '#d95f02', '#7570b3', '#e7298a'];
  function renderCauses() {
    const s = sectionOf('causes');
    const cc = stat.command_causes;
    if (!cc) {
      s.append(el('p', { class: 'note', text: 'The firmware\'s dictionary has no command attribution (ABI 1.2): ' +
        'its records do not say which command they served.' }));
      return;
    }
    const colors = new Map();
    const colorOf = (key) => {
      if (!colors.has(key)) colors.set(key, CAUSE_PALETTE[colors.size % CAUSE_PALETTE.length]);
      return colors.get(key);
    };
    const keyOf = (st) => st.cause ? st.name + ' (' + st.cause + ')' : st.name;
    s.append(el('p', { class: 'note', text: 'Per opcode, the commands above its p99 firmware time (fetch → complete), ' +
      'slowest first, at most ' + data.cause_bars_max + ' each: a bar of its stages on the scale of the slowest, ' +
      'a wait or rework colored by its cause. Click a bar for its path: every stage, when, how long, and why.' }));
    const legendBox = el('div', { class: 'legend' });
    s.append(legendBox);
    for (const op of cc.opcodes) {
      const list = (op.tail && op.tail.slowest) || [];
      if (!list.length) continue;
      const dev = devices.find((d) => d.dev === op.device);
      const hz = dev && dev.clock_hz ? dev.clock_hz : 0;
      const dur = (t) => hz ? fmtNs(t * 1e9 / hz) : fmtTicks(t) + ' ticks';
      const shown = list.slice(0, data.cause_bars_max);
      const box = el('div', { class: 'opcode cause-opcode', 'data-opcode': op.opcode, 'data-device': op.device });
      box.append(el('h3', { text: 'device ' + op.device + ' ' + op.opcode + ': ' + num(shown.length) + ' of the ' +
        num(op.tail.commands) + ' commands above p99 (' + num(op.commands) + ' commands)' +
        (op.tail.slowest_truncated ? '; ' + num(op.tail.slowest_truncated) + ' more not listed' : '') }));
      const scale = shown[0].latency || 1;
      for (const c of shown) {
        const row = el('div', { class: 'cause-row', 'data-qid': c.qid, 'data-cid': c.cid, 'data-fetch': c.fetch });
        const bar = el('span', { class: 'stagebar', style: 'width:' + (60 * c.latency / scale).toFixed(2) + '%' });
        for (const st of c.stages) {
          const from = Math.max(0, st.begin - c.fetch), len = Math.max(0, st.end - st.begin);
          bar.append(el('span', { class: 'stage', 'data-name': st.name, 'data-cause': st.cause,
            style: 'left:' + (100 * from / (c.latency || 1)).toFixed(3) + '%;width:' +
              (100 * len / (c.latency || 1)).toFixed(3) + '%;background:' + colorOf(keyOf(st)),
            title: keyOf(st) + ': ' + dur(len) }));
        }
        row.append(el('span', { class: 'cause-label', text: 'qid ' + c.qid + ' cid ' + c.cid + ' · ' + dur(c.latency) +
          ' · ' + c.main_cause }), bar);
        const path = el('pre', { class: 'cause-path', hidden: '' });
        path.textContent = causePath(c, dur);
        row.addEventListener('click', () => { path.hidden = !path.hidden; });
        box.append(row, path);
      }
      s.append(box);
    }
    for (const [key, color] of colors)
      legendBox.append(el('i', { style: 'background:' + color }), key);
  }
  // A command's path as text: the stages in the order they began.
  function causePath(c, dur) {
    const lines = ['qid ' + c.qid + ' cid ' + c.cid + ': fetch at ' + c.fetch + ' ticks, firmware time ' + dur(c.latency) +
      '; main cause ' + c.main_cause + ' (longest delay: ' + c.longest_delay + ')'];
    for (const st of c.stages) {
      lines.push('  +' + dur(Math.max(0, st.begin - c.fetch)).padEnd(10) + ' ' + st.name.padEnd(20) + ' ' +
        dur(Math.max(0, st.end - st.begin)).padStart(10) + (st.cause ? '  waited: ' + st.cause : ''));
    }
    return lines.join('\n');
  }

  for (const [name, f] of [['summary', renderSummary], ['commands', renderCommands], ['latency', renderLatency],
    ['activity', renderActivity], ['slowest', renderSlowest], ['causes', renderCauses]]) {
    try { f(); } catch (e) {
      sectionOf(name).append(el('p', { class: 'bad', text: 'this section failed to draw: ' + e }));
      throw e;
    }
  }
  document.body.dataset.ready = '1';
})();
