# SPDX-License-Identifier: GPL-2.0-only
"""What the e2e scenarios bring back from the guest, parsed: `trace-cmd
report -R -t -N` of a capture (or the text of instances/hmb/trace), the
status files of /sys/class/hmb_trace/<area>/, per-CPU ftrace stats; and the
per-core stream model of the hmb events."""
import re
from collections import defaultdict

from hmbtest.check import die

# "[001]  19.991495882: hmb_record: seq=0 ..." (trace-cmd report -R up to
# 3.2), "[001]-0x0  19.991495882: ..." (-R from trace-cmd 3.3: the raw
# latency flags) or "[001] .....  19.991496: hmb_record: dev=0 ..." (the
# trace file).
LINE_RE = re.compile(
    r"\[(\d+)\](?:-0x[0-9a-fA-F]+)?\s+(?:[^\s:]+\s+)?(\d+)\.(\d+):\s+([\w]+):\s?(.*)$")
FIELD_RE = re.compile(r"(\w+)=(ARRAY\[[^\]]*\]|\S*)")


class Event:
    __slots__ = ("idx", "cpu", "ts", "name", "f", "text", "lineno")

    def __init__(self, idx, cpu, ts, name, f, text, lineno):
        self.idx, self.cpu, self.ts, self.name = idx, cpu, ts, name
        self.f, self.text, self.lineno = f, text, lineno

    def __repr__(self):
        return f"line {self.lineno}: cpu{self.cpu} {self.ts} {self.name} {self.text[:120]}"


def parse_value(v):
    """A raw field's value: int (decimal or 0x), bytes (ARRAY[..]) or str."""
    if v.isascii() and v.isdigit():
        return int(v)
    if v.startswith("ARRAY["):
        body = v[6:-1].replace(",", " ").split()
        return bytes(int(x, 16) for x in body)
    if re.fullmatch(r"0x[0-9a-fA-F]+", v):
        return int(v, 16)
    return v


def ts_ns(sec, frac):
    """A report's "SECS.FRACTION" time stamp (the two strings) in ns."""
    return int(sec) * 1000000000 + int(frac.ljust(9, "0")[:9])


def parse_line(line):
    """(cpu, ts in ns, event name, the rest) of one event line, or None."""
    m = LINE_RE.search(line)
    if not m:
        return None
    cpu, sec, frac, name, rest = m.groups()
    return int(cpu), ts_ns(sec, frac), name, rest


def open_input(path, what):
    """PATH opened for reading, or exit status 2 naming WHAT it should be."""
    try:
        return open(path, errors="replace")
    except OSError as e:
        die(f"cannot read {what} {path}: {e}")


def parse_report(path, light=False):
    """Events in file order (trace-cmd merges CPUs by timestamp; each CPU's
    own order is kept), the fields of hmb_* events parsed. light: without
    hmb_dict events, payload bytes and the lines' text (the capture of a
    misbehaving device is large)."""
    events = []
    with open_input(path, "report") as fh:
        for lineno, line in enumerate(fh, 1):
            if light:
                if "hmb_dict:" in line:
                    continue
                cut = line.find(" payload=")
                if cut > 0:
                    line = line[:cut]
            parsed = parse_line(line)
            if parsed is None:
                continue
            cpu, ts, name, rest = parsed
            fields = {}
            if name.startswith("hmb_"):
                for k, v in FIELD_RE.findall(rest):
                    fields[k] = parse_value(v)
            events.append(Event(len(events), cpu, ts, name, fields,
                                "" if light else rest, lineno))
    return events


def parse_status(path):
    """The status files as {name: [int, ...] or str} ("name: value" lines)."""
    st = {}
    with open_input(path, "status") as fh:
        for line in fh:
            if ":" not in line:
                continue
            k, v = line.split(":", 1)
            v = v.strip()
            if re.fullmatch(r"\d+( \d+)*", v):
                st[k.strip()] = [int(x) for x in v.split()]
            else:
                st[k.strip()] = v
    return st


def status_scalar(st, key):
    v = st.get(key)
    if isinstance(v, list) and len(v) == 1:
        return v[0]
    return v


def parse_stats(path):
    """{cpu: {field: int}} from per_cpu stats dumps or trace-cmd --stat."""
    out = {}
    cur = None
    with open_input(path, "stats") as fh:
        for line in fh:
            m = re.match(r"\s*cpu:\s*(\d+)\s*$", line, re.I)
            if m:
                cur = out.setdefault(int(m.group(1)), {})
                continue
            m = re.match(r"\s*([a-z ]+):\s*(\d+)\s*$", line)
            if m and cur is not None:
                cur[m.group(1).strip()] = int(m.group(2))
    return out


# ---- stream model -----------------------------------------------------------

def is_reset(e):
    return e.name == "hmb_state" and e.f.get("state") in (1, "reset")


def core_streams(events, dev=None):
    """{core: [event]} of hmb_record/hmb_lost, each tagged with its life
    segment (number of hmb_state(reset) seen before it on its CPU)."""
    reset_count = defaultdict(int)
    seg = {}
    streams = defaultdict(list)
    for e in events:
        if is_reset(e):
            reset_count[e.cpu] += 1
        elif e.name in ("hmb_record", "hmb_lost"):
            if dev is not None and e.f.get("dev") != dev:
                continue
            seg[e.idx] = reset_count[e.cpu]
            streams[e.f["core"]].append(e)
    return streams, seg


def split_lives(stream, seg):
    out = defaultdict(list)
    for e in stream:
        out[seg[e.idx]].append(e)
    return out


def reset_events(events):
    return [e for e in events if is_reset(e)]


def records_of(events):
    return [e for e in events if e.name == "hmb_record"]
