#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the initramfs of the hmbtrace QEMU guest.
#
# Usage: build-initramfs.sh OUT.cpio.gz [--module PATH.ko] [--extra SRC[:DEST]]...
#                           [--kver KVER] [--rebuild-base]
#
# The image is two gzip'd cpio archives back to back (the kernel unpacks both):
#   base     busybox-static, the 9p/virtio and nvme modules of the installed kernel (in
#            dependency order, decompressed), trace-cmd with every library ldd lists
#            and the libtraceevent plugins, /init (guest-init.sh). Cached in
#            $HMBTRACE_QEMU_CACHE (default build/qemu-cache), keyed by the kernel
#            version and a hash of its inputs, so it is built once.
#   overlay  the things that change every run: the module (as /hmb_trace.ko) and
#            --extra files. SRC goes to DEST in the guest (default
#            /usr/bin/basename(SRC)); an ELF SRC brings the libraries ldd lists,
#            at their host paths (so build-tree RUNPATHs still resolve); a
#            directory SRC is copied as it is to DEST (no ldd: e.g. another
#            release's bpftrace with its own libraries, mock/kernels/fetch-bpftrace.sh).
set -euo pipefail
# shellcheck source=mock/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

out=""
module=""
extras=()
kver=""
rebuild=0
while (($#)); do
	case "$1" in
	--module) module=${2:?--module needs a path}; shift 2 ;;
	--extra) extras+=("${2:?--extra needs a path}"); shift 2 ;;
	--kver) kver=${2:?}; shift 2 ;;
	--rebuild-base) rebuild=1; shift ;;
	-h | --help) usage 0 ;;
	-*) hmbq_die "unknown option $1" ;;
	*) [[ -z "$out" ]] || usage; out=$1; shift ;;
	esac
done
[[ -n "$out" ]] || usage

hmbq_need cpio cpio
hmbq_need gzip gzip
hmbq_need modinfo kmod
hmbq_need ldd libc-bin
hmbq_need flock util-linux
[[ -x /bin/busybox ]] && file_is_static=$(LC_ALL=C ldd /bin/busybox 2>&1 || true)
[[ -x /bin/busybox && "$file_is_static" == *"not a dynamic"* ]] ||
	hmbq_die "a static /bin/busybox is needed: install the Debian package 'busybox-static'"
tracecmd=$(command -v trace-cmd || true)
[[ -n "$tracecmd" ]] || hmbq_die "trace-cmd not found: install the Debian package 'trace-cmd'"
[[ -z "$kver" ]] || HMBTRACE_KVER=$kver
hmbq_kernel
kver=$HMBQ_KVER
# The kernel's modules: /lib/modules/KVER for an installed kernel,
# MODROOT/lib/modules/KVER for one of the kernel matrix (mock/kernels).
modroot=$HMBQ_KMODROOT
[[ -d $modroot/lib/modules/$kver ]] ||
	hmbq_die "$modroot/lib/modules/$kver missing: install the Debian package 'linux-image-amd64' (or see mock/kernels/README.md)"
[[ -z "$module" || -r "$module" ]] || hmbq_die "module $module not readable"

plugin_dir=/usr/lib/x86_64-linux-gnu/traceevent/plugins
# Modules the guest needs for the 9p share; their dependencies are added by modinfo.
root_modules=(virtio_pci 9pnet_virtio 9p)
# Loaded by /init only when the guest has an NVMe controller (run-guest.sh --nvme).
nvme_modules=(nvme)

# copy_file STAGE SRC [DEST]: copy SRC (following links) to STAGE/DEST.
copy_file() {
	local stage=$1 src=$2 dest=${3:-$2}
	mkdir -p "$stage/$(dirname "$dest")"
	cp -L "$src" "$stage/$dest"
}

