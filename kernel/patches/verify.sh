#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Verify the nvme-pci HMB trace series (kernel/patches/0001..) without an SSD:
#   1. extract drivers/nvme/host, include/linux/nvme.h, checkpatch.pl and
#      MAINTAINERS from Debian's linux-source-6.1 (cached in the build dir)
#   2. apply the patches in order (patch -p1, no fuzz)
#   3. build the patched nvme-core.ko and nvme.ko as external modules
#      against the installed headers (/lib/modules/KVER/build), -Werror
#   4. checkpatch.pl --strict every patch
#   5. build hmb_trace.ko with its nvme backend against the patched header
#      (W=1, -Werror): it subscribes to nvme's notifier, nvme imports nothing
#   6. boot Debian's kernel in QEMU with an emulated NVMe disk (-device nvme:
#      no HMB, no HMB trace capability), load the patched modules instead of
#      Debian's, and check that the disk works as before: data written and
#      read back verified (also from the host, in the disk image), a
#      controller reset through sysfs, rmmod, no WARNING/BUG/Oops in dmesg;
#      hmb_trace.ko (nvme backend) subscribes and unsubscribes meanwhile
#      (with no HMB there is no area); then, with the test-only
#      nvme_hmb_fake.ko standing in for nvme's API (kernel/patches/test), the
#      backend gets a producer-written area: replay to a late subscriber,
#      records delivered, control command statuses, clock fits, a reset with
#      a new generation, FREEING
#
# Usage: kernel/patches/verify.sh [--build-dir DIR] [--no-guest] [--keep]
#   --build-dir DIR  cache and work directory (default build/kernel-patches)
#   --no-guest       stop after step 5
#   --keep           keep the guest's run directory (disk image, dmesg)
#
# Prints one "ok - ..." or "not ok - ..." line per check and ends with
# "kernel-patches: N passed, M failed". Exit status 0: all passed; 1: a
# check failed; 77: skipped, because linux-source-6.1 is not installed and
# could not be installed (the reason is printed; scripts/test.sh counts it).
#
# Environment: LINUX_SOURCE_TAR (default /usr/src/linux-source-6.1.tar.xz),
# KDIR (default the build tree of the kernel the guest boots,
# /lib/modules/KVER/build), HMBTRACE_KVER and HMBTRACE_KERNEL_DIR (that
# kernel, as in mock/qemu/lib.sh).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=mock/qemu/lib.sh
source "$repo/mock/qemu/lib.sh"

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

bdir=$repo/build/kernel-patches
guest=1
keep=0
while (($#)); do
	case "$1" in
	--build-dir) bdir=${2:?--build-dir needs a directory}; shift 2 ;;
	--no-guest) guest=0; shift ;;
	--keep) keep=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "verify.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done

tap_name=kernel-patches
# shellcheck source=kernel/patches/tap.sh
source "$here/tap.sh"

tarball=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.1.tar.xz}
if [[ ! -f "$tarball" && -z "${LINUX_SOURCE_TAR:-}" ]]; then
	echo "verify.sh: $tarball missing: installing linux-source-6.1" >&2
	"$repo/scripts/install-deps.sh" --kernel-source >&2 || true
fi
[[ -f "$tarball" ]] ||
	skip "$tarball not found and linux-source-6.1 could not be installed (apt-get install linux-source-6.1)"
top=$(basename "$tarball" .tar.xz)

kver=$(hmbq_kver)
kdir=${KDIR:-$(hmbq_kernel_build "$kver")}
[[ -f "$kdir/Makefile" ]] ||
	{ not_ok "kernel headers $kdir missing (apt-get install linux-headers-amd64)"; finish; }

patches=()
for p in "$here"/0[0-9][0-9][0-9]-*.patch; do
	p=$(basename "$p")
	[[ "$p" == 0000-* || ! -f "$here/$p" ]] || patches+=("$p")
