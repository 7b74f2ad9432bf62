"""AlterUserScramCredentials (51), v0 (KIP-554).

Upsertions carry SaltedPassword (the client salts and hashes); the broker keeps salt, StoredKey,
ServerKey and iterations, durable in the data directory before the answer. Validation and
messages as Kafka's ScramControlManager.alterCredentials: a user named twice in one request
(whatever the mechanisms) gets DUPLICATE_RESOURCE, an empty name or iterations outside 4096-16384
UNACCEPTABLE_CREDENTIAL, an unknown mechanism UNSUPPORTED_SASL_MECHANISM, deleting what does not
exist RESOURCE_NOT_FOUND. Deleting a configured user's credential lasts until the next start,
which configures it again. Open to every client: no ACLs yet (Kafka requires ALTER on CLUSTER).
"""

from ._pace import Pacer
from .registry import api


@api(51, "AlterUserScramCredentials", 0, 0)
async def handle(ctx, request):
    # Paced: 2 MiB of distinct users took 0.5-1.7 CPU s in one turn of the loop (each upsertion's keys
    # derived, every credential encoded); the validated change is still written in one go, as Kafka's one batch.
    pace = Pacer()
    results = await ctx.node.credentials.alter(
        [(d.name, d.mechanism) async for d in pace.each(request.deletions)],
        [(u.name, u.mechanism, u.iterations, u.salt, u.salted_password) async for u in pace.each(request.upsertions)],
        pace)
    return ctx.response(results=tuple([
        ctx.make("AlterUserScramCredentialsResult", user=user, error_code=code, error_message=message)
        async for user, code, message in pace.each(results)]))


def error_response(ctx, request, code):
    """Kafka: the error on every user named."""
    users = dict.fromkeys([d.name for d in request.deletions] + [u.name for u in request.upsertions])
    return ctx.response(results=tuple(
        ctx.make("AlterUserScramCredentialsResult", user=u, error_code=code, error_message=None) for u in users))
