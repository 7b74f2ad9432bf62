"""ApiVersions (18), v0-4.

Built from the handler registry, so what is advertised is exactly what is served. No features are
advertised and FinalizedFeaturesEpoch is -1: no transaction-version-2 behaviour (KIP-890 part 2).
An unsupported request version gets a v0 body with UNSUPPORTED_VERSION (KIP-511, see dispatch); an
invalid client software name or version (v3+) gets INVALID_REQUEST, as Kafka answers.
"""

import re

from ..errors import ErrorCode
from .registry import REGISTRY, api


# Kafka: ApiVersionsRequest.isValid (v3+ carry the client's software name and version)
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


@api(18, "ApiVersions", 0, 4)
def handle(ctx, request):
    if ctx.version >= 3 and not (_SOFTWARE.fullmatch(request.client_software_name)
                                 and _SOFTWARE.fullmatch(request.client_software_version)):
        return ctx.response(error_code=ErrorCode.invalid_request, api_keys=(), supported_features=(),
                            finalized_features_epoch=-1, finalized_features=(), zk_migration_ready=False)
    if ctx.session is not None:
        ctx.session.served(18)  # on a SASL listener: the handshake is next (an error answer leaves it open)
    keys = tuple(
        ctx.make("ApiVersion", api_key=s.key, min_version=s.min_version, max_version=s.max_version)
        for s in sorted(REGISTRY.values(), key=lambda s: s.key)
    )
    return ctx.response(
        error_code=ErrorCode.none, api_keys=keys, supported_features=(),
        finalized_features_epoch=-1, finalized_features=(), zk_migration_ready=False,
    )
