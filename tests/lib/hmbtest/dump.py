# SPDX-License-Identifier: GPL-2.0-only
"""A crash dump of an HMB trace area (include/hmb_trace_dump_abi.h), read
for the tests that check what hmb_trace.ko hands to devcoredump. Every
length and count is bounded by the bytes held: a short or corrupt dump is
a DumpError naming the offset, never an IndexError.

    python3 -m hmbtest.dump FILE     prints the header and the cores
"""
import struct
import sys

MAGIC = b"HMBTDUMP"
HEADER = struct.Struct("<8sIIQIIIIHHIQQ8QQQ20sI32s")
SECTION = struct.Struct("<IIQ")
CLOCK = struct.Struct("<IIIIQQQQQQQIIII")
CORE = struct.Struct("<HHIQQQQQ4Q")
LOST = struct.Struct("<HBBIQQ")
RECORD = struct.Struct("<HHHHQQ")
CMD = struct.Struct("<HHB3xIIQQ")
SEC_META, SEC_CORES, SEC_DICT, SEC_CLOCK, SEC_CORE_STATE, SEC_LOST, \
    SEC_RECORDS, SEC_INFLIGHT = range(1, 9)
REASONS = {0: "disabling", 1: "removed", 2: "fw_restart", 3: "fw_freeze"}
assert HEADER.size == 200 and CLOCK.size == 88 and CORE.size == 80
assert LOST.size == 24 and RECORD.size == 24 and CMD.size == 32


class DumpError(Exception):
    pass


def _align8(n):
    return (n + 7) & ~7


def parse(data):
    """{"header": {...}, "sections": {type: (count, bytes)}, "cores":
    [{...}], "records": [{...}], "lost": [{...}]}."""
    if len(data) < HEADER.size:
        raise DumpError(f"{len(data)} bytes: shorter than the header "
                        f"({HEADER.size})")
    f = HEADER.unpack_from(data, 0)
    if f[0] != MAGIC:
        raise DumpError(f"magic {f[0]!r}, not {MAGIC!r}: not an HMB trace "
                        "crash dump")
    h = {"version": f[1], "header_len": f[2], "total_len": f[3],
         "nr_sections": f[4], "reason": f[5], "flags": f[6],
         "producer_gen": f[7], "nr_cores": f[8], "area_index": f[9],
         "clock_hz": f[11], "record_bound": f[12],
         "taken_ns": list(f[13:21]), "taken_real_ns": f[21],
         "copy_ns": f[22], "build_id": f[23].hex(),
         "name": f[25].rstrip(b"\0").decode(errors="replace")}
    if h["version"] != 1:
        raise DumpError(f"version {h['version']}: this reader knows 1")
    if h["total_len"] > len(data) or h["header_len"] < HEADER.size or \
            h["header_len"] > h["total_len"]:
        raise DumpError(f"header: total_len {h['total_len']}, header_len "
                        f"{h['header_len']}, but {len(data)} bytes held")
    end = h["total_len"]
    at = h["header_len"]
    secs = {}
    for i in range(h["nr_sections"]):
        if end - at < SECTION.size:
            raise DumpError(f"section {i} at offset {at}: past the end "
                            f"({end})")
        typ, count, n = SECTION.unpack_from(data, at)
        at += SECTION.size
        if n > end - at:
            raise DumpError(f"section {i} (type {typ}) at offset "
                            f"{at - SECTION.size}: {n} bytes, {end - at} "
                            "left")
        secs[typ] = (count, data[at:at + n], at)
        at += _align8(n)
    d = {"header": h, "sections": secs, "cores": [], "records": [],
         "lost": [], "inflight": [], "clocks": []}
    count, body, off = secs.get(SEC_CLOCK, (0, b"", 0))
    if count * CLOCK.size > len(body):
        raise DumpError(f"CLOCK at offset {off}: {count} fits in "
                        f"{len(body)} bytes")
    for i in range(count):
        c = CLOCK.unpack_from(body, i * CLOCK.size)
        d["clocks"].append({"clock_id": c[0], "flags": c[1], "gen": c[2],
                            "tick_ref": c[4], "host_ref": c[5],
                            "mult": c[6], "slope_err": c[7],
                            "tick_first": c[8], "tick_last": c[9],
                            "half_gap": c[10], "err_ns": c[11],
                            "rtt_min_ns": c[12], "samples": c[13]})
    count, body, off = secs.get(SEC_INFLIGHT, (0, b"", 0))
    if count * CMD.size > len(body):
        raise DumpError(f"INFLIGHT at offset {off}: {count} commands in "
                        f"{len(body)} bytes")
    for i in range(count):
        c = CMD.unpack_from(body, i * CMD.size)
        d["inflight"].append({"qid": c[0], "cid": c[1], "opcode": c[2],
                              "nsid": c[3], "nlb": c[4], "slba": c[5],
                              "submit_ns": c[6]})
    count, body, off = secs.get(SEC_CORE_STATE, (0, b"", 0))
    if count * CORE.size > len(body):
        raise DumpError(f"CORE_STATE at offset {off}: {count} cores in "
                        f"{len(body)} bytes")
    for i in range(count):
        c = CORE.unpack_from(body, i * CORE.size)
        d["cores"].append({"core": c[0], "start_seq": c[3],
                           "end_seq": c[4], "records": c[5],
                           "skipped": c[6], "delivered": c[7],
                           "lost": list(c[8:12])})
    count, body, off = secs.get(SEC_LOST, (0, b"", 0))
    if count * LOST.size > len(body):
        raise DumpError(f"LOST at offset {off}: {count} entries in "
                        f"{len(body)} bytes")
    for i in range(count):
        c = LOST.unpack_from(body, i * LOST.size)
        d["lost"].append({"core": c[0], "reason": c[1], "count": c[4],
                          "at_seq": c[5]})
    count, body, off = secs.get(SEC_RECORDS, (0, b"", 0))
    p = 0
    for i in range(count):
        if len(body) - p < RECORD.size:
            raise DumpError(f"record {i} at offset {off + p}: past the "
                            "section's end")
        c = RECORD.unpack_from(body, p)
        size = RECORD.size + _align8(c[2])
        if size > len(body) - p:
            raise DumpError(f"record {i} at offset {off + p}: payload of "
                            f"{c[2]} bytes past the section's end")
        d["records"].append({"core": c[0], "event_id": c[1], "len": c[2],
                             "seq": c[4], "ts": c[5],
                             "payload": body[p + RECORD.size:
                                             p + RECORD.size + c[2]]})
        p += size
    return d


