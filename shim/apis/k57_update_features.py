"""UpdateFeatures (57), v0-2: change the cluster's finalized features (KIP-584, KIP-778).

Answered as a Kafka KRaft controller answers (Kafka: QuorumController.updateFeatures,
FeatureControlManager): each update is checked against the levels this node supports under the
emulated release (shim.quorum.check_update: upgrade type, level range, downgrade rules, the
metadata.version rules) and the valid ones are finalized together, durably, unless ValidateOnly.
v0's AllowDowngrade is not read by a KRaft controller: v0 updates are upgrades. Up to v1 (Kafka
3.9) each feature gets its own result, and the valid ones apply even when another fails; from v2
(Kafka 4.0) the request is all or nothing: the first failure is the top-level error (and, for v0-1
requests to a 4.x release, every feature's), and nothing changes. Duplicate feature names: the
last one counts. A new ``transaction.version`` governs transactions from then on (ApiVersions tells
clients, which pick TV2 by it). With an authorizer it needs ALTER on the cluster.
"""

from ..errors import ErrorCode, KafkaError
from ..quorum import UPGRADE
from .registry import api

NO_RESULTS_VERSION = 2
ALL_OR_NOTHING_MAJOR = 4  # Kafka 4.0's FeatureControlManager stops at the first failing update


@api(57, "UpdateFeatures", 0, 2)
def handle(ctx, request):
    updates = {u.feature: (u.max_version_level, getattr(u, "upgrade_type", UPGRADE)) for u in request.feature_updates}
    quorum = ctx.node.quorum
    errors: dict[str, KafkaError | None] = {}
    for feature, (level, upgrade_type) in updates.items():
        try:
            quorum.check_update(feature, level, upgrade_type)
            errors[feature] = None
        except KafkaError as e:
            errors[feature] = e
    first = next((e for e in errors.values() if e is not None), None)
    atomic = int(quorum.release.name.split(".")[0]) >= ALL_OR_NOTHING_MAJOR
    if atomic and first is not None:
        errors = dict.fromkeys(errors, first)
    elif not getattr(request, "validate_only", False):  # v1+
        ctx.node.finalize_features({f: updates[f][0] for f, e in errors.items() if e is None})
    top = first if atomic else None
    results = () if ctx.version >= NO_RESULTS_VERSION else tuple(_result(ctx, f, errors[f]) for f in sorted(errors))
    return ctx.response(error_code=top.code if top else ErrorCode.none, error_message=top.message if top else None,
                        results=results)


def _result(ctx, feature, error):
    return ctx.make("UpdatableFeatureResult", feature=feature, error_code=error.code if error else ErrorCode.none,
                    error_message=error.message if error else None)


def error_response(ctx, request, code):
    """Kafka: UpdateFeaturesRequest.getErrorResponse -- the top-level error, no results."""
    return ctx.response(error_code=code, error_message=None, results=())
