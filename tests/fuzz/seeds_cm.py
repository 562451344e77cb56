#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Seeds for fuzz_cm: the CM MADs of the rdma_cm captures.

Usage: seeds_cm.py OUTDIR PCAP...  (classic little-endian pcap; files
whose name does not start with rdma_cm_ are skipped)

An input of fuzz_cm is a sequence of records: a control byte, then a
256-byte MAD (enum ctl of fuzz_cm.c). Written: each MAD alone, as is and
with every patch, and each capture's MADs in order, once with their
connect requests left pending and once accepted.
"""

import os
import struct
import sys

from seeds_frames import frames

MAD_LEN = 256
UDP_ROCE = 4791
BTH_LEN, DETH_LEN = 12, 8
UD_SEND_ONLY = 0x64

# control byte: fix header, service, comm IDs; answer in bits 3-4
FIX, SERVICE, CONN = 0x01, 0x02, 0x04
LEAVE, ACCEPT, REJECT, DESTROY = (a << 3 for a in range(4))


def cm_mads(frame):
    """The MAD of frame if it is a UD SEND to QP1 over RoCEv2, else None."""
    off, ethertype = 12, None
    while off + 2 <= len(frame):
        ethertype = struct.unpack_from('!H', frame, off)[0]
        off += 2
        if ethertype != 0x8100:
            break
        off += 2
    if ethertype == 0x0800:
        if off + 20 > len(frame) or frame[off + 9] != 17:
            return None
        off += (frame[off] & 0x0f) * 4
    elif ethertype == 0x86dd:
        if off + 40 > len(frame) or frame[off + 6] != 17:
            return None
        off += 40
    else:
        return None
    if off + 8 > len(frame):
        return None
    if struct.unpack_from('!H', frame, off + 2)[0] != UDP_ROCE:
        return None
    off += 8
    if off + BTH_LEN + DETH_LEN + MAD_LEN > len(frame):
        return None
    opcode = frame[off]
    dqpn = struct.unpack_from('!I', frame, off + 4)[0] & 0xffffff
    if opcode != UD_SEND_ONLY or dqpn != 1:
        return None
    off += BTH_LEN + DETH_LEN
    return frame[off:off + MAD_LEN]


def main():
    out = sys.argv[1]
    n = 0

    def write(data):
        nonlocal n
        n += 1
        with open(os.path.join(out, 'cm%05d' % n), 'wb') as f:
            f.write(data)

    for path in sys.argv[2:]:
        if not os.path.basename(path).startswith('rdma_cm_'):
            continue
        mads = [m for m in map(cm_mads, frames(path)) if m is not None]
        for mad in mads:
            write(mad)
            write(bytes([0]) + mad)
            write(bytes([FIX | SERVICE | CONN | ACCEPT]) + mad)
        for answer in (LEAVE, ACCEPT):
            write(b''.join(bytes([FIX | SERVICE | CONN | answer]) + m
                           for m in mads))
    print('seeded with %d inputs' % n)


if __name__ == '__main__':
    main()