def identity_errors(d):
    """Per core: end_seq - start_seq == records + skipped + lost, the
    records' sequence numbers in [start_seq, end_seq), increasing, and as
    many as the core says. [] when all hold."""
    errs = []
    by_core = {}
    for r in d["records"]:
        by_core.setdefault(r["core"], []).append(r["seq"])
    for c in d["cores"]:
        k = c["core"]
        span = c["end_seq"] - c["start_seq"]
        acc = c["records"] + c["skipped"] + sum(c["lost"])
        if span != acc:
            errs.append(f"core {k}: end_seq - start_seq = {span}, records "
                        f"{c['records']} + skipped {c['skipped']} + lost "
                        f"{sum(c['lost'])} = {acc}")
        seqs = by_core.get(k, [])
        if len(seqs) != c["records"]:
            errs.append(f"core {k}: {len(seqs)} records in RECORDS, the "
                        f"core says {c['records']}")
        if any(b <= a for a, b in zip(seqs, seqs[1:])):
            errs.append(f"core {k}: sequence numbers not increasing")
        if seqs and (seqs[0] < c["start_seq"] or seqs[-1] >= c["end_seq"]):
            errs.append(f"core {k}: records {seqs[0]}..{seqs[-1]} outside "
                        f"[{c['start_seq']}, {c['end_seq']})")
    return errs


def describe(d):
    h = d["header"]
    lines = [f"{h['name']}: crash dump ({REASONS.get(h['reason'], h['reason'])}), "
             f"generation {h['producer_gen']}, {h['nr_cores']} cores, "
             f"{h['total_len']} bytes, copied in {h['copy_ns']} ns, "
             f"flags {h['flags']:#x}, {len(d['records'])} records, "
             f"{len(d['inflight'])} commands in flight"]
    for c in d["cores"]:
        lines.append(f"  core {c['core']}: seq {c['start_seq']}..{c['end_seq']} "
                     f"records {c['records']} skipped {c['skipped']} lost "
                     f"{c['lost']} delivered {c['delivered']}")
    for c in d["inflight"]:
        lines.append(f"  in flight: qid {c['qid']} cid {c['cid']:#x} opcode "
                     f"{c['opcode']:#04x} nsid {c['nsid']} slba {c['slba']} "
                     f"nlb {c['nlb']} submitted {c['submit_ns']} ns (mono)")
    return "\n".join(lines)


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(argv[1], "rb") as fh:
            d = parse(fh.read())
    except (OSError, DumpError) as e:
        print(f"{argv[1]}: {e}", file=sys.stderr)
        return 1
    print(describe(d))
    errs = identity_errors(d)
    for e in errs:
        print(f"{argv[1]}: {e}", file=sys.stderr)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
