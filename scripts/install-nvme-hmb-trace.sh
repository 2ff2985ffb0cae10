#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# For a Debian 12 machine whose SSD has the HMB trace capability: build the
# nvme driver of kernel/patches and hmb_trace.ko with its nvme backend for
# an installed 6.1 kernel, and install them where modprobe prefers them to
# the kernel's own: /lib/modules/KVER/updates/hmbtrace/.
#
# From Debian's linux-source-6.1 (drivers/nvme/host) with the series
# applied (kernel/patches/verify.sh --no-guest extracts, patches, checks and
# builds nvme-core.ko, nvme.ko and hmb_trace.ko):
#   nvme-core.ko, nvme.ko   the patched driver
#   nvme-fabrics.ko and the transports KVER's configuration builds
#   (nvme-tcp, nvme-rdma, nvme-fc), from the same tree: the series adds a
#                           field to struct nvme_ctrl, so the kernel's own
#                           transports would not load on the patched
#                           nvme-core (their symbol versions differ)
#   hmb_trace.ko            with the nvme backend, against the patched nvme
# then depmod and update-initramfs -u (Debian's initramfs carries nvme).
# hmbtrace-dkms's hmb_trace.ko has no nvme backend (Debian's headers do not
# have the series): remove it for KVER (dkms remove hmbtrace/VERSION -k
# KVER) so that modprobe finds this one.
#
# Needs: scripts/install-deps.sh --kernel-source (linux-source-6.1, of the
# same 6.1 release as KVER) and linux-headers-KVER.
# Usage: scripts/install-nvme-hmb-trace.sh [--kver KVER] [--destdir DIR]
#                                          [--build-dir DIR]
#   --kver KVER      the kernel to build for (default: the running one)
#   --destdir DIR    install under DIR, a staging root (no depmod, no
#                    update-initramfs); without it this must run as root
#   --build-dir DIR  work directory (default build/nvme-hmb-trace)
# Undo: rm -r /lib/modules/KVER/updates/hmbtrace; depmod KVER;
#       update-initramfs -u -k KVER
# Exit status 77 when there is no linux-source-6.1 to build from.
# Tested by scripts/test.sh: into a staging root, then
# mock/qemu-nvme/run-ssd.sh reset on what it installed (HMB_SSD_MODULES).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

kver=$(uname -r)
destdir=""
bdir=$repo/build/nvme-hmb-trace
while (($#)); do
	case "$1" in
	--kver) kver=${2:?--kver needs a kernel release}; shift 2 ;;
	--destdir) destdir=${2:?--destdir needs a directory}; shift 2 ;;
	--build-dir) bdir=${2:?--build-dir needs a directory}; shift 2 ;;
	-h | --help) usage 0 ;;
	*) echo "install-nvme-hmb-trace: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
die() { echo "install-nvme-hmb-trace: $*" >&2; exit 1; }

[[ $kver == 6.1.* ]] ||
	die "kernel $kver: the series is against Linux 6.1 (Debian 12); give --kver of an installed 6.1 kernel"
kdir=/lib/modules/$kver/build
[[ -d $kdir ]] || die "no $kdir: install linux-headers-$kver"
[[ -n $destdir || $EUID -eq 0 ]] || die "installing into /lib/modules needs root (or --destdir DIR)"
mkdir -p "$bdir"
bdir=$(cd "$bdir" && pwd)

# The patched tree, nvme-core.ko, nvme.ko and hmb_trace.ko, with the
# series' own checks (it says what is missing, e.g. linux-source-6.1).
echo "install-nvme-hmb-trace: building for $kver in $bdir (kernel/patches/verify.sh --no-guest)"
vrc=0
HMBTRACE_KVER=$kver "$repo/kernel/patches/verify.sh" --no-guest --build-dir "$bdir" || vrc=$?
# 77: no linux-source-6.1 (verify.sh said so).
((vrc != 77)) || exit 77
((vrc == 0)) || die "kernel/patches/verify.sh --no-guest failed (see above)"
tree=$bdir/tree
# Every module of drivers/nvme/host that KVER's configuration builds.
log=$bdir/all-modules.log
make -C "$kdir" M="$tree/drivers/nvme/host" KCFLAGS="-I$tree/include" -j"$(nproc)" \
	modules >"$log" 2>&1 || { tail -n 20 "$log"; die "build of drivers/nvme/host failed (log: $log)"; }
mapfile -t mods < <(cd "$tree/drivers/nvme/host" && ls ./*.ko)
[[ " ${mods[*]} " == *" ./nvme-core.ko "* && " ${mods[*]} " == *" ./nvme.ko "* ]] ||
	die "no nvme-core.ko or nvme.ko in $tree/drivers/nvme/host"

dest=$destdir/lib/modules/$kver/updates/hmbtrace
install -d "$dest"
for m in "${mods[@]}"; do
	install -m 0644 "$tree/drivers/nvme/host/$m" "$dest/"
done
install -m 0644 "$bdir/hmb_trace/hmb_trace.ko" "$dest/"
echo "install-nvme-hmb-trace: installed in $dest: $(cd "$dest" && echo ./*.ko | sed 's|\./||g')"
if [[ -n $destdir ]]; then
	echo "install-nvme-hmb-trace: staging root: no depmod, no update-initramfs"
	exit 0
fi
depmod "$kver"
if command -v update-initramfs >/dev/null; then
	update-initramfs -u -k "$kver"
fi
echo "install-nvme-hmb-trace: done; reboot into $kver (or: modprobe -r nvme && modprobe nvme)," \
	"then modprobe hmb_trace"