# copy_libs STAGE ELF: copy the libraries and the loader ldd lists for ELF.
copy_libs() {
	local stage=$1 elf=$2 line lib ldd_out
	if ! ldd_out=$(LC_ALL=C ldd "$elf" 2>&1); then
		[[ "$ldd_out" == *"not a dynamic executable"* ]] && return 0
		hmbq_die "ldd $elf failed: $ldd_out"
	fi
	while read -r line; do
		case "$line" in
		*"=> not found"*) hmbq_die "$elf: library not found: $line" ;;
		*"=> /"*) lib=${line#*=> }; lib=${lib%% (*} ;;
		/*) lib=${line%% (*} ;;
		*) continue ;;
		esac
		[[ -e "$stage/$lib" ]] && continue
		# Already in the base archive (the overlay is unpacked over it).
		[[ -n "${base_files[$(realpath -m "/usr/${lib#/usr/}")]:-}" ]] && continue
		copy_file "$stage" "$lib"
	done <<<"$ldd_out"
}

is_elf() {
	[[ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" == '177ELF' ]]
}

# Files of the base archive, as /usr/... paths, filled before the overlay is built.
declare -A base_files=()

# module_order: the modules to insmod, each after its dependencies.
declare -A seen=()
module_order=()
add_module() {
	local m=$1 d deps
	[[ -n "${seen[$m]:-}" ]] && return
	seen[$m]=1
	# Built into this kernel: nothing to load.
	if grep -q "/${m//[-_]/[-_]}\.ko" "$modroot/lib/modules/$kver/modules.builtin" 2>/dev/null; then
		return
	fi
	deps=$(modinfo -b "$modroot" -k "$kver" -F depends "$m") ||
		hmbq_die "modinfo -b $modroot -k $kver $m failed: is linux-image for $kver complete?"
	for d in ${deps//,/ }; do
		add_module "$d"
	done
	module_order+=("$m")
}

# copy_modules STAGE NAME...: the modules' files, decompressed, into the
# stage's /lib/modules/hmbtrace.
copy_modules() {
	local stage=$1 m file
	shift
	for m in "$@"; do
		file=$(modinfo -b "$modroot" -k "$kver" -n "$m")
		case "$file" in
		*.ko) cp "$file" "$stage/lib/modules/hmbtrace/$m.ko" ;;
		*.ko.xz) xz -dc "$file" >"$stage/lib/modules/hmbtrace/$m.ko" ;;
		*.ko.zst) zstd -qdc "$file" >"$stage/lib/modules/hmbtrace/$m.ko" ;;
		*.ko.gz) gzip -dc "$file" >"$stage/lib/modules/hmbtrace/$m.ko" ;;
		*) hmbq_die "module $m: unexpected file '$file'" ;;
		esac
	done
}

# inputs_key: changes when anything that goes into the base changes.
inputs_key() {
	{
		echo "$kver"
		cat "$hmbq_dir/build-initramfs.sh" "$hmbq_dir/guest-init.sh" "$hmbq_dir/lib.sh"
		sha256sum /bin/busybox "$tracecmd" "$HMBQ_KIMAGE" 2>/dev/null
		LC_ALL=C ldd "$tracecmd" | awk '/=> \//{print $3} /^\t\//{print $1}' | xargs sha256sum
	} | sha256sum | cut -c1-16
}

write_cpio() {
	local stage=$1 dest=$2
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --quiet) | gzip -1 -n >"$dest.tmp"
	mv "$dest.tmp" "$dest"
}

build_base() {
	local dest=$1 stage m f file applet
	stage=$(mktemp -d "$cache/stage.XXXXXX")
	trap 'rm -rf "$stage"' RETURN

	# usr-merged layout, so host library paths land in the right place.
	mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib,usr/lib64,dev,proc,sys,tmp,run,mnt,root,etc/hmbtrace}
	ln -s usr/bin "$stage/bin"
	ln -s usr/sbin "$stage/sbin"
	ln -s usr/lib "$stage/lib"
	ln -s usr/lib64 "$stage/lib64"
	chmod 1777 "$stage/tmp"

	cp /bin/busybox "$stage/usr/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[[ -e "$stage/usr/bin/$applet" ]] || ln -s busybox "$stage/usr/bin/$applet"
	done

	cp "$hmbq_dir/guest-init.sh" "$stage/init"
	chmod 755 "$stage/init"
	echo "root:x:0:0:root:/root:/bin/sh" >"$stage/etc/passwd"
	echo "root:x:0:" >"$stage/etc/group"
	: >"$stage/etc/mtab"

	for m in "${root_modules[@]}"; do
		add_module "$m"
	done
	mkdir -p "$stage/lib/modules/hmbtrace"
	copy_modules "$stage" "${module_order[@]}"
	printf '%s\n' "${module_order[@]}" >"$stage/etc/hmbtrace/modules"
	local nr_root=${#module_order[@]}
	for m in "${nvme_modules[@]}"; do
		add_module "$m"
	done
	copy_modules "$stage" "${module_order[@]:$nr_root}"
	printf '%s\n' "${module_order[@]:$nr_root}" >"$stage/etc/hmbtrace/modules-nvme"

	copy_file "$stage" "$tracecmd" /usr/bin/trace-cmd
	copy_libs "$stage" "$tracecmd"
	if [[ -d "$plugin_dir" ]]; then
		for f in "$plugin_dir"/*.so; do
			[[ -e "$f" ]] || continue
			copy_file "$stage" "$f"
			copy_libs "$stage" "$f"
		done
	fi

	write_cpio "$stage" "$dest"
	(cd "$stage" && find . -mindepth 1 ! -type d | sed 's|^\.||') >"${dest%.cpio.gz}.files"
}

cache=$(hmbq_cache_dir)
mkdir -p "$cache"
base="$cache/base-$kver-$(inputs_key).cpio.gz"
# Runs in parallel (CI jobs, two scenarios) build the base once.
exec 9>"$cache/.lock"
flock 9
if ((rebuild)) || [[ ! -s "$base" ]]; then
	hmbq_log "building initramfs base for $kver -> $base"
	# Old bases of this kernel are stale now.
	rm -f "$cache/base-$kver-"*.cpio.gz "$cache/base-$kver-"*.files
	build_base "$base"
fi

cp "$base" "$out.base.tmp"
cp "${base%.cpio.gz}.files" "$out.files.tmp"
flock -u 9
exec 9>&-

while read -r f; do
	base_files[$(realpath -m "/usr/${f#/usr/}")]=1
done <"$out.files.tmp"
rm -f "$out.files.tmp"

overlay_stage=$(mktemp -d "$cache/overlay.XXXXXX")
trap 'rm -rf "$overlay_stage"' EXIT
mkdir -p "$overlay_stage/etc/hmbtrace"
if [[ -n "$module" ]]; then
	cp "$module" "$overlay_stage/hmb_trace.ko"
	echo "$(cd "$(dirname "$module")" && pwd)/$(basename "$module")" \
		>"$overlay_stage/etc/hmbtrace/module-source"
fi
for e in "${extras[@]}"; do
	src=${e%%:*}
	dest=/usr/bin/$(basename "$src")
	[[ "$e" == *:* ]] && dest=${e#*:}
	[[ -r "$src" ]] || hmbq_die "--extra $src: not readable"
	if [[ -d "$src" ]]; then
		mkdir -p "$overlay_stage/$dest"
		cp -a "$src/." "$overlay_stage/$dest/"
		continue
	fi
	# Absolute host paths for libraries: the stage has no usr-merge links here,
	# so map /lib and /lib64 onto /usr explicitly.
	copy_file "$overlay_stage" "$src" "$dest"
	if is_elf "$src"; then
		copy_libs "$overlay_stage" "$src"
	fi
done
# The overlay must not replace the base's /lib -> usr/lib link with a directory.
for d in lib lib64 bin sbin; do
	if [[ -d "$overlay_stage/$d" && ! -L "$overlay_stage/$d" ]]; then
		mkdir -p "$overlay_stage/usr/$d"
		cp -a "$overlay_stage/$d/." "$overlay_stage/usr/$d/"
		rm -rf "${overlay_stage:?}/$d"
	fi
done
mkdir -p "$(dirname "$out")"
write_cpio "$overlay_stage" "$out.overlay"
cat "$out.base.tmp" "$out.overlay" >"$out.tmp"
rm -f "$out.overlay" "$out.base.tmp"
mv "$out.tmp" "$out"
hmbq_log "wrote $out ($(du -h "$out" | cut -f1), kernel $kver${module:+, module $(basename "$module")})"
