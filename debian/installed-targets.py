#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Prints the ninja targets (paths relative to the build dir) of every
target that meson installs, so that a build without tests builds just
those (debian/rules with DEB_BUILD_OPTIONS=nocheck)."""
import json
import os
import subprocess
import sys

build_dir = sys.argv[1]
targets = json.loads(subprocess.run(['meson', 'introspect', '--targets', build_dir],
                                    check=True, capture_output=True, text=True).stdout)
root = os.path.realpath(build_dir)
for target in targets:
    if target.get('installed'):
        for path in target['filename']:
            print(os.path.relpath(path, root))
