#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# toggle: 60 enable/disable cycles of hmb_record at random 0-30 ms
# intervals while firmware records flow and a reader follows trace_pipe
# (each enable kicks every drain's timer, in whatever state it is). Checks:
# the guest runs to the end and stays up, records flow again after it, no
# WARN/BUG/Oops. Guards the kick against the drain's own timer and work.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

e2e_boot --cores 4 --rate 5000 --seed 23

e2e_check "guest alive after the toggling" hmbq_nonempty alive
e2e_finish
