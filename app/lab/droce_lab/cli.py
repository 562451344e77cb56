# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-lab's command line."""

import argparse
import sys

from . import analyze, report, run, scripts, trace


def _timeout(text):
    """A QP's timeout: its IBTA exponent (1..31) or a time ("67ms")."""
    for unit, scale in (('ms', 1e-3), ('us', 1e-6), ('s', 1.0)):
        if text.endswith(unit):
            return float(text[:-len(unit)]) * scale
    exp = int(text)
    if not 1 <= exp <= 31:
        raise argparse.ArgumentTypeError('an exponent is 1..31')
    return 4.096e-6 * (1 << exp)


def _judging(p):
    """The options analyze and report share."""
    p.add_argument('--timeout', type=_timeout, default=None,
                   help="the requesters' local ACK timeout: the exponent "
                   "a QP was given (14: 67.1 ms) or a time (67ms)")
    p.add_argument('--mtu', type=int, default=0,
                   help='path MTU (default: from the frames)')
    p.add_argument('--cnp-window-us', type=float, default=1000,
                   help='a CNP answers a CE mark within this (default '
                   '1000)')
    p.add_argument('--crossing-us', type=float, default=100,
                   help='how long a frame may take between an end and '
                   'the trace\'s point: a request sent less than this after '
                   'an answer passed may have left before the answer '
                   'reached its requester, and a resend after a timeout '
                   'may seem this much early (default 100)')
    p.add_argument('--at', metavar='IP',
                   help='the trace was taken at this end (its own '
                   'mirror, tcpdump on its host), not between the two: '
                   'frames to it arrived, frames from it may have been '
                   'lost after; the checks of what reached the other '
                   'end are N/A')


def _read(path, at):
    """A trace's frames and marks, or None (the reason printed)."""
    try:
        frames, marked = trace.read(path)
    except (OSError, ValueError, KeyError, IndexError) as e:
        print('droce-lab: %s: %s' % (path, e), file=sys.stderr)
        return None
    if at is not None and not any(at in (f.src, f.dst) for f in frames):
        print('droce-lab: --at %s: no frame to or from it' % at,
              file=sys.stderr)
    return frames, marked


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog='droce-lab',
        description='Judge what each side of each RoCE connection did.')
    sub = ap.add_subparsers(dest='cmd', required=True)
    an = sub.add_parser(
        'analyze', help='check a trace (pcap or pcapng)',
        description='One line per connection, side and check: '
        'PASS|FAIL|N/A CHECK CONNECTION REASON, then the figures. '
        'Exits 1 if a check failed.')
    an.add_argument('trace')
    _judging(an)
    rp = sub.add_parser(
        'report', help='a page of verdicts and time/PSN plots',
        description='For each trace, its verdicts, figures and a '
        'time/PSN plot of both directions around each event, written as '
        'OUT/index.html with SVG plots (matplotlib). Exits 1 if a check '
        'failed.')
    rp.add_argument('traces', nargs='+', metavar='trace')
    rp.add_argument('-o', '--out', required=True, metavar='DIR',
                    help='where index.html and the plots go')
    rp.add_argument('--title', default='droce-lab report')
    _judging(rp)
    ru = sub.add_parser(
        'run', help='the scripts through droce-inject between two '
        'endpoints, judged, in one report',
        description='Each script (default: all of them on one QP, and '
        'gbn-write on 16) both ways through droce-inject between the '
        'left and right endpoints of the setup (--config; default: two '
        'soft-RoCE guests booted here), each trace judged against what '
        'the IBTA asks, one report. Exits 0 if every run went as the '
        'IBTA asks, 1 if one differed, 2 if one could not be run.')
    ru.add_argument('scripts', nargs='*', metavar='SCRIPT[@QPS]',
                    help='%s; @QPS: on 1 to 16 QPs at once' %
                    ', '.join(s.name for s in scripts.SCRIPTS))
    ru.add_argument('-o', '--out', default='droce-lab-run', metavar='DIR',
                    help='the traces, consoles and report/index.html '
                    '(default ./droce-lab-run, emptied first)')
    ru.add_argument('--config', metavar='FILE',
                    help='the setup: endpoints and injector ports '
                    '(--print-config shows the default)')
    ru.add_argument('--print-config', action='store_true',
                    help='print the default setup and exit')
    ru.add_argument('--inject', metavar='PATH',
                    help='droce-inject (default: beside droce-lab, or on '
                    'PATH)')
    ru.add_argument('--title', default='droce-lab run')
    ru.add_argument('--fake-fault', metavar='RUN', help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.cmd == 'run':
        return run.main(args)
    args.cnp_window = args.cnp_window_us / 1e6
    if args.cmd == 'report':
        return _report(args)
    read = _read(args.trace, args.at)
    if read is None:
        return 2
    frames, marked = read
    res = analyze.analyze(frames, marked, args)
    if not res.conns:
        print('no RC connection in %d RoCE frames: nothing to judge' %
              len(frames))
        return 0
    analyze.report(res, sys.stdout)
    return 1 if res.failed() else 0


def _report(args):
    for path in args.traces:
        if _read(path, args.at) is None:
            return 2
    try:
        index, results = report.write(args.traces, args.out, args,
                                      args.title)
    except RuntimeError as e:
        print('droce-lab: %s' % e, file=sys.stderr)
        return 2
    for path, res in results:
        verdicts = [v for v, _, _, _ in res.lines]
        print('%s: %d PASS, %d FAIL, %d N/A' % (
            path, verdicts.count('PASS'), verdicts.count('FAIL'),
            verdicts.count('N/A')))
    print('report: %s' % index)
    return 1 if any(res.failed() for _, res in results) else 0
