#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# flight-reset: the flight recorder across a firmware reset. With the events
# off after insmod, hmb-fwsim writes 8000 records per core into rings of 8
# pages (about ten rings' worth), resets, and writes 2000 more; then the
# guest records with trace-cmd. Checks: nothing was consumed while nobody
# traced; the old generation's whole unread tail is charged, its last
# ring's worth to reset and the rest to overwritten, in hmb_lost events
# before one hmb_state(reset) on each CPU; the new generation's records and
# its overwritten start exact; the status counters equal the capture's,
# and delivered + lost == produced per core and generation (the truth).
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

e2e_boot --cores 4 --rate 20000 --count 10000 --reset-at 8000 --pages-per-core 8 --seed 23

e2e_check "guest still up" hmbq_nonempty alive
e2e_check_produced
e2e_check_capture flight
e2e_verify "flight recorder across a reset: tail charged, counters exact per generation" \
	flight-reset --truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/flight.txt" \
	--status "$HMBQ_SHARE/flight-status.txt" --off-status "$HMBQ_SHARE/flight-off-status.txt"
e2e_finish
