#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install the Debian 12 packages hmbtrace needs to build, test and run the demo.
# Idempotent: packages already present are skipped, so a second run is quick.
# Usage: scripts/install-deps.sh [--kernel] [--kernel-source] [--package]
#                               [--qemu-source] [--embedded] [--browser] [--gui]
#   --kernel   also install what the QEMU guest needs (kernel image/headers, QEMU,
#              busybox, trace-cmd, and linux-perf: the e2e tracepoint scenario's
#              perf stat) and the kernel matrix (mmdebstrap, the arm64
#              cross compiler, zstd).
#   --kernel-source  also linux-source-6.1 (kernel/patches/verify.sh: the tree the
#              nvme-pci series applies to, and checkpatch.pl).
#   --debug-kernel  also what building the debug kernel from linux-source-6.1
#              needs (mock/debug-kernel/build.sh: flex, bison, bc, libelf-dev
#              for objtool).
#   --package  also install what the Debian packages, DKMS and the install
#              check need (debhelper, dh-dkms, dkms, lintian; tests/install).
#   --qemu-source  also a deb-src entry for Debian's archive and what building
#              QEMU 7.2 from Debian's source needs (mock/qemu-nvme/build.sh: the
#              emulated SSD with the HMB and the trace capability).
#   --embedded  also what the producer's cost on an embedded core needs
#              (producer/embedded/bench.sh): qemu-user (qemu-arm: Cortex-R5)
#              and qemu-system-arm (mps2-an500: Cortex-M7), both built with
#              TCG plugins, and a deb-src entry with dpkg-dev and xz-utils to take
#              qemu-plugin.h from Debian's QEMU source package.
#   --gui      also KernelShark and a virtual X server to look at a capture
#              as a user does, headless (Xvfb, xwd, ImageMagick's convert,
#              xdotool; PLATFORM-NOTES.md).
set -euo pipefail

# libtraceevent-dev and trace-cmd: plugin_hmb.so and its unit tests.
# asciidoctor: the man pages (meson install); bash-completion: where the
# completion of hmbtrace-cmd goes. protobuf-compiler, libprotobuf-dev:
# hmbtrace-cmd export's Perfetto trace; libdeflate-dev, libzstd-dev
# (optional): its --compress at twice zlib's speed, its --zstd.
base_pkgs=(build-essential meson ninja-build pkg-config clang libclang-rt-14-dev
	   libgtest-dev libgmock-dev libbenchmark-dev gcc-arm-none-eabi
	   nlohmann-json3-dev libcli11-dev libtraceevent-dev trace-cmd
	   asciidoctor bash-completion protobuf-compiler libprotobuf-dev libdeflate-dev
	   libzstd-dev)
# mmdebstrap, gcc-aarch64-linux-gnu, zstd: the kernel matrix (mock/kernels:
# chroots of newer releases, the arm64 cross-build of the module, their
# zstd-compressed kernel images).
kernel_pkgs=(linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static
	     libtracefs-dev libtracecmd-dev cpio kmod linux-perf mmdebstrap
	     gcc-aarch64-linux-gnu zstd)

# dpkg-buildpackage (debian/), the module through DKMS, lintian, and man
# to render the packaged pages.
package_pkgs=(dpkg-dev debhelper dh-dkms dkms fakeroot lintian man-db
	      libtracefs-dev libtracecmd-dev linux-headers-amd64)

# mock/qemu-nvme/build.sh: dpkg-source (dpkg-dev) unpacks the source package;
# the four -dev packages are what QEMU's configure wants for the device set
# the harness uses (Documentation/design.rst, "Platform facts": QEMU 7.2).
qemu_source_pkgs=(dpkg-dev libglib2.0-dev libpixman-1-dev libcap-ng-dev libfdt-dev
		  libattr1-dev python3-venv)
# producer/embedded/bench.sh: qemu-arm (Cortex-R5) and qemu-system-arm's
# mps2-an500 (Cortex-M7: Debian 12's qemu-arm aborts on M-profile CPUs) run
# the sample firmware with the instruction-counting plugin; qemu-user-static
# cannot load plugins.
embedded_pkgs=(gcc-arm-none-eabi qemu-user qemu-system-arm dpkg-dev xz-utils)
gui_pkgs=(kernelshark xvfb x11-apps imagemagick xdotool)
debsrc=/etc/apt/sources.list.d/hmbtrace-debian-src.sources

# Source packages come from the same archive as the binaries: one deb-src
# entry with the URIs/Suites/Signed-By of debian.sources.
add_deb_src()
{
	local main=/etc/apt/sources.list.d/debian.sources
	if grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ ||
	   grep -qs '^deb-src ' /etc/apt/sources.list; then
		return 0
	fi
	[[ -r $main ]] || { echo "install-deps: no $main to copy a deb-src entry from" >&2; exit 1; }
	echo "install-deps: adding $debsrc"
	sed -e 's/^Types:.*/Types: deb-src/' "$main" | $SUDO tee "$debsrc" >/dev/null
	need_update=1
}

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
	SUDO="sudo"
fi
need_update=0

pkgs=("${base_pkgs[@]}")
for arg in "$@"; do
	case "$arg" in
	--kernel) pkgs+=("${kernel_pkgs[@]}") ;;
	--kernel-source) pkgs+=(linux-source-6.1 xz-utils) ;;
	--debug-kernel) pkgs+=(linux-source-6.1 xz-utils flex bison bc libelf-dev) ;;
	--package) pkgs+=("${package_pkgs[@]}") ;;
	--qemu-source) pkgs+=("${qemu_source_pkgs[@]}"); add_deb_src ;;
	--embedded) pkgs+=("${embedded_pkgs[@]}"); add_deb_src ;;
	--browser) pkgs+=(chromium) ;;
	--gui) pkgs+=("${gui_pkgs[@]}") ;;
	*) echo "install-deps: unknown option $arg (--kernel, --kernel-source, --debug-kernel, --package, --qemu-source, --embedded, --browser, --gui)" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed'; then
		missing+=("$p")
	fi
done

if ((${#missing[@]} == 0)); then
	echo "install-deps: all ${#pkgs[@]} packages present"
	# A new deb-src entry still needs its index.
	if ((need_update)); then
		$SUDO apt-get update -q
	fi
	exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
