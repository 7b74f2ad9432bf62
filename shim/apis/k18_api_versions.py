"""ApiVersions (18), v0-4.

Built from the handler registry limited to the emulated Kafka release (``--kafka-version``,
shim.protocol.kafka_releases), so what is advertised is exactly what is served. v3+ answers carry
that release's supported features and the features a cluster of that release is formatted with
(metadata.version, kraft.version, and from 4.0 transaction.version 2 and group.version 1), with a
non-negative FinalizedFeaturesEpoch. The finalized features are the cluster's (shim.quorum): the
release's defaults until UpdateFeatures changes them. Supported features whose lowest level is 0 are left out of
answers below v4, as Kafka leaves them out (KAFKA-17492: older clients cannot read them).
On a controller listener the keys are the controller's (shim.apis.controller), with the same
features (Kafka: ControllerServer's SimpleApiVersionManager). An unsupported request version gets a v0 body with UNSUPPORTED_VERSION (KIP-511, see dispatch); an
invalid client software name or version (v3+) gets INVALID_REQUEST, as Kafka answers.
"""

import re

from ..errors import ErrorCode
from ..protocol.kafka_releases import RELEASES
from . import controller
from .registry import api, served

# Kafka: ApiVersionsRequest.isValid (v3+ carry the client's software name and version)
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
FEATURES_VERSION = 3  # features are tagged fields of v3+
FEATURE_LEVEL_0_VERSION = 4  # Kafka: ApiVersionsResponse.maybeFilterSupportedFeatureKeys (alterV0 below v4)


@api(18, "ApiVersions", 0, 4)
def handle(ctx, request):
    if ctx.version >= 3 and not (_SOFTWARE.fullmatch(request.client_software_name)
                                 and _SOFTWARE.fullmatch(request.client_software_version)):
        return ctx.response(error_code=ErrorCode.invalid_request, api_keys=(), supported_features=(),
                            finalized_features_epoch=-1, finalized_features=(), zk_migration_ready=False)
    if ctx.session is not None:
        if ctx.version >= 3:  # Kafka: the channel's ClientInformation, which KIP-714 subscriptions match
            ctx.session.client_software = (request.client_software_name, request.client_software_version)
        ctx.session.served(18)  # on a SASL listener: the handshake is next (an error answer leaves it open)
    release = RELEASES[ctx.node.config.kafka_version]
    if controller.is_controller(ctx):  # the controller listener lists the controller's APIs
        listed = controller.advertised(ctx.node.config.kafka_version)
    else:
        listed = [(spec.key, low, high) for spec, low, high in served(release)]
    keys = tuple(ctx.make("ApiVersion", api_key=key, min_version=low, max_version=high) for key, low, high in listed)
    if ctx.version < FEATURES_VERSION:
        return ctx.response(error_code=ErrorCode.none, api_keys=keys)
    supported = tuple(
        ctx.make("SupportedFeatureKey", name=name, min_version=low, max_version=high)
        for name, (low, high) in release.supported_features.items()
        if low > 0 or ctx.version >= FEATURE_LEVEL_0_VERSION
    )
    quorum = ctx.node.quorum
    finalized = tuple(
        ctx.make("FinalizedFeatureKey", name=name, min_version_level=level, max_version_level=level)
        for name, level in quorum.finalized.items()
    )
    return ctx.response(
        error_code=ErrorCode.none, api_keys=keys, supported_features=supported,
        finalized_features_epoch=quorum.epoch, finalized_features=finalized, zk_migration_ready=False,
    )
