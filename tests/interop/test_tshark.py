#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-dump agrees with tshark's InfiniBand dissector, frame by frame.

For every frame of every capture given: droce-dump decodes it as valid
RoCEv2 with a good ICRC, tshark decodes it without complaint, and every
field both produce has the same value, the fields of CM MADs to QP1
included (those of the attributes tshark's CM dissector leaves alone are
read from the MAD bytes it shows); the ICRC stored in the frame also
equals one computed here from the RoCEv2 rules (a third, independent
implementation).

With --run, a command is run first and the captures it leaves in
--pcap-dir are the ones checked; --cnps then also wants CNPs among them,
each laid out as RoCEv2 defines (BTH opcode 0x81, BECN set, 16 zero bytes
after the BTH, the ICRC, 74 bytes in all over IPv4), not ECN-capable, and
frames marked Congestion Experienced, as tshark reads their IP headers.

Usage: test_tshark.py --dump DROCE_DUMP --tshark TSHARK_ROCE PCAP...
       test_tshark.py --dump DROCE_DUMP --tshark TSHARK_ROCE [--cnps]
                      --pcap-dir DIR --run CMD ARG...
"""

import argparse
import glob
import os
import subprocess
import sys

import roce_check


def check_capture(dump, tshark, pcap):
    """Mismatches for one capture, its frame count and its CM MADs."""
    frames = roce_check.read_pcap(pcap)
    mine = roce_check.droce_dump(dump, pcap)
    theirs = roce_check.tshark(tshark, pcap)
    bad = []
    if not len(frames) == len(mine) == len(theirs):
        return (['frames: pcap %d, droce-dump %d, tshark %d' %
                 (len(frames), len(mine), len(theirs))], len(frames), 0)
    for frame, d, t in zip(frames, mine, theirs):
        bad += roce_check.compare(d, t, frame)
        ref = roce_check.reference_icrc(frame)
        if ref != roce_check.stored_icrc(frame):
            bad.append('frame %d: reference ICRC %08x, stored %08x' %
                       (d['frame'], ref, roce_check.stored_icrc(frame)))
    return bad, len(frames), sum(1 for d in mine if 'cm' in d)


def check_cnps(dump, tshark, pcaps):
    """Mismatches of the CNPs and CE marks in the captures, and counts."""
    bad = []
    cnps = ce = 0
    for pcap in pcaps:
        frames = roce_check.read_pcap(pcap)
        theirs = roce_check.tshark(tshark, pcap)
        for d, t, frame in zip(roce_check.droce_dump(dump, pcap), theirs,
                               frames):
            if d.get('status') != 'ok':
                continue
            ecn = int(t['ip.dsfield.ecn'] or t['ipv6.tclass.ecn'], 0)
            ce += ecn == 3
            if d['opcode'] != 0x81:
                continue
            cnps += 1
            where = '%s frame %d' % (os.path.basename(pcap), d['frame'])
            bth = 14 + (20 if d['ip_version'] == 4 else 40) + 8
            if int(t['infiniband.bth.opcode'], 0) != 0x81:
                bad.append('%s: tshark reads opcode %s' %
                           (where, t['infiniband.bth.opcode']))
            if not frame[bth + 4] & 0x40:
                bad.append('%s: BECN not set' % where)
            if frame[bth + 12:bth + 28] != bytes(16):
                bad.append('%s: reserved bytes not zero' % where)
            if len(frame) != bth + 12 + 16 + 4:
                bad.append('%s: %d bytes' % (where, len(frame)))
            if ecn != 0:
                bad.append('%s: ECN field %d, not Not-ECT' % (where, ecn))
    if cnps == 0:
        bad.append('no CNP in the captures')
    if ce == 0:
        bad.append('no frame marked CE in the captures')
    return bad, cnps, ce


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dump', required=True, help='droce-dump binary')
    ap.add_argument('--tshark', required=True, help='tshark-roce script')
    ap.add_argument('--run', nargs=argparse.REMAINDER,
                    help='a command that leaves captures in --pcap-dir')
    ap.add_argument('--pcap-dir', help='check the captures found here')
    ap.add_argument('--cnps', action='store_true',
                    help='want well-formed CNPs and CE marks among them')
    ap.add_argument('pcaps', nargs='*')
    args = ap.parse_args()
    if args.run:
        for old in glob.glob(os.path.join(args.pcap_dir, '*.pcap')):
            os.unlink(old)
        if subprocess.run(args.run).returncode != 0:
            print('%s failed' % ' '.join(args.run))
            return 1
    if args.pcap_dir:
        args.pcaps += sorted(glob.glob(os.path.join(args.pcap_dir,
                                                    '*.pcap')))
    if not args.pcaps:
        print('no captures')
        return 1

    total = 0
    failed = False
    for pcap in args.pcaps:
        bad, n, mads = check_capture(args.dump, args.tshark, pcap)
        total += n
        name = os.path.basename(pcap)
        if mads:
            name += ' (%d CM MADs)' % mads
        if bad:
            failed = True
            print('%s: %d frames, %d mismatches' % (name, n, len(bad)))
            for line in bad[:50]:
                print('  ' + line)
        else:
            print('%s: %d frames agree' % (name, n))
    print('%d frames in %d captures: %s' %
          (total, len(args.pcaps), 'MISMATCH' if failed else 'all agree'))
    if args.cnps:
        bad, cnps, ce = check_cnps(args.dump, args.tshark, args.pcaps)
        print('%d CNPs, %d frames marked CE%s' %
              (cnps, ce, ': ' + '; '.join(bad[:20]) if bad else ', as '
               'RoCEv2 lays them out'))
        failed = failed or bool(bad)
    return 1 if failed or total == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
