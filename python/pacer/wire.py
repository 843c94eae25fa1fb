"""pacer's wire protocol, version 1 (docs/protocol.md), over a socket.

A frame is a 56-byte little-endian header and a payload. Float payloads
(Push, PullResp) never pass through Python objects: a push is sent from
the array's own memory (memoryview) and a pull reply is received straight
into the caller's float32 buffer (socket.recv_into), so moving a block
costs what the kernel's copies cost.
"""
import json
import logging
import socket
import ssl
import struct
import sys
import threading
import time

import numpy as np

VERSION = 1
HEADER_SIZE = 56
MAX_HELLO_PAYLOAD = 64 << 10
DEFAULT_MAX_PAYLOAD = 1 << 30
MAX_PAYLOAD_LIMIT = (1 << 31) - 1
# The payload a one-way frame may carry (a Release, a Shutdown, an Error
# about a send, a shard's ready notice), and a reply other than the block a
# bounded read asked for (an Error's message): wire.MaxNotice.
MAX_NOTICE = MAX_HELLO_PAYLOAD

log = logging.getLogger("pacer")

# No wait is silent: one that has lasted NOTICE_AFTER seconds says what it
# waits for, and says so again at intervals doubling to NOTICE_MAX.
NOTICE_AFTER, NOTICE_MAX = 10.0, 60.0


class WaitNotice:
    """Tells the log (or say) what a wait is waiting for, once it has lasted
    first seconds (NOTICE_AFTER; 0: at its first tick) and again at
    intervals doubling from NOTICE_AFTER to NOTICE_MAX. The caller ticks it
    with the clock's reading, so a test drives it with its own clock. what
    is a string or a function returning one (read when it is said)."""

    def __init__(self, what, start, first=None, say=None):
        self.what, self.start = what, start
        self.due = start + (NOTICE_AFTER if first is None else first)
        self.every = NOTICE_AFTER
        self.said = 0
        self.say = say or (lambda msg: log.warning("%s", msg))

    def tick(self, now):
        """Says what the wait waits for if it is due; returns whether it did."""
        if now < self.due:
            return False
        what = self.what() if callable(self.what) else self.what
        self.say("%s (%.0f s so far)" % (what, now - self.start))
        self.said += 1
        self.due = now + self.every
        self.every = min(2 * self.every, NOTICE_MAX)
        return True

# Message types (wire/frame.go); values are part of the protocol.
HELLO, HELLO_OK, PUSH, PUSH_ACK, PULL, PULL_RESP, CLOCK, RELEASE = 1, 2, 3, 4, 5, 6, 7, 8
HEARTBEAT, JOIN, LEAVE, ERROR, SHUTDOWN, CONTROL = 9, 10, 11, 12, 13, 14
TYPE_NAMES = {1: "hello", 2: "hello_ok", 3: "push", 4: "push_ack", 5: "pull", 6: "pull_resp",
              7: "clock", 8: "release", 9: "heartbeat", 10: "join", 11: "leave", 12: "error",
              13: "shutdown", 14: "control"}
FLOAT_TYPES = (PUSH, PULL_RESP)

# Error codes (the Error frame's extra field).
CODE_NAMES = {0: "unknown", 1: "bad_frame", 2: "unauthenticated", 3: "bad_request", 4: "non_finite",
              5: "unavailable", 6: "internal", 7: "shutting_down", 8: "protocol"}
CODE_BAD_FRAME, CODE_UNAUTHENTICATED, CODE_BAD_REQUEST, CODE_NON_FINITE = 1, 2, 3, 4
CODE_UNAVAILABLE, CODE_INTERNAL, CODE_SHUTTING_DOWN, CODE_PROTOCOL = 5, 6, 7, 8

# magic, version, type, flags, reserved, request id, worker, shard, offset,
# tag, extra, count, payload_len
_HEADER = struct.Struct("<3sBBBHQiIQQQII")
assert _HEADER.size == HEADER_SIZE
_MAGIC = b"PCR"

if sys.byteorder != "little":
    # The float payloads are the arrays' own bytes; a big-endian host would
    # have to swap every element, which this module does not do.
    raise ImportError("pacer.wire: float payloads are sent as memory; this host is big-endian")


class ProtocolError(Exception):
    """A frame that breaks docs/protocol.md's rules, or a reply out of place."""


class RemoteError(Exception):
    """An Error frame from the peer: code (see CODE_NAMES) and its message."""

    def __init__(self, code, message):
        self.code = code
        self.message = message
        super().__init__("%s: %s" % (CODE_NAMES.get(code, "code %d" % code), message))


