#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the debug kernel: Debian's linux-source-6.1 with the nvme-pci HMB
# trace series of kernel/patches applied (so its nvme-core.ko and nvme.ko
# are the patched ones) and the checks that catch what a callback of the
# reset or reclaim path must not do: lockdep (PROVE_LOCKING), might_sleep()
# in atomic context (DEBUG_ATOMIC_SLEEP), KASAN, DEBUG_OBJECTS for work
# items and timers, the workqueue watchdog, DMA-API debugging
# (debug.config says which and why). A small configuration: allnoconfig +
# kvm_guest.config + debug.config, no debug info, no BTF. Prints on stdout
# the directory the QEMU harness boots it from (HMBTRACE_KERNEL_DIR, see
# mock/qemu/lib.sh); progress goes to stderr.
#
# The directory is laid out like a root file system:
#   boot/vmlinuz-KVER            the bzImage
#   lib/modules/KVER/            the modules (modules_install), with
#   lib/modules/KVER/build  ->   the built tree, for out-of-tree modules
#                                (make -C kernel/hmb_trace KDIR=...)
#
# Cache: $HMB_DEBUG_KERNEL_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/
# hmbtrace/debug-kernel), outside the tree, so that every checkout of the
# machine shares one build; one build.sh at a time holds its lock. The
# result lives in <key>/, where <key> is a hash of the linux-source-6.1
# version, the series, debug.config and this script. The source tree (and
# its objects, ~3 GB) is kept per source version in src/, so a changed
# patch costs an incremental make (the nvme modules), not a full build
# (mock/qemu/README.md says what one took here).
#
# Needs: scripts/install-deps.sh --debug-kernel (linux-source-6.1, flex,
# bison, libelf-dev, bc).
# Usage: mock/debug-kernel/build.sh [--print-key] [--no-full-build]
#   --print-key      print the key and exit
#   --no-full-build  exit 77 (reason on stderr) instead of building the
#                    kernel from scratch when the source tree has not
#                    been built with this configuration yet; what is left
#                    to do after a change of the series alone is done
# Exit status 77 also when linux-source-6.1 is not installed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${HMB_DEBUG_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hmbtrace/debug-kernel}
jobs=${HMB_DEBUG_KERNEL_JOBS:-$(nproc)}
tarball=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.1.tar.xz}

log() { echo "debug-kernel: $*" >&2; }
die() { log "$*"; exit 1; }

full=1
key_only=0
while (($#)); do
	case "$1" in
	--print-key) key_only=1 ;;
	--no-full-build) full=0 ;;
	*) die "unknown argument '$1' (usage: build.sh [--print-key] [--no-full-build])" ;;
	esac
	shift
done

if [[ ! -f $tarball ]]; then
	log "$tarball missing: run scripts/install-deps.sh --debug-kernel"
	exit 77
fi
for c in flex bison bc; do
	command -v "$c" >/dev/null || { log "'$c' missing: run scripts/install-deps.sh --debug-kernel"; exit 77; }
done
[[ -f /usr/include/libelf.h || -f /usr/include/gelf.h ]] ||
	{ log "libelf-dev missing (objtool): run scripts/install-deps.sh --debug-kernel"; exit 77; }

# The package's version when it is installed, else the tarball's size and
# time: the source tree's name and part of the key.
version=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
[[ -n $version && -z ${LINUX_SOURCE_TAR:-} ]] || version=$(stat -Lc %s-%Y "$tarball")
top=$(basename "$tarball" .tar.xz)

patches=()
for p in "$repo"/kernel/patches/0[0-9][0-9][0-9]-*.patch; do
	[[ $(basename "$p") == 0000-* ]] || patches+=("$p")
