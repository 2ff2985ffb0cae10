#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# markers, guest side: while firmware records flow and trace-cmd records the
# hmb instance, write "HMBMARK n=N" to the instance's trace_marker, reading
# the status 'delivered' counters right before and right after each write
# with the shell builtin read, no fork, to keep the window small (the status read takes each drain's lock, so a counted record has already
# been emitted). /mnt/marker-log.txt: "N before=D0 D1.. after=D0 D1..".
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
rm -f /mnt/marker-log.txt
# shellcheck disable=SC2016 # expanded by the traced shell
capture markers '
	n=0
	while [ ! -e /mnt/truth.json ] && [ $n -lt 200 ]; do
		n=$((n + 1))
		read -r b <"$S/delivered"
		printf "HMBMARK n=%d" "$n" >"$I/trace_marker"
		read -r a <"$S/delivered"
		echo "$n before=$b after=$a" >>/mnt/marker-log.txt
		sleep 0.05
	done
	wait_truth; sleep 2'
collect markers
wc -l /mnt/marker-log.txt
finish
