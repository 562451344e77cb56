#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""Frames lib/wire builds are what scapy's RoCE layer and tshark expect.

droce-framegen writes frames of every opcode over IPv4 and IPv6, with and
without an 802.1Q tag, for payload lengths covering every pad count, and of
a few opcodes for every payload length from 0 to 4096. For every frame:

* scapy parses it as Ether[/Dot1Q]/IP or IPv6/UDP/BTH, and its BTH fields
  and ICRC field equal droce-dump's;
* the ICRC equals scapy's own computation (IPv4; scapy has none for IPv6)
  and one computed here from the RoCEv2 rules (IPv4 and IPv6);
* the IPv4 header checksum and the IPv6 UDP checksum equal what scapy
  computes afresh, and the IPv4 UDP checksum is 0 as RoCEv2 senders send;
* the pad count makes payload and pad a whole number of words, pad bytes
  are zero, and the AETH, where scapy decodes one, agrees;
* tshark decodes the same frames to the same field values, with no
  malformed or expert warnings.

Usage: test_scapy.py --framegen FRAMEGEN --dump DROCE_DUMP
                     --tshark TSHARK_ROCE --workdir DIR
"""

import argparse
import os
import subprocess
import sys
import warnings

import roce_check

warnings.filterwarnings('ignore')
from scapy.all import Ether, Dot1Q, IP, IPv6, UDP, raw  # noqa: E402
from scapy.contrib.roce import BTH, AETH  # noqa: E402

# (name, framegen arguments)
SETS = [
    ('every-opcode', []),
    ('every-opcode-vlan', ['-v', '-s', '2']),
    ('every-length', ['-O', '0x04,0x0a,0x65', '-l', '0-4096', '-s', '3']),
]


class Checker:
    """Runs every per-frame check and keeps the failures and counts."""

    def __init__(self):
        self.bad = []
        self.counts = {}

    def count(self, what):
        self.counts[what] = self.counts.get(what, 0) + 1

    def check(self, n, what, mine, theirs):
        """Record one comparison of droce's value with the other side's."""
        self.count(what)
        if mine != theirs:
            self.bad.append('frame %d: %s: droce %r, other %r' %
                            (n, what, mine, theirs))

    def frame(self, frame, d):
        n = d['frame']
        if d['status'] != 'ok' or not d['icrc_ok']:
            self.bad.append('frame %d: droce-dump: %s %s' %
                            (n, d['status'], d.get('error', '')))
            return
        p = Ether(frame)
        if BTH not in p or UDP not in p:
            self.bad.append('frame %d: scapy: %s' % (n, p.summary()))
            return
        self.check(n, 'scapy vlan', 'vlan' in d, Dot1Q in p)
        self.check(n, 'scapy ip version', d['ip_version'],
                   4 if IP in p else 6)
        b = p[BTH]
        self.check(n, 'scapy opcode', d['opcode'], b.opcode)
        self.check(n, 'scapy se', d['se'], b.solicited)
        self.check(n, 'scapy m', d['m'], b.migreq)
        self.check(n, 'scapy padcnt', d['padcnt'], b.padcount)
        self.check(n, 'scapy tver', d['tver'], b.version)
        self.check(n, 'scapy pkey', d['pkey'], b.pkey)
        self.check(n, 'scapy fecn', d['fecn'], b.fecn)
        self.check(n, 'scapy becn', d['becn'], b.becn)
        self.check(n, 'scapy dqpn', d['dqpn'], b.dqpn)
        self.check(n, 'scapy ackreq', d['ackreq'], b.ackreq)
        self.check(n, 'scapy psn', d['psn'], b.psn)
        wire_icrc = roce_check.stored_icrc(frame)
        # scapy's icrc field is the wire bytes read big-endian
        self.check(n, 'scapy icrc field', d['icrc'],
                   int.from_bytes(b.icrc.to_bytes(4, 'big'), 'little'))
        self.check(n, 'stored icrc', d['icrc'], wire_icrc)
        self.check(n, 'reference icrc', d['icrc'],
                   roce_check.reference_icrc(frame))
        if IP in p:
            scapy_icrc = b.compute_icrc(raw(b))
            self.check(n, 'scapy compute_icrc', d['icrc'],
                       int.from_bytes(scapy_icrc, 'little'))
            fresh = IP(raw(p[IP]))
            del fresh.chksum
            self.check(n, 'scapy ipv4 checksum', p[IP].chksum,
                       IP(raw(fresh)).chksum)
            self.check(n, 'udp checksum 0 over ipv4', p[UDP].chksum, 0)
        else:
            fresh = IPv6(raw(p[IPv6]))
            del fresh[UDP].chksum
            self.check(n, 'scapy ipv6 udp checksum', p[UDP].chksum,
                       IPv6(raw(fresh))[UDP].chksum)
        self.check(n, 'pad makes whole words',
                   (d['payload_len'] + d['padcnt']) % 4, 0)
        end = roce_check.l3_offset(frame) + (
            p[IP].len if IP in p else 40 + p[IPv6].plen)
        pad = frame[end - 4 - d['padcnt']:end - 4]
        self.check(n, 'pad bytes zero', pad, bytes(d['padcnt']))
        if AETH in p:
            self.check(n, 'scapy aeth syndrome', d['aeth']['syndrome'],
                       p[AETH].syndrome)
            self.check(n, 'scapy aeth msn', d['aeth']['msn'], p[AETH].msn)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--framegen', required=True)
    ap.add_argument('--dump', required=True)
    ap.add_argument('--tshark', required=True)
    ap.add_argument('--workdir', required=True)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)

    checker = Checker()
    total = 0
    tshark_bad = []
    for name, extra in SETS:
        pcap = os.path.join(args.workdir, name + '.pcap')
        subprocess.run([args.framegen, '-o', pcap] + extra, check=True,
                       stdout=subprocess.DEVNULL)
        frames = roce_check.read_pcap(pcap)
        mine = roce_check.droce_dump(args.dump, pcap)
        if len(frames) != len(mine):
            checker.bad.append('%s: %d frames, droce-dump %d' %
                               (name, len(frames), len(mine)))
            continue
        for frame, d in zip(frames, mine):
            checker.frame(frame, d)
        theirs = roce_check.tshark(args.tshark, pcap)
        if len(theirs) != len(frames):
            tshark_bad.append('%s: tshark decoded %d of %d frames' %
                              (name, len(theirs), len(frames)))
        else:
            for frame, d, t in zip(frames, mine, theirs):
                tshark_bad += roce_check.compare(d, t, frame)
        opcodes = len({d['opcode'] for d in mine})
        versions = sorted({d['ip_version'] for d in mine})
        pads = sorted({d['padcnt'] for d in mine})
        print('%s: %d frames, %d opcodes, IPv%s, pad counts %s' %
              (name, len(frames), opcodes, '/IPv'.join(map(str, versions)),
               pads))
        total += len(frames)

    for what in sorted(checker.counts):
        print('  %-28s %d frames' % (what, checker.counts[what]))
    print('  %-28s %d frames' % ('tshark field by field', total))
    bad = checker.bad + tshark_bad
    for line in bad[:100]:
        print('  ' + line)
    print('%d frames: %s' % (total, 'MISMATCH (%d)' % len(bad) if bad
                             else 'scapy and tshark agree with lib/wire'))
    return 1 if bad or total == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
