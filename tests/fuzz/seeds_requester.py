#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Seeds for fuzz_requester: WQEs, then the responses they get.

Usage: seeds_requester.py OUTDIR [PCAP | DIR]...

Writes hand-made inputs (every operation answered as it should be, ACKs
coalesced, RNR and PSN sequence NAKs, each NAK code, READ responses of
wrong lengths, lost and duplicated responses, retries running out, a
WQE failing locally), the RC requests and responses of each golden
capture turned into an input, and a copy of every file of each DIR
(inputs kept for regression).

The layouts are struct hdr, struct wqe_rec and struct rec of
fuzz_requester.c.
"""

import os
import shutil
import struct
import sys

from seeds_frames import frames as pcap_frames

REC = struct.Struct('<BBbBBBHIQ')
assert REC.size == 20
MAX_WQE = 8
MAX_RECS = 48
MTU = 1024

# operations, lengths (struct wqe_rec)
SEND, SEND_IMM, WRITE, WRITE_IMM, READ, CAS, FADD = range(7)
LENS = [0, 1, 8, 100, 1024, 1025, 2048, 3000]
UNSIG, TWO_SGE, BAD_LKEY, FENCE = 0x01, 0x02, 0x1c, 0x20
# response kinds (struct rec)
ACK, RNR, NAK, FIRST, MIDDLE, LAST, ONLY, ATOMIC_ACK = range(8)
RAW_AETH, SYNC = 0x08, 0x80
# NAK codes
PSN_SEQ, INV_REQ, REM_ACCESS, REM_OP, INV_RD = range(5)
# record flags
BAD_ICRC, ACKREQ, NATURAL = 0x01, 0x02, 0x04


def hdr(retry_cnt=7, rnr_retry=7, rd_atomic=3):
    """The QP: retry counts, max_rd_atomic 1, 2, 4 or 16 (0-3)."""
    return bytes([retry_cnt | rnr_retry << 3 | rd_atomic << 6, 0, 0, 0])


def wqe(op, length=0, flags=0):
    return bytes([op | LENS.index(length) << 3, flags])


def resp(kind, wqe_idx, psn=0, aeth=0x1f, flags=NATURAL, delta=0,
         length=None, msn=0, orig=0, seed=1):
    """A response to the PSN psn after WQE wqe_idx's first; READ
    responses of the length their place calls for plus delta, or of
    length."""
    if length is not None:
        flags &= ~NATURAL
        ln = length
    else:
        ln = delta & 0xff
    return REC.pack(kind, wqe_idx, psn, aeth, flags, seed, ln, msn, orig)


def sync(r):
    return bytes([r[0] | SYNC]) + r[1:]


def inp(h, wqes, resps):
    """An input: its header says how many WQEs follow."""
    assert 1 <= len(wqes) <= MAX_WQE
    h = h[:1] + bytes([len(wqes) - 1]) + h[2:]
    return h + b''.join(wqes) + b''.join(resps)


def hand_made():
    seeds = {}
    mix = [wqe(SEND, 100), wqe(WRITE, 3000), wqe(READ, 3000), wqe(CAS),
           wqe(FADD), wqe(READ, 0), wqe(SEND_IMM, 1025, TWO_SGE),
           wqe(READ, 2048, TWO_SGE)]
    # each answered in turn, as a responder would
    seeds['mix_ok'] = inp(hdr(), mix, [
        resp(ACK, 0), resp(ACK, 1, 2),
        resp(FIRST, 2, 0), resp(MIDDLE, 2, 1), resp(LAST, 2, 2),
        resp(ATOMIC_ACK, 3, orig=5), resp(ATOMIC_ACK, 4, orig=7),
        resp(ONLY, 5), resp(ACK, 6, 1),
        resp(FIRST, 7, 0), resp(LAST, 7, 1)])
    # SENDs and WRITEs acknowledged by one coalesced ACK
    seeds['coalesced'] = inp(hdr(), [
        wqe(SEND, 8), wqe(WRITE, 2048), wqe(SEND, 0, UNSIG),
        wqe(WRITE_IMM, 1)], [resp(ACK, 3)])
    # a READ answered implicitly before a later READ's response: asked
    # again
    seeds['read_overtaken'] = inp(hdr(), [
        wqe(READ, 1024), wqe(READ, 100)], [
        resp(ONLY, 1), sync(resp(ONLY, 0)), resp(ONLY, 1)])
    # RNR NAK, then the ACK
    seeds['rnr'] = inp(hdr(), [wqe(SEND, 100), wqe(SEND, 8)], [
        resp(RNR, 0, aeth=1), sync(resp(ACK, 1))])
    seeds['rnr_exceeded'] = inp(hdr(rnr_retry=1), [wqe(SEND, 100)], [
        resp(RNR, 0, aeth=1), sync(resp(RNR, 0, aeth=1)),
        sync(resp(RNR, 0, aeth=1))])
    # PSN sequence error inside a WRITE, retries running out
    seeds['psn_seq'] = inp(hdr(retry_cnt=1), [wqe(WRITE, 3000),
                                              wqe(READ, 1025)], [
        resp(NAK, 0, 1, aeth=PSN_SEQ), sync(resp(NAK, 0, 1, aeth=PSN_SEQ)),
        sync(resp(NAK, 0, 1, aeth=PSN_SEQ))])
    seeds['psn_seq_recovered'] = inp(hdr(), [wqe(WRITE, 3000),
                                             wqe(SEND, 1)], [
        resp(NAK, 0, 1, aeth=PSN_SEQ), sync(resp(ACK, 1))])
    for code, name in ((INV_REQ, 'inv_req'), (REM_ACCESS, 'rem_access'),
                       (REM_OP, 'rem_op'), (INV_RD, 'inv_rd')):
        seeds['nak_' + name] = inp(hdr(), mix[:4], [
            resp(ACK, 0), resp(NAK, 1, 1, aeth=code)])
    # a bad READ response after a WRITE it acknowledges
    seeds['bad_read_after_write'] = inp(hdr(), [
        wqe(WRITE, 8), wqe(READ, 100)], [resp(ONLY, 1, delta=-50)])
    # READ responses of each wrong length
    for i, (ln, rs) in enumerate((
            (1024, [resp(FIRST, 0)]),
            (2048, [resp(FIRST, 0), resp(MIDDLE, 0, 1),
                    resp(LAST, 0, 2, length=0)]),
            (3000, [resp(FIRST, 0, delta=-24)]),
            (3000, [resp(FIRST, 0), resp(MIDDLE, 0, 1, delta=-1)]),
            (3000, [resp(FIRST, 0), resp(MIDDLE, 0, 1),
                    resp(LAST, 0, 2, delta=-1)]),
            (100, [resp(ONLY, 0, delta=1)]),
            (3000, [resp(ONLY, 0, delta=0)]),
            (0, [resp(LAST, 0)]))):
        seeds['read_len_%d' % i] = inp(hdr(), [wqe(READ, ln),
                                               wqe(SEND, 1)], rs)
    # local error behind a remote one, and behind an RNR wait
    seeds['local_behind_remote'] = inp(hdr(), [
        wqe(WRITE, 100), wqe(WRITE, 8, BAD_LKEY), wqe(SEND, 1)], [
        resp(NAK, 0, aeth=REM_ACCESS)])
    seeds['local_behind_rnr'] = inp(hdr(), [
        wqe(SEND, 100), wqe(READ, 8, BAD_LKEY), wqe(SEND, 1)], [
        resp(RNR, 0, aeth=1), sync(resp(ACK, 0))])
    # responses of the wrong kind, duplicates, PSNs never sent, a
    # broken ICRC, reserved AETH values
    seeds['strays'] = inp(hdr(rd_atomic=0), [
        wqe(READ, 1025), wqe(CAS), wqe(WRITE, 1), wqe(READ, 3000, FENCE)], [
        resp(ATOMIC_ACK, 0), resp(FIRST, 1), resp(ACK, 4, 5),
        resp(FIRST, 0, flags=NATURAL | BAD_ICRC), resp(FIRST, 0),
        resp(FIRST, 0), resp(LAST, 0, 1), resp(ATOMIC_ACK, 1),
        resp(ATOMIC_ACK, 1), resp(ACK, 0, -3),
        resp(ACK | RAW_AETH, 2, aeth=0x40), resp(NAK, 2, aeth=0x1f)])
    seeds['raw_aeth'] = inp(hdr(), [wqe(SEND, 1), wqe(WRITE, 1)], [
        resp(ACK | RAW_AETH, 0, aeth=0x7f), resp(ACK | RAW_AETH, 1,
                                                 aeth=0x65)])
    return seeds


def bth_of(frame):
    """(opcode, psn, dest QPN, bytes after the BTH up to the ICRC) of a
    RoCEv2 frame over IPv4 or IPv6, or None."""
    eth_type = struct.unpack_from('>H', frame, 12)[0]
    if eth_type == 0x0800:
        l4 = 14 + (frame[14] & 0xf) * 4
    elif eth_type == 0x86dd:
        l4 = 14 + 40
    else:
        return None
    if len(frame) < l4 + 20 or \
            struct.unpack_from('>H', frame, l4 + 2)[0] != 4791:
        return None
    bth = l4 + 8
    opcode, b1 = frame[bth], frame[bth + 1]
    dqpn = struct.unpack_from('>I', frame, bth + 4)[0] & 0xffffff
    psn = struct.unpack_from('>I', frame, bth + 8)[0] & 0xffffff
    rest = frame[bth + 12:len(frame) - 4 - ((b1 >> 4) & 3)]
    return opcode, psn, dqpn, rest


# RC requests by their first (or only) packet's opcode
REQ_OPS = {0x00: SEND, 0x04: SEND, 0x05: SEND_IMM, 0x06: WRITE,
           0x0a: WRITE, 0x0b: WRITE_IMM, 0x0c: READ, 0x13: CAS,
           0x14: FADD}
RESP_KINDS = {0x0d: FIRST, 0x0e: MIDDLE, 0x0f: LAST, 0x10: ONLY,
              0x12: ATOMIC_ACK}


def nearest_len(n):
    return min(LENS, key=lambda x: abs(x - n))


def capture_input(path):
    """The first RC WQEs of a capture's busiest requester and the
    responses they got, with PSNs relative to each WQE's first: what
    answered that requester at full length, as the harness's lengths
    have it."""
    frames = [b for b in (bth_of(f) for f in pcap_frames(path)) if b]
    reqs = [f for f in frames if f[0] < 0x20 and f[0] in REQ_OPS]
    if not reqs:
        return None
    qpns = [f[2] for f in reqs]
    peer = max(set(qpns), key=qpns.count)      # the responder's QPN
    wqes, firsts = [], {}
    for opcode, psn, dqpn, rest in reqs:
        if dqpn != peer or psn in firsts or len(wqes) == MAX_WQE:
            continue
        op = REQ_OPS[opcode]
        if op in (CAS, FADD):
            length = 8
        elif op == READ:
            length = nearest_len(struct.unpack_from('>I', rest, 12)[0])
        else:
            length = nearest_len(len(rest))
        firsts[psn] = len(wqes)
        wqes.append(wqe(op, length) if op not in (CAS, FADD) else
                    wqe(op))
    resps = []
    starts = sorted(firsts)
    for opcode, psn, dqpn, rest in frames:
        # (soft-RoCE's loopback captures have one QPN both ways: the
        # opcode tells a response)
        if not 0x0d <= opcode <= 0x12 or len(resps) == MAX_RECS:
            continue
        # the WQE the PSN falls into: the last one starting at or before
        owner = [s for s in starts if (psn - s) % (1 << 24) < 64]
        if not owner:
            continue
        s = min(owner, key=lambda x: (psn - x) % (1 << 24))
        aeth = rest[0] if rest else 0x1f
        if opcode == 0x11:
            resps.append(resp(ACK | RAW_AETH, firsts[s], (psn - s) %
                              (1 << 24), aeth=aeth))
        else:
            resps.append(resp(RESP_KINDS[opcode], firsts[s],
                              (psn - s) % (1 << 24), aeth=aeth,
                              seed=len(resps) & 0xff))
    return inp(hdr(), wqes, resps)


def main():
    out = sys.argv[1]
    n = 0
    for name, data in hand_made().items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)
        n += 1
    for arg in sys.argv[2:]:
        if os.path.isdir(arg):
            for name in sorted(os.listdir(arg)):
                if name.endswith('.md'):
                    continue            # what the inputs are
                shutil.copy(os.path.join(arg, name),
                            os.path.join(out, 'kept-' + name))
                n += 1
            continue
        data = capture_input(arg)
        if data is None:
            continue
        base = os.path.splitext(os.path.basename(arg))[0]
        with open(os.path.join(out, base), 'wb') as f:
            f.write(data)
        n += 1
    print('seeded with %d inputs' % n)


if __name__ == '__main__':
    main()
