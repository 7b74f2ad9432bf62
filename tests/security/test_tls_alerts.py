"""A client certificate the broker refuses in the TLS handshake is told so with a TLS alert before
the connection closes, as Kafka's SSLEngine tells it (kafka-clients turns the alert into
SslAuthenticationException at once; a bare close only makes it retry): a certificate of an unknown
CA, one of a CA that only borrows the trusted CA's name, and none at all under
ssl.client.auth=required. The slot of each refused connection is freed, and a trusted client is
served beside them. compat/test_tls_java_stores.py has the clients' side."""

from __future__ import annotations

import asyncio
import ssl

import pytest

from shim import Broker
from shim.security.certs import make_certs

from tests.security.test_listeners_wire import metadata, open_to, roundtrip


def client_context(ca, pem: dict | None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca))
    if pem is not None:
        ctx.load_cert_chain(pem["client-cert.pem"], pem["client-key.pem"])
    return ctx


async def refusal(broker: Broker, ctx: ssl.SSLContext) -> str:
    """What the client reads after its side of a TLS 1.3 handshake: the broker's alert, as text."""
    reader, writer = await open_to(broker, "SSL", ctx)  # TLS 1.3: the client's side is done first
    try:
        answer = await roundtrip(reader, writer, metadata(), None)
        return f"answered: {answer!r}"
    except ssl.SSLError as exc:
        return exc.reason
    finally:
        writer.close()


@pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
async def test_a_refused_client_certificate_gets_its_alert(tmp_path):
    trusted = make_certs(tmp_path / "trusted")
    unknown = make_certs(tmp_path / "unknown", ca_cn="some other CA", client_cn="intruder")
    impostor = make_certs(tmp_path / "impostor", client_cn="impostor")  # the trusted CA's name, another key
    async with Broker(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0", ssl_client_auth="required",
                      ssl_keystore_location=str(trusted["broker.pem"]),
                      ssl_truststore_location=str(trusted["ca.pem"])) as broker:
        ca = trusted["ca.pem"]
        assert await refusal(broker, client_context(ca, unknown)) == "TLSV1_ALERT_UNKNOWN_CA"
        assert await refusal(broker, client_context(ca, impostor)) == "TLSV1_ALERT_DECRYPT_ERROR"
        assert await refusal(broker, client_context(ca, None)) == "TLSV13_ALERT_CERTIFICATE_REQUIRED"
        reader, writer = await open_to(broker, "SSL", client_context(ca, trusted))
        assert (await roundtrip(reader, writer, metadata(), 3, 12)).brokers
        writer.close()
        deadline = asyncio.get_running_loop().time() + 10
        while broker._server.quotas.total:  # every refused connection, and this one, freed its slot
            assert asyncio.get_running_loop().time() < deadline, broker._server.quotas.total
            await asyncio.sleep(0.01)


@pytest.mark.asyncio(loop_factories=["asyncio", "uvloop"])
async def test_requested_refuses_an_unknown_ca_and_serves_a_client_without_a_certificate(tmp_path):
    """ssl.client.auth=requested: a certificate, if sent, must be trusted (Java's SSLEngine fails an
    untrusted one under wantClientAuth too); none at all is served, as User:ANONYMOUS."""
    trusted = make_certs(tmp_path / "trusted")
    unknown = make_certs(tmp_path / "unknown", ca_cn="some other CA", client_cn="intruder")
    async with Broker(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0", ssl_client_auth="requested",
                      ssl_keystore_location=str(trusted["broker.pem"]),
                      ssl_truststore_location=str(trusted["ca.pem"])) as broker:
        ca = trusted["ca.pem"]
        assert await refusal(broker, client_context(ca, unknown)) == "TLSV1_ALERT_UNKNOWN_CA"
        assert (await refusal(broker, client_context(ca, None))).startswith("answered: b'")  # bytes, not a close
