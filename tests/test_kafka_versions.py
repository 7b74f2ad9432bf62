"""Kafka release emulation (--kafka-version): ApiVersions ranges and features of each release,
requests outside the emulated ranges refused as that release refuses them, and the plumbing."""

from __future__ import annotations

import struct

import pytest

from shim.apis import REGISTRY
from shim.apis.dispatch import _route, _served, dispatch
from shim.cli import _parser, config_from_args
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from shim.protocol.framing import FrameError
from shim.protocol.kafka_releases import RELEASES
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_class

API_VERSIONS = 18


@pytest.fixture
def node_for(tmp_path):
    nodes = []

    def make(version: str) -> Node:
        nodes.append(Node(BrokerConfig(data_dir=tmp_path / f"data-{version}", kafka_version=version)))
        return nodes[-1]

    yield make
    for n in nodes:
        n.close()


async def api_versions(node, version):
    fields = {"client_software_name": "kafka-shim-tests", "client_software_version": "1.0"} if version >= 3 else {}
    request = request_class(API_VERSIONS, version)(**fields)
    raw = await dispatch(node, encode_request(RequestHeader(API_VERSIONS, version, 7, "t"), request))
    return decode_response(raw, API_VERSIONS, version)[1]


def ranges(response) -> dict[int, tuple[int, int]]:
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


@pytest.mark.parametrize("release", list(RELEASES))
async def test_advertised_ranges_lie_within_the_release_and_what_is_served(node_for, release):
    advertised = ranges(await api_versions(node_for(release), 3))
    table = RELEASES[release].api_versions
    for key, (low, high) in advertised.items():
        assert table[key][0] <= low <= high <= table[key][1], key
        assert REGISTRY[key].min_version <= low and high <= REGISTRY[key].max_version, key
    # Nothing served and overlapping the release is left out.
    for spec in REGISTRY.values():
        theirs = table.get(spec.key)
        if theirs and max(theirs[0], spec.min_version) <= min(theirs[1], spec.max_version):
            assert spec.key in advertised, spec.name


async def test_each_release_caps_the_versions_it_did_not_have(node_for):
    v37, v38, v40, v41 = [ranges(await api_versions(node_for(v), 3)) for v in ("3.7", "3.8", "4.0", "4.1")]
    assert v37[1][1] == 16 and v37[18] == (0, 3) and v37[66] == (0, 0)  # Fetch, ApiVersions, ListTransactions
    assert v37[22][1] == 4 and v37[26][1] == 3 and v37[28][1] == 3  # InitProducerId, EndTxn, TxnOffsetCommit
    assert v38[22][1] == 5 and v38[26][1] == 4 and v38[0][1] == 11  # KIP-890 part 1 versions arrive in 3.8
    assert v38[18] == (0, 3)  # ApiVersions v4 is 3.9's
    # 4.0 dropped the versions KIP-896 deprecated; 4.1 brought JoinGroup v0-1 back.
    assert v40[0][0] == 3 and v40[1][0] == 4 and v40[2][0] == 1 and v40[8][0] == 2 and v40[11][0] == 2
    assert v40[27] == (1, 1) and v41[11][0] == 0


async def test_features_of_3_9_and_the_level_0_rule_below_v4(node_for):
    node = node_for("3.9")
    v3, v4 = await api_versions(node, 3), await api_versions(node, 4)
    assert {f.name: (f.min_version, f.max_version) for f in v4.supported_features} == {
        "metadata.version": (1, 21), "kraft.version": (0, 1)}
    # KAFKA-17492: features supported from level 0 are not sent to ApiVersions < v4.
    assert {f.name for f in v3.supported_features} == {"metadata.version"}
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in v4.finalized_features}
    assert finalized == {"metadata.version": (21, 21), "kraft.version": (1, 1)}  # no transaction.version
    assert v4.finalized_features_epoch >= 0


