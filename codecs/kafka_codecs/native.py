"""The C readers of a Produce request and of a produced batch's header (``_walk.c`` includes
``_produce.c``): ``produce_request`` and ``check_batch``, or None where the extension was not built
or was built from an older ``_walk.c`` (its ABI below 3). The callers then use the Python twins,
which give the same answers (tests/codecs/test_codecs_native_produce.py):
shim.protocol.produce_wire.decode_py and shim.storage.validation.validate_client_batch."""

try:
    from . import _walk

    if getattr(_walk, "ABI", 1) < 3:
        raise ImportError("kafka_codecs._walk is older than _produce.c")
    produce_request, check_batch = _walk.produce_request, _walk.check_batch
except ImportError:  # not built, or a stale build: the Python twins
    produce_request = check_batch = None
