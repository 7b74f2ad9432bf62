"""Requests that name one thing again and again, against a node holding large things, in process.

Kafka answers every entry of a request, a repeated one too, so an answer can be many times its
request: a Stable group named half a million times, a partition with many producers named as
often. For every API and version each emulated release serves, a well-formed request (stateful.py's
Builder, no hostile values) gets each of its arrays, and each array of its first entry, filled with
copies of its first element up to about ``REQUEST_BYTES``, and goes through ``dispatch`` on a node
that holds large things for the Builder's names to meet: 30 idempotent producers on t0-0, a Stable
classic group g0 whose member's metadata is 64 KiB, a consumer group g1 (4.0+) whose member subscribes
to 20,000 names, share group members (4.1). A case fails when ``dispatch`` raises anything but
FrameError, when an answer passes ``ANSWER_LIMIT`` bytes (built whole in memory), or when the peak
RSS grows past ``RSS_LIMIT_MIB``; the largest answer-to-request ratio of each API is reported.

``--authorizer``: the node runs StandardAuthorizer with ``ACLS`` (added after the setup) and
allow.everyone.if.no.acl.found, and the fuzz client (User:ANONYMOUS) is no super user: every topic,
group and transactional id a handler meets goes through the ACLs, one lookup per name, while the
cluster and the names no ACL mentions stay allowed so requests get past their request-wide checks.

``python -m compat.fuzz.amplify [--release 4.1] [--seed N] [--request-kib 2048] [--stall-limit 0.1]
[--authorizer] [--distinct] [--apis 9,42]``: about a minute per release at the default size.

``--distinct``: each copy of a filled element names a topic, group or transactional id of its own
(the Builder's name and six digits) instead of the same one again, for handlers whose per-name work
a set of the names would otherwise answer once; arrays that name none of them are left out.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import functools
import gc
import random
import struct
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from kafka_codecs import encode_batch

from shim.apis.dispatch import dispatch
from shim.apis.registry import served
from shim.config import BrokerConfig
from shim.coordinators.group.consumer_coordinator import HeartbeatRequest
from shim.node import Node
from shim.protocol.framing import FrameError
from shim.protocol.kafka_releases import RELEASES
from shim.protocol.messages import RequestHeader, encode_request, make, request_class, request_module
from shim.security.acls import AclBinding
from shim.security.acls import AclOperation as O
from shim.security.acls import AclPermissionType as A
from shim.security.acls import PatternType as P
from shim.security.acls import ResourceType as R

from .stateful import Pools
from .builder import TXN_IDS
from .vocabulary import CHURN_TOPICS, GROUPS, SHARE_GROUPS, TOPICS
from .wire import ALL_RELEASES, WAIT_S, _peak_rss_mib, _SaneBuilder, each_release, sweep_arguments, uvarint

REQUEST_BYTES = 256 * 1024
ANSWER_LIMIT = 80 * 1024 * 1024  # shim.apis._repeats bounds repeated entries at 64 MiB
RSS_LIMIT_MIB = 600
STALL_LIMIT = 1.0  # CPU seconds one turn of the loop may take while a case is answered
DISTINCT = False  # --distinct: each filled copy names its own topic, group or transactional id
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
_ME, _OTHER = "User:ANONYMOUS", "User:other"
# --authorizer: literal and prefixed patterns over the Builder's names (topics t0-t3, groups g0, g1,
# s0, s1, transactional ids tx0, tx1), allowing some operations and denying others, so handlers
# answer both ways; another principal's ACLs sit among them as they would on a shared cluster
ACLS = (AclBinding(R.TOPIC, "t0", P.LITERAL, _ME, "*", O.ALL, A.ALLOW),
        AclBinding(R.TOPIC, "t1", P.PREFIXED, _ME, "*", O.DESCRIBE, A.ALLOW),  # READ, WRITE refused
        AclBinding(R.TOPIC, "t", P.PREFIXED, _OTHER, "*", O.ALL, A.DENY),
        AclBinding(R.GROUP, "g", P.PREFIXED, _ME, "*", O.ALL, A.ALLOW),
        AclBinding(R.GROUP, "g1", P.LITERAL, _ME, "*", O.DELETE, A.DENY),
        AclBinding(R.GROUP, "s0", P.LITERAL, _ME, "*", O.READ, A.ALLOW),  # DESCRIBE implied, DELETE refused
        AclBinding(R.GROUP, "s", P.PREFIXED, _OTHER, "*", O.READ, A.ALLOW),
        AclBinding(R.TRANSACTIONAL_ID, "tx", P.PREFIXED, _ME, "*", O.WRITE, A.ALLOW),
        AclBinding(R.TRANSACTIONAL_ID, "tx1", P.LITERAL, _ME, "*", O.DESCRIBE, A.DENY))


class _Collections:
    """The garbage collections of the loop's thread: their CPU time in all and the longest. A
    collection of the oldest generation scans every object alive, so its pause grows with the heap
    whichever turn it falls in; stalls are measured without them, as tests/loop_stall.py does."""

    def __init__(self) -> None:
        self.total = self.longest = self._started = 0.0
        self._thread = threading.get_ident()

    def __call__(self, phase: str, info: dict) -> None:
        if threading.get_ident() != self._thread:
            return
        if phase == "start":
            self._started = time.thread_time()
        else:
            pause = time.thread_time() - self._started
            self.total, self.longest = self.total + pause, max(self.longest, pause)


async def _probe(worst: list, collections: _Collections) -> None:
    """The longest CPU time the loop's thread spent between two wake-ups on anything but garbage
    collection, into ``worst[0]``."""
    last = time.thread_time() - collections.total
    while True:
        await asyncio.sleep(0.001)
        now = time.thread_time() - collections.total
        worst[0] = max(worst[0], now - last)
        last = now


@dataclass
class Result:
    release: str
    seed: int
    cases: int = 0
    closed: int = 0
    largest_answer: int = 0
    ratios: dict = field(default_factory=dict)  # "KEYvVERSION" -> the largest answer / request seen
    stalls: dict = field(default_factory=dict)  # "KEYvVERSION" -> (the longest turn of the loop (CPU s), its case)
    longest_gc: float = 0.0  # CPU s of the longest garbage collection while a case was answered
    slowest: float = 0.0
    slowest_case: str = ""
    peak_rss_mib: int = 0
    failures: list = field(default_factory=list)


def _frame(key: int, version: int, request) -> bytes:
    return encode_request(RequestHeader(key, version, 7, "fuzz-amplify"), request)


def _fill(key: int, version: int, build) -> bytes:
    """The frame of ``build(n)`` (the request with n copies of an element) at about REQUEST_BYTES.

    kio takes about a second to encode 2 MiB and a sweep fills thousands of arrays, so the frame is
    spliced instead from those of build(1), build(2) and build(3): n copies of one element are n
    copies of its bytes after the array's count. kio encodes it when the splice does not give back
    those three frames exactly."""
    f1, f2, f3 = (_frame(key, version, build(k)) for k in (1, 2, 3))
    n = max(2, REQUEST_BYTES // max(len(f2) - len(f1) + (_SUFFIX if DISTINCT else 0), 1))
    spliced = _splice(f1, f2, f3, n)
    if spliced is None and DISTINCT:
        return None  # nothing named, or not spliceable: no case
    return spliced if spliced is not None else _frame(key, version, build(n))


_COUNTS = (lambda k: uvarint(k + 1), lambda k: struct.pack(">i", k))  # a compact array's count, a legacy one


def _splice(f1: bytes, f2: bytes, f3: bytes, n: int) -> bytes | None:
    """The frame of n elements from those of 1, 2 and 3 (P count E.. S), None if they are not of that
    shape; under DISTINCT each copy renamed (:func:`_renamed`), None if its element names nothing."""
    size = len(f2) - len(f1)
    last = next((i for i, (a, b) in enumerate(zip(f2, f3)) if a != b), None)  # the count's last byte
    if size <= 0 or len(f3) - len(f2) != size or last is None:
        return None
    element, rest = f1[last + 1:last + 1 + size], f1[last + 1 + size:]
    for count in _COUNTS:
        start = last + 1 - len(count(2))
        if start >= 0 and all(f1[:start] + count(k) + element * k + rest == f for k, f in ((1, f1), (2, f2), (3, f3))):
            elements = _renamed(element, n) if DISTINCT else element * n
            return None if elements is None else f1[:start] + count(n) + elements + rest
    return None


_NAMES = tuple(n.encode() for n in TOPICS + CHURN_TOPICS + GROUPS + SHARE_GROUPS + TXN_IDS if n)
_SUFFIX = 6  # the digits each copy's name gains under DISTINCT
_STRINGS = (lambda b: uvarint(len(b) + 1) + b, lambda b: struct.pack(">h", len(b)) + b)  # compact, legacy


def _renamed(element: bytes, n: int) -> bytes | None:
    """n copies of ``element`` whose first Builder name (a topic, group or transactional id, as a
    compact or a legacy string) is the name followed by the copy's number, six digits: n distinct
    names, so a handler's per-name work (an ACL lookup) is not answered from a set of one."""
    found = [(element.find(form(name)), form, name) for name in _NAMES for form in _STRINGS]
    found = [f for f in found if f[0] >= 0]
    if not found:
        return None
    at, form, name = min(found, key=lambda f: (f[0], -len(f[1](f[2]))))  # the legacy form starts a byte earlier
    head, tail = element[:at], element[at + len(form(name)):]
    return b"".join(head + form(name + b"%06d" % i) + tail for i in range(n))


