# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The droce authors
"""A trace's frames: pcap and pcapng reading, and the RoCEv2 headers.

Opcode knowledge lives in OPCODES alone: the rest of droce-lab tests its
bits. A frame of a trace becomes a Frame with what the checks need: its
time, addresses, ECN, BTH fields, AETH and RETH, payload length, whether
its ICRC is good, and what an injector did to it (a pcapng comment
"droce-lab: ACTION", doc/guides/lab.rst).
"""

import struct
import zlib

ROCE_PORT = 4791

# opcode bits
REQ, RESP, FIRST, MIDDLE, LAST, ONLY = 1, 2, 4, 8, 16, 32
SEND, WRITE, READ, ATOMIC, ACK, CNP = 64, 128, 256, 512, 1024, 2048

# extension headers: their lengths in bytes
HEADERS = {'RETH': 16, 'AETH': 4, 'IMMDT': 4, 'IETH': 4, 'ATOMICETH': 28,
           'ATOMICACKETH': 8, 'DETH': 8, 'CNP': 16}

# the operations, by the low five bits of the opcode: name, bits, headers
_OPS = {
    0x00: ('SEND_FIRST', REQ | SEND | FIRST, ()),
    0x01: ('SEND_MIDDLE', REQ | SEND | MIDDLE, ()),
    0x02: ('SEND_LAST', REQ | SEND | LAST, ()),
    0x03: ('SEND_LAST_IMM', REQ | SEND | LAST, ('IMMDT',)),
    0x04: ('SEND_ONLY', REQ | SEND | ONLY, ()),
    0x05: ('SEND_ONLY_IMM', REQ | SEND | ONLY, ('IMMDT',)),
    0x06: ('WRITE_FIRST', REQ | WRITE | FIRST, ('RETH',)),
    0x07: ('WRITE_MIDDLE', REQ | WRITE | MIDDLE, ()),
    0x08: ('WRITE_LAST', REQ | WRITE | LAST, ()),
    0x09: ('WRITE_LAST_IMM', REQ | WRITE | LAST, ('IMMDT',)),
    0x0a: ('WRITE_ONLY', REQ | WRITE | ONLY, ('RETH',)),
    0x0b: ('WRITE_ONLY_IMM', REQ | WRITE | ONLY, ('RETH', 'IMMDT')),
    0x0c: ('READ_REQUEST', REQ | READ | ONLY, ('RETH',)),
    0x0d: ('READ_RESPONSE_FIRST', RESP | READ | FIRST, ('AETH',)),
    0x0e: ('READ_RESPONSE_MIDDLE', RESP | READ | MIDDLE, ()),
    0x0f: ('READ_RESPONSE_LAST', RESP | READ | LAST, ('AETH',)),
    0x10: ('READ_RESPONSE_ONLY', RESP | READ | ONLY, ('AETH',)),
    0x11: ('ACKNOWLEDGE', RESP | ACK | ONLY, ('AETH',)),
    0x12: ('ATOMIC_ACKNOWLEDGE', RESP | ATOMIC | ONLY,
           ('AETH', 'ATOMICACKETH')),
    0x13: ('COMPARE_SWAP', REQ | ATOMIC | ONLY, ('ATOMICETH',)),
    0x14: ('FETCH_ADD', REQ | ATOMIC | ONLY, ('ATOMICETH',)),
    0x16: ('SEND_LAST_INV', REQ | SEND | LAST, ('IETH',)),
    0x17: ('SEND_ONLY_INV', REQ | SEND | ONLY, ('IETH',)),
}
# the transports: the top three bits, which of _OPS each has
_TRANSPORTS = {0x00: ('RC', None), 0x20: ('UC', range(0x00, 0x0c)),
               0x60: ('UD', (0x04, 0x05))}


def _opcodes():
    table = {}
    for tr, (tname, ops) in _TRANSPORTS.items():
        for low, (name, bits, hdrs) in _OPS.items():
            if ops is not None and low not in ops:
                continue
            if tname == 'UD':
                hdrs = ('DETH',) + hdrs
            table[tr | low] = (tname + '_' + name, tname, bits, hdrs)
    table[0x81] = ('CNP', 'CNP', CNP, ('CNP',))
    return table


OPCODES = _opcodes()

# AETH syndromes: the top three bits, and a NAK's code
AETH_ACK, AETH_RNR, AETH_NAK = 0, 1, 3
NAK_PSN_SEQ, NAK_INV_REQ, NAK_REM_ACCESS, NAK_REM_OP = 0, 1, 2, 3

# IBTA's RNR NAK timer field: the least wait it names, in microseconds
RNR_DELAY_US = (655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480,
                640, 960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360,
                20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760,
                327680, 491520)

# what an injector may have done to a frame (pcapng comment)
ACTIONS = ('delivered', 'dropped', 'ce', 'corrupted', 'delayed',
           'duplicated', 'reordered', 'rewritten')


def psn_diff(a, b):
    """a - b for 24-bit PSNs: negative if a comes before b."""
    d = ((a - b) << 8) & 0xffffffff
    return (d - (1 << 32) if d & 0x80000000 else d) >> 8


