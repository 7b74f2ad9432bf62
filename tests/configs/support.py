"""Send one request of any API through the dispatcher, as bytes, and decode the response."""

from __future__ import annotations

import itertools

from shim.apis.dispatch import dispatch
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

_correlation = itertools.count(1)


def module(key: int, version: int):
    return request_module(key, version)


async def call(node, key: int, version: int, request):
    corr = next(_correlation)
    raw = await dispatch(node, encode_request(RequestHeader(key, version, corr, "test"), request))
    got, response = decode_response(raw, key, version)
    assert got == corr
    return response
