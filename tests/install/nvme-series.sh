#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# hmbtrace-nvme-dkms on a newer kernel series (6.12: trixie, 7.2: sid), as
# far as this machine can take it without installing that release:
#   1. the package (the .deb tests/install/run.sh built) unpacked, and DKMS
#      (Debian 12's dkms script, run in the release's chroot of
#      mock/kernels/chroot.sh, with temporary DKMS trees) adds, builds and
#      installs it for Debian's kernel of that series (mock/kernels: its
#      headers, and its own nvme modules in the install tree, as DKMS's
#      version check meets them on a machine), from Debian's
#      linux-source-SERIES (the cache of kernel/patches/verify-series.sh);
#      every module of that kernel's configuration is installed, with that
#      kernel's vermagic, and hmb_trace.ko
#   2. the installed modules in a guest of that kernel on the reference SSD
#      (kernel/patches/ssd-series.sh with HMB_SERIES_MODULES, the quirk on:
#      nvme.quirks=1b36:0010:hmb_trace): the guest runs the package's nvme,
#      the trace area is placed, the controller is live after a reset,
#      nvme-fabrics, nvme-tcp, nvmet and nvme-loop load on the patched
#      nvme-core
#   3. the reset scenario of mock/qemu-nvme/run-ssd.sh on the installed
#      modules (HMB_SSD_MODULES): tracing through a controller reset,
#      exact accounting of every record, the disk's data intact
# hmb_trace.ko is built with its nvme backend, which binds to the series'
# auxiliary device.
#
# Usage: tests/install/nvme-series.sh SERIES [--debs DIR] [--no-guest]
#   --debs DIR   where hmbtrace-nvme-dkms_*.deb is (default
#                build/install-check/src, left by tests/install/run.sh)
#   --no-guest   stop after step 1
# Ends with "nvme-dkms-SERIES: N passed, M failed"; exit 0 all passed, 1 a
# check failed, 77 skipped (no package, kernel, source or chroot cached: the
# reason is printed; this never downloads or makes them).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=mock/kernels/lib.sh
source "$repo/mock/kernels/lib.sh"

series=""
debs=$repo/build/install-check/src
guest=1
while (($#)); do
	case "$1" in
	--debs) debs=${2:?--debs needs a directory}; shift 2 ;;
	--no-guest) guest=0; shift ;;
	-h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
	-*) echo "nvme-series.sh: unknown option $1" >&2; exit 2 ;;
	*) series=$1; shift ;;
	esac
done
[[ $series == 6.12 || $series == 7.2 ]] || { echo "usage: nvme-series.sh 6.12|7.2 [--debs DIR] [--no-guest]" >&2; exit 2; }
suite=$(hmbk_release "$series")
name=nvme-dkms-$series
tap_name=$name
# shellcheck source=kernel/patches/tap.sh
source "$repo/kernel/patches/tap.sh"

