#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-lab analyze: every check shown able to pass and to fail.

Traces are made here, frame by frame, each to keep or to break one rule
(a second NAK in flight, a resend from the wrong PSN, an ACK that goes
back, a CNP to the wrong QP, ...), written as pcapng with the injector's
marks ("droce-lab: dropped", ...) or as plain pcap, and judged through
the command line. The golden soft-RoCE captures with loss
(tests/data/pcaps/loss_*.pcap) are judged too: rxe's go-back-N and READ
retransmission pass, and its retransmission timer fires before the
timeout its QP was given (ibv_rc_pingpong asks for 14: 67 ms).
"""

import argparse
import os
import re
import struct
import subprocess
import sys
import time

failed = 0


def check(cond, what):
    global failed
    print('%s %s' % ('ok   ' if cond else 'FAIL ', what))
    if not cond:
        failed += 1


A, B = '10.0.0.1', '10.0.0.2'      # requester, responder
QA, QB = 0x11, 0x22                # their QPNs
MAC = {A: b'\x02\0\0\0\0\x01', B: b'\x02\0\0\0\0\x02'}
OP = {'SEND_ONLY': 0x04, 'WRITE_FIRST': 0x06, 'WRITE_MIDDLE': 0x07,
      'WRITE_LAST': 0x08, 'WRITE_ONLY': 0x0a, 'READ_REQUEST': 0x0c,
      'READ_RESPONSE_FIRST': 0x0d, 'READ_RESPONSE_MIDDLE': 0x0e,
      'READ_RESPONSE_LAST': 0x0f, 'READ_RESPONSE_ONLY': 0x10,
      'ACKNOWLEDGE': 0x11, 'CNP': 0x81}


def frame(src, dst, opcode, dqpn, psn, ext=b'', payload=0, ecn=0,
          icrc_ok=True):
    """An Ethernet frame holding a RoCEv2 packet, its ICRC computed."""
    bth = struct.pack('>BBHII', opcode, 0x00, 0xffff, dqpn,
                      0x80000000 | psn)
    udp_len = 8 + len(bth) + len(ext) + payload + 4
    ip = struct.pack('>BBHHHBBH4s4s', 0x45, ecn, 20 + udp_len, 0, 0x4000,
                     64, 17, 0, bytes(map(int, src.split('.'))),
                     bytes(map(int, dst.split('.'))))
    udp = struct.pack('>HHHH', 0xc000, 4791, udp_len, 0)
    pkt = ip + udp + bth + ext + b'\xab' * payload + b'\0' * 4
    crc = trace.icrc(pkt) ^ (0 if icrc_ok else 1)
    pkt = pkt[:-4] + struct.pack('<I', crc)
    return MAC[dst] + MAC[src] + b'\x08\x00' + pkt


class Run:
    """A trace being made: frames at a clock that moves as told."""

    def __init__(self):
        self.t = 1000.0
        self.records = []

    def at(self, us):
        self.t += us / 1e6
        return self

    def add(self, data, action=None):
        self.records.append((self.t, data, 'droce-lab: ' + action
                             if action else ''))
        self.t += 1e-6

    def req(self, psn, op='WRITE_ONLY', size=1024, action=None, ce=False,
            bad=False, va=0x10000, length=None):
        ext = b''
        if op in ('WRITE_ONLY', 'WRITE_FIRST', 'READ_REQUEST'):
            ext = struct.pack('>QII', va, 0x1234,
                              size if length is None else length)
        self.add(frame(A, B, OP[op], QB, psn, ext,
                       0 if op == 'READ_REQUEST' else size,
                       3 if ce else 2, not bad), action)

    def ack(self, psn, syndrome=0x1f, op='ACKNOWLEDGE', size=0,
            action=None):
        ext = struct.pack('>I', syndrome << 24 | 1) if op != \
            'READ_RESPONSE_MIDDLE' else b''
        self.add(frame(B, A, OP[op], QA, psn, ext, size), action)

    def nak(self, psn, code=0):
        self.ack(psn, 0x60 | code)

    def rnr(self, psn, timer):
        self.ack(psn, 0x20 | timer)

    def cnp(self, qpn=QA):
        self.add(frame(B, A, OP['CNP'], qpn, 0, b'\0' * 16))

    def save(self, path, marks=True):
        if marks:
            trace.write_pcapng(path, self.records)
            return path
        with open(path, 'wb') as fh:
            fh.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535,
                                 1))
            for t, data, _ in self.records:
                us = int(round(t * 1e6))
                fh.write(struct.pack('<IIII', us // 1000000, us % 1000000,
                                     len(data), len(data)) + data)
        return path


def analyze(args, path, *opts):
    p = subprocess.run([args.lab, 'analyze', path] + list(opts),
                       capture_output=True, text=True)
    verdicts = {}
    for w in lab_run.verdicts(p.stdout):
        verdicts.setdefault(w[1], []).append((w[0], ' '.join(w)))
    return p.returncode, verdicts, p.stdout + p.stderr


def expect(args, name, run, want, *opts, marks=True, code=None):
    """Judge @p run; each check named in @p want gives its verdict."""
    path = run.save(os.path.join(args.workdir, name +
                                 ('.pcapng' if marks else '.pcap')), marks)
    rc, got, out = analyze(args, path, *opts)
    for chk, verdict in want.items():
        # a check's verdict over the connections: its worst
        lines = got.get(chk, [('none', '(no line)')])
        v = next((l for w in ('FAIL', 'PASS', 'N/A', 'none')
                  for l in lines if l[0] == w))
        check(v[0] == verdict, '%s: %s %s (%s)' % (name, verdict, chk,
                                                   v[1].strip()))
    if code is None:
        code = 1 if 'FAIL' in want.values() else 0
    check(rc == code, '%s: exit %d (got %d)%s' %
          (name, code, rc, '' if rc == code else '\n' + out))
    return got


def gbn(second_nak=False, resend_from=3, nak_psn=3, ack_back=False,
        marks=True):
    """WRITEs 0..9, PSN 3 lost; the NAK, two more in flight, the resend."""
    r = Run()
    for p in range(5):
        r.req(p, action='dropped' if p == 3 and marks else None)
    r.at(5).nak(nak_psn)
    r.req(5)
    r.req(6)
    if second_nak:
        r.nak(nak_psn)
    r.at(20)
    for p in range(resend_from, 10):
        r.req(p)
    if ack_back:
        r.ack(5)
        r.ack(4)
    r.at(5).ack(9)
    return r


def late_nak():
    """WRITEs 0..6, PSN 3 put after 5: the NAK droce made when 4 came
    reaches the trace after an ACK and the next request, and a second
    NAK for the gap 6 opened (4 and 5 were dropped as out of order)."""
    r = Run()
    for p in (0, 1, 2, 4, 5):
        r.req(p)
    r.req(3, action='reordered')
    r.at(5).ack(2)
    r.req(6)
    r.at(5).nak(3)
    r.nak(4)
    r.at(20)
    for p in range(3, 7):
        r.req(p)
    r.at(5).ack(6)
    return r


def reads(again_psn=2, again_off=None):
    """A READ of 4 KiB at MTU 1024, response PSN 2 lost, asked again."""
    r = Run()
    r.req(0, 'READ_REQUEST', 4096, va=0x1000)
    r.at(5).ack(0, op='READ_RESPONSE_FIRST', size=1024)
    r.ack(1, op='READ_RESPONSE_MIDDLE', size=1024)
    r.ack(2, op='READ_RESPONSE_MIDDLE', size=1024, action='dropped')
    r.ack(3, op='READ_RESPONSE_LAST', size=1024)
    off = (again_psn if again_off is None else again_off) * 1024
    r.at(5).req(again_psn, 'READ_REQUEST', 4096 - off, va=0x1000 + off)
    r.at(5).ack(again_psn, op='READ_RESPONSE_FIRST' if again_psn < 3
                else 'READ_RESPONSE_ONLY', size=1024)
    if again_psn < 3:
        r.ack(3, op='READ_RESPONSE_LAST', size=1024)
    return r


def reads_asked_beside():
    """Six READs of 1 KiB; after the timeout the requester goes back to
    the third; the fourth's answer comes, so it asks the first two
    again, whose data never came, each on its own, then goes on with the
    run."""
    r = Run()
    for p in range(6):
        r.req(p, 'READ_REQUEST', 1024, va=0x1000 + p * 1024)
    r.at(100000)
    for p in (2, 3, 4):
        r.req(p, 'READ_REQUEST', 1024, va=0x1000 + p * 1024)
    r.at(5).ack(3, op='READ_RESPONSE_ONLY', size=1024)
    r.at(1000)
    for p in (0, 1, 5):
        r.req(p, 'READ_REQUEST', 1024, va=0x1000 + p * 1024)
    r.at(5)
    for p in (0, 1, 2, 4, 5):
        r.ack(p, op='READ_RESPONSE_ONLY', size=1024)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--lab', required=True, help='droce-lab')
    ap.add_argument('--pcaps', required=True, help='tests/data/pcaps')
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)

    # go-back-N
    expect(args, 'gbn', gbn(), {
        'responder.nak-single': 'PASS', 'responder.nak-psn': 'PASS',
        'responder.ack-monotonic': 'PASS', 'requester.gbn-resend': 'PASS',
        'requester.complete': 'PASS', 'requester.timeout': 'N/A'})
    expect(args, 'gbn-unmarked', gbn(marks=False), {
        'responder.nak-psn': 'PASS', 'requester.gbn-resend': 'PASS'},
        marks=False)
    expect(args, 'gbn-second-nak', gbn(second_nak=True),
           {'responder.nak-single': 'FAIL'})
    expect(args, 'gbn-resend-wrong', gbn(resend_from=4),
           {'requester.gbn-resend': 'FAIL'})
    expect(args, 'gbn-nak-wrong-psn', gbn(nak_psn=4),
           {'responder.nak-psn': 'FAIL'})
    expect(args, 'gbn-ack-back', gbn(ack_back=True),
           {'responder.ack-monotonic': 'FAIL'})
    # a NAK seen late at the injector is judged by what the responder
    # had received when it made it
    expect(args, 'late-nak', late_nak(),
           {'responder.nak-psn': 'PASS', 'responder.nak-single': 'PASS'})
    r = Run()
    for p in range(5):
        r.req(p)
    r.at(5).ack(2)
    expect(args, 'incomplete', r, {'requester.complete': 'FAIL'})

    # READ asked again
    expect(args, 'read', reads(), {'requester.read-resend': 'PASS',
                                    'requester.complete': 'PASS'})
    # READs asked again beside a go-back-N run: the run keeps its place
    expect(args, 'read-asked-beside', reads_asked_beside(),
           {'requester.timeout': 'PASS'}, '--timeout', '14')
    expect(args, 'read-wrong-offset', reads(again_off=1),
           {'requester.read-resend': 'FAIL'})
    expect(args, 'read-wrong-psn', reads(again_psn=3),
           {'requester.read-resend': 'FAIL'})
    # asked again from a response delivered 5 us before: one that may
    # still have been on its way to the requester, unless the crossing
    # time is 0
    for name, opts, verdict in (('read-crossing', (), 'PASS'),
                                ('read-crossing-0', ('--crossing-us', '0'),
                                 'FAIL')):
        expect(args, name, reads(again_psn=1),
               {'requester.read-resend': verdict}, *opts,
               code=1 if verdict == 'FAIL' else None)

    # a request whose rkey the injector broke: a Remote Access Error NAK
    # of its PSN, and the messages from it on ended by that NAK
    # (PSN 2 acknowledged by the NAK alone, as a NAK does)
    def bad_rkey(answer):
        r = Run()
        for p in range(3):
            r.req(p)
        r.req(3, action='rewritten rkey=0xdead0000')
        r.req(4)
        r.at(5).ack(1)
        answer(r)
        return r
    expect(args, 'access-nak', bad_rkey(lambda r: r.nak(3, 2)),
           {'responder.access-nak': 'PASS', 'requester.complete': 'PASS'})
    expect(args, 'access-nak-acked', bad_rkey(lambda r: r.ack(4)),
           {'responder.access-nak': 'FAIL'})
    expect(args, 'access-nak-psn-seq', bad_rkey(lambda r: r.nak(3)),
           {'responder.access-nak': 'FAIL'})
    expect(args, 'access-nak-none', gbn(), {'responder.access-nak': 'N/A'})

    # the last request of a burst, its PSN rewritten 100 ahead: the
    # requester did send PSN 3, so the next frame of PSN 3 is its
    # resend, which the NAK asked for
    r = Run()
    for p in range(3):
        r.req(p)
    r.req(103, action='rewritten psn=103')
    r.at(5).ack(2)
    r.nak(3)
    r.at(5).req(3)
    r.req(4)
    r.at(5).ack(4)
    expect(args, 'psn-rewritten-last', r,
           {'responder.nak-psn': 'PASS', 'requester.gbn-resend': 'PASS',
            'requester.complete': 'PASS'})

    # after a go-back-N run, an RNR NAK and a NAK of PSN 3 (soft-RoCE
    # sends both), then an ACK of PSN 3 before the requester sent again:
    # its resend run goes on from PSN 4, at once: no timeout's, even in
    # a trace taken at the requester
    r = Run()
    for p in range(10):
        r.req(p, 'SEND_ONLY', 64)
    r.at(5).ack(1)
    r.nak(2)
    r.at(5)
    for p in range(2, 10):
        r.req(p, 'SEND_ONLY', 64)
    r.at(5).rnr(3, 14)
    r.nak(3)
    r.at(600).ack(3)
    r.at(100)
    for p in range(4, 10):
        r.req(p, 'SEND_ONLY', 64)
    r.at(5).ack(9)
    expect(args, 'rnr-nak-acked', r, {'requester.timeout': 'N/A'},
           '--timeout', '14', '--crossing-us', '0')

    # the requester's timer (14: 67.1 ms)
    for name, wait, verdict in (('timeout-early', 10e3, 'FAIL'),
                                ('timeout', 70e3, 'PASS')):
        r = Run()
        r.req(0, 'SEND_ONLY', 64, action='dropped')
        r.at(wait).req(0, 'SEND_ONLY', 64)
        r.at(5).ack(0)
        expect(args, name, r, {'requester.timeout': verdict}, '--timeout',
               '14')
    expect(args, 'timeout-unjudged', r, {'requester.timeout': 'N/A'})

    # RNR: timer 14 asks for 1.28 ms
    for name, wait, verdict in (('rnr-early', 500, 'FAIL'),
                                ('rnr', 1500, 'PASS')):
        r = Run()
        r.req(0, 'SEND_ONLY', 64)
        r.at(5).rnr(0, 14)
        r.at(wait).req(0, 'SEND_ONLY', 64)
        r.at(5).ack(0)
        expect(args, name, r, {'requester.rnr': verdict})
    # an RNR NAK and a NAK of the same PSN (soft-RoCE sends both): the
    # NAK is answered at once, the RNR NAK after its timer; the NAK names
    # the PSN the RNR NAK left expected
    for name, wait, verdict in (('rnr-nak-early', 500, 'FAIL'),
                                ('rnr-nak', 1500, 'PASS')):
        r = Run()
        r.req(0, 'SEND_ONLY', 64)
        r.req(1, 'SEND_ONLY', 64)
        r.at(5).rnr(0, 14)
        r.nak(0)
        r.at(20).req(0, 'SEND_ONLY', 64)
        r.req(1, 'SEND_ONLY', 64)
        r.at(wait).req(0, 'SEND_ONLY', 64)
        r.req(1, 'SEND_ONLY', 64)
        r.at(5).ack(1)
        expect(args, name, r, {'requester.rnr': verdict,
                               'requester.gbn-resend': 'PASS',
                               'responder.nak-psn': 'PASS',
                               'requester.timeout': 'N/A'}, '--timeout',
               '14')

    # a trace taken at the responder whose first request was lost before
    # it: the first NAK names the PSN the responder expected from the
    # start (a NAK of a PSN past any it could expect is still wrong)
    for name, named, verdict in (('first-lost', 0, 'PASS'),
                                 ('first-lost-wrong', 5, 'FAIL')):
        r = Run()
        for p in range(1, 4):
            r.req(p, 'SEND_ONLY', 64)
        r.at(5).nak(named)
        r.at(20)
        for p in range(named, 4):
            r.req(p, 'SEND_ONLY', 64)
        r.at(5).ack(3)
        expect(args, name, r, {'responder.nak-psn': verdict}, '--at', B,
               marks=False)

    # go-back-N skips forward to right after what an ACK acknowledged
    # (the responder took the first sends of those): fine; a skip to
    # anywhere else is a resend nothing asked for
    for name, to, verdict in (('gbn-seek', 5, 'N/A'),
                              ('gbn-seek-wrong', 6, 'FAIL')):
        r = Run()
        for p in range(8):
            r.req(p, 'SEND_ONLY', 64, action='dropped' if p == 1 else None)
        r.at(5).nak(1)
        r.at(20).req(1, 'SEND_ONLY', 64)
        r.req(2, 'SEND_ONLY', 64)
        r.at(5).ack(4)
        r.at(20)
        for p in range(to, 8):
            r.req(p, 'SEND_ONLY', 64)
        r.at(5).ack(7)
        expect(args, name, r, {'requester.timeout': verdict,
                               'requester.gbn-resend': 'PASS'},
               '--timeout', '14')

    # a resend that crossed later answers on the wire (sent 16 us after
    # they passed the trace's point): it answers the NAK before them,
    # unless the crossing time is 0
    for name, opts, verdict in (('nak-crossing', (), 'PASS'),
                                ('nak-crossing-0', ('--crossing-us', '0'),
                                 'FAIL')):
        r = Run()
        for p in range(4):
            r.req(p, 'SEND_ONLY', 64)
        r.at(5).nak(0)
        r.at(4000).ack(0)
        r.ack(1)
        r.rnr(2, 14)
        r.nak(2)
        r.at(16)
        for p in range(4):
            r.req(p, 'SEND_ONLY', 64)
        r.at(5).ack(3)
        expect(args, name, r, {'requester.gbn-resend': verdict}, *opts,
               marks=False)

    # CNPs
    r = Run()
    r.req(0)
    r.req(1, ce=True)
    r.at(10).cnp()
    r.req(2)
    r.at(5).ack(2)
    expect(args, 'cnp', r, {'responder.cnp': 'PASS',
                            'responder.cnp-qp': 'PASS',
                            'responder.cnp-spurious': 'PASS'})
    r = Run()
    r.req(0, ce=True)
    r.at(10).cnp(0x99)
    r.at(5).ack(0)
    expect(args, 'cnp-wrong-qp', r, {'responder.cnp-qp': 'FAIL',
                                     'responder.cnp': 'FAIL'})
    r = Run()
    r.req(0)
    r.at(10).cnp()
    r.at(5).ack(0)
    expect(args, 'cnp-spurious', r, {'responder.cnp-spurious': 'FAIL'})

    # a bad ICRC: dropped silently, then the gap NAKed
    for name, acked, verdict in (('corrupt', False, 'PASS'),
                                 ('corrupt-acked', True, 'FAIL')):
        r = Run()
        r.req(0)
        r.req(1, bad=True)
        if acked:
            r.at(5).ack(1)
        r.req(2)
        if not acked:
            r.at(5).nak(1)
            r.at(5).req(1)
            r.req(2)
        r.at(5).ack(2)
        expect(args, name, r, {'responder.corrupt': verdict})

    # a duplicate request is ACKed
    for name, answered, verdict in (('dup', True, 'PASS'),
                                    ('dup-unanswered', False, 'FAIL')):
        r = Run()
        r.req(0)
        r.req(1)
        r.at(5).ack(1)
        r.req(1, action='duplicated')
        if answered:
            r.at(5).ack(1)
        # the responder goes on (a NAK of the next gap): the duplicate
        # was its to answer
        r.req(2, action='dropped')
        r.req(3)
        r.at(5).nak(2)
        r.at(5).req(2)
        r.req(3)
        if answered:
            r.at(5).ack(3)
        expect(args, name, r, {'responder.dup-ack': verdict})

    # a resent PSN is the packet it was
    for name, op, verdict in (('resend-same', 'WRITE_FIRST', 'PASS'),
                              ('resend-shifted', 'WRITE_ONLY', 'FAIL')):
        r = Run()
        r.req(0, 'WRITE_FIRST')
        r.req(1, 'WRITE_LAST', action='dropped')
        r.at(70e3).req(0, op)
        r.req(1, 'WRITE_LAST')
        r.at(5).ack(1)
        expect(args, name, r, {'requester.resend-same': verdict})

    # the headers alone (a snap length): judged all the same
    r = gbn()
    r.records = [(t, d[:80], c) for t, d, c in r.records]
    expect(args, 'gbn-snaplen', r, {'requester.gbn-resend': 'PASS',
                                     'responder.nak-psn': 'PASS'})

    # soft-RoCE's own captures
    pc = args.pcaps
    got = expect(args, 'golden-loss_write', _File(pc, 'loss_write.pcap'), {
        'responder.nak-single': 'PASS', 'responder.nak-psn': 'PASS',
        'requester.gbn-resend': 'PASS', 'requester.complete': 'PASS',
        'responder.ack-monotonic': 'PASS'}, '--timeout', '14')
    check(any('6 NAKs' in l for _, l in got.get('requester.gbn-resend',
                                                   [])),
          'golden-loss_write: the 6 NAKs of its README, each answered')
    got = expect(args, 'golden-loss_read', _File(pc, 'loss_read.pcap'), {
        'requester.read-resend': 'PASS', 'requester.complete': 'PASS',
        'requester.timeout': 'N/A'}, '--timeout', '14')
    check(any('20 READs asked again' in l
              for _, l in got.get('requester.read-resend', [])),
          'golden-loss_read: 30 READ requests for 10 messages, as its '
          'README says: 20 asked again')
    got = expect(args, 'golden-loss_timeout', _File(pc,
                                                    'loss_timeout.pcap'),
                 {'requester.timeout': 'FAIL'}, '--timeout', '14')
    check(any('36.1 ms' in l for _, l in got.get('requester.timeout', [])),
          'golden-loss_timeout: rxe resent after 36.1 ms')

    # soft-RoCE's retry shift (tests/data/interop-cases/README.md): its
    # timer fires early, and it resends PSN 13566687, a WRITE FIRST, as
    # an empty WRITE ONLY
    got = expect(args, 'interop-case-retry-shift',
                 _File(os.path.join(pc, '..', 'interop-cases'),
                       'write_bw-b-rxe-retry-shift.pcap'),
                 {'requester.resend-same': 'FAIL',
                  'requester.timeout': 'FAIL'}, '--timeout', '14')
    check(any('PSN 13566687 as RC_WRITE_ONLY' in l
              for _, l in got.get('requester.resend-same', [])),
          'interop-case-retry-shift: the empty WRITE ONLY named')

    # the command line
    junk = os.path.join(args.workdir, 'junk.pcap')
    with open(junk, 'wb') as fh:
        fh.write(b'not a trace')
    rc, _, _ = analyze(args, junk)
    check(rc == 2, 'a file that is no trace: exit 2 (got %d)' % rc)
    test_shell_end_stuck()
    test_report(args, [os.path.join(pc, n) for n in (
        'loss_write.pcap', 'loss_timeout.pcap')])
    print('%d failed' % failed)
    return 1 if failed else 0


def test_shell_end_stuck():
    """A shell end's tool that outlives its shell (a server waiting for
    a peer that is gone) is killed with it: the lab goes on."""
    from droce_lab import run as lab_run_mod
    end = lab_run_mod.ShellEnd('right', {'shell': 'sh -c', 'ip': '10.0.0.9',
                                         'device': 'dev'}, '.')
    t0 = time.time()
    p = end.start('sleep 120 & echo started; wait')
    rc, out = end.wait(p, 1)
    took = time.time() - t0
    check(rc is None and 'started' in out and took < 15,
          'a shell end stuck with a child holding its output: killed, '
          'output kept, %.1f s' % took)


def test_report(args, traces):
    """droce-lab report over traces: the page holds each trace's verdicts
    as analyze gives them, and a time/PSN plot of each stretch with
    events, drawn; without matplotlib it says so and exits 2."""
    out = os.path.join(args.workdir, 'report')
    p = subprocess.run([args.lab, 'report', '-o', out, '--timeout', '14'] +
                       traces, capture_output=True, text=True)
    check(p.returncode == 1 and 'report: %s/index.html' % out in p.stdout,
          'report: written, exit 1 for the timeout FAIL (got %d: %s)' %
          (p.returncode, (p.stdout + p.stderr).strip()[-300:]))
    try:
        with open(os.path.join(out, 'index.html')) as fh:
            page = fh.read()
    except OSError:
        page = ''
    for n, t in enumerate(traces):
        _, _, out_a = analyze(args, t, '--timeout', '14')
        rows = [l.split()[:2] for l in out_a.splitlines()
                if l.split()[:1] in (['PASS'], ['FAIL'], ['N/A'])]
        part = page.split('<h2>%s</h2>' % os.path.basename(t), 1)[-1] \
            .split('<h2>', 1)[0]
        got = re.findall(r'<tr><td class="[^"]+">([A-Z/]+)</td><td>'
                         r'([a-z.-]+)</td>', part)
        check(rows and [tuple(r) for r in rows] == got,
              'report: %s: its %d verdicts as analyze gives them' %
              (os.path.basename(t), len(rows)))
        svgs = sorted(re.findall(r'<img src="(trace%d-[^"]+\.svg)"' % n,
                                 part))
        drawn = []
        for svg in svgs:
            with open(os.path.join(out, svg)) as fh:
                text = fh.read()
            drawn.append(text.count('<use '))
        check(svgs and all(d > 0 for d in drawn),
              'report: %s: %d plots, points drawn in each (%s)' %
              (os.path.basename(t), len(svgs), drawn))
    # a Python without matplotlib
    fake = os.path.join(args.workdir, 'no-matplotlib')
    os.makedirs(os.path.join(fake, 'matplotlib'), exist_ok=True)
    with open(os.path.join(fake, 'matplotlib', '__init__.py'), 'w') as fh:
        fh.write('raise ImportError("no matplotlib here")\n')
    p = subprocess.run([args.lab, 'report', '-o', out + '2'] + traces[:1],
                       capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=fake))
    check(p.returncode == 2 and 'python3-matplotlib' in p.stderr,
          'report without matplotlib: exit 2, the package named (got %d: '
          '%s)' % (p.returncode, p.stderr.strip()[-200:]))


class _File:
    """A trace that is already a file."""

    def __init__(self, d, name):
        self.path = os.path.join(d, name)

    def save(self, path, marks):
        return self.path


if __name__ == '__main__':
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..',
                                    'app', 'lab'))
    from droce_lab import trace  # noqa: E402
    import lab_run               # noqa: E402
    sys.exit(main())
