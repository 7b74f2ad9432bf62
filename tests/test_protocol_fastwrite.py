"""The compiled response writers write what kio writes, byte for byte, for every response (and
response header) class of every API and version kio knows, on values hypothesis draws for them."""

from __future__ import annotations

import importlib
import io
import pkgutil

import kio.schema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.serial import entity_writer
from kio.static.primitive import Records

from shim.protocol.fastwrite import compiled_writer
from shim.protocol.messages import _Parts, join_parts

from kio_strategies import entities


def _response_classes() -> list[type]:
    """Every class the broker encodes: each version of each API it serves (kio's, and the legacy
    versions defined in shim.protocol.legacy_schemas), plus the rest of kio's schema."""
    from shim.apis import REGISTRY
    from shim.protocol.messages import response_class

    out = {response_class(key, v) for key, spec in REGISTRY.items()
           for v in range(spec.min_version, spec.max_version + 1)}
    for api in pkgutil.iter_modules(kio.schema.__path__):
        package = importlib.import_module(f"kio.schema.{api.name}")
        for version in pkgutil.iter_modules(getattr(package, "__path__", [])):
            try:
                module = importlib.import_module(f"kio.schema.{api.name}.{version.name}.response")
            except ModuleNotFoundError:
                continue
            out.update(v for k, v in vars(module).items() if k.endswith("Response") and isinstance(v, type)
                       and v.__module__ == module.__name__)
    # by name too: a set's order differs between processes (string hashes), and pytest-xdist's workers
    # must collect the same tests in the same order
    return sorted(out, key=lambda c: (c.__api_key__, c.__version__, c.__module__, c.__name__))


CLASSES = _response_classes()
st.register_type_strategy(Records, st.binary(max_size=40))


def _both(cls: type, entity) -> tuple[bytes, bytes]:
    expected = io.BytesIO()
    entity_writer(cls)(expected, entity)
    parts = _Parts()
    compiled_writer(cls)(parts, entity)
    return expected.getvalue(), join_parts(parts.done())


def test_kio_schema_is_covered():
    assert {c.__api_key__ for c in CLASSES} >= {0, 1, 3, 18, 68, 78} and len(CLASSES) > 300


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__}.{c.__name__}")
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_compiled_writer_matches_kio(cls, data):
    entity = data.draw(entities(cls))
    try:
        entity_writer(cls)(io.BytesIO(), entity)
    except Exception as e:  # noqa: BLE001 - a value kio cannot write must fail here too
        with pytest.raises(type(e)):
            compiled_writer(cls)(_Parts(), entity)
        return
    expected, ours = _both(cls, entity)
    assert ours == expected


@pytest.mark.parametrize("cls", sorted({c.__header_schema__ for c in CLASSES}, key=lambda c: c.__module__))
def test_response_headers_match_kio(cls):
    for correlation_id in (0, 1, 2**31 - 1, -5):
        h = cls(correlation_id=correlation_id)
        assert _both(cls, h)[1] == _both(cls, h)[0]


@pytest.mark.parametrize("version", [0, 5, 6])
def test_an_oversized_string_is_refused_as_kio_refuses_it(version):
    """A legacy string over 32767 bytes (JoinGroup v5's member id from a 32767-byte instance id)
    cannot be written: the same OutOfBoundValue as kio's, which the dispatcher turns into a closed
    connection. Compact strings (v6+) take it."""
    from shim.protocol.messages import response_class

    from kio.schema.errors import ErrorCode

    from shim.protocol.messages import make

    cls = response_class(11, version)
    entity = make(cls, throttle_time=0, error_code=ErrorCode.none, generation_id=1, protocol_type=None,
                  protocol_name="range", leader="m", skip_assignment=False, members=(), member_id="m" * 40_000)
    try:
        entity_writer(cls)(io.BytesIO(), entity)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            compiled_writer(cls)(_Parts(), entity)
        assert version < 6
    else:
        assert version >= 6 and _both(cls, entity)[1] == _both(cls, entity)[0]

