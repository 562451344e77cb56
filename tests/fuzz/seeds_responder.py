#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Seeds for fuzz_responder: sequences of its 40-byte frame records.

Usage: seeds_responder.py OUTDIR [PCAP | DIR]...

Writes hand-made sequences (each operation on its own, a WRITE across
packets, duplicates, errors, the UC and UD QPs, stray responses, broken
frames), the requests of each golden capture turned into records, and a
copy of every file of each DIR (inputs kept for regression).

The record layout is struct rec of fuzz_responder.c.
"""

import os
import shutil
import struct
import sys

from seeds_frames import frames as pcap_frames

REC = struct.Struct('<BBBbBBBBHHiIIQQ')
assert REC.size == 40
MAX_RECS = 48
MTU = 1024
MW1_OFF = 10240

# operations (the low five bits of an opcode)
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM = 0, 1, 2, 3
SEND_ONLY, SEND_ONLY_IMM = 4, 5
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM = 6, 7, 8, 9
WRITE_ONLY, WRITE_ONLY_IMM = 10, 11
READ_REQUEST, READ_RESPONSE_ONLY, ACKNOWLEDGE = 12, 16, 17
COMPARE_SWAP, FETCH_ADD, SEND_ONLY_INV = 19, 20, 23
FLUSH, ATOMIC_WRITE = 28, 29

# the qp byte
QP_RC, QP_SRQ, QP_UC, QP_UD = 0x00, 0x60, 0x80, 0xb0
# the key byte: rkey (bits 0-2; K_MW1 the type 1 window, at MW1_OFF of
# MR1), va base (bits 3-4), raw va (bit 5),
# the key a SEND with invalidate names (bits 6-7)
K_MR1, K_MW, K_MR2, K_MR3, K_MW1, K_LKEY, K_OLD_MW, K_AUX = range(8)
B_MR1, B_MW, B_MR2, B_MR3 = (0 << 3, 1 << 3, 2 << 3, 3 << 3)
RAW_VA = 0x20
INV_MW, INV_MR1, INV_OLD_MW, INV_AUX = (0 << 6, 1 << 6, 2 << 6, 3 << 6)
# the flags byte
SE, ACKREQ, IPV6 = 0x01, 0x02, 0x80
# mutations (mut byte 0xc0 + enum mutation)
MUT_ICRC, MUT_IPCSUM, MUT_BCAST_MAC, MUT_TRUNCATE, MUT_VLAN = 0, 1, 4, 6, 10


def rec(op, qp=QP_RC, flags=ACKREQ, psn=0, key=K_MR1 | B_MR1, length=0,
        va=0, dlen=0, aux=0, swap_add=0, compare=0, mut=0, seed=1,
        extra=0, op2=0):
    """One record: the frame of operation op (or of opcode op2 if op is
    0xc0 or more) to the QP qp selects."""
    return REC.pack(op, op2, flags, psn, qp, key, mut, seed, length, extra,
                    va, dlen, aux, swap_add, compare)


def hand_made():
    """Short sequences that each reach a part of the responder."""
    seeds = {}
    # SENDs into each RC receive WQE (128, 64+192, 1024, 100+1+900,
    # none, 2048 bytes), then one too many: RNR NAK
    seeds['send'] = [
        rec(SEND_ONLY, length=100, flags=ACKREQ | SE),
        rec(SEND_ONLY_IMM, length=200, aux=0x1234),
        rec(SEND_ONLY, length=1024),
        rec(SEND_ONLY, length=1000),
        rec(SEND_ONLY, length=0),
        rec(SEND_FIRST, length=1024, flags=0),
        rec(SEND_LAST_IMM, length=1000, aux=7),
        rec(SEND_ONLY, length=4),
    ]
    # a SEND longer than its WQE
    seeds['send_too_long'] = [rec(SEND_ONLY, length=129)]
    # a WRITE across three packets, one through the window, one with
    # immediate data (a receive WQE), zero-length ones
    seeds['write'] = [
        rec(WRITE_FIRST, va=256, dlen=2500, length=1024, flags=0),
        rec(WRITE_MIDDLE, length=1024, flags=0),
        rec(WRITE_LAST, length=452),
        rec(WRITE_ONLY, key=K_MW | B_MW, va=64, dlen=64, length=64),
        rec(WRITE_ONLY_IMM, va=8192, dlen=8, length=8, aux=0xfeed),
        rec(WRITE_ONLY, va=0, dlen=0, length=0),
        rec(WRITE_ONLY, key=K_AUX | B_MR1, va=0, dlen=0, length=0,
            aux=0xdeadbeef),
    ]
    # READs: several packets, the read-only region, the window, empty
    seeds['read'] = [
        rec(READ_REQUEST, va=100, dlen=3000),
        rec(READ_REQUEST, key=K_MR2 | B_MR2, va=8000, dlen=192),
        rec(READ_REQUEST, key=K_MW | B_MW, va=4000, dlen=96),
        rec(READ_REQUEST, dlen=0),
        rec(READ_REQUEST, va=16383, dlen=1),
    ]
    # both atomics, then one through the window (no atomic right)
    seeds['atomics'] = [
        rec(COMPARE_SWAP, va=64, swap_add=0x1111, compare=0x2222),
        rec(FETCH_ADD, va=72, swap_add=5),
        rec(FETCH_ADD, va=16376, swap_add=1 << 63),
        rec(COMPARE_SWAP, key=K_MW | B_MW, va=0, swap_add=1),
    ]
    seeds['atomic_unaligned'] = [rec(FETCH_ADD, va=4, swap_add=1)]
    # duplicates: a SEND again, a READ again from its first and second
    # packets, an atomic again (answered from the replay ring), a
    # WRITE again; then a packet ahead (one NAK for the gap)
    seeds['duplicate'] = [
        rec(SEND_ONLY, length=16),
        rec(SEND_ONLY, length=16, psn=-1),
        rec(READ_REQUEST, va=0, dlen=2048),
        rec(READ_REQUEST, va=0, dlen=2048, psn=-2),
        rec(READ_REQUEST, va=1024, dlen=1024, psn=-1),
        rec(FETCH_ADD, va=8, swap_add=3),
        rec(FETCH_ADD, va=8, swap_add=3, psn=-1),
        rec(WRITE_ONLY, va=512, dlen=32, length=32),
        rec(WRITE_ONLY, va=512, dlen=32, length=32, psn=-1),
        rec(SEND_ONLY, length=8, psn=5),
        rec(SEND_ONLY, length=8, psn=6),
        rec(SEND_ONLY, length=8),
    ]
    # more READs and atomics than max_dest_rd_atomic (4) at once
    seeds['rd_atomic_ring'] = [
        rec(READ_REQUEST, va=i * 1024, dlen=1024 * (i % 3 + 1))
        for i in range(6)] + [
        rec(FETCH_ADD, va=8 * i, swap_add=i) for i in range(4)] + [
        rec(READ_REQUEST, va=0, dlen=1024, psn=-10)]
    # refused: the read-only region, another PD's region, an lkey, past
    # the end, a wrapping range, a raw address
    seeds['write_refused'] = [rec(WRITE_ONLY, key=K_MR2 | B_MR2, dlen=4,
                                  length=4)]
    seeds['write_other_pd'] = [rec(WRITE_ONLY, key=K_MR3 | B_MR3, dlen=4,
                                   length=4)]
    seeds['write_lkey'] = [rec(WRITE_ONLY, key=K_LKEY | B_MR1, dlen=4,
                               length=4)]
    seeds['write_past_end'] = [rec(WRITE_ONLY, va=16380, dlen=8, length=8)]
    seeds['write_wrap'] = [rec(WRITE_ONLY, key=K_MR1 | RAW_VA, va=-4,
                               dlen=8, length=8)]
    seeds['write_last_short'] = [
        rec(WRITE_FIRST, va=0, dlen=2048, length=1024, flags=0),
        rec(WRITE_LAST, length=512)]
    # a SEND with invalidate of the window, then the window is refused
    seeds['send_inv'] = [
        rec(SEND_ONLY_INV, length=32, key=K_MR1 | INV_MW),
        rec(WRITE_ONLY, key=K_MW | B_MW, dlen=8, length=8),
    ]
    # the type 1 window (write and atomics, no read) from MR1's base:
    # inside, a READ it does not grant, past its end
    seeds['mw_type1'] = [
        rec(WRITE_ONLY, key=K_MW1 | B_MR1, va=MW1_OFF + 100, dlen=200,
            length=200),
        rec(FETCH_ADD, key=K_MW1 | B_MR1, va=MW1_OFF + 8, swap_add=9),
        rec(READ_REQUEST, key=K_MW1 | B_MR1, va=MW1_OFF, dlen=64),
    ]
    seeds['mw_type1_past_end'] = [
        rec(WRITE_ONLY, key=K_MW1 | B_MR1, va=MW1_OFF + 2040, dlen=16,
            length=16)]
    seeds['send_inv_mr'] = [rec(SEND_ONLY_INV, length=8,
                                key=K_MR1 | INV_MR1)]
    # UC: SENDs and a WRITE to MR3 (its PD's), a message cut short
    seeds['uc'] = [
        rec(SEND_ONLY, qp=QP_UC, length=200),
        rec(WRITE_ONLY, qp=QP_UC, key=K_MR3 | B_MR3, va=100, dlen=300,
            length=300),
        rec(SEND_FIRST, qp=QP_UC, length=1024, flags=0),
        rec(SEND_LAST, qp=QP_UC, length=100, psn=1),
        rec(SEND_ONLY, qp=QP_UC, length=8),
        rec(WRITE_ONLY, qp=QP_UC, key=K_MR1 | B_MR1, dlen=8, length=8),
    ]
    # the RC QP on the SRQ: SENDs into its WQEs in turn, one of three
    # packets, one longer than its WQE, a WRITE with immediate taking a
    # WQE, a READ and an atomic (no receive WQE)
    seeds['srq'] = [
        rec(SEND_ONLY, qp=QP_SRQ, length=300),
        rec(SEND_FIRST, qp=QP_SRQ, length=1024, flags=0),
        rec(SEND_MIDDLE, qp=QP_SRQ, length=1024, psn=0, flags=0),
        rec(SEND_LAST, qp=QP_SRQ, length=10),
        rec(SEND_ONLY, qp=QP_SRQ, length=100),
        rec(WRITE_ONLY_IMM, qp=QP_SRQ, key=K_MR1 | B_MR1, va=64, dlen=32,
            length=32, aux=7),
        rec(READ_REQUEST, qp=QP_SRQ, key=K_MR1 | B_MR1, dlen=2000),
        rec(FETCH_ADD, qp=QP_SRQ, key=K_MR1 | B_MR1, va=8, swap_add=3),
        rec(SEND_ONLY, qp=QP_SRQ, length=1300),
    ]
    # SRQ and RC at once, and a SEND with invalidate of the window (bound
    # through the other QP) on the SRQ's
    seeds['srq_and_rc'] = [
        rec(SEND_ONLY, qp=QP_SRQ, length=64),
        rec(SEND_ONLY, length=64),
        rec(SEND_ONLY_INV, qp=QP_SRQ, length=8, key=K_MR1 | INV_MW),
        rec(WRITE_ONLY, qp=QP_SRQ, key=K_MW | B_MW, dlen=16, length=16),
    ]
    # UD: datagrams with and without immediate data, a wrong Q_Key,
    # over IPv6
    seeds['ud'] = [
        rec(SEND_ONLY, qp=QP_UD, length=100),
        rec(SEND_ONLY_IMM, qp=QP_UD, length=500, aux=3),
        rec(SEND_ONLY, qp=QP_UD, length=10, mut=0xb0, aux=1),
        rec(SEND_ONLY, qp=QP_UD, length=64, flags=IPV6),
    ]
    # what a responder does not expect: responses, ACKs, opcodes of
    # other transports, FLUSH and ATOMIC WRITE, an undefined opcode
    seeds['stray'] = [
        rec(ACKNOWLEDGE, aux=0x1f),
        rec(READ_RESPONSE_ONLY, length=64, aux=0x1f),
        rec(0xc0, op2=0x64, length=8),
        rec(0xc0, op2=0x81),
        rec(FLUSH, dlen=64),
        rec(ATOMIC_WRITE, va=8, dlen=8, length=8),
        rec(0xc0, op2=0x1e, length=4),
    ]
    # broken frames between good ones
    seeds['mutations'] = [
        rec(SEND_ONLY, length=16, mut=0xc0 + MUT_ICRC),
        rec(SEND_ONLY, length=16, mut=0xc0 + MUT_IPCSUM),
        rec(SEND_ONLY, length=16, mut=0xc0 + MUT_TRUNCATE, extra=5),
        rec(SEND_ONLY, length=16, mut=0xc0 + MUT_VLAN, extra=3),
        rec(SEND_ONLY, length=16, mut=0xc0 + MUT_BCAST_MAC),
        rec(SEND_ONLY, length=16, flags=ACKREQ | 0x20),
    ]
    return seeds


def bth_of(frame):
    """(opcode, flags byte, psn, bytes after the BTH up to the ICRC) of a
    RoCEv2 frame over IPv4 or IPv6, or None."""
    eth_type = struct.unpack_from('>H', frame, 12)[0]
    if eth_type == 0x0800:
        l4 = 14 + (frame[14] & 0xf) * 4
    elif eth_type == 0x86dd:
        l4 = 14 + 40
    else:
        return None
    if struct.unpack_from('>H', frame, l4 + 2)[0] != 4791:
        return None
    bth = l4 + 8
    opcode, b1 = frame[bth], frame[bth + 1]
    ackreq = frame[bth + 8] >> 7
    psn = struct.unpack_from('>I', frame, bth + 8)[0] & 0xffffff
    rest = frame[bth + 12:len(frame) - 4 - ((b1 >> 4) & 3)]
    return opcode, (b1 >> 7) | ackreq << 1, psn, rest


# requests of each transport: their records' qp byte, what ext headers
# come before the payload
REQUESTS = {0x00: QP_RC, 0x20: QP_UC, 0x60: QP_UD}
READ_OPS = (READ_REQUEST,)
RETH_OPS = (WRITE_FIRST, WRITE_ONLY, WRITE_ONLY_IMM, READ_REQUEST)
ATOMIC_OPS = (COMPARE_SWAP, FETCH_ADD)
IMM_OPS = (SEND_LAST_IMM, SEND_ONLY_IMM, WRITE_LAST_IMM, WRITE_ONLY_IMM)


def capture_records(path):
    """The requests of the busiest sender of a capture, as records whose
    PSNs follow the harness's count from the first one."""
    reqs = []
    for frame in pcap_frames(path):
        b = bth_of(frame)
        if b is None:
            continue
        opcode, flags, psn, rest = b
        tr, op = opcode & 0xe0, opcode & 0x1f
        if tr not in REQUESTS or op > 23 or op in range(13, 19):
            continue
        reqs.append((tr, op, flags, psn, rest, frame[6:12]))
    if not reqs:
        return []
    # the MAC that sent most requests
    macs = [r[5] for r in reqs]
    sender = max(set(macs), key=macs.count)
    reqs = [r for r in reqs if r[5] == sender]
    records, expect, va0 = [], None, None
    for tr, op, flags, psn, rest, _ in reqs:
        qp = REQUESTS[tr]
        if tr == 0x60:
            rest = rest[8:]                     # DETH
        if expect is None or len(records) % MAX_RECS == 0:
            # each input starts from the PSN the QP expects
            expect = psn
        off = (psn - expect + (1 << 23)) % (1 << 24) - (1 << 23)
        off = max(-128, min(127, off))
        va = dlen = swap = cmp = aux = 0
        if op in RETH_OPS or op in ATOMIC_OPS:
            va_abs = struct.unpack_from('>Q', rest, 0)[0]
            va0 = va_abs if va0 is None else min(va0, va_abs)
            va = (va_abs - va0) % 8192
        if op in RETH_OPS:
            dlen = struct.unpack_from('>I', rest, 12)[0]
            rest = rest[16:]
        if op in ATOMIC_OPS:
            swap, cmp = struct.unpack_from('>QQ', rest, 12)
            rest = rest[28:]
        if op in IMM_OPS:
            aux = struct.unpack_from('>I', rest, 0)[0]
            rest = rest[4:]
        key = K_MR3 | B_MR3 if qp == QP_UC else K_MR1 | B_MR1
        records.append(rec(op, qp=qp, flags=flags, psn=off, key=key,
                           length=len(rest), va=va, dlen=dlen, aux=aux,
                           swap_add=swap, compare=cmp,
                           seed=len(records) & 0xff))
        if off == 0 and tr != 0x60:
            expect = (expect + (max(1, -(-dlen // MTU))
                                if op in READ_OPS else 1)) % (1 << 24)
    return records


def main():
    out = sys.argv[1]
    n = 0
    for name, recs in hand_made().items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(b''.join(recs))
        n += 1
    for arg in sys.argv[2:]:
        if os.path.isdir(arg):
            for name in sorted(os.listdir(arg)):
                shutil.copy(os.path.join(arg, name),
                            os.path.join(out, 'kept-' + name))
                n += 1
            continue
        recs = capture_records(arg)
        base = os.path.splitext(os.path.basename(arg))[0]
        # a few inputs of MAX_RECS records from each capture
        for i in range(0, min(len(recs), 4 * MAX_RECS), MAX_RECS):
            with open(os.path.join(out, '%s-%d' % (base, i // MAX_RECS)),
                      'wb') as f:
                f.write(b''.join(recs[i:i + MAX_RECS]))
            n += 1
    print('seeded with %d inputs' % n)


if __name__ == '__main__':
    main()