@pytest.mark.parametrize("release,metadata_version,extra", [
    ("3.7", 19, {}), ("3.8", 20, {}),
    ("4.0", 25, {"kraft.version": 1, "transaction.version": 2, "group.version": 1}),
    ("4.1", 27, {"kraft.version": 1, "transaction.version": 2, "group.version": 1,
                 "eligible.leader.replicas.version": 1}),
])
async def test_finalized_features_of_each_release(node_for, release, metadata_version, extra):
    response = await api_versions(node_for(release), 4 if release >= "3.9" else 3)
    finalized = {f.name: f.max_version_level for f in response.finalized_features}
    assert finalized == {"metadata.version": metadata_version, **extra}


async def test_api_versions_above_the_release_gets_its_kip511_answer(node_for):
    request = request_class(API_VERSIONS, 4)(client_software_name="t", client_software_version="1")
    frame = encode_request(RequestHeader(API_VERSIONS, 4, 5, "t"), request)
    response = decode_response(await dispatch(node_for("3.7"), frame), API_VERSIONS, 0)[1]
    assert response.error_code == ErrorCode.unsupported_version
    assert ranges(response) == {API_VERSIONS: (0, 3)}
    response = decode_response(await dispatch(node_for("3.9"), frame), API_VERSIONS, 4)[1]
    assert response.error_code == ErrorCode.none and ranges(response)[API_VERSIONS] == (0, 4)


async def test_api_keys_nobody_serves_leave_no_trace(node_for):
    """Each key a client sends is looked up once and remembered, within a bound: a client naming every
    int16 key made a table entry apiece."""
    node = node_for("3.9")
    for key in (k for k in range(-(1 << 15), 1 << 15, 7) if k not in REGISTRY):
        with pytest.raises(FrameError, match="not served"):
            await dispatch(node, struct.pack(">hhih", key, 0, 1, -1) + bytes(8))
    assert _route.cache_info().currsize <= 1024 and _served.cache_info().currsize <= 1024


async def test_a_version_the_release_lacks_closes_the_connection(node_for):
    end_txn_v4 = request_class(26, 4)(transactional_id="t", producer_id=1, producer_epoch=0, committed=True)
    frame = encode_request(RequestHeader(26, 4, 3, "t"), end_txn_v4)
    with pytest.raises(FrameError, match="3.7"):
        await dispatch(node_for("3.7"), frame)
    # 3.8 serves EndTxn v4: the coordinator answers (the producer id is unknown to it).
    response = decode_response(await dispatch(node_for("3.8"), frame), 26, 4)[1]
    assert response.error_code == ErrorCode.invalid_producer_id_mapping


def test_the_flag_reaches_the_config_and_refuses_unknown_releases():
    args = _parser().parse_args(["serve", "--kafka-version", "4.1"])
    assert config_from_args(args).kafka_version == "4.1"
    assert config_from_args(_parser().parse_args(["serve"])).kafka_version == "3.9"
    with pytest.raises(SystemExit):
        _parser().parse_args(["serve", "--kafka-version", "2.8"])
    with pytest.raises(ValueError, match="kafka_version"):
        BrokerConfig(kafka_version="5.0")


@pytest.mark.kafka_version("4.0")
def test_the_fixture_takes_the_release_from_a_marker(kafka_shim):
    assert kafka_shim.node.release.name == "4.0"
    assert kafka_shim.node.txn.log_value_version == 1  # transaction.version 2 finalized


@pytest.mark.parametrize("kafka_shim", ["3.7", "4.1"], indirect=True)
def test_the_fixture_takes_the_release_as_an_indirect_parameter(kafka_shim, request):
    assert kafka_shim.node.release.name == request.node.callspec.params["kafka_shim"]


def test_the_fixture_emulates_3_9_by_default(kafka_shim):
    assert kafka_shim.node.release.name == "3.9" and kafka_shim.node.txn.log_value_version == 0
