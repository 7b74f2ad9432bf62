"""Requests through the dispatch seam, as a client's bytes, for the API tests."""

from __future__ import annotations

import itertools

from shim.apis.dispatch import dispatch
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

_corr = itertools.count(1)


async def call(node, api_key, version, build, client_id="tests"):
    """Encode ``build(request_module)`` as version ``version`` of ``api_key``, dispatch it, decode the answer."""
    m = request_module(api_key, version)
    corr = next(_corr)
    raw = await dispatch(node, encode_request(RequestHeader(api_key, version, corr, client_id), build(m)))
    got_corr, response = decode_response(raw, api_key, version)
    assert got_corr == corr
    return response
