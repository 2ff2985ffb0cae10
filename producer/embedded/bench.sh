#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The producer's cost on an embedded core (issue 35): builds the producer
# and the sample firmware (bench_fw.c) for Cortex-R5 (ARM and Thumb-2) and
# Cortex-M7 (Thumb-2) with arm-none-eabi-gcc -Os, runs each under QEMU with
# the instruction-counting plugin (hmb_insn_marks.c), and prints the
# producer's code size, each emit site's, and the instructions an emit
# executes for 8-, 32- and 128-byte payloads: on the fast path (the page
# is open) and amortised over a series that opens pages as it goes, each
# beside its goal.
#
# Cortex-R5 runs under qemu-arm (user mode); Cortex-M7 on qemu-system-arm
# -M mps2-an500 (Debian 12's qemu-arm aborts on M-profile CPUs). TCG counts
# instructions; it has no cycle model, so no cycles are given.
#
# Needs: scripts/install-deps.sh --embedded. qemu-plugin.h comes from
# Debian's QEMU source package: the reference SSD's unpacked source
# (mock/qemu-nvme/build.sh) if it is there, else `apt-get source
# --download-only`; the header is kept in ${XDG_CACHE_HOME:-~/.cache}/
# hmbtrace/qemu-plugin/<version>/.
# Output: $HMB_EMBEDDED_BUILD (default build/embedded): ELFs, the plugin,
# the markers' counts, nm listings, and results.txt (the table printed).
# Usage: producer/embedded/bench.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${HMB_EMBEDDED_BUILD:-$repo/build/embedded}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/hmbtrace

# Goals of issue 35.
goal_producer=2048	# bytes of producer code, Thumb-2
goal_emit8=60		# instructions, fixed 8-byte event, fast path

log() { echo "embedded-bench: $*" >&2; }
die() { log "$*"; exit 1; }

for t in arm-none-eabi-gcc arm-none-eabi-nm arm-none-eabi-size qemu-arm \
	 qemu-system-arm cc; do
	command -v "$t" >/dev/null ||
		die "$t not found; run scripts/install-deps.sh --embedded"
done

