"""GetTelemetrySubscriptions (71), v0 (KIP-714): served, not advertised.

Kafka advertises the client telemetry APIs only with a metrics reporter that receives client
telemetry, and answers them all the same (the broker enables every API of its listener:
SocketServer.parseRequestHeader); kafka-shim has no receiver, so it answers as such a Kafka does
(shim.client_metrics): the client instance id (a new one for the zero id), the subscription id,
the metrics and push interval of the CLIENT_METRICS subscriptions the client matches (none and 5
minutes without any), the accepted
compression types, ``telemetry.max.bytes`` and delta temporality; a request before the push
interval is up gets THROTTLING_QUOTA_EXCEEDED with nothing else. No ACL is checked, as in Kafka.
"""

import datetime
import uuid

from ..client_metrics import SUPPORTED_COMPRESSION_TYPES
from ..errors import ErrorCode
from ..node import now_ms
from .registry import api


@api(71, "GetTelemetrySubscriptions", 0, 0, advertised=False)
def handle(ctx, request):
    error, instance = ctx.node.client_metrics.get_subscriptions(request.client_instance_id, ctx.session, now_ms(),
                                                                client_attributes(ctx))
    if error != ErrorCode.none:
        return error_response(ctx, request, error)
    return ctx.response(
        throttle_time=datetime.timedelta(0), error_code=ErrorCode.none, client_instance_id=instance.instance_id,
        subscription_id=instance.subscription_id, accepted_compression_types=SUPPORTED_COMPRESSION_TYPES,
        push_interval=datetime.timedelta(milliseconds=instance.push_interval_ms),
        telemetry_max_bytes=ctx.node.client_metrics.telemetry_max_bytes, delta_temporality=True,
        requested_metrics=instance.metrics)


def client_attributes(ctx) -> dict:
    """Kafka: ClientMetricsInstanceMetadata -- what CLIENT_METRICS ``match`` patterns select on."""
    software = getattr(ctx.session, "client_software", None) or (None, None)
    port = getattr(ctx.session, "client_port", None)
    return {"client_id": ctx.header.client_id, "client_software_name": software[0],
            "client_software_version": software[1], "client_source_address": ctx.host if ctx.client_host else None,
            "client_source_port": None if port is None else str(port)}


def error_response(ctx, request, code):
    """Kafka: GetTelemetrySubscriptionsRequest.getErrorResponse -- the error, every other field its default."""
    return ctx.response(throttle_time=datetime.timedelta(0), error_code=code, client_instance_id=uuid.UUID(int=0),
                        subscription_id=0, accepted_compression_types=(), push_interval=datetime.timedelta(0),
                        telemetry_max_bytes=0, delta_temporality=False, requested_metrics=())
