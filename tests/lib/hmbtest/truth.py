# SPDX-License-Identifier: GPL-2.0-only
"""hmb-fwsim's ground truth (--truth JSON): per life (producer generation)
and core the records produced, the geometry, the clock, the faults."""
import json
from collections import defaultdict

from hmbtest.check import die


def load_truth(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError) as e:
        die(f"cannot read truth {path}: {e}")


def truth_produced(truth):
    """[(producer_gen, {core: produced})] in life order."""
    lives = []
    for life in truth["lives"]:
        lives.append((life["producer_gen"],
                      {c["core"]: c["produced"] for c in life["cores"]}))
    return lives


def truth_total(truth):
    """{core: records produced over every life}."""
    tot = defaultdict(int)
    for _, cores in truth_produced(truth):
        for k, n in cores.items():
            tot[k] += n
    return dict(tot)
