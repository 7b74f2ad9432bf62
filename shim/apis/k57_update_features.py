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

import heapq

from ..errors import ErrorCode, KafkaError
from ..quorum import UPGRADE
from ._pace import Pacer
from .registry import api

NO_RESULTS_VERSION = 2
ALL_OR_NOTHING_MAJOR = 4  # Kafka 4.0's FeatureControlManager stops at the first failing update
SORTED_RUN = 4096  # names sorted in one piece: well under a slice


@api(57, "UpdateFeatures", 0, 2)
async def handle(ctx, request):
    # Paced: 160,000 distinct feature names (2 MiB) were checked and answered in one turn (0.9-1.05
    # CPU s).
    pace = Pacer()
    updates = {u.feature: (u.max_version_level, getattr(u, "upgrade_type", UPGRADE))
               async for u in pace.each(request.feature_updates)}
    quorum = ctx.node.quorum
    errors, levels, first = await _checked(quorum, updates, pace)
    atomic = int(quorum.release.name.split(".")[0]) >= ALL_OR_NOTHING_MAJOR
    if atomic and first is not None:
        errors = dict.fromkeys(errors, first)
    elif not getattr(request, "validate_only", False):  # v1+; in the turn of the last check
        ctx.node.finalize_features(levels)
    top = first if atomic else None
    results = () if ctx.version >= NO_RESULTS_VERSION else await _results(ctx, errors, pace)
    return ctx.response(error_code=top.code if top else ErrorCode.none, error_message=top.message if top else None,
                        results=results)


async def _checked(quorum, updates, pace):
    """Each feature's error (None when valid), the valid levels and the first error, as checked
    against the levels they are applied to: Kafka's controller checks and applies a request in one
    event, so the checks are made again when another UpdateFeatures changed the levels between
    slices."""
    while True:
        epoch, errors, levels, first = quorum.epoch, {}, {}, None
        async for feature, (level, upgrade_type) in pace.each(updates.items()):
            try:
                quorum.check_update(feature, level, upgrade_type)
                errors[feature], levels[feature] = None, level
            except KafkaError as e:
                errors[feature], first = e, e if first is None else first
        if quorum.epoch == epoch:
            return errors, levels, first


async def _results(ctx, errors, pace):
    """A result per feature, by name: runs sorted a slice at a time, then merged paced."""
    names = list(errors)
    runs = [sorted(names[i:i + SORTED_RUN]) async for i in pace.each(range(0, len(names), SORTED_RUN))]
    return tuple([_result(ctx, f, errors[f]) async for f in pace.each(heapq.merge(*runs))])


def _result(ctx, feature, error):
    return ctx.make("UpdatableFeatureResult", feature=feature, error_code=error.code if error else ErrorCode.none,
                    error_message=error.message if error else None)


def error_response(ctx, request, code):
    """Kafka: UpdateFeaturesRequest.getErrorResponse -- the top-level error, no results."""
    return ctx.response(error_code=code, error_message=None, results=())
