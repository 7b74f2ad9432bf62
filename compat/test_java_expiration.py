"""Apache Kafka's TransactionsExpirationTest and ProducerIdExpirationTest with kafka-clients
(compat/java/ExpirationReference.java), each against a broker started with short expirations and
check intervals as those tests configure theirs (TransactionStateManagerConfig, TransactionLogConfig):
transactional ids and producer ids expire, and what the clients see afterwards is Kafka's."""

from __future__ import annotations

import pytest

import shim
from compat.javarun import observed_of
from shim.configs.properties import config_from_properties

pytestmark = pytest.mark.compat(client="java")

E = "org.apache.kafka.common.errors."
INTERVALS = {"transaction.remove.expired.transaction.cleanup.interval.ms": "200",
             "producer.id.expiration.check.interval.ms": "200",
             "transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"}


def run(tmp_path, java_drivers, scenarios, prefix, kafka_version="3.9", **expirations):
    """``scenarios`` through the ReferenceDriver against a broker with these expirations (ms)."""
    props = {**INTERVALS, **{k.replace("_", "."): str(v) for k, v in expirations.items()}}
    config = config_from_properties(props, shim.BrokerConfig(data_dir=tmp_path / prefix, listen="127.0.0.1:0",
                                                              group_initial_rebalance_delay_ms=0,
                                                              kafka_version=kafka_version))
    with shim.BrokerThread(config) as broker:
        out = java_drivers.run("ReferenceDriver", scenarios, broker.bootstrap_servers, timeout=300, prefix=prefix,
                               parallel=len(scenarios), timeout_s=150)
    return observed_of(out["results"])


@pytest.fixture(scope="module")
def producer_ids_first(tmp_path_factory, java_drivers):
    """TransactionsExpirationTest's broker: producer ids expire before transactional ids."""
    return run(tmp_path_factory.mktemp("pid-first"), java_drivers,
               ["txn.id_expiration", "txn.producer_id_expiration", "producer.id_expiration"], "pidfirst",
               transactional_id_expiration_ms=8000, producer_id_expiration_ms=2000)


def check_invalid_mapping(obs, client4: bool):
    """TransactionsExpirationTest: 3.9's testBumpTransactionalEpochAfterInvalidProducerIdMapping, 4.x's
    testFatalErrorAfterInvalidProducerIdMapping (kafka-clients 4 treats the error as fatal)."""
    assert (obs["listed_before"], obs["listed_after"]) == (True, False)
    assert obs["send_error"] == E + "InvalidPidMappingException"
    assert (obs["abort_error"] is not None) is client4, obs["abort_error"]
    assert (obs["state_after"], obs["new_producer_id"]) == ("COMPLETE_COMMIT", True)
    assert obs["read_committed"] == ["1/committed", "2/committed", "3/committed", "4/committed"]


def check_producer_id_expired(obs, tv2: bool):
    assert (obs["producers_during"], obs["transaction_kept"], obs["producers_after"]) == (1, True, 1)
    # the transactional id outlives the producer id: the same producer id at a later epoch (version 2
    # bumps it at every EndTxn as well: at least two, as Kafka 4.x's test has it)
    assert obs["same_producer_id"] is True
    assert obs["epoch_step"] >= 2 if tv2 else obs["epoch_step"] == 1, obs["epoch_step"]
    assert obs["read_committed"] == ["3/committed", "4/committed"]


@pytest.mark.shim_only("starts a broker with short expirations")
@pytest.mark.compat(scenario="txn.id_expiration")
def test_bump_transactional_epoch_after_invalid_producer_id_mapping(producer_ids_first, request):
    from compat.plugin import java_client

    check_invalid_mapping(producer_ids_first("txn.id_expiration"), java_client(request.config) == "4")


@pytest.mark.shim_only("starts a broker with short expirations")
@pytest.mark.compat(scenario="txn.producer_id_expiration")
def test_transaction_after_producer_id_expires(producer_ids_first):
    check_producer_id_expired(producer_ids_first("txn.producer_id_expiration"), False)


@pytest.mark.shim_only("starts a broker emulating Kafka 4.0 with short expirations")
@pytest.mark.compat(scenario="txn.id_expiration")
def test_expiration_under_transaction_version_2(tmp_path, java4):
    """TransactionsExpirationTest's WithTV2 cases: kafka-clients 4 on Kafka 4.0 emulation, where
    Produce v12 adds the partition and the expired id's Produce itself is refused."""
    observed = run(tmp_path, java4, ["txn.id_expiration", "txn.producer_id_expiration"], "tv2exp",
                   kafka_version="4.0", transactional_id_expiration_ms=8000, producer_id_expiration_ms=2000)
    check_invalid_mapping(observed("txn.id_expiration"), True)
    check_producer_id_expired(observed("txn.producer_id_expiration"), True)


@pytest.mark.shim_only("starts a broker with short expirations")
@pytest.mark.compat(scenario="producer.id_expiration")
def test_producer_id_expiration_with_no_transactions(producer_ids_first):
    obs = producer_ids_first("producer.id_expiration")
    assert (obs["producers_before"], obs["second_send_error"], obs["producers_after"]) == (1, None, 1)
    assert obs["last_sequence_after"] == 1  # taken at sequence 1 from a producer the broker had forgotten


@pytest.mark.shim_only("starts a broker with short expirations")
@pytest.mark.compat(scenario="txn.id_expiration_producer_id_remains")
def test_transaction_after_transactional_id_expires_but_producer_id_remains(tmp_path, java_drivers, request):
    """ProducerIdExpirationTest's broker: transactional ids expire first."""
    from compat.plugin import java_client

    obs = run(tmp_path, java_drivers, ["txn.id_expiration_producer_id_remains"], "tidfirst",
              transactional_id_expiration_ms=2000, producer_id_expiration_ms=120_000)(
        "txn.id_expiration_producer_id_remains")
    assert obs["producers_after_expiry"] == 1
    assert obs["send_error"] == E + "InvalidPidMappingException"
    assert (obs["abort_error"] is not None) is (java_client(request.config) == "4"), obs["abort_error"]
    assert obs["producers_in_next"] >= 1
    assert obs["read_committed"] == ["3/committed", "4/committed"]


@pytest.mark.shim_only("starts a broker with short expirations and alters them")
@pytest.mark.compat(scenario="producer.id_expiration_dynamic")
def test_dynamic_producer_id_expiration_ms(tmp_path, java_drivers):
    obs = run(tmp_path, java_drivers, ["producer.id_expiration_dynamic"], "dyn",
              producer_id_expiration_ms=1000)("producer.id_expiration_dynamic")
    assert (obs["described_high"], obs["producers_after_raise"]) == ("100000", 1)
    assert (obs["described_low"], obs["expired_again"]) == ("100", True)