def psn_add(a, n):
    return (a + n) & 0xffffff


class Frame:
    """One RoCEv2 frame of a trace."""

    __slots__ = ('no', 't', 'src', 'dst', 'ecn', 'opcode', 'name', 'tr',
                 'bits', 'dqpn', 'psn', 'ackreq', 'syndrome', 'msn',
                 'va', 'rkey', 'dma_len', 'payload', 'icrc_ok', 'action',
                 'note')

    def __init__(self, **kw):
        self.syndrome = self.msn = self.va = self.rkey = self.dma_len = None
        self.note = ''
        for k, v in kw.items():
            setattr(self, k, v)

    @property
    def delivered(self):
        """Whether it went on to its receiver (not dropped, ICRC good)."""
        return self.action != 'dropped' and self.icrc_ok is not False

    @property
    def ce(self):
        return self.ecn == 3 or self.action == 'ce'

    def aeth_kind(self):
        return None if self.syndrome is None else self.syndrome >> 5

    def __repr__(self):
        return 'frame %d (%s psn %d)' % (self.no, self.name, self.psn)


def icrc(pkt):
    """The ICRC of an IP packet @p pkt (bytes from the IP header to the
    end of the ICRC), by the RoCEv2 rules: CRC-32 over eight bytes of
    ones, then the packet with the IP fields routers change, the UDP
    checksum and the BTH's byte 4 set to ones, up to the ICRC."""
    p = bytearray(pkt)
    if p[0] >> 4 == 6:
        iplen = 40
        p[0] |= 0x0f
        p[1:4] = b'\xff\xff\xff'
        p[7] = 0xff
    else:
        iplen = (p[0] & 0xf) * 4
        p[1] = 0xff
        p[8] = 0xff
        p[10:12] = b'\xff\xff'
    p[iplen + 6:iplen + 8] = b'\xff\xff'
    p[iplen + 12] = 0xff
    return zlib.crc32(b'\xff' * 8 + bytes(p[:-4])) & 0xffffffff


def _ip_text(raw):
    if len(raw) == 4:
        return '.'.join(str(b) for b in raw)
    if raw[:12] == b'\0' * 10 + b'\xff\xff':
        return '.'.join(str(b) for b in raw[12:])
    return ':'.join('%x' % v for v in struct.unpack('>8H', raw))


def parse(no, t, data, action=None, note=''):
    """A Frame from an Ethernet frame, or None if it is not RoCEv2."""
    l3 = 14
    ethertype = struct.unpack_from('>H', data, 12)[0] if len(data) > 14 \
        else 0
    if ethertype == 0x8100:
        ethertype = struct.unpack_from('>H', data, 16)[0]
        l3 = 18
    if ethertype == 0x0800 and len(data) >= l3 + 20:
        ihl = (data[l3] & 0xf) * 4
        if data[l3 + 9] != 17:
            return None
        end = l3 + struct.unpack_from('>H', data, l3 + 2)[0]
        ecn = data[l3 + 1] & 3
        src, dst = data[l3 + 12:l3 + 16], data[l3 + 16:l3 + 20]
        udp = l3 + ihl
    elif ethertype == 0x86dd and len(data) >= l3 + 40:
        if data[l3 + 6] != 17:
            return None
        end = l3 + 40 + struct.unpack_from('>H', data, l3 + 4)[0]
        ecn = (struct.unpack_from('>I', data, l3)[0] >> 20) & 3
        src, dst = data[l3 + 8:l3 + 24], data[l3 + 24:l3 + 40]
        udp = l3 + 40
    else:
        return None
    # a capture may keep the headers alone (a snap length): the ICRC of
    # such a frame is not known
    cut = end > len(data)
    if udp + 8 + 12 > len(data) or udp + 8 + 12 + 4 > end or \
       struct.unpack_from('>H', data, udp + 2)[0] != ROCE_PORT:
        return None
    bth = udp + 8
    opcode = data[bth]
    op = OPCODES.get(opcode)
    if op is None:
        return None
    name, tr, bits, hdrs = op
    off = bth + 12
    f = Frame(no=no, t=t, src=_ip_text(src), dst=_ip_text(dst), ecn=ecn,
              opcode=opcode, name=name, tr=tr, bits=bits,
              dqpn=struct.unpack_from('>I', data, bth + 4)[0] & 0xffffff,
              psn=struct.unpack_from('>I', data, bth + 8)[0] & 0xffffff,
              ackreq=bool(data[bth + 8] & 0x80),
              action=action or 'delivered', note=note)
    for h in hdrs:
        if off + HEADERS[h] > min(end - 4, len(data)):
            return None
        if h == 'RETH':
            f.va, f.rkey, f.dma_len = struct.unpack_from('>QII', data, off)
        elif h == 'AETH':
            v = struct.unpack_from('>I', data, off)[0]
            f.syndrome, f.msn = v >> 24, v & 0xffffff
        off += HEADERS[h]
    pad = (data[bth + 1] >> 4) & 3
    f.payload = max(0, end - 4 - off - pad)
    if cut:
        f.icrc_ok = None
    else:
        stored = struct.unpack_from('<I', data, end - 4)[0]
        f.icrc_ok = icrc(data[l3:end]) == stored
    if action == 'corrupted':
        f.icrc_ok = False
    return f


