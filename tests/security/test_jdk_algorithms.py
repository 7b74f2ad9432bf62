"""TLS settings that name JDK algorithms (shim.security.jdk): a name the JDK does not know stops the
broker at start, as Kafka's SslFactory stops, naming the setting; names it knows start, whatever
their case. The names are checked against a JDK's own getInstance where java is on the PATH."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from shim.broker import BrokerThread
from shim.security import jdk

pytest.importorskip("cryptography")


@pytest.fixture
def certs(tmp_path):
    from shim.security.certs import make_certs
    return make_certs(tmp_path / "certs")


def serve(tmp_path, certs, *overrides: str) -> tuple[int, str]:
    """kafka-shim serve, which must exit at once (a broker that starts is killed, and the test fails)."""
    args = [sys.executable, "-m", "shim", "serve", "--data-dir", str(tmp_path / "d"), "--listeners",
            "SSL://127.0.0.1:0", "--ssl-keystore-location", str(certs["broker.pem"])]
    try:
        run = subprocess.run(args + [a for o in overrides for a in ("--override", o)], capture_output=True,
                             text=True, timeout=60, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    except subprocess.TimeoutExpired:
        pytest.fail("the broker started")
    return run.returncode, run.stderr


@pytest.mark.parametrize("setting, value, kind", [
    ("ssl.keymanager.algorithm", "SunX508", "KeyManagerFactory"),
    ("ssl.trustmanager.algorithm", "NewSunX509", "TrustManagerFactory"),  # a key manager's name only
    ("ssl.protocol", "TLSv1.4", "SSLContext"),
    ("ssl.secure.random.implementation", "Fortuna", "SecureRandom"),
])
def test_an_unknown_algorithm_refuses_the_start_from_the_cli(tmp_path, certs, setting, value, kind):
    code, err = serve(tmp_path, certs, f"{setting}={value}")
    assert code == 2
    assert f"kafka-shim: Invalid {setting}={value}: java.security.NoSuchAlgorithmException: {value} {kind} " \
           f"not available" in err


def test_an_unknown_key_manager_refuses_a_broker_thread(tmp_path, certs):
    thread = BrokerThread(data_dir=tmp_path / "d", listeners="SASL_SSL://127.0.0.1:0",
                          ssl_keystore_location=str(certs["broker.pem"]),
                          extra={"ssl.keymanager.algorithm": "X509"})  # a trust manager's alias, not a key manager's
    with pytest.raises(ValueError, match=r"Invalid ssl.keymanager.algorithm=X509: .*X509 KeyManagerFactory not "):
        thread.start()
    thread.stop()


def test_the_default_ssl_context_refuses_the_start(tmp_path, certs):
    code, err = serve(tmp_path, certs, "ssl.protocol=default")
    assert code == 2 and "Default SSLContext is initialized automatically" in err


@pytest.mark.parametrize("settings", [
    {"ssl.keymanager.algorithm": "pkix", "ssl.trustmanager.algorithm": "sunpkix", "ssl.protocol": "tlsv1.2",
     "ssl.secure.random.implementation": "sha1prng"},
    {"ssl.keymanager.algorithm": "NEWSUNX509", "ssl.trustmanager.algorithm": "X.509", "ssl.protocol": "TLS"},
])
def test_names_the_jdk_knows_start_in_any_case(tmp_path, certs, settings):
    thread = BrokerThread(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0",
                          ssl_keystore_location=str(certs["broker.pem"]), extra=settings)
    thread.start()
    try:
        assert thread.bootstrap_servers.rsplit(":", 1)[1] != "0"
    finally:
        thread.stop()


def test_a_plaintext_broker_does_not_look_at_tls_settings(tmp_path):
    """Kafka builds an SslFactory for SSL and SASL_SSL listeners only."""
    thread = BrokerThread(data_dir=tmp_path / "d", extra={"ssl.keymanager.algorithm": "Nope"})
    thread.start()
    try:
        assert thread.bootstrap_servers.rsplit(":", 1)[1] != "0"
    finally:
        thread.stop()


JAVA_CHECK = """
import java.security.*; import javax.net.ssl.*;
public class Names { public static void main(String[] a) {
  for (int i = 0; i < a.length; i += 2) { String ok = "yes";
    try { switch (a[i]) {
      case "KeyManagerFactory": KeyManagerFactory.getInstance(a[i + 1]); break;
      case "TrustManagerFactory": TrustManagerFactory.getInstance(a[i + 1]); break;
      case "SSLContext": SSLContext.getInstance(a[i + 1]); break;
      default: SecureRandom.getInstance(a[i + 1]); }
    } catch (NoSuchAlgorithmException e) { ok = e.getMessage(); }
    System.out.println(ok); } } }
"""


@pytest.mark.skipif(shutil.which("java") is None, reason="no java")
def test_the_names_are_the_jdks(tmp_path):
    """Every listed name and alias, in other case too, is found by the JDK; a neighbour of each is not,
    with the message kafka-shim repeats."""
    asked = []
    for setting, kind, known in jdk.CHECKS:
        for name in known:
            asked += [(setting, kind, name), (setting, kind, name.lower()), (setting, kind, name + "X")]
        others = {n for _, k, names in jdk.CHECKS if k != kind for n in names} - {n.upper() for n in known}
        asked += [(setting, kind, n) for n in sorted(others) if n.upper() not in {k.upper() for k in known}]
    (tmp_path / "Names.java").write_text(JAVA_CHECK)
    run = subprocess.run(["java", str(tmp_path / "Names.java"), *(x for _, k, n in asked for x in (k, n))],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    for (setting, kind, name), java in zip(asked, run.stdout.splitlines(), strict=True):
        ours = jdk.problem(setting, name)
        if java == "yes":
            assert ours is None or "initialized automatically" in ours, (setting, name)
        else:
            assert ours is not None and java in ours, (setting, name, java, ours)
