# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers shared by the QEMU harness scripts. Sourced, never executed.
# Everything here runs on the host; nothing is ever loaded into the host kernel.

# shellcheck disable=SC2034 # used by the scripts that source this file
hmbq_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
hmbq_repo=$(cd "$hmbq_dir/../.." && pwd)

hmbq_die() {
	echo "${0##*/}: error: $*" >&2
	exit 2
}

hmbq_log() {
	echo "${0##*/}: $*" >&2
}

# hmbq_need CMD PACKAGE: fail with the Debian package to install when CMD is missing.
hmbq_need() {
	command -v "$1" >/dev/null 2>&1 ||
		hmbq_die "'$1' not found: install the Debian package '$2' (apt-get install $2, or scripts/install-deps.sh --kernel)"
}

# The cache for the initramfs base and default images. build*/ is git-ignored.
hmbq_cache_dir() {
	echo "${HMBTRACE_QEMU_CACHE:-$hmbq_repo/build/qemu-cache}"
}

# The kernel the guests boot, in one place. HMBTRACE_KERNEL_DIR names a
# directory laid out like a root file system, holding
#   boot/vmlinuz-KVER        the image (a bzImage)
#   lib/modules/KVER/        its modules (modules.dep, modules.builtin, kernel/)
#   lib/modules/KVER/build   the tree out-of-tree modules build against (KDIR)
# e.g. the debug kernel of mock/debug-kernel/build.sh. Unset: / (the
# installed Debian kernel, linux-image-*-amd64 and linux-headers-*-amd64).
# hmbq_kernel_root prints it without a trailing slash ("" for /).
hmbq_kernel_root() {
	local r=${HMBTRACE_KERNEL_DIR:-}
	r=${r%/}
	[[ -z $r || -d $r ]] || hmbq_die "HMBTRACE_KERNEL_DIR=$HMBTRACE_KERNEL_DIR is not a directory"
	echo "$r"
}