class ConnectionLost(Exception):
    """The connection broke (reset, closed, or a frame cut short)."""


class Frame:
    """One decoded or to-be-encoded frame. payload is bytes for byte types;
    for float types it is a float32 array (or None when it was received into
    a caller's buffer: then dest holds it)."""

    __slots__ = ("type", "flags", "req_id", "worker", "shard", "offset", "tag", "extra", "count",
                 "payload")

    def __init__(self, type, flags=0, req_id=0, worker=-1, shard=0, offset=0, tag=0, extra=0, count=0,
                 payload=b""):
        self.type, self.flags, self.req_id, self.worker, self.shard = type, flags, req_id, worker, shard
        self.offset, self.tag, self.extra, self.count, self.payload = offset, tag, extra, count, payload

    def json(self):
        try:
            return json.loads(bytes(self.payload).decode("utf-8"))
        except ValueError as e:
            raise ProtocolError("%s: payload is not JSON: %s" % (TYPE_NAMES.get(self.type), e)) from None

    def __repr__(self):
        return "Frame(%s flags=%d id=%d worker=%d shard=%d offset=%d tag=%d extra=%d count=%d)" % (
            TYPE_NAMES.get(self.type, self.type), self.flags, self.req_id, self.worker, self.shard,
            self.offset, self.tag, self.extra, self.count)


def encode_header(type, payload_len, flags=0, req_id=0, worker=-1, shard=0, offset=0, tag=0, extra=0,
                  count=0):
    """The 56 header bytes. Refuses what a version-1 receiver refuses, so a
    bad frame fails here and not as a closed connection."""
    if type not in TYPE_NAMES:
        raise ProtocolError("unknown message type %d" % type)
    if flags & 0xF0:
        raise ProtocolError("flags %#x: bits 4-7 are reserved" % flags)
    if type in FLOAT_TYPES and payload_len != 4 * count:
        raise ProtocolError("%s: count %d but %d payload bytes" % (TYPE_NAMES[type], count, payload_len))
    if type == PULL and payload_len:
        raise ProtocolError("pull with %d payload bytes" % payload_len)
    if payload_len > MAX_PAYLOAD_LIMIT:
        raise ProtocolError("payload of %d bytes is over the protocol's limit" % payload_len)
    return _HEADER.pack(_MAGIC, VERSION, type, flags, 0, req_id, worker, shard, offset, tag, extra, count,
                        payload_len)


def decode_header(b, max_payload=DEFAULT_MAX_PAYLOAD):
    """Validates a header in docs/protocol.md's order before any payload is
    read; returns (frame without payload, payload_len)."""
    (magic, version, type, flags, reserved, req_id, worker, shard, offset, tag, extra, count,
     plen) = _HEADER.unpack(b)
    if magic != _MAGIC:
        raise ProtocolError("bad magic %r" % magic)
    if version != VERSION:
        raise ProtocolError("protocol version %d (this side speaks %d)" % (version, VERSION))
    if type not in TYPE_NAMES:
        raise ProtocolError("unknown message type %d" % type)
    if flags & 0xF0 or reserved:
        raise ProtocolError("reserved bits set: flags %#x, reserved %#x" % (flags, reserved))
    if plen > max_payload:
        raise ProtocolError("payload %d bytes, limit %d" % (plen, max_payload))
    if type in FLOAT_TYPES and plen != 4 * count:
        raise ProtocolError("%s: count %d but payload %d bytes" % (TYPE_NAMES[type], count, plen))
    if type == PULL and plen:
        raise ProtocolError("pull with %d payload bytes" % plen)
    return Frame(type, flags, req_id, worker, shard, offset, tag, extra, count, None), plen


def parse_addr(addr):
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError("address %r: want host:port" % addr)
    return host.strip("[]"), int(port)