def amplified(key: int, version: int, request):
    """(label, frame()): each array of the request, then each array of each array's first element, filled."""
    for f in dataclasses.fields(request):
        value = getattr(request, f.name)
        if not isinstance(value, tuple) or not value:
            continue
        yield f"{f.name}[]", lambda f=f, value=value: _fill(key, version, lambda n: dataclasses.replace(
            request, **{f.name: value[:1] * n}))
        head = value[0]
        if not dataclasses.is_dataclass(head):
            continue
        for g in dataclasses.fields(head):
            inner = getattr(head, g.name)
            if isinstance(inner, tuple) and inner:
                yield f"{f.name}[0].{g.name}[]", lambda f=f, g=g, head=head, inner=inner, value=value: _fill(
                    key, version, lambda n: dataclasses.replace(request, **{f.name: (dataclasses.replace(
                        head, **{g.name: inner[:1] * n}),) + value[1:]}))


class AmplifyRun:
    def __init__(self, seed: int, release: str, data_dir: Path, authorizer: bool = False, apis=None) -> None:
        self.rng = random.Random(seed)
        self.release = release
        self.result = Result(release, seed)
        self.apis = apis  # API keys to sweep; None: all
        self.node = Node(BrokerConfig(data_dir=data_dir, kafka_version=release, group_initial_rebalance_delay_ms=0,
                                      authorizer_class_name=STANDARD_AUTHORIZER if authorizer else "",
                                      allow_everyone_if_no_acl_found=authorizer))

    async def setup(self) -> None:
        node = self.node
        for t in TOPICS:
            node.logs.create_topic(t, 3)
        m = request_module(0, 9)
        for pid in range(1000, 1030):
            batch = encode_batch([(None, b"v", [], int(time.time() * 1000))], producer_id=pid, producer_epoch=0,
                                 base_sequence=0)
            await self.call(0, 9, make(request_class(0, 9), transactional_id=None, acks=1,
                                       timeout=datetime.timedelta(seconds=10),
                                       topic_data=(m.TopicProduceData(name="t0", partition_data=(
                                           m.PartitionProduceData(index=0, records=batch),)),)))  # fmt: skip
        j = request_module(11, 3)
        joined = await self.call(11, 3, make(request_class(11, 3), group_id="g0", session_timeout=30_000,
                                             rebalance_timeout=30_000, member_id="", protocol_type="consumer",
                                             protocols=(j.JoinGroupRequestProtocol(name="range", metadata=b"m" * 65536),)))
        s = request_module(14, 3)
        await self.call(14, 3, make(request_class(14, 3), group_id="g0", generation_id=joined.generation_id,
                                    member_id=joined.member_id, group_instance_id=None, assignments=(
                                        s.SyncGroupRequestAssignment(member_id=joined.member_id, assignment=b"a"),)))
        if self.release >= "4.0":
            names = tuple(f"n{i:05d}" for i in range(20_000)) + TOPICS
            node.groups.consumer.heartbeat(HeartbeatRequest("g1", "m1", 0, rebalance_timeout_ms=30_000,
                                                            subscribed_topic_names=names, owned={}),
                                           int(time.time() * 1000))
        if self.release >= "4.1":
            node.finalize_features({"share.version": 1})
            for g in SHARE_GROUPS:
                await self.call(76, 1, make(request_class(76, 1), group_id=g, member_id="share-member-0000000",
                                            member_epoch=0, rack_id=None, subscribed_topic_names=TOPICS))
        if node.authorizer is not None:
            node.acls.change(add=list(ACLS))

    async def call(self, key: int, version: int, request):
        from shim.protocol.messages import decode_response

        return decode_response(await dispatch(self.node, _frame(key, version, request)), key, version)[1]

    async def run(self) -> Result:
        rss_before = _peak_rss_mib()
        try:
            await self.setup()
            builder = _SaneBuilder(self.rng, Pools())
            for spec, low, high in served(RELEASES[self.release]):
                if self.apis is not None and spec.key not in self.apis:
                    continue
                for version in range(low, high + 1):
                    try:
                        request = builder.request(spec.key, version)
                        _frame(spec.key, version, request)
                    except Exception:  # noqa: BLE001 - kio refuses a value this version cannot carry
                        continue
                    for label, frame in amplified(spec.key, version, request):
                        await self.one(spec.key, version, label, frame)
        finally:
            self.node.close()
        self.result.peak_rss_mib = _peak_rss_mib()
        if self.result.peak_rss_mib - rss_before > RSS_LIMIT_MIB:
            self._fail(f"peak RSS grew {self.result.peak_rss_mib - rss_before} MiB")
        return self.result

    def _fail(self, finding: str) -> None:
        self.result.failures.append(finding)
        print(finding, file=sys.stderr, flush=True)  # a long sweep shows its findings as they come

    async def one(self, key: int, version: int, label: str, frame) -> None:
        try:
            frame = frame()
        except Exception:  # noqa: BLE001 - a filled array kio cannot encode (a count past its type)
            return
        if frame is None:  # --distinct: an array naming nothing
            return
        self.result.cases += 1
        started = time.process_time()
        answer = None
        stall, collections = [0.0], _Collections()
        gc.callbacks.append(collections)
        probing = asyncio.ensure_future(_probe(stall, collections))
        try:
            answer = await asyncio.wait_for(dispatch(self.node, frame), WAIT_S * 30)
        except FrameError:
            self.result.closed += 1
        except asyncio.TimeoutError:
            pass
        except Exception:  # noqa: BLE001 - the finding
            self._fail(f"{key} v{version} {label} raised under {self.release}: "
                       f"{traceback.format_exc(limit=-4)}"[:3000])  # fmt: skip
        probing.cancel()
        gc.callbacks.remove(collections)
        self.result.longest_gc = max(self.result.longest_gc, round(collections.longest, 3))
        spent = time.process_time() - started
        api = f"{key}v{version}"
        if stall[0] >= self.result.stalls.get(api, (0,))[0]:
            self.result.stalls[api] = (round(stall[0], 3), label)
        if stall[0] > STALL_LIMIT:
            self._fail(f"{key} v{version} {label}: one turn of the loop took {stall[0]:.2f} CPU s "
                       f"under {self.release}")  # fmt: skip
        if spent > self.result.slowest:
            self.result.slowest, self.result.slowest_case = spent, f"{key} v{version} {label}"
        size = len(answer or b"")
        self.result.largest_answer = max(self.result.largest_answer, size)
        self.result.ratios[api] = max(self.result.ratios.get(api, 0), round(size / len(frame), 1))
        if size > ANSWER_LIMIT:
            self._fail(f"{key} v{version} {label}: a {len(frame)}-byte request was answered with "
                       f"{size} bytes under {self.release}")  # fmt: skip


