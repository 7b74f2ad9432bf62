"""CreateAcls, DescribeAcls and DeleteAcls through the dispatch seam: Kafka's validation, filters,
SECURITY_DISABLED without an authorizer, the cluster permission they need, and durability."""

from __future__ import annotations

import pytest

from shim.apis.dispatch import dispatch
from shim.errors import ErrorCode as E
from shim.protocol.framing import FrameError
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module
from shim.security.session import ConnectionSession

from node_support import NodeFactory

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
TOPIC, GROUP, CLUSTER, TXN = 2, 3, 4, 5
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
READ, WRITE, ALTER, DESCRIBE = 3, 4, 7, 8
DENY, ALLOW = 2, 3
ADMIN = ConnectionSession("PLAINTEXT", "User:admin")
ALICE = ConnectionSession("PLAINTEXT", "User:alice")


@pytest.fixture
def nodes(tmp_path):
    factory = NodeFactory(tmp_path)
    yield factory
    factory.crash_all()


async def call(node, key, version, build, session=ADMIN):
    m = request_module(key, version)
    raw = await dispatch(node, encode_request(RequestHeader(key, version, 7, "tests"), build(m)), "/127.0.0.1", session)
    return decode_response(raw, key, version)[1]


def creation(rtype, name, op, permission=ALLOW, principal="User:alice", pattern=LITERAL, host="*"):
    return dict(resource_type=rtype, resource_name=name, resource_pattern_type=pattern, principal=principal,
                host=host, operation=op, permission_type=permission)


async def create(node, *creations, version=3, session=ADMIN):
    r = await call(node, 30, version, lambda m: m.CreateAclsRequest(creations=tuple(m.AclCreation(**c) for c in creations)),
                   session)
    return [(x.error_code, x.error_message) for x in r.results]


def _filter(rtype=ANY, name=None, pattern=ANY, principal=None, host=None, op=ANY, permission=ANY):
    return dict(resource_type_filter=rtype, resource_name_filter=name, pattern_type_filter=pattern,
                principal_filter=principal, host_filter=host, operation=op, permission_type=permission)


async def describe(node, version=3, session=ADMIN, **f):
    r = await call(node, 29, version, lambda m: m.DescribeAclsRequest(**_filter(**f)), session)
    return r.error_code, {(x.resource_type, x.resource_name, x.pattern_type): {
        (a.principal, a.host, a.operation, a.permission_type) for a in x.acls} for x in r.resources}


async def delete(node, *filters, version=3, session=ADMIN):
    r = await call(node, 31, version, lambda m: m.DeleteAclsRequest(filters=tuple(m.DeleteAclsFilter(**_filter(**f))
                                                                                  for f in filters)), session)
    return [(x.error_code, x.error_message, sorted((a.resource_name, a.operation) for a in x.matching_acls))
            for x in r.filter_results]


def secured(nodes, **overrides):
    return nodes(authorizer_class_name=STANDARD, super_users="User:admin", **overrides)


async def test_without_an_authorizer_the_acl_apis_answer_security_disabled(nodes):
    node = nodes()
    assert await create(node, creation(TOPIC, "t", READ)) == [(E.security_disabled, "No Authorizer is configured.")]
    assert (await describe(node))[0] == E.security_disabled
    assert await delete(node, {}) == [(E.security_disabled, "No Authorizer is configured.", [])]


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_create_describe_delete(nodes, version):
    node = secured(nodes)
    assert await create(node, creation(TOPIC, "orders", READ), creation(TOPIC, "pay-", WRITE, pattern=PREFIXED),
                        creation(GROUP, "g", READ), creation(TOPIC, "*", DESCRIBE, DENY, principal="User:*"),
                        version=version) == [(E.none, None)] * 4
    assert await create(node, creation(TOPIC, "orders", READ), version=version) == [(E.none, None)]  # again: fine
    code, everything = await describe(node, version)
    assert code == E.none and len(everything) == 4
    assert everything[(TOPIC, "orders", LITERAL)] == {("User:alice", "*", READ, ALLOW)}
    # MATCH: every pattern that applies to the name
    _, matched = await describe(node, version, rtype=TOPIC, name="pay-in", pattern=MATCH)
    assert set(matched) == {(TOPIC, "pay-", PREFIXED), (TOPIC, "*", LITERAL)}
    _, groups = await describe(node, version, rtype=GROUP)
    assert set(groups) == {(GROUP, "g", LITERAL)}
    got = await delete(node, dict(rtype=TOPIC, pattern=MATCH, name="orders"), dict(rtype=GROUP, name="g"),
                       version=version)
    assert got == [(E.none, None, [("*", DESCRIBE), ("orders", READ)]), (E.none, None, [("g", READ)])]
    assert set((await describe(node, version))[1]) == {(TOPIC, "pay-", PREFIXED)}


