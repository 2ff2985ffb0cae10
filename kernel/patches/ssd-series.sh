#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot Debian's kernel of a newer series (7.2) on the reference SSD
# (mock/qemu-nvme: QEMU NVMe with HMB and the trace capability) with the
# nvme-core/nvme that kernel/patches/verify-series.sh SERIES built, and check
# nvme-pci's side of the series: with the quirk set
# (nvme.quirks=1b36:0010:hmb_trace) the trace area is allocated inside the
# HMB limit, the trace area feature (FID C2h of the reference SSD) is sent
# before every HMB enable, a controller reset returns to live; without the
# quirk (--no-quirk) no trace area and no such feature. (6.12 has no quirks
# parameter: nvme.hmb_trace=1 there.) nvme-pci's side only: no reader is
# loaded here (mock/qemu-nvme/run-ssd.sh with HMBTRACE_KVER=sid|trixie
# loads hmb_trace.ko on the auxiliary device).
#
# Usage: kernel/patches/ssd-series.sh SERIES [--no-quirk]
# Run verify-series.sh SERIES first.
# HMB_SERIES_MODULES=DIR: the modules hmbtrace-nvme-dkms installed (DIR =
# .../KVER/updates/hmbtrace-nvme) instead of verify-series.sh's build; the
# guest checks that the nvme it runs is DIR's (srcversion), and also loads
# and removes DIR's nvme-fabrics and nvme-tcp, and nvmet and nvme-loop
# when DIR has them (built against the patched nvme-core: the kernel's own
# would not load on it). Output in build/ssd-series-SERIES[-noquirk]/.
# Exit 0: all checks passed; 1: one failed; 77: skipped (no reference
# QEMU, no patched build, or the kernel cannot be booted here).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
series=${1:?usage: ssd-series.sh SERIES [--no-quirk]}
quirk=1
[[ ${2:-} == --no-quirk ]] && quirk=0
export HMBTRACE_KVER=$series
# shellcheck source=mock/qemu/lib.sh
source "$repo/mock/qemu/lib.sh"
tree=${HMB_SERIES_MODULES:-$repo/build/kernel-patches-$series/tree/drivers/nvme/host}
[[ -f $tree/nvme.ko && -f $tree/nvme-core.ko ]] ||
	{ echo "ssd-series: SKIPPED: no patched build in $tree (run kernel/patches/verify-series.sh $series)"; exit 77; }
# The package's extra modules the guest loads on the patched nvme-core.
extra=()
if [[ -n ${HMB_SERIES_MODULES:-} ]]; then
	for m in nvme-fabrics nvme-tcp nvmet nvme-loop; do
		[[ ! -f $tree/$m.ko ]] || extra+=("$m")
	done
fi
qrc=0
qemu=$("$repo/mock/qemu-nvme/build.sh") || qrc=$?
((qrc == 0)) || { echo "ssd-series: SKIPPED: no reference QEMU (mock/qemu-nvme/build.sh status $qrc)"; exit 77; }
run=$repo/build/ssd-series-$series$( ((quirk)) || echo -noquirk)$([[ -z ${HMB_SERIES_MODULES:-} ]] || echo -package)
rm -rf "$run"
mkdir -p "$run/modules"
kver=$(hmbq_kver) || { echo "ssd-series: SKIPPED: kernel $series not available"; exit 77; }
hmbq_stage_modules "$kver" "$run/modules" drivers/nvme/common/nvme-auth \
	drivers/nvme/common/nvme-keyring >/dev/null ||
	{ echo "ssd-series: SKIPPED: $kver has no nvme-auth/nvme-keyring"; exit 77; }
