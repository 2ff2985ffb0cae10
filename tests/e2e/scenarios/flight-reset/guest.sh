#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# flight-reset, guest side: the events stay off after insmod (nobody
# traces: the firmware ring is a flight recorder) while hmb-fwsim writes
# several rings' worth per core, resets and writes on; only then
# trace-cmd record -B hmb -e hmb: the old generation's tail and the new
# one's overwritten start come as hmb_lost, the reset as hmb_state.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
step "hmb-fwsim produces with the events off"
touch /mnt/ready
wait_truth
# The module polls the meta page every 100 ms while nobody traces.
sleep 0.5
dump_status /mnt/flight-off-status.txt
capture flight 'sleep 2'
collect flight
alive
finish