done
((${#patches[@]})) || { not_ok "no patches in $here"; finish; }
echo "verify.sh: ${#patches[@]} patches against $tarball, headers $kdir"

# 1. The parts of the source we need, extracted once per tarball (~40 s:
# xz is read to the end whatever we take).
members=(drivers/nvme/host include/linux/nvme.h scripts/checkpatch.pl
	scripts/spelling.txt scripts/const_structs.checkpatch MAINTAINERS)
src=$bdir/src
stamp="$(stat -c '%s %Y' "$tarball") ${members[*]}"
if [[ ! -f "$src/.stamp" || "$(cat "$src/.stamp")" != "$stamp" ]]; then
	echo "verify.sh: extracting ${members[*]} from $tarball" >&2
	rm -rf "$src"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1 "${members[@]/#/$top/}"
	echo "$stamp" >"$src/.stamp"
fi

# 2. Apply, in order, to a fresh copy.
tree=$bdir/tree
rm -rf "$tree"
mkdir -p "$tree"
cp -a "$src/drivers" "$src/include" "$tree/"
applied=1
for p in "${patches[@]}"; do
	if ! out=$(patch -d "$tree" -p1 --fuzz=0 --no-backup-if-mismatch -s <"$here/$p" 2>&1); then
		not_ok "apply $p: $out"
		applied=0
		break
	fi
done
((applied)) && ok "the ${#patches[@]} patches apply in order to $top (patch -p1, no fuzz)"
((applied)) || finish

# 3. Build nvme-core.ko and nvme.ko. The fabrics transports are not built
# (they are not what the series changes). The new header is found with
# -I after the installed headers' own include paths.
hash=$(cat "$here"/0*.patch "$kdir/Module.symvers" 2>/dev/null | sha256sum | cut -c1-16)
mods=$bdir/modules
if [[ -f "$mods/.stamp" && "$(cat "$mods/.stamp")" == "$hash" && -f "$mods/nvme.ko" &&
	-f "$mods/Module.symvers" ]]; then
	ok "patched nvme-core.ko and nvme.ko built with -Werror (cached: same patches, same headers)"
else
	rm -rf "$mods"
	log=$bdir/build.log
	if make -C "$kdir" M="$tree/drivers/nvme/host" -j2 \
		KCFLAGS="-Werror -I$tree/include" \
		CONFIG_NVME_FABRICS= CONFIG_NVME_RDMA= CONFIG_NVME_FC= \
		CONFIG_NVME_TCP= CONFIG_NVME_APPLE= modules >"$log" 2>&1 &&
		[[ -f "$tree/drivers/nvme/host/nvme.ko" && -f "$tree/drivers/nvme/host/nvme-core.ko" ]]; then
		mkdir -p "$mods"
		cp "$tree/drivers/nvme/host/nvme-core.ko" "$tree/drivers/nvme/host/nvme.ko" \
			"$tree/drivers/nvme/host/Module.symvers" "$mods/"
		echo "$hash" >"$mods/.stamp"
		ok "patched nvme-core.ko and nvme.ko built with -Werror against $kdir"
	else
		grep -E 'error|warning' "$log" | head -n 20 || tail -n 20 "$log"
		not_ok "build of the patched drivers/nvme/host (log: $log)"
	fi
fi

# 4. checkpatch --strict. FILE_PATH_CHANGES only asks whether MAINTAINERS
# needs an entry for a new file: the NVM EXPRESS DRIVER entry's
# "F: include/linux/nvme*" covers include/linux/nvme-hmb-trace.h, which
# is checked here instead.
if awk '/^NVM EXPRESS DRIVER$/ { s = 1 } s && /^$/ { exit } s && $0 == "F:\tinclude/linux/nvme*" { f = 1 } END { exit !f }' \
	"$src/MAINTAINERS"; then
	ok "MAINTAINERS: NVM EXPRESS DRIVER covers include/linux/nvme*"
else
	not_ok "MAINTAINERS: NVM EXPRESS DRIVER no longer lists include/linux/nvme*: the series must add its header there"
fi
for p in "${patches[@]}"; do
	if out=$(cd "$src" && perl scripts/checkpatch.pl --strict --no-tree --show-types \
		--ignore FILE_PATH_CHANGES "$here/$p" 2>&1) &&
		[[ "$out" == *"total: 0 errors, 0 warnings, 0 checks"* ]]; then
		ok "checkpatch --strict $p"
	else
		echo "$out" | grep -E "^(ERROR|WARNING|CHECK|#)" | head -n 20
		not_ok "checkpatch --strict $p"
	fi
done

# 5. hmb_trace.ko with the nvme backend, built in a copy of the tree
# layout it needs (kernel/hmb_trace, consumer, clock, include).
hmb=$bdir/hmb_trace
if [[ -f "$mods/Module.symvers" ]]; then
	cp "$mods/Module.symvers" "$tree/drivers/nvme/host/"
	hhash=$( (cat "$mods/.stamp"; cd "$repo" && find kernel/hmb_trace kernel/patches/test \
		consumer clock include producer \
		-type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \) | sort | xargs cat) |
		sha256sum | cut -c1-16)
	if [[ -f "$hmb/.stamp" && "$(cat "$hmb/.stamp")" == "$hhash" && -f "$hmb/hmb_trace.ko" &&
		-f "$hmb/nvme_hmb_fake.ko" ]]; then
		ok "hmb_trace.ko with the nvme backend built with W=1 -Werror (cached: same sources)"
	else
		rm -rf "$hmb"
		mkdir -p "$hmb/src"
		cp -r "$repo/kernel" "$repo/consumer" "$repo/clock" "$repo/include" \
			"$repo/producer" "$hmb/src/"
		log=$bdir/hmb_trace-build.log
		if make -C "$hmb/src/kernel/hmb_trace" KDIR="$kdir" W=1 KCFLAGS=-Werror \
			NVME_HMB_TRACE_TREE="$tree" -j2 >"$log" 2>&1 &&
			[[ -f "$hmb/src/kernel/hmb_trace/hmb_trace_nvme.o" ]] &&
			modinfo -F depends "$hmb/src/kernel/hmb_trace/hmb_trace.ko" | grep -qw nvme; then
			cp "$hmb/src/kernel/hmb_trace/hmb_trace.ko" "$hmb/"
			ok "hmb_trace.ko with the nvme backend built with W=1 -Werror (depends: $(modinfo -F depends "$hmb/hmb_trace.ko"))"
			# The test-only stand-in for nvme's API, for the guest.
			if make -C "$hmb/src/kernel/patches/test" KDIR="$kdir" KCFLAGS=-Werror \
				NVME_HMB_TRACE_TREE="$tree" >>"$log" 2>&1; then
				cp "$hmb/src/kernel/patches/test/nvme_hmb_fake.ko" "$hmb/"
				echo "$hhash" >"$hmb/.stamp"
			else
				grep -E 'error|warning' "$log" | head -n 20
				not_ok "test module nvme_hmb_fake.ko (log: $log)"
			fi
		else
			grep -E 'error|warning' "$log" | head -n 20 || tail -n 20 "$log"
			not_ok "hmb_trace.ko with the nvme backend (log: $log)"
		fi
	fi
else
	not_ok "hmb_trace.ko with the nvme backend: no patched nvme build to link against"
fi
if [[ -f "$mods/nvme.ko" ]] && ! modinfo -F depends "$mods/nvme.ko" | grep -q hmb_trace; then
	ok "nvme.ko imports nothing from hmb_trace (depends: $(modinfo -F depends "$mods/nvme.ko"))"
else
	not_ok "nvme.ko missing, or it depends on hmb_trace"
fi

if ((!guest)) || [[ ! -f "$mods/nvme.ko" ]]; then
	((guest)) && not_ok "QEMU guest: no patched modules to load"
	finish
fi

# 5. The guest: Debian's kernel, an emulated NVMe disk, the patched nvme.
run=$bdir/guest
rm -rf "$run"
mkdir -p "$run/modules"
if ! missing=$(hmbq_stage_modules "$kver" "$run/modules" "${hmbq_nvme_deps[@]}"); then
	not_ok "guest: $missing"
	finish
fi
cp "$mods/nvme-core.ko" "$mods/nvme.ko" "$run/modules/"
[[ -f "$hmb/hmb_trace.ko" ]] && cp "$hmb/hmb_trace.ko" "$run/modules/"
[[ -f "$hmb/nvme_hmb_fake.ko" ]] && cp "$hmb/nvme_hmb_fake.ko" "$run/modules/"
modinfo -F srcversion "$mods/nvme.ko" >"$run/nvme.srcversion"
modinfo -F srcversion "$mods/nvme-core.ko" >"$run/nvme-core.srcversion"

# Patterns: A and C are written by the guest (before and after the
# reset) and checked in the image by the host; B is put in the image by
# the host and read by the guest.
disk=$run/disk.img
truncate -s 64M "$disk"
head -c 1048576 /dev/urandom >"$run/a.bin"
head -c 1048576 /dev/urandom >"$run/b.bin"
head -c 1048576 /dev/urandom >"$run/c.bin"
dd if="$run/b.bin" of="$disk" bs=1M seek=4 conv=notrunc status=none
cp "$here/verify-guest.sh" "$run/scenario.sh"
cp "$repo/mock/qemu/guest-tap.sh" "$run/"

initrd=$run/initrd.cpio.gz
"$repo/mock/qemu/build-initramfs.sh" "$initrd" >"$run/initramfs.log" 2>&1 ||
	{ tail -n 5 "$run/initramfs.log"; not_ok "guest initramfs"; finish; }

# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
qemu_nvme=(--qemu-arg -drive --qemu-arg "file=$disk,if=none,id=nvm0,format=raw"
	--qemu-arg -device --qemu-arg nvme,serial=hmbverify,drive=nvm0)
t_guest=$SECONDS
rc=0
# hmbtrace.nvme_driver=0: the guest's init leaves the disk to the patched
# modules this scenario loads (it loads Debian's nvme for any controller).
"$repo/mock/qemu/run-guest.sh" --share "$run" --initrd "$initrd" --timeout 150 \
	--append hmbtrace.nvme_driver=0 \
	--quiet "${qemu_nvme[@]}" >"$run/run-guest.log" 2>&1 || rc=$?
echo "verify.sh: guest ran $((SECONDS - t_guest)) s (status $rc); console: $run/console.log"
# The guest's own checks, one line each.
grep -E '^(ok|not ok) - ' "$run/guest.log" 2>/dev/null | sed 's/^/guest: /' || true
g_ok=$(grep -c '^ok - ' "$run/guest.log" 2>/dev/null || true)
g_fail=$(grep -c '^not ok - ' "$run/guest.log" 2>/dev/null || true)
if ((rc == 0 && g_fail == 0 && g_ok > 0)); then
	ok "QEMU guest: the patched nvme drives the emulated disk ($g_ok checks)"
else
	tail -n 15 "$run/console.log" 2>/dev/null || true
	not_ok "QEMU guest: status $rc, $g_ok checks passed, $g_fail failed (see $run)"
fi

# The crash dump the first reset took (hmb_trace_dump.c): all delivered,
# so per core nothing between start_seq and end_seq, both 100.
if [[ -f $run/coredump.bin ]]; then
	if out=$(PYTHONPATH="$repo/tests/lib" python3 - "$run/coredump.bin" <<'PY' 2>&1
import sys
from hmbtest.dump import parse, identity_errors, DumpError
try:
    d = parse(open(sys.argv[1], "rb").read())
except DumpError as e:
    sys.exit(f"not a valid dump: {e}")
h = d["header"]
errs = identity_errors(d)
seqs = [(c["start_seq"], c["end_seq"]) for c in d["cores"]]
if h["name"] != "fake0" or h["producer_gen"] != 1 or h["nr_cores"] != 2:
    errs.append(f"header: {h['name']} generation {h['producer_gen']}, "
                f"{h['nr_cores']} cores")
if seqs != [(100, 100), (100, 100)] or d["records"]:
    errs.append(f"cores (start_seq, end_seq) {seqs}, {len(d['records'])} records")
if not h["flags"] & 1:
    errs.append("no dictionary")
# The fake's two commands in flight (nvme_hmb_fake_main.c).
cmds = [(c["qid"], c["cid"], c["opcode"], c["nsid"], c["nlb"], c["slba"])
        for c in d["inflight"]]
if not h["flags"] & 8 or cmds != [(0, 0x1003, 2, 0xffffffff, 0, 0),
                                  (1, 0x2007, 2, 1, 8, 4096)]:
    errs.append(f"in flight {cmds} (flags {h['flags']:#x})")
print("; ".join(errs) + " in " if errs else "", end="")
print(f"{len(d['sections'])} sections, {h['total_len']} bytes, copied in "
      f"{h['copy_ns']} ns")
sys.exit(1 if errs else 0)
PY
	); then
		ok "crash dump of fake0 at the first reset: generation 1, seq 100..100 per core, dictionary, the 2 commands in flight ($out)"
	else
		not_ok "crash dump of fake0: $out"
	fi
else
	not_ok "crash dump of fake0: the guest saved none ($run/coredump.bin)"
fi

# What the guest wrote reached the device: read it back from the image.
a_ok=0
c_ok=0
cmp -s -n 1048576 "$run/a.bin" "$disk" && a_ok=1
cmp -s -n 1048576 "$run/c.bin" <(dd if="$disk" bs=1M skip=8 count=1 status=none) && c_ok=1
if ((a_ok && c_ok)); then
	ok "disk image holds the guest's writes from before and after the reset"
else
	not_ok "disk image: the guest's write before the reset $( ((a_ok)) && echo found || echo missing), after it $( ((c_ok)) && echo found || echo missing)"
fi
((keep)) || rm -f "$disk" "$initrd"
finish
