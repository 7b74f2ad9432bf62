"""A user's byte-rate quota throttles that user's SASL-authenticated confluent-kafka producer.

Kafka's ClientQuotaManager matches a quota's ``user`` entity against the principal's name
(``alice`` for ``User:alice``); unauthenticated clients are the user ``ANONYMOUS``. The throttle
comes back to librdkafka as the Produce answer's throttle_time_ms, which it hands to throttle_cb.
Synchronised on the callback.
"""

from __future__ import annotations

import socket
import time

import pytest

from compat.groups_support import create_topic
from compat.support import recv_frame
from compat.test_py_partition_admin import host_port
from shim.broker import SECURE_USER, secure_broker

ck = pytest.importorskip("confluent_kafka")

pytestmark = pytest.mark.compat(client="confluent-kafka", scenario="quota.produce_throttle")


def alter_user_quota(bootstrap: str, user: str, key: str, value: float) -> None:
    """AlterClientQuotas v1 for a user entity, on the wire (no Python client has the call)."""
    from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

    m = request_module(49, 1)
    body = m.AlterClientQuotasRequest(validate_only=False, entries=(m.EntryData(
        entity=(m.EntityData(entity_type="user", entity_name=user),),
        ops=(m.OpData(key=key, value=value, remove=False),)),))
    frame = encode_request(RequestHeader(49, 1, 1, "compat"), body)
    with socket.create_connection(host_port(bootstrap), timeout=15) as sock:
        sock.sendall(len(frame).to_bytes(4, "big") + frame)
        _, response = decode_response(recv_frame(sock), 49, 1)
    assert [e.error_code for e in response.entries] == [0], response


def test_a_users_quota_throttles_that_users_authenticated_producer(tmp_path):
    with secure_broker(tmp_path) as broker:
        plain = broker.bootstrap("PLAINTEXT")
        create_topic(plain, "quota-user", 1)
        alter_user_quota(plain, SECURE_USER[0], "producer_byte_rate", 1024.0)
        throttles: dict[str, list] = {"alice": [], "anonymous": []}

        def producer(name: str, config: dict):
            return ck.Producer({"linger.ms": 0, "throttle_cb": lambda e: throttles[name].append(e.throttle_time),
                                **config})
        alice = producer("alice", {"bootstrap.servers": broker.bootstrap("SASL_PLAINTEXT"),
                                   "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                                   "sasl.username": SECURE_USER[0], "sasl.password": SECURE_USER[1]})
        anonymous = producer("anonymous", {"bootstrap.servers": plain})
        deadline, sent = time.monotonic() + 60, 0
        while not any(t > 0 for t in throttles["alice"]):
            assert time.monotonic() < deadline, f"alice never throttled after {sent} records"
            for p in (alice, anonymous):
                p.produce("quota-user", b"x" * 1024, partition=0)
                assert p.flush(30) == 0
                p.poll(0)
            sent += 1
        anonymous.poll(0.1)
        # ~10 KiB pass in Kafka's 10-second window before 1 KiB/s throttles; ANONYMOUS has no quota
        assert 5 <= sent <= 20, sent
        assert max(throttles["anonymous"], default=0) == 0