class Conn:
    """One authenticated connection. Calls are synchronous (a request, then
    its reply; the server answers a connection's requests in order); one-way
    frames that arrive meanwhile (a shard's ready notice, the coordinator's
    Release or Shutdown) go to on_notify. Sends are serialized by a lock, so
    a heartbeat thread may send while the owner waits in a call; only the
    owner reads."""

    def __init__(self, addr, token, role, worker=-1, meta=None, tls=None, server_name=None,
                 timeout=30.0, handshake_timeout=10.0, on_notify=None, max_payload=DEFAULT_MAX_PAYLOAD):
        host, port = parse_addr(addr)
        self.addr = addr
        self.on_notify = on_notify
        self.max_payload = max_payload
        # The Hello's reply is waited for under the handshake's timeout,
        # the connection's own after it.
        self.timeout = handshake_timeout
        self._next_id = 0
        self._wlock = threading.Lock()
        self._hdr = bytearray(HEADER_SIZE)
        self.closed = False
        self._write_error = None  # a send(keep_reading=True) that failed: no more writes
        try:
            sock = socket.create_connection((host, port), timeout=handshake_timeout)
        except OSError as e:
            raise ConnectionLost("dial %s: %s" % (addr, e)) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            ctx = tls if isinstance(tls, ssl.SSLContext) else ssl.create_default_context(cafile=tls)
            try:
                sock = ctx.wrap_socket(sock, server_hostname=server_name or host)
            except (OSError, ssl.SSLError) as e:
                sock.close()
                raise ConnectionLost("TLS handshake with %s: %s" % (addr, e)) from None
        self.sock = sock
        hello = {"token": token, "role": role, "worker": worker}
        if meta is not None:
            hello["meta"] = meta
        body = json.dumps(hello, separators=(",", ":")).encode()
        if len(body) > MAX_HELLO_PAYLOAD:
            self.close()
            raise ProtocolError("hello of %d bytes is over the %d-byte limit" % (len(body), MAX_HELLO_PAYLOAD))
        try:
            # The first frame is read before authentication, under a small limit.
            self.welcome = self.call(HELLO, body, worker=worker, max_payload=max(MAX_HELLO_PAYLOAD, 1 << 20))
        except ConnectionLost as e:
            self.close()
            if tls is None and _speaks_tls(host, port, handshake_timeout):
                # A TLS server closes a plaintext Hello unanswered: say why,
                # once, instead of retrying a dial that cannot succeed.
                raise ProtocolError("%s serves TLS, while this side dials in plaintext (give a CA bundle: "
                                    "tls_ca=...; the server closed the connection at the Hello: %s)" % (addr, e)) from None
            raise
        except BaseException:
            self.close()
            raise
        self.timeout = timeout
        sock.settimeout(timeout)

    # -- sending

    def _send(self, parts, keep_reading=False):
        self._check_open()
        with self._wlock:
            if self._write_error is not None:
                if not keep_reading:
                    self.close()
                raise ConnectionLost("write to %s: %s" % (self.addr, self._write_error))
            try:
                for p in parts:
                    self.sock.sendall(p)
            except OSError as e:
                if keep_reading and not isinstance(e, socket.timeout) and not isinstance(self.sock, ssl.SSLSocket):
                    # A peer that closed after its last frames (a
                    # coordinator's Shutdown, then its exit) fails the
                    # write, but those frames wait unread in the socket:
                    # closing it would lose them. Later writes fail; the
                    # reader closes at the end of the stream. Not after a
                    # timeout (a frame may be cut short), nor under TLS
                    # (whose session a failed write may leave unreadable).
                    self._write_error = e
                else:
                    self.close()
                raise ConnectionLost("write to %s: %s" % (self.addr, e)) from None

    def send(self, type, payload=b"", floats=None, keep_reading=False, **fields):
        """Sends a one-way frame (request id 0). keep_reading: a failed write
        leaves the connection open for reading what arrived before (the
        sender is not its reader: another thread's heartbeats)."""
        self._send(self._encode(type, 0, payload, floats, fields), keep_reading)

    def _encode(self, type, req_id, payload, floats, fields):
        if floats is not None:
            mv = _float_view(floats)
            hdr = encode_header(type, mv.nbytes, req_id=req_id, count=mv.nbytes // 4, **fields)
            return [hdr, mv]
        hdr = encode_header(type, len(payload), req_id=req_id, **fields)
        # Small frames go out in one write (one segment with TCP_NODELAY).
        return [hdr + bytes(payload)] if len(payload) < 1 << 16 else [hdr, payload]

    def call(self, type, payload=b"", floats=None, into=None, max_payload=None, max_floats=None, **fields):
        """Sends a request and returns its reply; an Error reply raises
        RemoteError. A float reply is received into `into` (a float32 array
        whose size must equal the reply's count) when given; see read_frame
        for max_floats."""
        return self.reply(self.request(type, payload, floats, **fields), into=into, max_payload=max_payload,
                          max_floats=max_floats)

    def request(self, type, payload=b"", floats=None, **fields):
        """Sends a request and returns its id, for reply(): requests to
        several shards go out before any reply is awaited."""
        self._next_id += 1
        self._asked = type
        self._send(self._encode(type, self._next_id, payload, floats, fields))
        return self._next_id

    def reply(self, rid, into=None, max_payload=None, max_floats=None):
        """Waits for request rid's reply (the only one in flight), handing
        one-way frames that arrive first to on_notify."""
        while True:
            f = self._await_frame(rid, into=into, max_payload=max_payload, max_floats=max_floats)
            if f.req_id == 0:
                if self.on_notify is not None:
                    self.on_notify(f)
                continue
            if f.req_id != rid:
                self.close()
                raise ProtocolError("reply to request %d while waiting for %d" % (f.req_id, rid))
            if f.type == ERROR:
                raise RemoteError(f.extra, bytes(f.payload).decode("utf-8", "replace"))
            return f

    def _await_frame(self, rid, **kw):
        """read_frame for the reply to request rid: a server that keeps it
        waiting past NOTICE_AFTER is named in the log (WaitNotice), and one
        silent for the connection's whole timeout is given up on, as
        read_frame gives up."""
        if self.timeout is None or self.timeout <= NOTICE_AFTER:
            return self.read_frame(**kw)
        start = time.monotonic()
        notice = WaitNotice(lambda: "still waiting for %s to answer request %d (%s); giving up after %.0f s"
                            % (self.addr, rid, TYPE_NAMES.get(self._asked, self._asked), self.timeout), start)
        while True:
            left = self.timeout - (time.monotonic() - start)
            if left <= 0:
                self.close()
                raise ConnectionLost("read from %s: timed out after %.0f s" % (self.addr, self.timeout))
            try:
                return self.read_frame(timeout=min(left, NOTICE_AFTER), **kw)
            except socket.timeout:
                notice.tick(time.monotonic())

    # -- receiving

    def _recv_exact(self, mv):
        self._check_open()
        got, n = 0, len(mv)
        while got < n:
            try:
                k = self.sock.recv_into(mv[got:], n - got)
            except socket.timeout:
                self.close()
                raise ConnectionLost("read from %s: timed out after %.0f s" % (self.addr, self.timeout)) from None
            except OSError as e:
                self.close()
                raise ConnectionLost("read from %s: %s" % (self.addr, e)) from None
            if k == 0:
                self.close()
                where = "between frames" if got == 0 and mv.nbytes == HEADER_SIZE else "inside a frame"
                raise ConnectionLost("%s closed the connection (%s)" % (self.addr, where))
            got += k

    def read_frame(self, into=None, max_payload=None, timeout=None, max_floats=None):
        """Reads the next frame. timeout (s) bounds the wait for its first
        byte only; None uses the connection's. Raises socket.timeout then,
        with the stream intact.

        max_floats (into's size when into is given) bounds a read that
        expects a block: a float frame may carry at most that many values,
        any other at most MAX_NOTICE bytes; a one-way frame carries at most
        MAX_NOTICE bytes whatever is read. A larger frame is refused from
        its header, before its payload is read or allocated: the connection
        is closed, the refusal logged and ProtocolError raised."""
        self._check_open()
        if timeout is not None:
            try:
                self.sock.settimeout(timeout)
            except OSError as e:
                # Closed by another thread (a heartbeat's failed send) meanwhile.
                self.close()
                raise ConnectionLost("read from %s: %s" % (self.addr, e)) from None
            try:
                first = self.sock.recv_into(memoryview(self._hdr)[:1], 1)
            except socket.timeout:
                raise
            except OSError as e:
                self.close()
                raise ConnectionLost("read from %s: %s" % (self.addr, e)) from None
            finally:
                if not self.closed:
                    try:
                        self.sock.settimeout(self.timeout)
                    except OSError:
                        self.close()  # the next read says so (ConnectionLost)
            if first == 0:
                self.close()
                raise ConnectionLost("%s closed the connection" % self.addr)
            self._recv_exact(memoryview(self._hdr)[1:])
        else:
            self._recv_exact(memoryview(self._hdr))
        try:
            f, plen = decode_header(bytes(self._hdr), max_payload or self.max_payload)
        except ProtocolError:
            self.close()  # the stream position is unknown now
            raise
        if max_floats is None and into is not None:
            max_floats = into.size
        self._check_bound(f, plen, max_floats)
        if f.type in FLOAT_TYPES:
            if into is not None and into.size == f.count:
                self._recv_exact(memoryview(into).cast("B"))
            else:
                buf = np.empty(f.count, dtype=np.float32)
                self._recv_exact(memoryview(buf).cast("B"))
                f.payload = buf
        else:
            buf = bytearray(plen)
            if plen:
                self._recv_exact(memoryview(buf))
            f.payload = bytes(buf)
        return f

    def _check_bound(self, f, plen, max_floats):
        name = TYPE_NAMES.get(f.type, f.type)
        if f.req_id == 0 and plen > MAX_NOTICE:
            what = "a one-way %s of %d bytes, more than a notice's %d" % (name, plen, MAX_NOTICE)
        elif max_floats is not None and f.type in FLOAT_TYPES and f.count > max_floats:
            what = "a %s of %d floats where the block asked for holds %d" % (name, f.count, max_floats)
        elif max_floats is not None and f.type not in FLOAT_TYPES and plen > MAX_NOTICE:
            what = "a %s of %d bytes in reply to a request for a block, more than an error's %d" % (name, plen, MAX_NOTICE)
        else:
            return
        self.close()  # its payload is never read: the stream position is lost
        msg = "%s sent %s: refused before reading it" % (self.addr, what)
        log.error("%s", msg)
        raise ProtocolError(msg)

    def _check_open(self):
        # A closed socket's calls fail with EBADF (settimeout too): what a
        # caller redials on is a lost connection.
        if self.closed:
            raise ConnectionLost("connection to %s is closed" % self.addr)

    def close(self):
        if not self.closed:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass


def _speaks_tls(host, port, timeout):
    """Whether host:port completes a TLS handshake (certificate unchecked:
    this only names the cause of a refused plaintext Hello)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=timeout) as s:
            with ctx.wrap_socket(s, server_hostname=host):
                return True
    except (OSError, ssl.SSLError):
        return False


def _float_view(a):
    """The bytes of a float32 array, without a copy (a C-contiguous one)."""
    if isinstance(a, np.ndarray):
        if a.dtype != np.float32:
            raise TypeError("float payloads are float32, got %s" % a.dtype)
        if not a.flags.c_contiguous:
            raise ValueError("a float payload must be contiguous")
        return memoryview(a).cast("B")
    mv = memoryview(a)
    if mv.format != "f":
        raise TypeError("float payloads are float32 buffers, got format %r" % mv.format)
    return mv.cast("B")


class Unreachable:
    """Says that a server cannot be reached: at the first failed dial, and
    then at intervals (WaitNotice) for as long as the dials fail, across
    any number of dial_retry calls (a redial loop gives each a second); and
    once it answers again, after how long. A server that answers
    "unavailable" (a shard that does not list the worker yet, for a moment
    at a job's start) is said only once that lasts NOTICE_AFTER. clock: the
    time source (a test's own)."""

    def __init__(self, what, clock=time.monotonic):
        self.what, self.clock = what, clock
        self.notice = None
        self.last = None

    def failed(self, err, at_once=True):
        self.last = err
        if self.notice is None:
            self.notice = WaitNotice(lambda: "cannot reach %s (%s); dialling again" % (self.what, self.last),
                                     self.clock(), first=0 if at_once else NOTICE_AFTER)
        self.notice.tick(self.clock())

    def reached(self):
        if self.notice is not None and self.notice.said:
            log.warning("reached %s after %.1f s", self.what, self.clock() - self.notice.start)
        self.notice = None


def dial_retry(make, give_up, what, backoff=0.05, unreachable=None, clock=time.monotonic, sleep=time.sleep):
    """Calls make() until it connects: a refused dial or an 'unavailable'
    answer (a shard that does not list the worker yet) is retried with
    backoff for give_up seconds (None: forever); other refusals are final.
    The first failure is logged at once and the next ones at intervals
    (unreachable, an Unreachable, carries that across calls; clock and
    sleep are a test's)."""
    told = unreachable or Unreachable(what, clock)
    deadline = None if give_up is None else clock() + give_up
    delay = backoff
    while True:
        try:
            c = make()
            told.reached()
            return c
        except (ConnectionLost, RemoteError) as e:
            if isinstance(e, RemoteError) and e.code != CODE_UNAVAILABLE:
                raise
            told.failed(e, at_once=isinstance(e, ConnectionLost))
            if deadline is not None and clock() + delay > deadline:
                raise ConnectionLost("%s: gave up after %.0f s: %s" % (what, give_up, e)) from None
            sleep(delay)
            delay = min(delay * 2, 1.0)