deb=$(find "$debs" -maxdepth 1 -name 'hmbtrace-nvme-dkms_*_all.deb' 2>/dev/null | sort -V | tail -n1)
[[ -n $deb ]] || skip "no hmbtrace-nvme-dkms .deb in $debs (run tests/install/run.sh first)"
env=$(grep -l -x "release=$suite" "$hmbk_cache"/kernels/*/kernel.env 2>/dev/null |
	xargs -r grep -l -x "arch=amd64" | sort -V | tail -n1)
[[ -n $env ]] || skip "Debian's $series kernel not in the cache (mock/kernels/fetch.sh $suite)"
kver=$(hmbk_env_get "$env" kver)
kdir=$(hmbk_env_get "$env" build)
modroot=$(hmbk_env_get "$env" modroot)
src_deb=$(find "$hmbk_cache/linux-source/$series" -maxdepth 1 -name "linux-source-${series}_*_all.deb" 2>/dev/null |
	sort -V | tail -n1)
[[ -n $src_deb ]] ||
	skip "no linux-source-$series in $hmbk_cache/linux-source/$series (kernel/patches/verify-series.sh $series)"
"$repo/mock/kernels/chroot.sh" "$suite" --cached >/dev/null 2>&1 ||
	skip "no $suite chroot cached (mock/kernels/chroot.sh $suite)"

out=$repo/build/$name
rm -rf "$out"
mkdir -p "$out/root" "$out/src" "$out/keys" "$out/tree"
dpkg -x "$deb" "$out/root"
version=$(dpkg-deb -f "$deb" Version)
# The tarball where nvme-build.sh looks (HMBTRACE_LINUX_SOURCE_DIR), inside
# the worktree that the chroot sees.
dpkg-deb --fsys-tarfile "$src_deb" | tar -xO "./usr/src/linux-source-$series.tar.xz" \
	>"$out/src/linux-source-$series.tar.xz"
# The kernel's own nvme, where DKMS looks for the module it replaces.
itree=$out/install
mkdir -p "$itree/$kver/kernel/drivers"
cp -r "$modroot/lib/modules/$kver/kernel/drivers/nvme" "$itree/$kver/kernel/drivers/"
# Debian 12's dkms (a shell script): the chroots have none.
cp /usr/sbin/dkms "$out/dkms"

cat >"$out/dkms.sh" <<EOF
#!/bin/bash
set -e
export HMBTRACE_LINUX_SOURCE_DIR=$out/src
export mok_signing_key=$out/keys/mok.key mok_certificate=$out/keys/mok.pub
o=(--sourcetree "$out/root/usr/src" --dkmstree "$out/tree" --installtree "$itree"
	-k "$kver" --kernelsourcedir "$kdir")
bash "$out/dkms" add -m hmbtrace-nvme -v "$version" "\${o[@]}"
bash "$out/dkms" build -m hmbtrace-nvme -v "$version" "\${o[@]}" ||
	{ tail -n 30 "$out/tree/hmbtrace-nvme/$version/build/make.log"; exit 1; }
bash "$out/dkms" install -m hmbtrace-nvme -v "$version" --no-depmod --force-version-override "\${o[@]}"
bash "$out/dkms" status -m hmbtrace-nvme --dkmstree "$out/tree" --installtree "$itree"
EOF
t0=$SECONDS
if nice -n 10 "$repo/mock/kernels/chroot.sh" "$suite" -- bash "$out/dkms.sh" >"$out/dkms.log" 2>&1; then
	ok "dkms add, build, install of hmbtrace-nvme-dkms for $kver in the $suite chroot ($((SECONDS - t0)) s)"
else
	tail -n 30 "$out/dkms.log"
	not_ok "dkms add, build, install of hmbtrace-nvme-dkms for $kver in the $suite chroot (log: $out/dkms.log)"
	finish
fi

# What it installed, uncompressed for the guest, against what the kernel's
# configuration asks for.
mods=$out/nvme-modules
mkdir -p "$mods"
for f in "$itree/$kver/updates/dkms"/*.ko*; do
	case $f in
	*.ko.xz) xz -dc "$f" >"$mods/$(basename "$f" .xz)" ;;
	*.ko.zst) zstd -qdc "$f" >"$mods/$(basename "$f" .zst)" ;;
	*) cp "$f" "$mods/" ;;
	esac
done
want=$(bash "$out/root/usr/src/hmbtrace-nvme-$version/kernel/patches/nvme-build.sh" --list \
	--hmb-trace "$out/root/usr/src/hmbtrace-nvme-$version" "$kver" "$kdir" | sort | paste -sd ' ')
got=$(find "$mods" -name '*.ko' -printf '%f\n' | sed 's/\.ko$//' | sort | paste -sd ' ')
if [[ -n $got && $got == "$want" ]]; then
	ok "installed in updates/dkms: $got"
else
	not_ok "installed in updates/dkms: '$got', the configuration of $kver asks for '$want'"
fi
bad=""
for f in "$mods"/*.ko; do
	[[ $(modinfo -F vermagic "$f") == "$kver "* ]] || bad+=" $(basename "$f")"
done
if [[ -z $bad ]]; then
	ok "every module has the vermagic of $kver"
else
	not_ok "not built for $kver:$bad"
fi
# The backend binds to the auxiliary device (an alias; it imports nothing
# from nvme).
if modinfo -F alias "$mods/hmb_trace.ko" | grep -qx 'auxiliary:nvme.hmb_trace'; then
	ok "hmb_trace.ko with its nvme backend, bound to the series' auxiliary device (auxiliary:nvme.hmb_trace)"
else
	not_ok "hmb_trace.ko: expected with its nvme backend on the $series series' auxiliary device"
fi

# guest_check LOG WHAT COMMAND...: one check from a guest run, its output in
# LOG; 77 is a skip (no reference SSD here), with the run's reason.
guest_check() {
	local log=$1 what=$2 t0=$SECONDS grc=0
	shift 2
	"$@" >"$log" 2>&1 || grc=$?
	sed 's/^/    /' "$log" | grep -E '^    (guest: )?(ok|not ok) - ' || true
	if ((grc == 0)); then
		ok "$what ($((SECONDS - t0)) s)"
	elif ((grc == 77)); then
		tail -n 3 "$log"
		skip "no reference SSD guest here (the reason is above)"
	else
		tail -n 5 "$log"
		not_ok "$what (log: $log)"
	fi
}

if ((guest)); then
	guest_check "$out/ssd-series.log" \
		"the installed modules in a $kver guest on the reference SSD: area placed, reset, transports and target load" \
		env HMB_SERIES_MODULES="$mods" "$repo/kernel/patches/ssd-series.sh" "$series"
	guest_check "$out/ssd-reset.log" \
		"the installed modules pass the reference SSD's reset scenario on $kver" \
		env HMBTRACE_KVER="$series" HMB_SSD_MODULES="$mods" "$repo/mock/qemu-nvme/run-ssd.sh" reset
fi
finish