# qemu-plugin.h of the QEMU that will load the plugin.
plugin_header()
{
	local ver v dir nvme tmp
	ver=$(dpkg-query -W -f='${source:Version}' qemu-user 2>/dev/null || true)
	[[ -n $ver ]] || die "qemu-user is not installed"
	v=${ver#*:}
	dir="$cache/qemu-plugin/$v"
	if [[ -r $dir/qemu-plugin.h ]]; then
		echo "$dir"
		return
	fi
	mkdir -p "$dir"
	nvme="${HMB_QEMU_NVME_CACHE:-$cache/qemu-nvme}/src/qemu-$v/include/qemu/qemu-plugin.h"
	if [[ -r $nvme ]]; then
		cp "$nvme" "$dir/"
		echo "$dir"
		return
	fi
	log "fetching the qemu $ver source package for qemu-plugin.h"
	tmp=$(mktemp -d)
	chmod 755 "$tmp"	# apt downloads as _apt where it can
	trap 'rm -rf "$tmp"' RETURN
	(cd "$tmp" && apt-get source -q --download-only "qemu=$ver" >&2) ||
		die "no qemu $ver source package; run scripts/install-deps.sh --embedded"
	tar -xJf "$tmp"/qemu_*.orig.tar.xz -C "$tmp" --wildcards \
		'*/include/qemu/qemu-plugin.h'
	cp "$tmp"/*/include/qemu/qemu-plugin.h "$dir/"
	echo "$dir"
}

mkdir -p "$out"
inc=$(plugin_header)
plugin="$out/libhmb_insn_marks.so"
nice cc -shared -fPIC -O2 -Wall -Wextra -Werror -I"$inc" \
	"$here/hmb_insn_marks.c" -o "$plugin"

cflags=(-Os -std=c99 -ffreestanding -nostdlib -ffunction-sections
	-fdata-sections -Wall -Wextra -Werror -I"$here" -I"$repo/producer"
	-I"$repo/include")
# The producer alone, as producer/meson.build measures it.
pcflags=(-Os -std=c11 -ffreestanding -nostdlib -Wall -Wextra -Werror
	 -I"$repo/producer" -I"$repo/include")
# What hmb_trace_emit() may call out of line.
emit_path='^(hmb_trace_emit|hmb_trace_reserve_slow|hmb_trace_reserve_miss|reserve|hmb_trace_commit_slow|hmb_trace_copy|open_page|frozen_here|freeze_now|frozen_if_done|ring_full|publish_freeze|copy_bytes|zero_bytes|put64|put32|core_desc|core_desc_at|ring_page)$'

# name | core | state | flags | how it runs
configs=("r5-arm|Cortex-R5|ARM|-mcpu=cortex-r5 -marm|user"
	 "r5-thumb|Cortex-R5|Thumb-2|-mcpu=cortex-r5 -mthumb|user"
	 "m7-thumb|Cortex-M7|Thumb-2|-mcpu=cortex-m7 -mthumb|mps2")

# Markers' hits -> one line per series: k, the empty series' count (cal),
# then less cal: fast path (mean, min, max: the code is deterministic, so
# min = max), a page switch's emit (mean), amortised (mean of all), and
# the numbers of emits and of page switches. Series 0 is empty, 1-3 are
# 8/32/128 B, 4 the printf hook.
analyse()
{
	awk '
	function settle() {
		if (pending) {
			fn[s]++; fsum[s] += d
			if (fn[s] == 1 || d < lo[s]) lo[s] = d
			if (fn[s] == 1 || d > hi[s]) hi[s] = d
		}
		pending = 0
	}
	BEGIN { s = 0 }
	/^#/ { next }
	$1 == 0 { settle(); begin = $2; next }
	$1 == 1 { d = $2 - begin; n[s]++; sum[s] += d; pending = 1; next }
	$1 == 2 { pending = 0; nsw[s]++; swsum[s] += d; next }
	$1 == 3 { settle(); s++; next }
	END {
		cal = sum[0] / n[0]
		for (k = 1; k < s; k++) {
			if (!n[k] || !fn[k]) { print k, cal, "- - - - -", n[k] + 0, 0; continue }
			print k, cal, fsum[k] / fn[k] - cal, lo[k] - cal, hi[k] - cal,
			      nsw[k] ? swsum[k] / nsw[k] - cal : "-",
			      sum[k] / n[k] - cal, n[k], nsw[k] + 0
		}
	}' "$1"
}

# mawk has no strtonum(): nm's hexadecimal sizes by hand.
awk_hex='function hex(s,  v, i) {
	v = 0
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(tolower(s), i, 1)) - 1
	return v
}'

verdict() { awk -v v="$1" -v g="$2" 'BEGIN { print (v <= g) ? "PASS" : "OVER" }'; }
fmt() { awk -v v="$1" 'BEGIN { if (v == "-") print "-"; else printf "%.1f", v }'; }

# The sample's dictionary as a pre-built blob (fw_bench_blob_gen.c), for
# the build that inits with hmb_trace_producer_init_blob().
nice cc -O1 -Wall -Wextra -Werror -I"$here" -I"$repo/producer" -I"$repo/include" \
	"$here/fw_bench_blob_gen.c" "$here/fw_bench_dict.c" "$repo/producer/hmb_trace_producer.c" \
	-o "$out/fw_bench_blob_gen"
"$out/fw_bench_blob_gen" "$out/fw_blob.c" || die "fw_bench_blob_gen failed"

# Producer functions of the .o ($1) kept in a linked sample ($2): all, and
# those of the emit path.
linked_sizes()
{
	awk -v re="$emit_path" '
		NR == FNR { if ($3 ~ /^[tT]$/) fn[$4] = 1; next }
		($3 ~ /^[tT]$/) && ($4 in fn) {
			sz = hex($2); all += sz
			if ($4 ~ re) em += sz
		}
		END { print all + 0, em + 0 }
		'"$awk_hex" "$1" "$2"
}

results="$out/results.txt"
: >"$results.size"
: >"$results.insn"
: >"$results.site"
for c in "${configs[@]}"; do
	IFS='|' read -r name core state flags how <<<"$c"
	read -ra f <<<"$flags"
	log "$core $state"
	nice arm-none-eabi-gcc "${f[@]}" "${pcflags[@]}" -c \
		"$repo/producer/hmb_trace_producer.c" -o "$out/producer-$name.o"
	arm-none-eabi-nm -S --size-sort "$out/producer-$name.o" \
		>"$out/producer-$name.nm"
	ptext=$(arm-none-eabi-size "$out/producer-$name.o" | awk 'NR == 2 { print $1 }')

	ld=fw-qemu-arm.ld
	[[ $how == mps2 ]] && ld=fw-mps2.ld
	elf="$out/fw-$name.elf"
	nice arm-none-eabi-gcc "${f[@]}" "${cflags[@]}" -static -L"$here" \
		-Wl,-T,"$ld" -Wl,--gc-sections -Wl,--build-id=none \
		"$here/startup.S" "$here/bench_fw.c" "$here/fw_bench_dict.c" \
		"$repo/producer/hmb_trace_producer.c" -o "$elf"
	arm-none-eabi-nm -S --size-sort "$elf" >"$out/fw-$name.nm"

	# Producer functions kept in the sample (init and emit; --gc-sections
	# drops the freeze API it does not call), and those of the emit path.
	# They are compiled in the same unit, so their names match the .o's.
	read -r linked emit < <(linked_sizes "$out/producer-$name.nm" "$out/fw-$name.nm")
	# The same sample with its dictionary embedded as a pre-built blob
	# (-DFW_BLOB): init without the serializer. Linked to be measured.
	nice arm-none-eabi-gcc "${f[@]}" "${cflags[@]}" -DFW_BLOB -static -L"$here" \
		-Wl,-T,"$ld" -Wl,--gc-sections -Wl,--build-id=none \
		"$here/startup.S" "$here/bench_fw.c" "$out/fw_blob.c" \
		"$repo/producer/hmb_trace_producer.c" -o "$out/fw-$name-blob.elf"
	arm-none-eabi-nm -S --size-sort "$out/fw-$name-blob.elf" >"$out/fw-$name-blob.nm"
	read -r linked_blob _ < <(linked_sizes "$out/producer-$name.nm" "$out/fw-$name-blob.nm")
	echo "$core|$state|$ptext|$linked|$emit|$linked_blob" >>"$results.size"
	awk -v c="$core" -v s="$state" '$4 ~ /^site_/ {
		sz[substr($4, 6)] = hex($2) }
		END { printf "%s|%s|%d|%d|%d|%d|%d\n", c, s, sz["cmd_fetch"],
		      sz["cmd_done"], sz["nand_op"], sz["media_dump"],
		      sz["queue_depth"] }
		'"$awk_hex" "$out/fw-$name.nm" >>"$results.site"

	marks=""
	for m in begin end switch phase; do
		a=$(awk -v s="bench_mark_$m" '$4 == s { print $1 }' "$out/fw-$name.nm")
		[[ -n $a ]] || die "no bench_mark_$m in $elf"
		marks+=",mark=0x$a"
	done
	counts="$out/marks-$name.txt"
	rm -f "$counts"
	if [[ $how == user ]]; then
		timeout 120 qemu-arm -cpu "${f[0]#-mcpu=}" \
			-plugin "$plugin$marks,out=$counts" "$elf" ||
			die "$elf failed under qemu-arm (status $?)"
	else
		timeout 120 qemu-system-arm -M mps2-an500 -display none \
			-monitor none -serial none \
			-semihosting-config enable=on,target=native \
			-plugin "$plugin$marks,out=$counts" -kernel "$elf" \
			2> >(grep -v 'has no peer' >&2) ||
			die "$elf failed on mps2-an500 (status $?)"
	fi
	[[ -s $counts ]] || die "the plugin wrote no counts for $elf"
	analyse "$counts" | while read -r k _cal fast lo hi slow amort nemit nsw; do
		echo "$core|$state|$k|$fast|$slow|$amort|$nemit|$nsw|$lo|$hi" >>"$results.insn"
	done
done

{
	cc_ver=$(arm-none-eabi-gcc -dumpversion)
	echo "Producer code, bytes (arm-none-eabi-gcc $cc_ver -Os; goal <= $goal_producer in Thumb-2)"
	echo
	echo "Everything: all of hmb_trace_producer.o. Emit+init core: what the sample"
	echo "links of it with --gc-sections (init, the append's out-of-line part; not"
	echo "the freeze, ring mode or other calls it does not make); of which the"
	echo "append's out-of-line part (its fast path is inlined in the emit sites)."
	echo "Blob embedded: the emit+init core of the same sample with its dictionary"
	echo "a pre-built blob, initialised by hmb_trace_producer_init_blob() (no"
	echo "dictionary serializer linked)."
	echo
	echo "| core | state | everything | goal | | emit+init core | goal | | blob embedded | | of which out-of-line append |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	while IFS='|' read -r core state ptext linked emit linked_blob; do
		v=$(verdict "$ptext" "$goal_producer")
		vl=$(verdict "$linked" "$goal_producer")
		vb=$(verdict "$linked_blob" "$goal_producer")
		[[ $state == ARM ]] && v="$v (goal set for Thumb-2)" && vl="$vl (Thumb-2 goal)" &&
			vb="$vb (Thumb-2 goal)"
		echo "| $core | $state | $ptext | $goal_producer | $v | $linked | $goal_producer | $vl | $linked_blob | $vb | $emit |"
	done <"$results.size"
	echo
	echo "Instructions per emit, counted by TCG (cycles: TCG has no cycle model)."
	echo "Payload bytes (a record adds its 8-byte header); call, arguments and"
	echo "return of the site included; 4 KiB pages. Fast path: the page is open;"
	echo "page switch: the emit that closes one page and opens the next;"
	echo "amortised: the mean over $(awk -F'|' 'NR == 1 { print $7 }' "$results.insn") emits, page switches included."
	echo
	echo "| core | state | payload | fast path | goal | | page switch | amortised |"
	echo "|---|---|---|---|---|---|---|---|"
	while IFS='|' read -r core state k fast slow amort nemit nsw lo hi; do
		case $k in
		1) pl="8 B"; g=$goal_emit8 ;;
		2) pl="32 B"; g="" ;;
		3) pl="128 B"; g="" ;;
		4) pl="printf"; g="" ;;
		esac
		if [[ $fast == - ]]; then
			echo "| $core | $state | $pl | not built (issue 35 item 2; hook: HMB_TRACE_PRINTF in bench_fw.c) | | | | |"
			continue
		fi
		fv=$(fmt "$fast")
		[[ $lo != "$hi" ]] && fv="$fv ($lo-$hi)"
		if [[ -n $g ]]; then
			echo "| $core | $state | $pl | $fv | $g | $(verdict "$fast" "$g") | $(fmt "$slow") | $(fmt "$amort") |"
		else
			echo "| $core | $state | $pl | $fv | - | | $(fmt "$slow") | $(fmt "$amort") |"
		fi
	done <"$results.insn"
	echo
	echo "Emit sites, bytes (each a noipa function: an inlined one saves its call and return)"
	echo
	echo "| core | state | cmd_fetch 8 B | cmd_done 8 B | nand_op 32 B | media_dump 4+124 B | queue_depth 5 B |"
	echo "|---|---|---|---|---|---|---|"
	while IFS='|' read -r core state a b c d e; do
		echo "| $core | $state | $a | $b | $c | $d | $e |"
	done <"$results.site"
} | tee "$results"
rm -f "$results.size" "$results.insn" "$results.site"
