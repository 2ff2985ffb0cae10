#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Extract the uncompressed ELF vmlinux from an x86 bzImage, for a faster TCG boot.

Usage: extract-vmlinux.py BZIMAGE OUT

Under TCG the bzImage's own decompressor (xz on Debian) takes about 6 s. QEMU boots
an ELF vmlinux that carries a PVH entry note (CONFIG_PVH=y, as Debian's kernel has)
directly, with the same -initrd and -append, and skips that step.

Exit status 0 when OUT was written and has a PVH entry note; 1 otherwise (the
caller then boots the bzImage as usual).
"""
import bz2
import gzip
import lzma
import os
import shutil
import struct
import subprocess
import sys

XEN_ELFNOTE_PHYS32_ENTRY = 18


def payload(image):
    """The compressed kernel inside a bzImage, from its setup header."""
    if image[0x202:0x206] != b"HdrS":
        raise ValueError("not a bzImage (no HdrS)")
    setup_sects = image[0x1F1] or 4
    offset, length = struct.unpack_from("<II", image, 0x248)
    start = (setup_sects + 1) * 512 + offset
    if length == 0 or start + length > len(image):
        raise ValueError("bad payload_offset/payload_length")
    return image[start:start + length]


def decompress(data):
    if data.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data)
    if data.startswith(b"\x1f\x8b"):
        return gzip.decompress(data)
    if data.startswith(b"BZh"):
        return bz2.BZ2Decompressor().decompress(data)
    if data.startswith(b"\x5d\x00"):
        return lzma.LZMADecompressor(format=lzma.FORMAT_ALONE).decompress(data)
    if data.startswith(b"\x28\xb5\x2f\xfd"):
        return unzstd(data)
    raise ValueError("payload compression not supported by the Python stdlib "
                     "(lz4/lzo?)")


def unzstd(data):
    """zstd (Debian's kernels from 6.12 on) through the zstd program: the
    Python stdlib has no zstd before 3.14. The kernel appends the
    uncompressed size (4 bytes) after the frame: strip it if zstd objects."""
    if not shutil.which("zstd"):
        raise ValueError("zstd payload and no zstd program (Debian package zstd)")
    for frame in (data, data[:-4]):
        r = subprocess.run(["zstd", "-dcq"], input=frame, capture_output=True,
                           check=False)
        if r.returncode == 0:
            return r.stdout
    raise ValueError("zstd -d failed: " + r.stderr.decode(errors="replace").strip())


def has_pvh_note(elf):
    """True when a PT_NOTE segment holds the Xen PHYS32_ENTRY note (PVH boot)."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        return False
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from(
            "<IIQQQQ", elf, phoff + i * phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        pos, end = p_offset, p_offset + p_filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            name = elf[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and ntype == XEN_ELFNOTE_PHYS32_ENTRY:
                return True
            pos += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
    return False


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, out = sys.argv[1:]
    try:
        with open(src, "rb") as f:
            elf = decompress(payload(f.read()))
    except (OSError, ValueError, lzma.LZMAError, EOFError) as e:
        print(f"extract-vmlinux: {src}: {e}", file=sys.stderr)
        return 1
    if not has_pvh_note(elf):
        print(f"extract-vmlinux: {src}: no PVH entry note (CONFIG_PVH off?)",
              file=sys.stderr)
        return 1
    tmp = f"{out}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(elf)
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