done
((${#patches[@]})) || die "no patches in kernel/patches"
fragment=$here/debug.config
# How the .config is made (below): change it with the procedure.
recipe="allnoconfig + kernel/configs/kvm_guest.config + debug.config, v1"
# The configuration alone: a change here is a (nearly) full rebuild; the
# series and this script's other lines change only the key of the result.
config_key=$( { echo "$version $recipe"; cat "$fragment"; } | sha256sum | cut -c1-16)
key=$( { echo "$config_key"; cat "${patches[@]}" "$here/build.sh"; } | sha256sum | cut -c1-16)
if ((key_only)); then
	echo "$key"
	exit 0
fi

# The harness's one description of a kernel (mock/kernels/README.md,
# "kernel.env"): HMBTRACE_KVER=KVER (or HMBTRACE_KERNEL_DIR=$out) boots it.
write_kernel_env() {
	local k d
	k=$(find "$out/lib/modules" -mindepth 1 -maxdepth 1 -printf "%f\n" | head -n 1)
	d=${HMBTRACE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hmbtrace}/kernels/$k
	mkdir -p "$d"
	printf '%s\n' "kver=$k" arch=amd64 release=debug "version=$key" \
		"image=$out/boot/vmlinuz-$k" "modroot=$out" \
		"build=$(readlink -f "$out/lib/modules/$k/build")" chroot= >"$d/kernel.env.new"
	mv "$d/kernel.env.new" "$d/kernel.env"
}

out=$cache/$key
mkdir -p "$cache"
# Two checkouts building at once would patch one source tree twice.
exec 9>"$cache/.lock"
flock 9
if [[ -f $out/.done ]]; then
	write_kernel_env
	echo "$out"
	exit 0
fi

srcdir=$cache/src/$top-${version#*:}
if ((!full)) && [[ "$(cat "$srcdir/.hmb-built" 2>/dev/null)" != "$config_key" ]]; then
	log "not built yet for this configuration (key $config_key): mock/debug-kernel/build.sh builds it (a full kernel build; mock/qemu/README.md says how long one took)"
	exit 77
fi

mkdir -p "$cache/src"
if [[ ! -d $srcdir/.hmb-pristine ]]; then
	log "extracting $tarball (~1.3 GB)"
	rm -rf "$srcdir" "$srcdir.tmp"
	mkdir -p "$srcdir.tmp"
	tar -xJf "$tarball" -C "$srcdir.tmp" --strip-components=1
	mv "$srcdir.tmp" "$srcdir"
	mkdir -p "$srcdir/.hmb-pristine"
	: >"$srcdir/.hmb-applied"
fi

# Take back what an earlier series did, then apply this one: the tree and
# its objects stay, so make rebuilds only what the patches touch.
if [[ -s $srcdir/.hmb-applied ]]; then
	mapfile -t old < <(tac "$srcdir/.hmb-applied")
	for p in "${old[@]}"; do
		patch -d "$srcdir" -p1 -R -s -f --no-backup-if-mismatch <"$srcdir/.hmb-pristine/$p" >&2 ||
			die "cannot revert $p; remove $srcdir"
	done
	: >"$srcdir/.hmb-applied"
fi
rm -f "$srcdir"/.hmb-pristine/*.patch
for p in "${patches[@]}"; do
	name=$(basename "$p")
	log "applying $name"
	patch -d "$srcdir" -p1 -s -N --fuzz=0 --no-backup-if-mismatch <"$p" >&2 ||
		die "$name does not apply to $top $version"
	cp "$p" "$srcdir/.hmb-pristine/$name"
	echo "$name" >>"$srcdir/.hmb-applied"
done

# allnoconfig + kvm_guest.config + debug.config (last wins), then
# every option debug.config asks for must have come through: Kconfig
# drops a value whose dependencies are not met, silently.
if [[ "$(cat "$srcdir/.hmb-config" 2>/dev/null)" != "$config_key" ]]; then
	log "configuring: allnoconfig + kvm_guest.config + $(basename "$fragment")"
	# The same .config again keeps its time: make then rebuilds nothing.
	[[ ! -f $srcdir/.config ]] || cp -p "$srcdir/.config" "$srcdir/.config.hmb-old"
	(cd "$srcdir" && make -s allnoconfig >&2 &&
		KCONFIG_CONFIG=.config scripts/kconfig/merge_config.sh -m .config \
			kernel/configs/kvm_guest.config "$fragment" >&2 &&
		make -s olddefconfig >&2)
	bad=0
	while read -r line; do
		case "$line" in
		CONFIG_*=*) grep -qxF "$line" "$srcdir/.config" || { log "not set as asked: $line"; bad=1; } ;;
		"# CONFIG_"*" is not set")
			o=${line#\# }
			o=${o%% *}
			! grep -q "^$o=" "$srcdir/.config" || { log "still set: $(grep "^$o=" "$srcdir/.config")"; bad=1; } ;;
		esac
	done <"$fragment"
	((!bad)) || die "$(basename "$fragment") does not hold in $srcdir/.config"
	if [[ -f $srcdir/.config.hmb-old ]] && cmp -s "$srcdir/.config" "$srcdir/.config.hmb-old"; then
		mv "$srcdir/.config.hmb-old" "$srcdir/.config"
	fi
	rm -f "$srcdir/.config.hmb-old"
	echo "$config_key" >"$srcdir/.hmb-config"
fi

log "building ($jobs jobs, nice 10)"
t0=$SECONDS
nice -n 10 make -C "$srcdir" -j "$jobs" -s bzImage modules >&2
# After the build: kernelrelease reads the LOCALVERSION of auto.conf.
kver=$(make -s -C "$srcdir" kernelrelease)
log "built $kver in $((SECONDS - t0)) s"
echo "$config_key" >"$srcdir/.hmb-built"

rm -rf "$out.tmp"
mkdir -p "$out.tmp/boot"
cp "$srcdir/arch/x86/boot/bzImage" "$out.tmp/boot/vmlinuz-$kver"
cp "$srcdir/.config" "$out.tmp/boot/config-$kver"
make -C "$srcdir" -s INSTALL_MOD_PATH="$out.tmp" INSTALL_MOD_STRIP=1 modules_install >&2
ln -sfn "$srcdir" "$out.tmp/lib/modules/$kver/build"
rm -rf "$out"
mv "$out.tmp" "$out"
: >"$out/.done"
write_kernel_env
# Earlier keys' kernels are stale now; their modules point into this tree.
for d in "$cache"/*/; do
	d=${d%/}
	[[ $d == "$out" || $d == "$cache/src" ]] || rm -rf "$d"
done
echo "$out"
