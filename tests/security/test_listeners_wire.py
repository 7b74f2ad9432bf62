"""Listeners, TLS and SASL over loopback, with raw sockets speaking the Kafka protocol.

Each listener answers Metadata with its own advertised address; a SASL listener serves nothing but
ApiVersions and the SASL APIs before authentication; failures are answered as Kafka answers them and
close only their own connection, as does a TLS handshake of garbage. Every wait is on an observed
state (an answer, an end of file).
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import struct

import pytest

from shim import Broker
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_class
from shim.security.certs import make_certs

USER = "alice:alice-secret"


def frame(key: int, version: int, correlation_id: int = 1, **fields) -> bytes:
    payload = encode_request(RequestHeader(key, version, correlation_id, "wire-test"), request_class(key, version)(**fields))
    return struct.pack(">i", len(payload)) + payload


def metadata(correlation_id: int = 1) -> bytes:
    return frame(3, 12, correlation_id, topics=(), allow_auto_topic_creation=False,
                 include_topic_authorized_operations=False)


async def roundtrip(reader, writer, data: bytes, key: int | None, version: int = 0):
    """Send ``data``; the decoded answer (or the raw bytes when ``key`` is None), None if closed."""
    writer.write(data)
    try:
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        body = await reader.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    return body if key is None else decode_response(body, key, version)[1]


async def closed(reader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), 10) == b""
    except ConnectionError:
        return True


async def open_to(broker: Broker, listener: str, tls: ssl.SSLContext | None = None):
    port = broker.node.bound_ports[listener]
    return await asyncio.open_connection("127.0.0.1", port, ssl=tls, server_hostname="localhost" if tls else None)


def sasl_broker(tmp_path, **extra) -> Broker:
    return Broker(data_dir=tmp_path / "d", listeners="PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
                  sasl_users=(USER,), **extra)


async def test_each_listener_advertises_its_own_address(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listeners="PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
                      listener_security_protocol_map="PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT",
                      advertised_listeners="INTERNAL://broker.internal:19092") as broker:
        plain_port = broker.node.endpoints["PLAINTEXT"][1]
        for listener, expected in (("PLAINTEXT", ("127.0.0.1", plain_port)), ("INTERNAL", ("broker.internal", 19092))):
            reader, writer = await open_to(broker, listener)
            answer = await roundtrip(reader, writer, metadata(), 3, 12)
            assert [(b.host, b.port) for b in answer.brokers] == [expected]
            cluster = await roundtrip(reader, writer, frame(60, 1, 2, include_cluster_authorized_operations=False,
                                                            endpoint_type=1), 60, 1)
            assert [(b.host, b.port) for b in cluster.brokers] == [expected]
            coordinator = await roundtrip(reader, writer, frame(10, 4, 3, key_type=0, coordinator_keys=("g",)), 10, 4)
            if coordinator.coordinators[0].error_code == 15:  # COORDINATOR_NOT_AVAILABLE: __consumer_offsets was created
                coordinator = await roundtrip(reader, writer, frame(10, 4, 4, key_type=0, coordinator_keys=("g",)),
                                              10, 4)
            assert [(c.host, c.port) for c in coordinator.coordinators] == [expected]
            writer.close()
        assert broker.bootstrap_servers == f"127.0.0.1:{plain_port}"


def test_listener_configuration_errors():
    from shim import BrokerConfig
    with pytest.raises(ValueError, match="protocol.map"):
        BrokerConfig(listeners="CUSTOM://127.0.0.1:0")
    with pytest.raises(ValueError, match="not in listeners"):
        BrokerConfig(listeners="PLAINTEXT://127.0.0.1:0", advertised_listeners="SSL://h:1")
    with pytest.raises(ValueError, match="NAME://host:port"):
        BrokerConfig(listeners="127.0.0.1:9092")


async def test_a_request_before_authentication_closes_the_connection(tmp_path):
    async with sasl_broker(tmp_path) as broker:
        reader, writer = await open_to(broker, "SASL_PLAINTEXT")
        versions = await roundtrip(reader, writer, frame(18, 3, 1, client_software_name="t",
                                                         client_software_version="1"), 18, 3)
        assert {k.api_key for k in versions.api_keys} >= {17, 36}
        assert await roundtrip(reader, writer, metadata(2), 3, 12) is None
        reader, writer = await open_to(broker, "PLAINTEXT")  # the other listener needs nothing
        assert len((await roundtrip(reader, writer, metadata(), 3, 12)).brokers) == 1
        handshake = await roundtrip(reader, writer, frame(17, 1, 2, mechanism="PLAIN"), 17, 1)
        assert handshake.error_code == ErrorCode.illegal_sasl_state  # as KafkaApis answers it


async def test_unsupported_mechanism_is_answered_with_the_enabled_ones_then_closed(tmp_path):
    async with sasl_broker(tmp_path, sasl_enabled_mechanisms="SCRAM-SHA-512,PLAIN") as broker:
        reader, writer = await open_to(broker, "SASL_PLAINTEXT")
        answer = await roundtrip(reader, writer, frame(17, 1, 1, mechanism="GSSAPI"), 17, 1)
        assert answer.error_code == ErrorCode.unsupported_sasl_mechanism
        assert answer.mechanisms == ("SCRAM-SHA-512", "PLAIN")
        assert await closed(reader)


@pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
async def test_v0_handshake_then_raw_plain_token(tmp_path):
    async with sasl_broker(tmp_path) as broker:
        reader, writer = await open_to(broker, "SASL_PLAINTEXT")
        answer = await roundtrip(reader, writer, frame(17, 0, 1, mechanism="PLAIN"), 17, 0)
        assert answer.error_code == ErrorCode.none
        token = b"\x00alice\x00alice-secret"
        assert await roundtrip(reader, writer, struct.pack(">i", len(token)) + token, None) == b""
        assert len((await roundtrip(reader, writer, metadata(2), 3, 12)).brokers) == 1
        # a wrong raw token: no answer, the connection is closed
        reader, writer = await open_to(broker, "SASL_PLAINTEXT")
        await roundtrip(reader, writer, frame(17, 0, 1, mechanism="PLAIN"), 17, 0)
        bad = b"\x00alice\x00nope"
        assert await roundtrip(reader, writer, struct.pack(">i", len(bad)) + bad, None) is None


@pytest.mark.parametrize("mechanism, token", [
    ("PLAIN", b"\xff\xfe\xfd"), ("PLAIN", b"\x00alice\x00wrong"), ("SCRAM-SHA-256", b"\x00" * 64),
    ("SCRAM-SHA-512", b"n,,n=alice,r=" + b"\xc3" * 5000),
])
@pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
async def test_a_bad_token_fails_its_connection_only(tmp_path, mechanism, token):
    async with sasl_broker(tmp_path) as broker:
        bystander = await open_to(broker, "SASL_PLAINTEXT")
        reader, writer = await open_to(broker, "SASL_PLAINTEXT")
        assert (await roundtrip(reader, writer, frame(17, 1, 1, mechanism=mechanism), 17, 1)).error_code == 0
        answer = await roundtrip(reader, writer, frame(36, 2, 2, auth_bytes=token), 36, 2)
        assert answer.error_code == ErrorCode.sasl_authentication_failed
        assert answer.error_message.startswith("Authentication failed")
        assert await closed(reader)
        r, w = bystander
        assert (await roundtrip(r, w, frame(17, 1, 1, mechanism="PLAIN"), 17, 1)).error_code == 0
        ok = await roundtrip(r, w, frame(36, 2, 2, auth_bytes=b"\x00alice\x00alice-secret"), 36, 2)
        assert ok.error_code == ErrorCode.none
        assert len((await roundtrip(r, w, metadata(3), 3, 12)).brokers) == 1


@pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
async def test_garbage_and_stalled_tls_handshakes_hold_up_no_one(tmp_path):
    certs = make_certs(tmp_path / "certs")
    async with Broker(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0",
                      ssl_keystore_location=str(certs["broker.pem"])) as broker:
        port = broker.node.endpoints["SSL"][1]
        stalled = socket.create_connection(("127.0.0.1", port))  # connects, never says hello
        garbage_reader, garbage_writer = await asyncio.open_connection("127.0.0.1", port)
        garbage_writer.write(b"\x16\x03\x01\x00\x05hello" + bytes(range(256)) * 4)
        assert await closed(garbage_reader)
        tls = ssl.create_default_context(cafile=str(certs["ca.pem"]))
        reader, writer = await open_to(broker, "SSL", tls)
        assert [(b.host, b.port) for b in (await roundtrip(reader, writer, metadata(), 3, 12)).brokers] == \
            [("127.0.0.1", port)]
        assert broker._server.quotas.total == 2  # the stalled handshake and this client; the garbage one freed its slot
        writer.close()
        stalled.close()
        deadline = asyncio.get_running_loop().time() + 10
        while broker._server.quotas.total:  # the broker sees both closes
            assert asyncio.get_running_loop().time() < deadline, broker._server.quotas.total
            await asyncio.sleep(0.01)


@pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
@pytest.mark.parametrize("partial", [b"", b"\x00\x00\x00\x40partial"], ids=["idle", "mid-request"])
async def test_a_tls_client_that_half_closes_is_closed_and_freed(tmp_path, partial):
    """A bare FIN under TLS (no close_notify), the client keeping its socket: TLS has no half-close,
    so the broker closes its side and frees the connection instead of holding it forever."""
    certs = make_certs(tmp_path / "certs")
    async with Broker(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0",
                      ssl_keystore_location=str(certs["broker.pem"])) as broker:
        reader, writer = await open_to(broker, "SSL", ssl.create_default_context(cafile=str(certs["ca.pem"])))
        assert (await roundtrip(reader, writer, metadata(), 3, 12)).brokers
        writer.write(partial)
        await writer.drain()
        # beneath TLS: FIN alone (through a socket of its own: uvloop's transport sockets cannot shut down)
        with socket.socket(fileno=os.dup(writer.transport.get_extra_info("socket").fileno())) as raw:
            raw.shutdown(socket.SHUT_WR)
        assert await closed(reader)
        deadline = asyncio.get_running_loop().time() + 10
        while broker._server.quotas.total or broker.sessions():
            assert asyncio.get_running_loop().time() < deadline, broker._server.quotas.total
            await asyncio.sleep(0.01)
        writer.close()


async def test_ssl_client_auth_requested_names_who_presents_a_certificate(tmp_path):
    certs = make_certs(tmp_path / "certs")
    async with Broker(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0", ssl_client_auth="requested",
                      ssl_keystore_location=str(certs["broker.pem"]), ssl_truststore_location=str(certs["ca.pem"])) as broker:
        anonymous = ssl.create_default_context(cafile=str(certs["ca.pem"]))
        named = ssl.create_default_context(cafile=str(certs["ca.pem"]))
        named.load_cert_chain(str(certs["client-cert.pem"]), str(certs["client-key.pem"]))
        writers = []  # both connections stay open: a dropped writer is closed whenever the collector frees it
        for tls in (anonymous, named):
            reader, writer = await open_to(broker, "SSL", tls)
            writers.append(writer)
            assert (await roundtrip(reader, writer, metadata(), 3, 12)).brokers
        assert sorted(s.principal for s in broker.sessions()) == ["User:ANONYMOUS", "User:CN=client,OU=test,O=kafka-shim"]
        for writer in writers:
            writer.close()


@pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
async def test_before_authentication_a_sasl_listener_reads_at_most_sasl_server_max_receive_size(tmp_path):
    async with sasl_broker(tmp_path) as broker:
        big = 600 * 1024  # over Kafka's sasl.server.max.receive.size (512 KiB)
        reader, writer = await open_to(broker, "SASL_PLAINTEXT")
        writer.write(struct.pack(">i", big) + b"\x00" * 1024)
        assert await closed(reader)
        # after authentication, the listener's usual limit (socket.request.max.bytes) applies
        reader, writer = await open_to(broker, "SASL_PLAINTEXT")
        assert (await roundtrip(reader, writer, frame(17, 1, 1, mechanism="PLAIN"), 17, 1)).error_code == 0
        ok = await roundtrip(reader, writer, frame(36, 2, 2, auth_bytes=b"\x00alice\x00alice-secret"), 36, 2)
        assert ok.error_code == ErrorCode.none
        from shim.protocol.messages import request_module
        import uuid as uuid_module
        m = request_module(3, 12)
        names = [f"t{i}-" + "x" * 16000 for i in range(40)]  # 640 KB of topic names
        topics = tuple(m.MetadataRequestTopic(topic_id=uuid_module.UUID(int=0), name=n) for n in names)
        request = frame(3, 12, 3, topics=topics, allow_auto_topic_creation=False,
                        include_topic_authorized_operations=False)
        assert len(request) > big
        answer = await roundtrip(reader, writer, request, 3, 12)
        assert answer is not None and [t.name for t in answer.topics] == names


async def test_an_unsupported_api_versions_is_answered_and_may_be_retried_before_the_handshake(tmp_path):
    async with sasl_broker(tmp_path) as broker:
        reader, writer = await open_to(broker, "SASL_PLAINTEXT")
        too_new = bytearray(frame(18, 3, 1, client_software_name="t", client_software_version="1"))
        too_new[6:8] = struct.pack(">h", 99)  # KIP-511: a version the broker does not know
        answer = await roundtrip(reader, writer, bytes(too_new), 18, 0)
        assert answer.error_code == ErrorCode.unsupported_version
        retried = await roundtrip(reader, writer, frame(18, 3, 2, client_software_name="t",
                                                        client_software_version="1"), 18, 3)
        assert retried.error_code == ErrorCode.none
        assert (await roundtrip(reader, writer, frame(17, 1, 3, mechanism="PLAIN"), 17, 1)).error_code == 0


async def test_a_wildcard_listener_advertises_the_host_name(tmp_path):
    async with Broker(data_dir=tmp_path / "d", listeners="PLAINTEXT://:0") as broker:
        assert broker.node.endpoints["PLAINTEXT"] == (socket.getfqdn(), broker.node.bound_ports["PLAINTEXT"])


async def test_tls_from_inline_pem_text(tmp_path):
    certs = make_certs(tmp_path / "certs")
    text = {name: certs[name].read_text() for name in ("broker-key.pem", "broker-cert.pem", "ca.pem")}
    async with Broker(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0", ssl_client_auth="required",
                      ssl_keystore_key=text["broker-key.pem"], ssl_keystore_certificate_chain=text["broker-cert.pem"],
                      ssl_truststore_certificates=text["ca.pem"]) as broker:
        tls = ssl.create_default_context(cafile=str(certs["ca.pem"]))
        tls.load_cert_chain(str(certs["client-cert.pem"]), str(certs["client-key.pem"]))
        reader, writer = await open_to(broker, "SSL", tls)
        assert (await roundtrip(reader, writer, metadata(), 3, 12)).brokers
        assert [s.principal for s in broker.sessions()] == ["User:CN=client,OU=test,O=kafka-shim"]


async def test_a_certificate_no_mapping_rule_matches_is_closed_and_others_are_mapped(tmp_path):
    """ssl.principal.mapping.rules without DEFAULT: a certificate no rule matches gets its connection
    closed without an answer (Kafka fails its requests: "No rules apply to ..."); a client without a
    certificate is ANONYMOUS, not mapped; one a rule matches is known by the mapped name."""
    certs = make_certs(tmp_path / "certs")
    async with Broker(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0", ssl_client_auth="requested",
                      ssl_keystore_location=str(certs["broker.pem"]), ssl_truststore_location=str(certs["ca.pem"]),
                      ssl_principal_mapping_rules="RULE:^CN=([^,]+),OU=ops,.*$/$1/L") as broker:
        named = ssl.create_default_context(cafile=str(certs["ca.pem"]))
        named.load_cert_chain(str(certs["client-cert.pem"]), str(certs["client-key.pem"]))
        reader, writer = await open_to(broker, "SSL", named)
        assert await roundtrip(reader, writer, metadata(), 3, 12) is None
        reader, writer = await open_to(broker, "SSL", ssl.create_default_context(cafile=str(certs["ca.pem"])))
        assert (await roundtrip(reader, writer, metadata(), 3, 12)).brokers
        assert [s.principal for s in broker.sessions()] == ["User:ANONYMOUS"]
        writer.close()
    async with Broker(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0", ssl_client_auth="required",
                      ssl_keystore_location=str(certs["broker.pem"]), ssl_truststore_location=str(certs["ca.pem"]),
                      ssl_principal_mapping_rules="RULE:^CN=([^,]+),OU=test,.*$/svc-$1/U") as broker:
        reader, writer = await open_to(broker, "SSL", named)
        assert (await roundtrip(reader, writer, metadata(), 3, 12)).brokers
        assert [s.principal for s in broker.sessions()] == ["User:SVC-CLIENT"]
        writer.close()
