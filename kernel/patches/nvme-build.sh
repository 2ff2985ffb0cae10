#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the nvme driver of the HMB trace series for one kernel: the one
# recipe behind scripts/install-nvme-hmb-trace.sh and the hmbtrace-nvme-dkms
# package (whose dkms.conf, kernel/patches/dkms.conf, runs it).
#
#   1. the kernel's series X.Y from KVER; its patches: kernel/patches/X.Y/
#      when that directory exists, kernel/patches/ itself for 6.1 (the
#      first series); any other series is refused, with the reason
#   2. drivers/nvme and the top Makefile from Debian's linux-source-X.Y
#      (/usr/src/linux-source-X.Y.tar.xz, of the same X.Y as KVER)
#   3. the series applied (patch -p1, no fuzz): every 0NNN-*.patch but the
#      cover letter, so a series gains patches without a change here
#   4. against KDIR (linux-headers-KVER), every module of drivers/nvme/host
#      that KVER's configuration builds: the series adds fields to struct
#      nvme_ctrl, so every module that uses that struct or links against
#      nvme-core is rebuilt with it, or its symbol versions would not match
#      the patched nvme-core and it would not load; and drivers/nvme/target
#      when the configuration links it to the host side (nvmet's passthru
#      and nvme-loop use struct nvme_ctrl, nvme-fcloop links to nvme-fc)
#   5. with --hmb-trace: hmb_trace.ko, with its nvme backend against the
#      patched tree when the series has the interface that backend uses
#      (the 6.1 series' notifier and control command), else without it (as
#      hmbtrace-dkms builds it: the ivshmem backend only)
#   6. the .ko files, flat, into OUT
#
# Usage: nvme-build.sh [--source TAR] [--hmb-trace DIR] [--fallback] [--jobs N] KVER KDIR OUT
#        nvme-build.sh --list [--hmb-trace DIR] [--fallback] KVER KDIR
#   KVER            the kernel release (uname -r), e.g. 6.1.0-57-amd64
#   KDIR            its headers' build tree (/lib/modules/KVER/build)
#   OUT             where the modules go (made if missing)
#   --source TAR    the linux-source tarball (default
#                   $HMBTRACE_LINUX_SOURCE_DIR/linux-source-X.Y.tar.xz,
#                   HMBTRACE_LINUX_SOURCE_DIR defaulting to /usr/src)
#   --hmb-trace DIR a tree with kernel/hmb_trace, consumer, clock, include
#                   (this repository, or the DKMS source tree)
#   --fallback      with --hmb-trace: for a kernel with no series, say why
#                   on stderr and build hmb_trace.ko alone (exit 0): the
#                   package replaces hmbtrace-dkms on every kernel
#   --list          print the module names steps 4-5 build for KVER (one a
#                   line), without building; for a kernel with no series,
#                   print why on stderr and exit 3 (--fallback: hmb_trace)
# Exit status: 0 built; 1 failed; 3 no series for this kernel (the reason and
# the fix on stderr); 77 no linux-source-X.Y tarball.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}
say() { echo "nvme-build: $*" >&2; }
die() { say "$*"; exit 1; }

list=0
fallback=0
tarball=""
hmbsrc=""
jobs=$(nproc 2>/dev/null || echo 1)
args=()
while (($#)); do
	case "$1" in
	--list) list=1; shift ;;
	--fallback) fallback=1; shift ;;
	--source) tarball=${2:?--source needs a tarball}; shift 2 ;;
	--hmb-trace) hmbsrc=${2:?--hmb-trace needs a directory}; shift 2 ;;
	--jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
	-h | --help) usage 0 ;;
	-*) say "unknown option $1 (see --help)"; exit 2 ;;
	*) args+=("$1"); shift ;;
	esac
done

