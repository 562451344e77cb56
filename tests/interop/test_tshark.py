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

Usage: test_tshark.py --dump DROCE_DUMP --tshark TSHARK_ROCE PCAP...
"""

import argparse
import os
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dump', required=True, help='droce-dump binary')
    ap.add_argument('--tshark', required=True, help='tshark-roce script')
    ap.add_argument('pcaps', nargs='+')
    args = ap.parse_args()

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
    return 1 if failed or total == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
