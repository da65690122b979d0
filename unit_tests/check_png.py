# SPDX-License-Identifier: Apache-2.0
"""Reads the PNGs of stencil_test_io's PngForExternalDecoder with
matplotlib (Pillow and zlib underneath), a decoder that shares nothing with
the writer or with the test's own reader.

Usage: check_png.py path/to/stencil_test_io
"""
import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402


def levels(path):
    """The image as 8-bit levels: imread gives floats in [0, 1]."""
    image = mpimg.imread(path)
    return [[[round(float(c) * 255) for c in pixel[:3]] for pixel in row]
            for row in image]


def main():
    test = sys.argv[1]
    with tempfile.TemporaryDirectory() as directory:
        env = dict(os.environ, STENCIL_TEST_PNG_DIR=directory,
                   OMP_PROC_BIND="false")
        subprocess.run([test, "--gtest_filter=*PngForExternalDecoder*"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        failures = []

        grey = levels(os.path.join(directory, "grey16.png"))
        if len(grey) != 16 or any(len(row) != 16 for row in grey):
            failures.append("grey16.png is not 16 x 16")
        else:
            for r in range(16):
                for c in range(16):
                    v = (15 - r) * 16 + c  # row 0 is the grid's last row
                    if grey[r][c] != [v, v, v]:
                        failures.append(f"grey16.png ({r}, {c}) is "
                                        f"{grey[r][c]}, not {[v, v, v]}")

        viridis = levels(os.path.join(directory, "viridis.png"))
        if len(viridis) != 8 or len(viridis[0]) != 12:
            failures.append("viridis.png is not 12 x 8")
        else:
            for (r, c), expected in (((7, 0), [68, 1, 84]),
                                     ((0, 11), [253, 231, 37])):
                if viridis[r][c] != expected:
                    failures.append(f"viridis.png ({r}, {c}) is "
                                    f"{viridis[r][c]}, not {expected}")

    for failure in failures[:10]:
        print(failure)
    print("FAIL" if failures else "PASS: matplotlib reads both images")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