async def test_creations_are_validated_as_kafka(nodes):
    node = secured(nodes)
    got = await create(node, creation(CLUSTER, "my-cluster", ALTER), creation(TOPIC, "", READ),
                       creation(ANY, "t", READ), creation(TOPIC, "t", READ, pattern=MATCH),
                       creation(TOPIC, "t", 1), creation(TOPIC, "t", READ, permission=ANY),
                       creation(TOPIC, "t", READ, principal="alice"), creation(CLUSTER, "kafka-cluster", ALTER))
    assert got == [
        (E.invalid_request, "The only valid name for the CLUSTER resource is kafka-cluster"),
        (E.invalid_request, "Invalid empty resource name"),
        (E.invalid_request, "Invalid resourceType ANY"),
        (E.invalid_request, "Invalid patternType MATCH"),
        (E.invalid_request, "Invalid operation ANY"),
        (E.invalid_request, "Invalid permissionType ANY"),
        (E.invalid_request, "Could not parse principal from `alice` (no colon is present separating the principal "
                            "type from the principal name)"),
        (E.none, None)]
    assert set((await describe(node))[1]) == {(CLUSTER, "kafka-cluster", LITERAL)}


async def test_delete_filters_kafka_does_not_know_are_invalid_request(nodes):
    node = secured(nodes)
    await create(node, creation(TOPIC, "t", READ))
    assert await delete(node, dict(rtype=99), dict(op=99), dict()) == [
        (E.invalid_request, "Unknown patternFilter.", []), (E.invalid_request, "Unknown entryFilter.", []),
        (E.none, None, [("t", READ)])]


@pytest.mark.parametrize("key, build", [
    (29, lambda m: m.DescribeAclsRequest(**_filter(op=0))),
    (30, lambda m: m.CreateAclsRequest(creations=(m.AclCreation(**creation(0, "t", READ)),))),
    (31, lambda m: m.DeleteAclsRequest(filters=(m.DeleteAclsFilter(**_filter(pattern=0)),))),
])
async def test_unknown_elements_close_the_connection(nodes, key, build):
    with pytest.raises(FrameError, match="UNKNOWN"):
        await call(secured(nodes), key, 3, build)


async def test_the_acl_apis_need_cluster_describe_or_alter(nodes):
    node = secured(nodes)
    assert await create(node, creation(TOPIC, "t", READ), session=ALICE) == [(E.cluster_authorization_failed, None)]
    assert (await describe(node, session=ALICE))[0] == E.cluster_authorization_failed
    await create(node, creation(CLUSTER, "kafka-cluster", DESCRIBE))
    assert (await describe(node, session=ALICE))[0] == E.none
    assert await delete(node, {}, session=ALICE) == [(E.cluster_authorization_failed, None, [])]
    await create(node, creation(CLUSTER, "kafka-cluster", ALTER))
    assert await create(node, creation(TOPIC, "t", READ), session=ALICE) == [(E.none, None)]


async def test_acls_survive_kill_9(nodes):
    node = secured(nodes)
    await create(node, creation(TOPIC, "a", READ), creation(TOPIC, "b", WRITE))
    await delete(node, dict(name="a"))
    nodes.crash(node)
    node = secured(nodes)
    assert set((await describe(node))[1]) == {(TOPIC, "b", LITERAL)}


async def test_version_0_knows_literal_patterns_only(nodes):
    """Kafka 3.9 serves v0 of the three APIs: no pattern type on the wire, LITERAL meant."""
    node = secured(nodes, kafka_version="3.9")
    await create(node, creation(TOPIC, "pre-", READ, pattern=PREFIXED))
    r = await call(node, 30, 0, lambda m: m.CreateAclsRequest(creations=(m.AclCreation(
        resource_type=TOPIC, resource_name="lit", principal="User:alice", host="*", operation=WRITE,
        permission_type=ALLOW),)))
    assert [x.error_code for x in r.results] == [E.none]
    r = await call(node, 29, 0, lambda m: m.DescribeAclsRequest(
        resource_type_filter=ANY, resource_name_filter=None, principal_filter=None, host_filter=None, operation=ANY,
        permission_type=ANY))
    assert [(x.resource_type, x.resource_name, [a.operation for a in x.acls]) for x in r.resources] == [
        (TOPIC, "lit", [WRITE])]
    assert set((await describe(node))[1]) == {(TOPIC, "pre-", PREFIXED), (TOPIC, "lit", LITERAL)}
    r = await call(node, 31, 0, lambda m: m.DeleteAclsRequest(filters=(m.DeleteAclsFilter(
        resource_type_filter=ANY, resource_name_filter=None, principal_filter=None, host_filter=None, operation=ANY,
        permission_type=ANY),)))
    assert [(a.resource_name, a.operation) for a in r.filter_results[0].matching_acls] == [("lit", WRITE)]
    assert set((await describe(node))[1]) == {(TOPIC, "pre-", PREFIXED)}


async def test_version_0_is_not_served_by_kafka_4(nodes):
    node = secured(nodes, kafka_version="4.0")
    with pytest.raises(FrameError, match="unsupported version"):
        await call(node, 29, 0, lambda m: m.DescribeAclsRequest(
            resource_type_filter=ANY, resource_name_filter=None, principal_filter=None, host_filter=None,
            operation=ANY, permission_type=ANY))
