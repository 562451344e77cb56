# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""droce-inject as a child: started and waited for until it forwards,
stopped and its report taken, and what its report says an event did."""

import os
import re
import signal
import subprocess


def kill_group(p):
    """Kill @p p, started in a session of its own, and everything it
    started (one left behind would hold the output pipe open for ever):
    what it printed, 10 s at most."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        out, _ = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        out = ''
    return out


def start(cmd):
    """droce-inject (@p cmd), once it forwards: (process, whether it
    does)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    head = ''
    while 'forwarding' not in head and p.poll() is None:
        head += p.stdout.readline()
    return p, 'forwarding' in head


def stop(p):
    """SIGTERM, 30 s to stop (then killed): what it printed since."""
    p.send_signal(signal.SIGTERM)
    try:
        out, _ = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        out = kill_group(p)
    return out


def acted(report, n=1):
    """How many frames event @p n acted on, by the injector's report;
    None if it does not say."""
    m = re.search(r'^event %d \(line \d+, \w+\): (\d+) frames' % n, report,
                  re.M)
    return int(m.group(1)) if m else None