# The series this tree carries: X.Y for each kernel/patches/X.Y/ with
# patches, and 6.1 for kernel/patches/ itself.
series_dir() { # series_dir X.Y: the directory of that series' patches
	local d=$here/$1
	[[ $1 == 6.1 && ! -d $d ]] && d=$here
	compgen -G "$d/0[0-9][0-9][1-9]-*.patch" >/dev/null || return 1
	echo "$d"
}
all_series() {
	local d
	series_dir 6.1 >/dev/null && echo 6.1
	for d in "$here"/[0-9]*.[0-9]*/; do
		d=$(basename "$d")
		[[ $d == 6.1 ]] || ! series_dir "$d" >/dev/null || echo "$d"
	done
}
if ((list)); then
	((${#args[@]} == 2)) || usage
else
	((${#args[@]} == 3)) || usage
fi
kver=${args[0]}
kdir=${args[1]}
[[ $kver =~ ^([0-9]+)\.([0-9]+)[.-] ]] || die "cannot read a kernel series from '$kver'"
series=${BASH_REMATCH[1]}.${BASH_REMATCH[2]}
config=$kdir/.config
[[ -f $config ]] || die "no $config: install linux-headers-$kver"
cfg() { grep -q "^CONFIG_$1=$2\$" "$config"; }
[[ -z $hmbsrc ]] || hmbsrc=$(cd "$hmbsrc" && pwd)
# hmb_trace.ko alone, without the nvme backend (as hmbtrace-dkms builds it).
hmb_trace_only() {
	local out=$1 work=$1/.nvme-build
	rm -rf "$work"
	mkdir -p "$work"
	cp -r "$hmbsrc/kernel" "$hmbsrc/consumer" "$hmbsrc/clock" "$hmbsrc/include" "$work/"
	rm -rf "$work/kernel/patches"
	make -C "$work/kernel/hmb_trace" KDIR="$kdir" HMB_TRACE_NVME=n -j"$jobs" modules \
		>"$work/build.log" 2>&1 ||
		{ tail -n 20 "$work/build.log" >&2; die "build of hmb_trace.ko failed (log: $work/build.log)"; }
	cp "$work/kernel/hmb_trace/hmb_trace.ko" "$out/"
	say "built in $out: hmb_trace.ko (no nvme backend)"
}
if ! sdir=$(series_dir "$series"); then
	say "no nvme-pci HMB trace series for Linux $series (kernel $kver): there is one for" \
		"$(all_series | paste -sd ' ') only, so the kernel's own nvme stays in use." \
		"$( ((fallback)) && [[ -n $hmbsrc ]] && echo "hmb_trace.ko is built without its nvme backend (the ivshmem mock only).")" \
		"To trace an SSD, boot a kernel of one of those series, or port the series" \
		"to $series (kernel/patches/README.md)."
	((fallback)) && [[ -n $hmbsrc ]] || exit 3
	if ((list)); then
		echo hmb_trace
		exit 0
	fi
	((${#args[@]} == 3)) || usage
	mkdir -p "${args[2]}"
	hmb_trace_only "$(cd "${args[2]}" && pwd)"
	exit 0
fi

# The modules of step 4, from KVER's configuration (the Makefiles'
# obj-$(CONFIG_...) lines); checked against what the build made.
host_mods=()
target_mods=()
for pair in NVME_CORE:nvme-core BLK_DEV_NVME:nvme NVME_FABRICS:nvme-fabrics \
	NVME_RDMA:nvme-rdma NVME_FC:nvme-fc NVME_TCP:nvme-tcp NVME_APPLE:nvme-apple; do
	! cfg "${pair%%:*}" m || host_mods+=("${pair#*:}")
done
if cfg NVME_TARGET_PASSTHRU y || cfg NVME_TARGET_LOOP m || cfg NVME_TARGET_FCLOOP m; then
	for pair in NVME_TARGET:nvmet NVME_TARGET_LOOP:nvme-loop NVME_TARGET_RDMA:nvmet-rdma \
		NVME_TARGET_FC:nvmet-fc NVME_TARGET_FCLOOP:nvme-fcloop NVME_TARGET_TCP:nvmet-tcp \
		NVME_TARGET_PCI_EPF:nvmet-pci-epf; do
		! cfg "${pair%%:*}" m || target_mods+=("${pair#*:}")
	done
fi
# hmb_trace.ko's nvme backend uses the 6.1 series' exports, or the
# auxiliary device of the 6.12/7.2 series (hmb_trace_nvme.c).
with_nvme_backend=0
! grep -qs -e '^+EXPORT_SYMBOL_GPL(nvme_hmb_trace_register_notifier);' \
	-e '^+#define NVME_HMB_TRACE_AUXDEV_NAME' "$sdir"/0*.patch ||
	with_nvme_backend=1
if ((list)); then
	printf '%s\n' "${host_mods[@]}" "${target_mods[@]}"
	[[ -z $hmbsrc ]] || echo hmb_trace
	exit 0
fi
[[ " ${host_mods[*]} " == *" nvme-core "* && " ${host_mods[*]} " == *" nvme "* ]] ||
	die "kernel $kver builds nvme-core and nvme into the kernel (not CONFIG_NVME_CORE=m and CONFIG_BLK_DEV_NVME=m): they cannot be replaced by modules"

out=${args[2]}
[[ -f $kdir/Makefile ]] || die "no $kdir/Makefile: install linux-headers-$kver"
tarball=${tarball:-${HMBTRACE_LINUX_SOURCE_DIR:-/usr/src}/linux-source-$series.tar.xz}
if [[ ! -f $tarball ]]; then
	say "no $tarball: install linux-source-$series (apt-get install linux-source-$series," \
		"from the release of kernel $kver)"
	exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$out/.nvme-build
rm -rf "$work"
mkdir -p "$work/tree"
tree=$work/tree

# 2. The sources: xz is read to its end whatever is taken (~40 s).
top=$(basename "$tarball" .tar.xz)
say "extracting drivers/nvme from $tarball"
tar -xJf "$tarball" -C "$tree" --strip-components=1 "$top/drivers/nvme" "$top/Makefile" ||
	die "cannot extract $top/drivers/nvme from $tarball"
src_version=$(awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
	$1 == "SUBLEVEL" { s = $2 } END { print v "." p "." s }' "$tree/Makefile")
[[ $src_version == "$series".* ]] ||
	die "$tarball is Linux $src_version, not $series: install linux-source-$series"
kernel_version=$(make -s -C "$kdir" kernelversion 2>/dev/null || true)
[[ -z $kernel_version || $kernel_version == "$src_version" ]] ||
	say "warning: the source is Linux $src_version, the headers of $kver are $kernel_version:" \
		"upgrade linux-source-$series and linux-headers-$kver to the same release if the build fails"

# 3. The series.
n=0
for p in "$sdir"/0[0-9][0-9][0-9]-*.patch; do
	[[ $(basename "$p") != 0000-* ]] || continue
	out_p=$(patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch -s <"$p" 2>&1) ||
		die "$(basename "$p") does not apply to Linux $src_version: $out_p"
	n=$((n + 1))
done
say "applied the $n patches of $sdir to Linux $src_version"

# 4. The modules, against KVER's headers: the patched header with -I after
# the headers' own include paths.
log=$work/build.log
say "building ${host_mods[*]} ${target_mods[*]} for $kver (log: $log)"
make -C "$kdir" M="$tree/drivers/nvme/host" KCFLAGS="-I$tree/include" -j"$jobs" \
	modules >"$log" 2>&1 || { tail -n 20 "$log" >&2; die "build of drivers/nvme/host failed (log: $log)"; }
if ((${#target_mods[@]})); then
	make -C "$kdir" M="$tree/drivers/nvme/target" KCFLAGS="-I$tree/include" -j"$jobs" \
		KBUILD_EXTRA_SYMBOLS="$tree/drivers/nvme/host/Module.symvers" modules >>"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; die "build of drivers/nvme/target failed (log: $log)"; }
fi
built=$( (cd "$tree/drivers/nvme" && find host target -name '*.ko' -printf '%f\n' 2>/dev/null) |
	sed 's/\.ko$//' | sort | paste -sd ' ')
want=$(printf '%s\n' "${host_mods[@]}" "${target_mods[@]}" | sort | paste -sd ' ')
[[ $built == "$want" ]] ||
	die "built '$built', but the configuration of $kver asks for '$want' (update nvme-build.sh's module table)"

# 5. hmb_trace.ko, with the nvme backend where the series has its interface.
if [[ -n $hmbsrc ]] && ((!with_nvme_backend)); then
	say "the Linux $series series has no interface for hmb_trace.ko's nvme backend yet"
	hmb_trace_only "$work/hmb"
fi
if [[ -n $hmbsrc ]] && ((with_nvme_backend)); then
	[[ -d $hmbsrc/kernel/hmb_trace ]] || die "no kernel/hmb_trace in $hmbsrc"
	cp -r "$hmbsrc/kernel" "$hmbsrc/consumer" "$hmbsrc/clock" "$hmbsrc/include" "$work/"
	rm -rf "$work/kernel/patches"
	make -C "$work/kernel/hmb_trace" KDIR="$kdir" NVME_HMB_TRACE_TREE="$tree" -j"$jobs" \
		modules >>"$log" 2>&1 || { tail -n 20 "$log" >&2; die "build of hmb_trace.ko failed (log: $log)"; }
	# The backend imports the 6.1 series' notifier from nvme, or binds to
	# the 6.12/7.2 series' auxiliary device (an alias, no import).
	aux=$(sed -n 's/^#define NVME_HMB_TRACE_AUXDEV_NAME[[:space:]]*"\(.*\)"/\1/p' \
		"$tree/include/linux/nvme-hmb-trace.h")
	if [[ -n $aux ]]; then
		modinfo -F alias "$work/kernel/hmb_trace/hmb_trace.ko" | grep -qx "auxiliary:nvme.$aux" ||
			die "hmb_trace.ko was built without its nvme backend (no alias auxiliary:nvme.$aux)"
	else
		modinfo -F depends "$work/kernel/hmb_trace/hmb_trace.ko" | grep -qw nvme ||
			die "hmb_trace.ko was built without its nvme backend"
	fi
fi

# 6. Flat into OUT.
for m in "${host_mods[@]}"; do cp "$tree/drivers/nvme/host/$m.ko" "$out/"; done
for m in "${target_mods[@]}"; do cp "$tree/drivers/nvme/target/$m.ko" "$out/"; done
if [[ -n $hmbsrc ]] && ((with_nvme_backend)); then
	cp "$work/kernel/hmb_trace/hmb_trace.ko" "$out/"
elif [[ -n $hmbsrc ]]; then
	cp "$work/hmb/hmb_trace.ko" "$out/"
fi
say "built in $out: $(cd "$out" && echo ./*.ko | sed 's|\./||g')"