# hmbq_kver: the kernel the guest boots. HMBTRACE_KVER overrides. Prefers a
# *-amd64 flavour that has both boot/vmlinuz-KVER and lib/modules/KVER under
# hmbq_kernel_root; the highest version wins when several are there.
hmbq_kver() {
	if [[ -n "${HMBTRACE_KVER:-}" ]]; then
		echo "$HMBTRACE_KVER"
		return
	fi
	local v best="" any="" root
	root=$(hmbq_kernel_root)
	for v in $(find "$root/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -V); do
		[[ -r $root/boot/vmlinuz-$v && -d $root/lib/modules/$v/kernel ]] || continue
		any=$v
		[[ $v == *-amd64 ]] && best=$v
	done
	[[ -n "$best" ]] || best=$any
	[[ -n "$best" ]] ||
		hmbq_die "no kernel with $root/boot/vmlinuz-KVER and $root/lib/modules/KVER: install the Debian package 'linux-image-amd64'${root:+ (or build $root: mock/debug-kernel/build.sh)}"
	[[ -r $root/boot/vmlinuz-$best ]] ||
		hmbq_die "$root/boot/vmlinuz-$best is not readable (run as root or chmod o+r it)"
	echo "$best"
}

# hmbq_kernel_image [KVER]: the image of KVER (default hmbq_kver).
hmbq_kernel_image() {
	echo "$(hmbq_kernel_root)/boot/vmlinuz-${1:-$(hmbq_kver)}"
}

# hmbq_modules_dir [KVER]: KVER's lib/modules/KVER.
hmbq_modules_dir() {
	echo "$(hmbq_kernel_root)/lib/modules/${1:-$(hmbq_kver)}"
}

# hmbq_kernel_build [KVER]: the build tree of KVER (KDIR for kernel/hmb_trace
# and kernel/patches/verify.sh). An absolute build link in a kernel dir
# other than / is looked up inside it first.
# shellcheck disable=SC2120 # callers in other files pass KVER
hmbq_kernel_build() {
	local root b t
	root=$(hmbq_kernel_root)
	b=$(hmbq_modules_dir "${1:-}")/build
	t=$(readlink "$b" 2>/dev/null || true)
	if [[ -n $root && $t == /* && -d $root$t ]]; then
		echo "$root$t"
	else
		echo "$b"
	fi
}

# hmbq_modinfo KVER ARGS...: modinfo for a module of KVER (under hmbq_kernel_root).
hmbq_modinfo() {
	local k=$1 root
	shift
	root=$(hmbq_kernel_root)
	modinfo -b "${root:-/}" -k "$k" "$@"
}

# hmbq_run_suffix: "" for the installed kernel, "-KVER" for another kernel
# dir, so that runs on the two do not share a build or run directory.
hmbq_run_suffix() {
	[[ -z $(hmbq_kernel_root) ]] || echo "-$(hmbq_kver)"
}

# hmbq_build_module OUT [MAKE-ARGS...]: hmb_trace.ko built against
# hmbq_kernel_build, in a copy of the tree's layout under OUT
# (kernel/hmb_trace is left alone: it stays built for the installed
# kernel); prints the path of the .ko. Rebuilt when the sources, the tree
# built against or MAKE-ARGS (e.g. HMB_TRACE_NVME=n) change.
hmbq_build_module() {
	local out=$1 kdir stamp files
	shift
	kdir=$(hmbq_kernel_build "$(hmbq_kver)")
	[[ -f $kdir/Makefile ]] || { hmbq_log "no kernel build tree $kdir"; return 1; }
	files=(kernel/hmb_trace consumer clock include producer)
	stamp=$( (cd "$hmbq_repo" && echo "$kdir $*" && cat "$kdir/Module.symvers" &&
		find "${files[@]}" -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \) |
		sort | xargs cat) | sha256sum | cut -c1-16)
	if [[ -f $out/src/kernel/hmb_trace/hmb_trace.ko && "$(cat "$out/.stamp" 2>/dev/null)" == "$stamp" ]]; then
		echo "$out/src/kernel/hmb_trace/hmb_trace.ko"
		return 0
	fi
	rm -rf "$out"
	mkdir -p "$out/src"
	# The sources only: no objects of an earlier build in the checkout.
	(cd "$hmbq_repo" && find "${files[@]}" -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \) \
		-print0 | xargs -0 cp --parents -t "$out/src/")
	make -C "$out/src/kernel/hmb_trace" KDIR="$kdir" "$@" >"$out/build.log" 2>&1 ||
		{ tail -n 20 "$out/build.log" >&2; hmbq_log "hmb_trace.ko against $kdir failed (log: $out/build.log)"; return 1; }
	echo "$stamp" >"$out/.stamp"
	echo "$out/src/kernel/hmb_trace/hmb_trace.ko"
}

# What a guest's dmesg must never show: the kernel's reports of a bug
# (WARN, BUG, Oops, KASAN, UBSAN; DMA-API debugging reports through WARN),
# lockdep's (every report has a "WARNING: ..." title; its own assertions
# too), DEBUG_OBJECTS' (ODEBUG), the workqueue and hung-task watchdogs and
# RCU stalls. An extended regex, for grep -E on dmesg or the console.
# shellcheck disable=SC2034 # used by the scripts that source this file
hmbq_kernel_report_re='WARNING:|BUG:|Oops|Kernel panic|KASAN|UBSAN|general protection|possible circular locking|DEBUG_LOCKS_WARN_ON|INFO: lockdep is turned off|ODEBUG:|workqueue lockup|INFO: task .* blocked for more than|hung_task|rcu: INFO'

# The Debian modules nvme-core needs beside it in the guest (from
# `modinfo -k KVER -F depends`), in load order, relative to kernel/.
hmbq_nvme_deps=(lib/crc-t10dif lib/crc64 lib/crc64-rocksoft block/t10-pi
		crypto/crct10dif_common)

# hmbq_stage_modules KVER DIR MODULE...: each lib/modules/KVER/kernel/
# MODULE.ko (or .ko.xz, .ko.zst, decompressed) of hmbq_kernel_root into
# DIR as NAME.ko. One built into KVER (modules.builtin), or that KVER does
# not build at all (not in its modules.order: e.g. t10-pi in a kernel
# without BLK_DEV_INTEGRITY, which nvme-core then does not need), is
# skipped. Returns 1, naming the first one missing, if one is not there.
hmbq_stage_modules() {
	local mdir kmods dir=$2 m c f
	mdir=$(hmbq_modules_dir "$1")
	kmods=$mdir/kernel
	shift 2
	for m in "$@"; do
		grep -qx "kernel/$m.ko" "$mdir/modules.builtin" 2>/dev/null && continue
		[[ ! -f $mdir/modules.order ]] || grep -qx "kernel/$m.ko" "$mdir/modules.order" ||
			continue
		c=""
		for f in "$kmods/$m".ko "$kmods/$m".ko.xz "$kmods/$m".ko.zst; do
			[[ -f $f ]] && { c=$f; break; }
		done
		[[ -n $c ]] || { echo "$kmods/$m.ko missing (linux-image-$1)"; return 1; }
		case "$c" in
		*.ko) cp "$c" "$dir/" ;;
		*.ko.xz) xz -dc "$c" >"$dir/$(basename "$m").ko" ;;
		*.ko.zst) zstd -qdc "$c" >"$dir/$(basename "$m").ko" ;;
		esac
	done
}

# hmbq_size_bytes 64M -> 67108864 (accepts plain bytes or a K/M/G suffix).
hmbq_size_bytes() {
	local s=$1 n mult=1
	case "$s" in
	*[kK]) mult=1024 ;;
	*[mM]) mult=$((1024 * 1024)) ;;
	*[gG]) mult=$((1024 * 1024 * 1024)) ;;
	esac
	n=${s%[kKmMgG]}
	[[ "$n" =~ ^[0-9]+$ ]] || hmbq_die "bad size '$s'"
	echo $((n * mult))
}

hmbq_is_pow2() {
	local n=$1
	((n > 0 && (n & (n - 1)) == 0))
}

# hmbq_now: seconds since the epoch with milliseconds, for timings.
hmbq_now() {
	date +%s.%3N
}

# hmbq_elapsed START [END]: "12.345" seconds.
hmbq_elapsed() {
	local end=${2:-$(hmbq_now)}
	awk -v a="$1" -v b="$end" 'BEGIN { printf "%.1f", b - a }'
}
