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

# shellcheck source=mock/kernels/lib.sh
source "$hmbq_dir/../kernels/lib.sh"

# hmbq_kernel: resolve the kernel the guest boots, once per process tree, and
# set HMBQ_KVER (its release), HMBQ_KIMAGE (the image to boot), HMBQ_KMODROOT
# (the base directory whose lib/modules/KVER has its modules, for modinfo -b;
# / for an installed kernel), HMBQ_KBUILD (its headers, KDIR) and
# HMBQ_KCHROOT (the Debian suite whose chroot builds for it; empty: the host).
# HMBTRACE_KVER selects it (default: the newest installed *-amd64 kernel): an
# installed KVER, a release or series of the kernel matrix (bookworm|6.1,
# trixie|6.12, sid|7.2: Debian's packages, fetched once into the cache by
# mock/kernels/fetch.sh), or any KVER with a kernel.env in
# ~/.cache/hmbtrace/kernels/KVER/ (mock/kernels/README.md: how to add a
# kernel). Exports HMBTRACE_KVER=KVER, so the scripts it starts resolve it
# without looking it up again.
hmbq_kernel() {
	local env
	# A kernel built from source names its root directory instead
	# (mock/debug-kernel/build.sh prints it and writes its kernel.env).
	if [[ -n ${HMBTRACE_KERNEL_DIR:-} && -z ${HMBTRACE_KVER:-} ]]; then
		[[ -d $HMBTRACE_KERNEL_DIR/lib/modules ]] ||
			hmbq_die "HMBTRACE_KERNEL_DIR=$HMBTRACE_KERNEL_DIR has no lib/modules/KVER"
		HMBTRACE_KVER=$(find "$HMBTRACE_KERNEL_DIR/lib/modules" -mindepth 1 -maxdepth 1 -printf "%f\n" | head -n 1)
	fi
	env=$(hmbk_resolve "${HMBTRACE_KVER:-}") ||
		hmbq_die "no kernel to boot (HMBTRACE_KVER='${HMBTRACE_KVER:-}'): install the Debian package 'linux-image-amd64', or see mock/kernels/README.md"
	HMBQ_KVER=$(hmbk_env_get "$env" kver)
	HMBQ_KIMAGE=$(hmbk_env_get "$env" image)
	HMBQ_KMODROOT=$(hmbk_env_get "$env" modroot)
	HMBQ_KBUILD=$(hmbk_env_get "$env" build)
	HMBQ_KCHROOT=$(hmbk_env_get "$env" chroot)
	[[ -n $HMBQ_KIMAGE && -n $HMBQ_KMODROOT ]] ||
		hmbq_die "kernel $HMBQ_KVER has no image or modules ($env): headers only?"
	[[ -r $HMBQ_KIMAGE ]] ||
		hmbq_die "$HMBQ_KIMAGE is not readable (run as root or chmod o+r it)"
	export HMBTRACE_KVER=$HMBQ_KVER
}

# hmbq_kver: the release (uname -r) of the kernel the guest boots (hmbq_kernel).
hmbq_kver() {
	hmbq_kernel
	echo "$HMBQ_KVER"
}

# hmbq_module_for KVER: the hmb_trace.ko built for KVER: the tree's
# kernel/hmb_trace/hmb_trace.ko when its vermagic says KVER, else the one
# mock/kernels/build-module.sh built (build/kernels/KVER/...); empty if none.
hmbq_module_for() {
	local ko
	for ko in "$hmbq_repo/kernel/hmb_trace/hmb_trace.ko" \
		"$hmbq_repo/build/kernels/$1/src/kernel/hmb_trace/hmb_trace.ko"; do
		[[ -f $ko ]] || continue
		[[ $(modinfo -F vermagic "$ko" 2>/dev/null) == "$1 "* ]] || continue
		echo "$ko"
		return
	done
}

# hmbq_kernel_build [KVER]: the headers tree (KDIR) of the kernel the guest
# boots (hmbq_kernel; KVER, when given, must be that kernel).
# shellcheck disable=SC2120 # callers in other files pass KVER
hmbq_kernel_build() {
	[[ -n ${HMBQ_KVER:-} && ${1:-$HMBQ_KVER} == "$HMBQ_KVER" ]] || hmbq_kernel
	echo "$HMBQ_KBUILD"
}

# hmbq_run_suffix: "" for the installed kernel, "-KVER" for another one (a
# kernel of the matrix, the debug kernel), so that runs on the two do not
# share a build or run directory.
hmbq_run_suffix() {
	[[ -n ${HMBQ_KVER:-} ]] || hmbq_kernel
	[[ ${HMBQ_KMODROOT%/} == "" ]] || echo "-$HMBQ_KVER"
}

# hmbq_build_module OUT [MAKE-ARGS...]: hmb_trace.ko built against
# hmbq_kernel_build on the host's compiler, in a copy of the tree's layout
# under OUT (kernel/hmb_trace is left alone: it stays built for the
# installed kernel); prints the path of the .ko. Rebuilt when the sources,
# the tree built against or MAKE-ARGS (e.g. HMB_TRACE_NVME=n) change. For
# a kernel built from source with the host's gcc (the debug kernel); the
# kernels of the matrix use mock/kernels/build-module.sh (their chroots).
hmbq_build_module() {
	local out=$1 kdir stamp files
	shift
	kdir=$(hmbq_kernel_build)
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

# hmbq_stage_modules KVER DIR MODULE...: each MODROOT/lib/modules/KVER/kernel/
# MODULE.ko (or .ko.xz, .ko.zst, decompressed) into DIR as NAME.ko, MODROOT
# that of the kernel hmbq_kernel resolved (/ for an installed one). One
# built into KVER or not built by it is skipped. Returns 1, naming the first one missing, if one is not installed.
hmbq_stage_modules() {
	local kmods m c f dir=$2
	[[ ${HMBQ_KVER:-} == "$1" ]] || hmbq_kernel
	local mdir=${HMBQ_KMODROOT%/}/lib/modules/$1
	kmods=$mdir/kernel
	shift 2
	for m in "$@"; do
		# Built in, or not built by this kernel at all (e.g. t10-pi without
		# BLK_DEV_INTEGRITY, which nvme-core then does not need).
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
