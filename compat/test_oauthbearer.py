"""SASL/OAUTHBEARER with the clients' own token settings (README.md, Security):

* Kafka's default unsecured-token validation, requiring the scope ``kafka``: confluent-kafka with
  ``sasl.oauthbearer.config`` (librdkafka builds the unsecured JWT), kafka-python and aiokafka with a
  token provider, Java with OAuthBearerLoginModule's ``unsecuredLoginStringClaim_*`` options; each
  produces and consumes, and the broker names the connection ``User:<sub>``. An expired token and
  one without the scope are refused with the error JSON Kafka's OAuthBearerSaslServer sends. A
  short-lived token bounds the session (KIP-368): librdkafka re-authenticates before it ends.
* Tokens signed with a key of a JWKS file (``sasl.oauthbearer.jwks.endpoint.url``): confluent-kafka's
  ``oauth_cb`` with an RS256 token, kafka-python with an ES256 one; a token signed by another key
  is refused.

One broker per validation (the unsecured one for the module; the JWKS one for its two tests).
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
import uuid

import pytest

from compat.security_clients import KafkaPython, Security
from shim.broker import BrokerThread

pytestmark = pytest.mark.shim_only("starts a kafka-shim with an OAUTHBEARER listener of its own")

JAAS = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
        'unsecuredValidatorRequiredScope="kafka" unsecuredValidatorAllowableClockSkewMs="1000";')
INVALID = '{"status":"invalid_token"}'
NO_SCOPE = '{"status":"insufficient_scope", "scope":"[kafka]"}'


def _b64(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def unsecured_jwt(sub: str, lifetime_s: float = 3600, scope: str | None = "kafka") -> str:
    now = time.time()
    claims = {"sub": sub, "iat": int(now), "exp": int(now + lifetime_s), **({"scope": scope} if scope else {})}
    return f"{_b64({'alg': 'none'})}.{_b64(claims)}."


def topic() -> str:
    return f"oauth-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerThread(data_dir=tmp_path_factory.mktemp("oauth"), listeners="SASL_PLAINTEXT://127.0.0.1:0",
                      sasl_enabled_mechanisms="OAUTHBEARER", oauthbearer_sasl_jaas_config=JAAS) as b:
        yield b


class KafkaPythonToken(KafkaPython):
    """kafka-python with ``sasl_oauth_token_provider`` (an object whose token() gives the JWT)."""

    def __init__(self, bootstrap: str, token: str) -> None:
        super().__init__(Security(bootstrap, "SASL_PLAINTEXT"))
        self.token = token

    def kw(self) -> dict:
        from kafka.net.sasl.oauth import AbstractTokenProvider

        token = self.token

        class Provider(AbstractTokenProvider):
            def token(self):
                return token

        return dict(bootstrap_servers=self.s.bootstrap, security_protocol="SASL_PLAINTEXT",
                    sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=Provider())


def kp_roundtrip(client: KafkaPythonToken, t: str) -> list[bytes]:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(acks="all", **client.kw())
    producer.send(t, b"by kafka-python", partition=0).get(timeout=20)
    producer.close()
    consumer = KafkaConsumer(auto_offset_reset="earliest", **client.kw())
    consumer.assign([TopicPartition(t, 0)])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    while not got and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            got += [m.value for m in batch]
    consumer.close()
    return got


def kp_refusal(bootstrap: str, token: str) -> str:
    """What kafka-python logs of its failed bootstrap connections (its exception only says it failed)."""
    import logging

    from kafka import KafkaAdminClient

    messages: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: messages.append(record.getMessage())
    logger = logging.getLogger("kafka")
    logger.addHandler(handler)
    try:
        KafkaAdminClient(bootstrap_timeout_ms=2000, **KafkaPythonToken(bootstrap, token).kw()).close()
        messages.append("connected")
    except Exception as exc:  # kafka-python gives up bootstrapping
        messages.append(f"raised {exc!r}")
    finally:
        logger.removeHandler(handler)
    return "\n".join(messages)


def ck_conf(bootstrap: str, **extra) -> dict:
    return {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
            **extra}


def ck_roundtrip(conf: dict, t: str) -> list[bytes]:
    from confluent_kafka import Consumer, Producer, TopicPartition

    producer = Producer({**conf, "acks": "all"})
    producer.produce(t, b"by confluent-kafka", partition=0)
    assert producer.flush(30) == 0
    consumer = Consumer({**conf, "group.id": f"g-{uuid.uuid4()}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(t, 0, 0)])
    got, deadline = [], time.monotonic() + 30
    while not got and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value())
    consumer.close()
    return got


def ck_refusal(conf: dict) -> str:
    from confluent_kafka import Producer

    from compat.support import wait_for

    errors: list = []
    producer = Producer({**conf, "error_cb": errors.append})
    wait_for(lambda: producer.poll(0.1) is not None and errors, 20, message="an error from librdkafka")
    return "\n".join(f"{e.name()}: {e.str()}" for e in errors)


# -- Kafka's unsecured tokens ----------------------------------------------------------------------


def test_confluent_kafka_with_sasl_oauthbearer_config(broker):
    conf = ck_conf(broker.bootstrap("SASL_PLAINTEXT"), **{"enable.sasl.oauthbearer.unsecure.jwt": True,
                                                           "sasl.oauthbearer.config": "principal=ck-user scope=kafka"})
    t = topic()
    assert ck_roundtrip(conf, t) == [b"by confluent-kafka"]


def test_confluent_kafka_without_the_required_scope_gets_insufficient_scope(broker):
    conf = ck_conf(broker.bootstrap("SASL_PLAINTEXT"), **{"enable.sasl.oauthbearer.unsecure.jwt": True,
                                                           "sasl.oauthbearer.config": "principal=ck-user scope=other"})
    report = ck_refusal(conf)
    assert "_AUTHENTICATION" in report and NO_SCOPE in report


def test_kafka_python_with_a_token_provider_is_named_by_its_sub(broker):
    client = KafkaPythonToken(broker.bootstrap("SASL_PLAINTEXT"), unsecured_jwt("kp-user"))
    t = topic()
    assert kp_roundtrip(client, t) == [b"by kafka-python"]
    from kafka import KafkaProducer
    producer = KafkaProducer(**client.kw())
    try:
        producer.send(t, b"x", partition=0).get(timeout=20)
        assert "User:kp-user" in broker.principals("SASL_PLAINTEXT")
    finally:
        producer.close()


@pytest.mark.parametrize("token, expected", [
    (lambda: unsecured_jwt("kp-user", lifetime_s=-5), INVALID),
    (lambda: unsecured_jwt("kp-user", scope=None), NO_SCOPE),
    (lambda: unsecured_jwt("kp-user")[:-1] + "c2ln", INVALID),  # an unsecured JWS with a signature
], ids=["expired", "no-scope", "signed"])
def test_kafka_python_refused_token_reports_kafkas_error_json(broker, token, expected):
    report = kp_refusal(broker.bootstrap("SASL_PLAINTEXT"), token())
    assert expected in report, report


def test_aiokafka_with_a_token_provider(broker):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.abc import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        async def token(self):
            return unsecured_jwt("ak-user")

    kw = dict(bootstrap_servers=broker.bootstrap("SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT",
              sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=Provider())
    t = topic()

    async def roundtrip() -> list[bytes]:
        producer = AIOKafkaProducer(acks="all", **kw)
        await producer.start()
        try:
            await producer.send_and_wait(t, b"by aiokafka", partition=0)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(auto_offset_reset="earliest", **kw)
        await consumer.start()
        try:
            consumer.assign([TopicPartition(t, 0)])
            got, deadline = [], time.monotonic() + 30
            while not got and time.monotonic() < deadline:
                for batch in (await consumer.getmany(timeout_ms=500)).values():
                    got += [m.value for m in batch]
            return got
        finally:
            await consumer.stop()

    assert asyncio.run(roundtrip()) == [b"by aiokafka"]


def test_java_with_oauthbearer_login_module_unsecured_claims(broker, java_drivers):
    jaas = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
            'unsecuredLoginStringClaim_sub="java-user" unsecuredLoginStringClaim_scope="kafka";')
    results = java_drivers.run("KafkaDriver", ["produce_consume.none"], broker.bootstrap("SASL_PLAINTEXT"),
                               timeout=180, prefix=f"java-oauth-{uuid.uuid4().hex[:6]}", parallel=1, timeout_s=60, **{
                                   "client.security.protocol": "SASL_PLAINTEXT",
                                   "client.sasl.mechanism": "OAUTHBEARER", "client.sasl.jaas.config": jaas})
    result = results["results"]["produce_consume.none"]
    assert result["ok"], f"{result['error']}\n{result['trace']}"
    assert result["observed"]["offsets"] == [0, 1, 2, 3, 4]


# -- tokens signed with a key of a JWKS file ------------------------------------------------------


def _int_b64(n: int) -> str:
    return base64.urlsafe_b64encode(n.to_bytes((n.bit_length() + 7) // 8, "big")).decode().rstrip("=")


@pytest.fixture(scope="module")
def jwks_broker(tmp_path_factory):
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    keys = {"RS256": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "ES256": ec.generate_private_key(ec.SECP256R1()), "other": ec.generate_private_key(ec.SECP256R1())}
    rn, en = keys["RS256"].public_key().public_numbers(), keys["ES256"].public_key().public_numbers()
    d = tmp_path_factory.mktemp("jwks")
    (d / "jwks.json").write_text(json.dumps({"keys": [
        {"kty": "RSA", "kid": "rsa-1", "alg": "RS256", "use": "sig", "n": _int_b64(rn.n), "e": _int_b64(rn.e)},
        {"kty": "EC", "kid": "ec-1", "crv": "P-256", "x": _int_b64(en.x), "y": _int_b64(en.y)}]}))
    with BrokerThread(data_dir=d / "data", listeners="SASL_PLAINTEXT://127.0.0.1:0",
                      sasl_enabled_mechanisms="OAUTHBEARER", sasl_oauthbearer_jwks_endpoint_url=(d / "jwks.json").as_uri(),
                      sasl_oauthbearer_expected_audience="kafka") as b:
        b.keys = keys
        yield b


def signed_jwt(key, alg: str, kid: str, sub: str) -> str:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    now = int(time.time())
    signing_input = f"{_b64({'alg': alg, 'kid': kid})}.{_b64({'sub': sub, 'iat': now, 'exp': now + 600, 'aud': 'kafka'})}"
    if alg == "ES256":
        r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        sig = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    else:
        sig = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + base64.urlsafe_b64encode(sig).decode().rstrip("=")


def test_jwks_confluent_kafka_oauth_cb_rs256(jwks_broker):
    token = signed_jwt(jwks_broker.keys["RS256"], "RS256", "rsa-1", "ck-signed")
    conf = ck_conf(jwks_broker.bootstrap("SASL_PLAINTEXT"), oauth_cb=lambda _config: (token, time.time() + 600))
    assert ck_roundtrip(conf, topic()) == [b"by confluent-kafka"]
    forged = signed_jwt(jwks_broker.keys["other"], "ES256", "ec-1", "ck-signed")
    report = ck_refusal(ck_conf(jwks_broker.bootstrap("SASL_PLAINTEXT"),
                                oauth_cb=lambda _config: (forged, time.time() + 600)))
    assert "_AUTHENTICATION" in report and INVALID in report


def test_jwks_kafka_python_es256(jwks_broker):
    bootstrap = jwks_broker.bootstrap("SASL_PLAINTEXT")
    client = KafkaPythonToken(bootstrap, signed_jwt(jwks_broker.keys["ES256"], "ES256", "ec-1", "kp-signed"))
    assert kp_roundtrip(client, topic()) == [b"by kafka-python"]
    assert INVALID in kp_refusal(bootstrap, unsecured_jwt("kp-signed"))  # unsigned tokens are not taken here


def test_librdkafka_reauthenticates_before_its_token_expires(broker):
    """KIP-368 without connections.max.reauth.ms: the session lasts as long as the token (librdkafka's
    unsecured JWT with lifeSeconds=3), and librdkafka refreshes the token and re-authenticates on
    the same connection before then; every record arrives and no error is reported."""
    from confluent_kafka import Producer

    from compat.support import wait_for

    errors: list = []
    producer = Producer(ck_conf(broker.bootstrap("SASL_PLAINTEXT"), **{
        "enable.sasl.oauthbearer.unsecure.jwt": True, "error_cb": errors.append,
        "sasl.oauthbearer.config": "principal=short-lived scope=kafka lifeSeconds=3"}))
    t, sent = topic(), []

    def reauthenticated() -> bool:
        value = f"r{len(sent)}".encode()
        producer.produce(t, value, partition=0)
        sent.append(value)
        assert producer.flush(10) == 0
        return broker.call(lambda: max((s.reauthentications for s in broker.broker.sessions()
                                        if s.principal == "User:short-lived"), default=0)) >= 1

    wait_for(reauthenticated, 30, message="a re-authentication on the producer's connection")
    assert errors == []
    consumer_conf = ck_conf(broker.bootstrap("SASL_PLAINTEXT"), **{
        "enable.sasl.oauthbearer.unsecure.jwt": True, "sasl.oauthbearer.config": "principal=reader scope=kafka"})
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({**consumer_conf, "group.id": f"g-{uuid.uuid4()}", "enable.auto.commit": False})
    consumer.assign([TopicPartition(t, 0, 0)])
    got, deadline = [], time.monotonic() + 30
    while len(got) < len(sent) and time.monotonic() < deadline:
        m = consumer.poll(0.5)
        if m is not None and m.error() is None:
            got.append(m.value())
    consumer.close()
    assert got == sent
