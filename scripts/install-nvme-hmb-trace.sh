#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# For a machine whose SSD has the HMB trace capability: build the nvme driver
# of kernel/patches and hmb_trace.ko with its nvme backend for an installed
# kernel, and install them where modprobe prefers them to the kernel's own:
# /lib/modules/KVER/updates/hmbtrace/. The hmbtrace-nvme-dkms package does
# the same for every installed kernel through DKMS; both run one recipe,
# kernel/patches/nvme-build.sh (its header says what it builds and why):
#   nvme-core.ko, nvme.ko   the patched driver
#   the modules KVER's configuration builds that must be rebuilt with them
#   (nvme-fabrics, nvme-tcp, nvme-rdma, nvme-fc; the NVMe target where it
#                           links to the host side): the series adds a field
#                           to struct nvme_ctrl, so the kernel's own would
#                           not load on the patched nvme-core (their symbol
#                           versions differ)
#   hmb_trace.ko            with the nvme backend, against the patched nvme
#                           (the 6.1 series: the 6.12 and 7.2 series have no
#                           interface for it yet)
# then depmod and update-initramfs -u (Debian's initramfs carries nvme).
# hmbtrace-dkms's hmb_trace.ko has no nvme backend (Debian's headers do not
# have the series): remove it for KVER (dkms remove hmbtrace/VERSION -k
# KVER) so that modprobe finds this one.
#
# Needs: linux-source-X.Y of KVER's series (scripts/install-deps.sh
# --kernel-source for 6.1) and linux-headers-KVER.
# Usage: scripts/install-nvme-hmb-trace.sh [--kver KVER] [--destdir DIR]
#                                          [--build-dir DIR]
#   --kver KVER      the kernel to build for (default: the running one)
#   --destdir DIR    install under DIR, a staging root (no depmod, no
#                    update-initramfs); without it this must run as root
#   --build-dir DIR  work directory (default build/nvme-hmb-trace)
# Undo: rm -r /lib/modules/KVER/updates/hmbtrace; depmod KVER;
#       update-initramfs -u -k KVER
# Exit status 77 when there is no linux-source-X.Y to build from, 3 when
# there is no series for KVER's kernel series (the reason is printed).
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

kdir=/lib/modules/$kver/build
[[ -d $kdir ]] || die "no $kdir: install linux-headers-$kver"
[[ -n $destdir || $EUID -eq 0 ]] || die "installing into /lib/modules needs root (or --destdir DIR)"
mkdir -p "$bdir"
bdir=$(cd "$bdir" && pwd)

echo "install-nvme-hmb-trace: building for $kver in $bdir (kernel/patches/nvme-build.sh)"
rm -rf "$bdir/modules"
brc=0
"$repo/kernel/patches/nvme-build.sh" --hmb-trace "$repo" "$kver" "$kdir" "$bdir/modules" || brc=$?
# 77: no linux-source-X.Y; 3: no series for this kernel (it said why).
((brc != 77 && brc != 3)) || exit $brc
((brc == 0)) || die "kernel/patches/nvme-build.sh failed (see above)"
[[ -f $bdir/modules/hmb_trace.ko ]] ||
	echo "install-nvme-hmb-trace: no hmb_trace.ko for $kver: its series has no interface for the nvme backend yet"
mapfile -t mods < <(cd "$bdir/modules" && ls ./*.ko)

dest=$destdir/lib/modules/$kver/updates/hmbtrace
install -d "$dest"
for m in "${mods[@]}"; do
	install -m 0644 "$bdir/modules/$m" "$dest/"
done
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