cp "$tree/nvme-core.ko" "$tree/nvme.ko" "$run/modules/"
if ((${#extra[@]})); then
	for m in "${extra[@]}"; do cp "$tree/$m.ko" "$run/modules/"; done
	# nvmet's configfs, where the kernel builds it as a module.
	hmbq_stage_modules "$kver" "$run/modules" fs/configfs/configfs >/dev/null ||
		{ echo "ssd-series: SKIPPED: $kver has no configfs module"; exit 77; }
fi
modinfo -F srcversion "$tree/nvme.ko" >"$run/nvme.srcversion.host"
args=""
((quirk)) && args="quirks=1b36:0010:hmb_trace"
# 6.12's nvme-pci has no quirks=VID:DID:names parameter: its series' switch.
if ((quirk)) && [[ $series == 6.12 ]]; then
	args="hmb_trace=1"
fi
truncate -s 64M "$run/disk.img"
cat >"$run/scenario.sh" <<EOS
#!/bin/sh
for m in nvme-keyring nvme-auth nvme-core; do insmod /mnt/modules/\$m.ko; done
insmod /mnt/modules/nvme.ko $args
i=0; while [ ! -b /dev/nvme0n1 ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i+1)); done
dd if=/dev/nvme0n1 of=/dev/null bs=64k count=16 2>/dev/null && echo "read ok"
echo 1 > /sys/class/nvme/nvme0/reset_controller
i=0; while [ "\$(cat /sys/class/nvme/nvme0/state)" != live ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i+1)); done
echo "state \$(cat /sys/class/nvme/nvme0/state)"
cat /sys/module/nvme/srcversion > /mnt/nvme.srcversion.guest
for m in ${extra[*]}; do
	[ ! -f /mnt/modules/configfs.ko ] || [ \$m != nvmet ] || insmod /mnt/modules/configfs.ko
	insmod /mnt/modules/\$m.ko && echo "loaded \$m"
done
for m in $(printf '%s\n' "${extra[@]}" | tac | paste -sd ' '); do rmmod \$m && echo "removed \$m"; done
dmesg > /mnt/dmesg.txt
EOS
chmod +x "$run/scenario.sh"
cp "$repo/mock/qemu/guest-tap.sh" "$run/"
"$repo/mock/qemu/build-initramfs.sh" "$run/initrd.cpio.gz" >"$run/initramfs.log" 2>&1
rc=0
# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
HMBTRACE_QEMU=$qemu "$repo/mock/qemu/run-guest.sh" --share "$run" --initrd "$run/initrd.cpio.gz" \
	--timeout 240 --append hmbtrace.nvme_driver=0 --quiet \
	--qemu-arg -drive --qemu-arg "file=$run/disk.img,if=none,id=nvm0,format=raw" \
	--qemu-arg -device --qemu-arg "nvme,serial=hmbssd,drive=nvm0,hmb=on,hmb.trace=on" \
	--qemu-arg -D --qemu-arg "$run/qemu-nvme.log" \
	--qemu-arg -trace --qemu-arg enable=pci_nvme_setfeat >"$run/run-guest.log" 2>&1 || rc=$?
passed=0
failed=0
check() { if eval "$2"; then echo "ok - $1"; passed=$((passed + 1)); else echo "not ok - $1"; failed=$((failed + 1)); fi; }
check "guest ran (status $rc)" "((rc == 0))"
check "the guest runs the nvme.ko given (srcversion $(cat "$run/nvme.srcversion.host"))" \
	"cmp -s '$run/nvme.srcversion.host' '$run/nvme.srcversion.guest'"
for m in "${extra[@]}"; do
	check "$m loads on the patched nvme-core, and is removed" \
		"grep -qx 'loaded $m' '$run/guest.log' && grep -qx 'removed $m' '$run/guest.log'"
done
check "the disk reads and the controller is live after a reset" \
	"grep -qx 'read ok' '$run/guest.log' && grep -qx 'state live' '$run/guest.log'"
# fid 0xd: Host Memory Buffer; 0xc2: the reference SSD's trace area feature.
fids=$(sed -n 's/.*pci_nvme_setfeat .* fid \(0x[0-9a-f]*\) .*/\1/p' "$run/qemu-nvme.log" | tr '\n' ' ')
if ((quirk)); then
	check "trace area allocated: $(grep -o 'allocated [0-9]* KiB HMB trace area.*' "$run/dmesg.txt" | head -n1)" \
		"grep -q 'HMB trace area at HMB offset' '$run/dmesg.txt'"
	check "trace area feature before each HMB enable (Set Features: $fids)" \
		"[[ '$fids' == *'0xc2 0xd '*'0xc2 0xd '* ]]"
else
	check "no trace area without the quirk" "! grep -q 'HMB trace area' '$run/dmesg.txt'"
	check "no trace area feature without the quirk (Set Features: $fids)" "[[ '$fids' != *0xc2* && '$fids' == *0xd* ]]"
fi
check "no WARNING/BUG/Oops" "! grep -qE 'WARNING:|BUG:|Oops|Call Trace' '$run/dmesg.txt'"
echo "ssd-series-$series: $passed passed, $failed failed"
((failed == 0))
