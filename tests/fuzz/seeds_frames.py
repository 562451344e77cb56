#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Seeds for fuzz_parse: one file per frame of the captures.

Usage: seeds_frames.py OUTDIR PCAP...  (classic little-endian pcap)
"""

import os
import struct
import sys


def frames(path):
    """Every frame of the classic pcap file at path."""
    data = open(path, 'rb').read()
    off = 24
    while off + 16 <= len(data):
        caplen = struct.unpack_from('<I', data, off + 8)[0]
        yield data[off + 16:off + 16 + caplen]
        off += 16 + caplen


def main():
    out = sys.argv[1]
    n = 0
    for path in sys.argv[2:]:
        for frame in frames(path):
            n += 1
            with open(os.path.join(out, '%05d' % n), 'wb') as f:
                f.write(frame)
    print('seeded with %d frames' % n)


if __name__ == '__main__':
    main()