def _pcap_records(buf):
    magic = buf[:4]
    endian = {b'\xd4\xc3\xb2\xa1': '<', b'\xa1\xb2\xc3\xd4': '>',
              b'\x4d\x3c\xb2\xa1': '<', b'\xa1\xb2\x3c\x4d': '>'}[magic]
    nano = magic in (b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\x3c\x4d')
    link = struct.unpack_from(endian + 'I', buf, 20)[0] & 0xffff
    if link != 1:
        raise ValueError('link type %d: only Ethernet traces are read' % link)
    off = 24
    while off + 16 <= len(buf):
        sec, frac, caplen, _ = struct.unpack_from(endian + 'IIII', buf, off)
        off += 16
        yield sec + frac / (1e9 if nano else 1e6), buf[off:off + caplen], ''
        off += caplen


def _pcapng_records(buf):
    endian = '<'
    ifaces = []
    off = 0
    while off + 12 <= len(buf):
        btype = struct.unpack_from(endian + 'I', buf, off)[0]
        if btype == 0x0a0d0d0a:
            endian = '<' if buf[off + 8:off + 12] == b'\x4d\x3c\x2b\x1a' \
                else '>'
            ifaces = []
        blen = struct.unpack_from(endian + 'I', buf, off + 4)[0]
        if blen < 12 or off + blen > len(buf):
            break
        body = buf[off + 8:off + blen - 4]
        if btype == 1:
            link = struct.unpack_from(endian + 'H', body, 0)[0]
            res = 1e-6
            for code, val in _options(body[8:], endian):
                if code == 9 and val:
                    r = val[0]
                    res = 2.0 ** -(r & 0x7f) if r & 0x80 else 10.0 ** -r
            ifaces.append((link, res))
        elif btype == 6:
            iface, hi, lo, caplen = struct.unpack_from(endian + 'IIII',
                                                       body, 0)
            link, res = ifaces[iface]
            if link != 1:
                raise ValueError('link type %d: only Ethernet traces are '
                                 'read' % link)
            data = body[20:20 + caplen]
            opts = body[20 + (caplen + 3) // 4 * 4:]
            comment = ' '.join(v.decode('utf-8', 'replace')
                               for c, v in _options(opts, endian) if c == 1)
            yield ((hi << 32) | lo) * res, data, comment
        off += blen


def _options(buf, endian):
    off = 0
    while off + 4 <= len(buf):
        code, n = struct.unpack_from(endian + 'HH', buf, off)
        if code == 0:
            return
        yield code, bytes(buf[off + 4:off + 4 + n])
        off += 4 + (n + 3) // 4 * 4


def _action(comment):
    """What a "droce-lab: ACTION ..." comment says was done."""
    for part in comment.split(';'):
        part = part.strip()
        if part.startswith('droce-lab:'):
            words = part[len('droce-lab:'):].split()
            if words and words[0] in ACTIONS:
                return words[0], part
    return None, comment


def read(path):
    """The RoCEv2 frames of a pcap or pcapng file, and whether any frame
    carries an injector's mark (which frames were dropped is known)."""
    with open(path, 'rb') as fh:
        buf = fh.read()
    if buf[:4] == b'\x0a\x0d\x0d\x0a':
        records = _pcapng_records(buf)
    else:
        records = _pcap_records(buf)
    frames, marked = [], False
    for no, (t, data, comment) in enumerate(records, 1):
        action, note = _action(comment)
        marked |= action is not None
        f = parse(no, t, data, action, note)
        if f is not None:
            frames.append(f)
    return frames, marked


def _block(btype, body):
    body += b'\0' * (-len(body) % 4)
    n = len(body) + 12
    return struct.pack('<II', btype, n) + body + struct.pack('<I', n)


def _option(code, value):
    return struct.pack('<HH', code, len(value)) + value + \
        b'\0' * (-len(value) % 4)


def write_pcapng(path, records):
    """Write @p records, (time in seconds, Ethernet frame, comment), as
    pcapng: one Ethernet interface with nanosecond times, each frame's
    comment (if any) in its opt_comment, which Wireshark shows."""
    with open(path, 'wb') as fh:
        fh.write(_block(0x0a0d0d0a, struct.pack('<IHHq', 0x1a2b3c4d, 1, 0,
                                                -1) + b''))
        fh.write(_block(1, struct.pack('<HHI', 1, 0, 0) +
                        _option(9, b'\x09') + _option(0, b'')))
        for t, data, comment in records:
            ns = int(round(t * 1e9))
            body = struct.pack('<IIIII', 0, ns >> 32, ns & 0xffffffff,
                               len(data), len(data)) + data + \
                b'\0' * (-len(data) % 4)
            if comment:
                body += _option(1, comment.encode()) + _option(0, b'')
            fh.write(_block(6, body))
