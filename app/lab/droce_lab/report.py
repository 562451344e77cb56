# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""A page a person reads: for each trace its verdicts, its figures and,
around each event, a time/PSN plot of both directions.

The page is HTML (index.html) with one SVG a plot beside it, drawn with
matplotlib (Debian's python3-matplotlib): the one thing of droce-lab's
that needs more than the standard library.
"""

import html
import os

from . import analyze
from . import trace as T
from .trace import psn_diff

# at most this many plots a connection; the rest are counted
MAX_PLOTS = 4

# how each kind of frame is drawn: (marker, colour, size, filled, label)
STYLE = {
    'request': ('.', '#1f77b4', 4, True, 'request'),
    'resent': ('o', '#ff7f0e', 5, False, 'request sent again'),
    'read': ('.', '#17becf', 4, True, 'READ response'),
    'ack': ('_', '#2ca02c', 8, True, 'ACK (its PSN)'),
    'nak': ('s', '#d62728', 6, True, 'NAK (the PSN it names)'),
    'rnr': ('D', '#9467bd', 6, True, 'RNR NAK'),
    'dropped': ('x', '#d62728', 8, True, 'dropped (injector)'),
    'corrupted': ('X', '#000000', 8, True, 'corrupted (injector)'),
    'ce': ('^', '#e377c2', 7, True, 'CE-marked'),
    'moved': ('s', '#8c564b', 7, False,
              'duplicated, delayed, reordered or rewritten (injector)'),
}
KINDS = list(STYLE)


def _pyplot():
    """matplotlib's pyplot, drawing to files; None if not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def _kind(f, r):
    """How frame @p f of a connection replayed as @p r is drawn."""
    if f.action == 'dropped':
        return 'dropped'
    if f.action == 'corrupted' or f.icrc_ok is False:
        return 'corrupted'
    if f.action in analyze.MOVED:
        return 'moved'
    if f.bits & T.REQ:
        if f.ce:
            return 'ce'
        return 'request' if r.first_send.get(f.psn) is f else 'resent'
    if f.bits & T.READ:
        return 'read'
    return {0: 'ack', 1: 'rnr', 3: 'nak'}.get(f.aeth_kind(), 'ack')


def _windows(c, r, gap):
    """The stretches of the connection's time around its events (the
    injector's marks, NAKs, resends, timeouts, CNPs): events less than
    @p gap apart share one. @return [(t0, t1, events)]."""
    times = sorted([f.t for f in c.frames
                    if f.action not in (None, 'delivered')] +
                   [t for t, _ in r.events])
    groups = []
    for t in times:
        if groups and t - groups[-1][-1] <= gap:
            groups[-1].append(t)
        else:
            groups.append([t])
    t_first, t_last = c.frames[0].t, c.frames[-1].t
    out = []
    for g in groups:
        # before: the traffic the event met; after: its recovery
        span = g[-1] - g[0]
        out.append((max(t_first, g[0] - max(1e-3, 0.3 * span)),
                    min(t_last, g[-1] + max(3e-3, 0.5 * span)), len(g)))
    return out


def _plot(plt, c, r, t0, t1, path):
    """Both directions of connection @p c from @p t0 to @p t1, time
    against PSN (from the connection's first), as SVG at @p path."""
    base = c.requests()[0].psn if c.requests() else c.frames[0].psn
    start = c.frames[0].t
    pts = {k: ([], []) for k in KINDS}
    cnps = []
    for f in c.frames:
        if not t0 <= f.t <= t1:
            continue
        if f.bits & T.CNP:
            cnps.append(f.t)
            continue
        k = _kind(f, r)
        pts[k][0].append((f.t - start) * 1e3)
        pts[k][1].append(psn_diff(f.psn, base))
    fig, ax = plt.subplots(figsize=(11, 4.2))
    for k in KINDS:
        xs, ys = pts[k]
        if not xs:
            continue
        marker, colour, size, filled, label = STYLE[k]
        ax.plot(xs, ys, linestyle='none', marker=marker, markersize=size,
                color=colour, markerfacecolor=colour if filled else 'none',
                label='%s (%d)' % (label, len(xs)))
    for i, t in enumerate(cnps):
        ax.axvline((t - start) * 1e3, color='#7f7f7f', linestyle=':',
                   linewidth=1, label='CNP (%d)' % len(cnps) if i == 0
                   else None)
    ax.set_xlabel('ms since the connection\'s first frame')
    ax.set_ylabel('PSN - %d' % base)
    ax.set_title('%s, %.3f to %.3f ms' % (c.label(), (t0 - start) * 1e3,
                                          (t1 - start) * 1e3), fontsize=9)
    ax.grid(True, linewidth=0.3)
    ax.legend(fontsize=7, loc='upper left', bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _page_head(title):
    return ('<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            '<title>%s</title><style>\n'
            'body{font-family:sans-serif;max-width:70em;margin:1em auto}\n'
            'table{border-collapse:collapse;font-size:90%%}\n'
            'td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}\n'
            'td.PASS{background:#dfd}td.FAIL{background:#fcc}'
            'td.N\\/A{color:#888}\n'
            'pre{background:#f6f6f6;padding:4px}\n'
            '</style></head><body>\n<h1>%s</h1>\n' %
            (html.escape(title), html.escape(title)))


def _events_note(path):
    """The injector's script beside the trace (same name, .events), if
    there is one."""
    events = os.path.splitext(path)[0] + '.events'
    if not os.path.exists(events):
        return ''
    with open(events) as f:
        lines = [l.strip() for l in f if l.split('#', 1)[0].strip()]
    return ('<p>events: <code>%s</code></p>\n' %
            html.escape('; '.join(lines))) if lines else ''


def write(paths, out_dir, opts, title, top='', notes=None):
    """The report of traces @p paths in @p out_dir (index.html and its
    plots), with HTML @p top under the title and @p notes (trace: HTML)
    under each trace's heading. @return (the page's path, [(trace,
    Result)]), or raises RuntimeError if matplotlib is missing."""
    plt = _pyplot()
    if plt is None:
        raise RuntimeError('the plots need matplotlib: apt-get install '
                           'python3-matplotlib')
    os.makedirs(out_dir, exist_ok=True)
    gap = max(0.2, 2 * opts.timeout) if opts.timeout else 0.2
    page = [_page_head(title), top]
    results = []
    for n, path in enumerate(paths):
        frames, marked = T.read(path)
        res = analyze.analyze(frames, marked, opts)
        results.append((path, res))
        name = os.path.basename(path)
        verdicts = [v for v, _, _, _ in res.lines]
        page.append('<h2>%s</h2>\n<p>%s: %d RoCE frames, %d RC '
                    'connections, path MTU %d (%s); %d PASS, %d FAIL, '
                    '%d N/A</p>\n' % (
                        html.escape(name), html.escape(path), len(frames),
                        len(res.conns), res.mtu[0], html.escape(res.mtu[1]),
                        verdicts.count('PASS'), verdicts.count('FAIL'),
                        verdicts.count('N/A')))
        page.append((notes or {}).get(path, ''))
        page.append(_events_note(path))
        if not res.conns:
            page.append('<p>no RC connection: nothing to judge</p>\n')
            continue
        page.append('<table><tr><th>verdict</th><th>check</th>'
                    '<th>connection</th><th>reason</th></tr>\n')
        for verdict, check, label, reason in res.lines:
            page.append('<tr><td class="%s">%s</td><td>%s</td><td>%s</td>'
                        '<td>%s</td></tr>\n' % (
                            verdict, verdict, html.escape(check),
                            html.escape(label), html.escape(reason)))
        page.append('</table>\n')
        lines = []
        analyze.report_figures(res, lines.append)
        page.append('<pre>%s</pre>\n' % html.escape(''.join(lines)))
        for c in res.conns:
            r = res.replays[c.index]
            wins = _windows(c, r, gap)
            for i, (t0, t1, k) in enumerate(wins[:MAX_PLOTS]):
                svg = 'trace%d-c%d-%d.svg' % (n, c.index, i)
                _plot(plt, c, r, t0, t1, os.path.join(out_dir, svg))
                page.append('<p><img src="%s" alt="%s"></p>\n' % (
                    svg, html.escape('%s, %d events' % (c.label(), k))))
            if len(wins) > MAX_PLOTS:
                page.append('<p>(%d stretches with events more, not '
                            'drawn)</p>\n' % (len(wins) - MAX_PLOTS))
            if not wins:
                page.append('<p>%s: no event to draw</p>\n' %
                            html.escape(c.label()))
    page.append('</body></html>\n')
    index = os.path.join(out_dir, 'index.html')
    with open(index, 'w') as f:
        f.write(''.join(page))
    return index, results
