"""ApiVersions through dispatch: every version answers with the registry's ranges, an unknown
version gets the KIP-511 v0 answer, and v3+ client software names are validated as Kafka does."""

from __future__ import annotations

import struct

import pytest

from shim.apis import REGISTRY
from shim.apis.dispatch import dispatch
from shim.apis.registry import emulated_range
from shim.protocol.kafka_releases import RELEASES
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_class

API_VERSIONS = 18


async def api_versions(node, version, **fields):
    if version >= 3:
        fields.setdefault("client_software_name", "kafka-shim-tests")
        fields.setdefault("client_software_version", "1.0")
    request = request_class(API_VERSIONS, version)(**fields)
    raw = await dispatch(node, encode_request(RequestHeader(API_VERSIONS, version, 9, "av"), request))
    correlation_id, response = decode_response(raw, API_VERSIONS, version)
    assert correlation_id == 9
    return response


@pytest.mark.parametrize("version", range(REGISTRY[API_VERSIONS].min_version, REGISTRY[API_VERSIONS].max_version + 1))
async def test_every_version_lists_exactly_the_registry(node, version):
    response = await api_versions(node, version)
    assert response.error_code == ErrorCode.none
    advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    # The registry as the default emulated release (3.9) limits it (tests/test_kafka_versions.py).
    release = RELEASES[node.config.kafka_version]
    assert advertised == {s.key: emulated_range(s, release) for s in REGISTRY.values()
                          if emulated_range(s, release) and s.advertised}
    # The foundation's APIs are there with at least the versions today's clients use.
    for key, (low, high) in {0: (3, 9), 1: (4, 12), 2: (1, 7), 3: (1, 12), 18: (0, 3), 22: (0, 4)}.items():
        assert advertised[key][0] <= low and advertised[key][1] >= high, key


async def test_unknown_version_gets_a_v0_answer_with_the_api_versions_range(node):
    frame = struct.pack(">hhih", API_VERSIONS, 1000, 9, 2) + b"av" + b"\x00\x00"
    correlation_id, response = decode_response(await dispatch(node, frame), API_VERSIONS, 0)
    assert correlation_id == 9
    assert response.error_code == ErrorCode.unsupported_version
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [
        (API_VERSIONS, REGISTRY[API_VERSIONS].min_version, REGISTRY[API_VERSIONS].max_version)]


@pytest.mark.parametrize("name,version", [("bad name!", "1.0"), ("ok", "-1"), ("", "1.0")])
async def test_invalid_client_software_is_invalid_request(node, name, version):
    response = await api_versions(node, 3, client_software_name=name, client_software_version=version)
    assert response.error_code == ErrorCode.invalid_request