def amplify_fuzz(seed: int, releases=ALL_RELEASES, authorizer: bool = False, apis=None) -> list[Result]:
    run = functools.partial(AmplifyRun, authorizer=authorizer, apis=apis)
    return each_release(run, seed, releases, "kafka-shim-amplify-")


if __name__ == "__main__":
    import json

    args, releases = sweep_arguments(__doc__, (("--request-kib",), dict(type=int, default=REQUEST_BYTES // 1024,
                                                                         help="each filled request's size")),
                                     (("--stall-limit",), dict(type=float, default=STALL_LIMIT,
                                                               help="CPU s of one turn that fails a case")),
                                     (("--authorizer",), dict(action="store_true",
                                                              help="StandardAuthorizer with the ACLS above")),
                                     (("--distinct",), dict(action="store_true",
                                                            help="each copy names its own topic, group, id")),
                                     (("--apis",), dict(type=lambda s: {int(k) for k in s.split(",")},
                                                        help="the API keys to sweep, comma-separated")))
    REQUEST_BYTES, STALL_LIMIT, DISTINCT = args.request_kib * 1024, args.stall_limit, args.distinct
    out = amplify_fuzz(args.seed, releases, args.authorizer, args.apis)
    for r in out:  # the ten largest ratios; every API's longest turn, longest first
        r.ratios = dict(sorted(r.ratios.items(), key=lambda kv: -kv[1])[:10])
        r.stalls = dict(sorted(r.stalls.items(), key=lambda kv: -kv[1][0]))
    print(json.dumps([vars(r) for r in out], indent=1))
