"""PushTelemetry (72), v0 (KIP-714): served, not advertised.

Answered as a Kafka without a telemetry receiver answers (shim.client_metrics): INVALID_REQUEST
for a missing or reserved client instance id or after a terminating push,
THROTTLING_QUOTA_EXCEEDED before the push interval is up, UNKNOWN_SUBSCRIPTION_ID,
UNSUPPORTED_COMPRESSION_TYPE, TELEMETRY_TOO_LARGE (over ``telemetry.max.bytes``), else NONE; the
metrics are dropped unread, as Kafka hands them to no receiver. No ACL is checked, as in Kafka.
"""

import datetime

from ..node import now_ms
from .k71_get_telemetry_subscriptions import client_attributes
from .registry import api


@api(72, "PushTelemetry", 0, 0, advertised=False)
def handle(ctx, request):
    error = ctx.node.client_metrics.push(request.client_instance_id, request.subscription_id, request.terminating,
                                         request.compression_type, len(request.metrics), ctx.session, now_ms(),
                                         client_attributes(ctx))
    return error_response(ctx, request, error)


def error_response(ctx, request, code):
    return ctx.response(throttle_time=datetime.timedelta(0), error_code=code)
