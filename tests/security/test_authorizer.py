"""StandardAuthorizer's decisions, case by case as Kafka's StandardAuthorizerData makes them."""

from __future__ import annotations

import pytest

from shim.security.acls import AclBinding, AclFilter, AclStore
from shim.security.acls import _index as acls_index
from shim.security.acls import AclOperation as O
from shim.security.acls import AclPermissionType as A
from shim.security.acls import PatternType as P
from shim.security.acls import ResourceType as R
from shim.security.authorizer import StandardAuthorizer, bitfield, parse_super_users

ALICE, BOB = "User:alice", "User:bob"
HOST = "127.0.0.1"


def acl(name, op, permission=A.ALLOW, principal=ALICE, rtype=R.TOPIC, pattern=P.LITERAL, host="*"):
    return AclBinding(rtype, name, pattern, principal, host, op, permission)


@pytest.fixture
def authz(tmp_path):
    count = iter(range(100))

    def make(*bindings, super_users="", allow_if_no_acl=False):
        directory = tmp_path / str(next(count))
        directory.mkdir()
        store = AclStore(directory)
        store.change(add=list(bindings))
        return StandardAuthorizer(store, parse_super_users(super_users), allow_if_no_acl)
    return make


def test_literal_prefixed_and_wildcard_patterns(authz):
    a = authz(acl("orders", O.READ), acl("pay-", O.WRITE, pattern=P.PREFIXED), acl("*", O.DELETE))
    assert a.authorize(ALICE, HOST, O.READ, R.TOPIC, "orders")
    assert not a.authorize(ALICE, HOST, O.READ, R.TOPIC, "orders2")  # a literal is not a prefix
    assert a.authorize(ALICE, HOST, O.WRITE, R.TOPIC, "pay-in")
    assert not a.authorize(ALICE, HOST, O.WRITE, R.TOPIC, "pa")
    assert a.authorize(ALICE, HOST, O.DELETE, R.TOPIC, "anything")
    assert not a.authorize(ALICE, HOST, O.READ, R.GROUP, "orders")  # another resource type


def test_deny_wins_and_a_deny_does_not_take_describe(authz):
    a = authz(acl("t", O.ALL), acl("t", O.WRITE, A.DENY), acl("u", O.READ), acl("u", O.READ, A.DENY))
    assert not a.authorize(ALICE, HOST, O.WRITE, R.TOPIC, "t")
    assert a.authorize(ALICE, HOST, O.READ, R.TOPIC, "t")
    assert not a.authorize(ALICE, HOST, O.READ, R.TOPIC, "u")
    # an ALLOW READ implies DESCRIBE, a DENY READ does not deny it
    assert a.authorize(ALICE, HOST, O.DESCRIBE, R.TOPIC, "u")


def test_implied_operations_come_from_allow_acls_only(authz):
    a = authz(acl("w", O.WRITE), acl("c", O.ALTER_CONFIGS), acl("x", O.CREATE))
    assert a.authorize(ALICE, HOST, O.DESCRIBE, R.TOPIC, "w")
    assert a.authorize(ALICE, HOST, O.DESCRIBE_CONFIGS, R.TOPIC, "c")
    assert not a.authorize(ALICE, HOST, O.DESCRIBE, R.TOPIC, "c")  # ALTER_CONFIGS does not imply DESCRIBE
    assert not a.authorize(ALICE, HOST, O.DESCRIBE, R.TOPIC, "x")  # nor does CREATE
    assert not a.authorize(ALICE, HOST, O.READ, R.TOPIC, "w")


def test_principal_and_host_matching(authz):
    a = authz(acl("t", O.READ, principal="User:*"), acl("h", O.READ, host="10.0.0.1"))
    assert a.authorize(BOB, HOST, O.READ, R.TOPIC, "t")
    assert not a.authorize(ALICE, HOST, O.READ, R.TOPIC, "h")
    assert a.authorize(ALICE, "10.0.0.1", O.READ, R.TOPIC, "h")


def test_no_acl_found_and_super_users(authz):
    a = authz(acl("t", O.READ, principal=BOB), super_users="User:admin; User:root",
              allow_if_no_acl=True)
    assert a.authorize(ALICE, HOST, O.WRITE, R.TOPIC, "free")  # no ACL names it: allowed
    assert not a.authorize(ALICE, HOST, O.READ, R.TOPIC, "t")  # some ACL names it: denied
    strict = authz(acl("t", O.ALL, A.DENY, principal="User:root"), super_users="User:admin;User:root")
    assert not strict.authorize(ALICE, HOST, O.WRITE, R.TOPIC, "free")
    assert strict.authorize("User:root", HOST, O.WRITE, R.TOPIC, "t")  # a super user passes a DENY


def test_super_users_must_name_a_principal_type():
    with pytest.raises(ValueError, match="principalType:principalName"):
        parse_super_users("User:admin;admin")


def test_authorize_by_resource_type(authz):
    """Kafka's Authorizer.authorizeByResourceType, which InitProducerId asks for WRITE on TOPIC."""
    assert authz(acl("t", O.WRITE)).authorize_by_resource_type(ALICE, HOST, O.WRITE, R.TOPIC)
    assert not authz(acl("t", O.READ)).authorize_by_resource_type(ALICE, HOST, O.WRITE, R.TOPIC)
    denied_by_prefix = authz(acl("abc", O.WRITE), acl("ab", O.WRITE, A.DENY, pattern=P.PREFIXED))
    assert not denied_by_prefix.authorize_by_resource_type(ALICE, HOST, O.WRITE, R.TOPIC)
    denied_literal = authz(acl("abc", O.WRITE), acl("abc", O.WRITE, A.DENY))
    assert not denied_literal.authorize_by_resource_type(ALICE, HOST, O.WRITE, R.TOPIC)
    assert authz(acl("*", O.ALL)).authorize_by_resource_type(ALICE, HOST, O.WRITE, R.TOPIC)


def test_authorized_operations_bitfield(authz):
    a = authz(acl("t", O.READ), acl("t", O.ALTER_CONFIGS))
    ops = a.authorized_operations(ALICE, HOST, R.TOPIC, "t")
    assert ops == bitfield([O.READ, O.DESCRIBE, O.ALTER_CONFIGS, O.DESCRIBE_CONFIGS])


def test_filters_match_as_kafka(authz):
    lit, pre, wild = acl("foo", O.READ), acl("fo", O.READ, pattern=P.PREFIXED), acl("*", O.READ)
    a = authz(lit, pre, wild, acl("foo", O.WRITE, A.DENY, principal=BOB, rtype=R.GROUP))
    assert a.acls(AclFilter(R.TOPIC, "foo", P.MATCH)) == [lit, pre, wild]
    assert a.acls(AclFilter(R.TOPIC, "foo", P.ANY)) == [lit]
    assert a.acls(AclFilter(R.TOPIC, None, P.PREFIXED)) == [pre]
    assert a.acls(AclFilter(principal=BOB)) == [a.acls(AclFilter(R.GROUP))[0]]
    assert a.acls(AclFilter(operation=O.WRITE, permission=A.ALLOW)) == []


def test_acls_survive_a_restart(tmp_path):
    store = AclStore(tmp_path)
    store.change(add=[acl("t", O.READ), acl("g", O.READ, rtype=R.GROUP)])
    store.change(remove={acl("t", O.READ)})
    assert list(AclStore(tmp_path)) == [acl("g", O.READ, rtype=R.GROUP)]


def test_one_line_acls():
    from shim.security.acls import acl
    assert acl("User:alice", "write", topic="orders") == AclBinding(R.TOPIC, "orders", P.LITERAL, ALICE, "*", O.WRITE,
                                                                     A.ALLOW)
    assert acl("User:ops", O.ALTER, cluster=True, deny=True) == AclBinding(R.CLUSTER, "kafka-cluster", P.LITERAL,
                                                                            "User:ops", "*", O.ALTER, A.DENY)
    assert acl(ALICE, "READ", group="app-", prefixed=True).pattern_type is P.PREFIXED
    with pytest.raises(ValueError, match="exactly one resource"):
        acl(ALICE, "READ", topic="t", group="g")


def test_configured_by_kafkas_property_names(tmp_path):
    from shim.configs.properties import config_from_properties, read_properties_file
    from shim.node import Node
    (tmp_path / "server.properties").write_text(
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
        "super.users=User:admin;User:CN=broker\nallow.everyone.if.no.acl.found=true\n")
    config = config_from_properties(read_properties_file(tmp_path / "server.properties")).replace(data_dir=tmp_path)
    node = Node(config)
    try:
        assert node.authorizer.super_users == {"User:admin", "User:CN=broker"}
        assert node.authorizer.authorize(ALICE, HOST, O.WRITE, R.TOPIC, "t")  # no ACL at all: allowed
    finally:
        node.close()
    with pytest.raises(ValueError, match="only org.apache.kafka.metadata.authorizer.StandardAuthorizer"):
        config_from_properties({"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
    assert config_from_properties({}).authorizer_class_name == ""


def _reference(bindings, principal, host, op, rtype, name, allow_if_no_acl):
    """StandardAuthorizerData.authorize by a plain scan, for comparison with the indexed lookup."""
    from shim.security.authorizer import _result
    applying = [b for b in bindings if b.resource_type is rtype and (
        (b.pattern_type is P.LITERAL and b.name in (name, "*")) or
        (b.pattern_type is P.PREFIXED and name.startswith(b.name)))]
    results = [_result(b, principal, host, op) for b in applying]
    return A.DENY not in results and (A.ALLOW in results or (not applying and allow_if_no_acl))


def test_the_index_decides_as_a_scan_does(tmp_path):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    names = st.text("ab*", min_size=1, max_size=3)
    bindings = st.builds(AclBinding, st.sampled_from([R.TOPIC, R.GROUP]), names, st.sampled_from([P.LITERAL, P.PREFIXED]),
                         st.sampled_from([ALICE, BOB, "User:*"]), st.sampled_from(["*", HOST]),
                         st.sampled_from([O.ALL, O.READ, O.WRITE, O.DESCRIBE, O.ALTER_CONFIGS]),
                         st.sampled_from([A.ALLOW, A.DENY]))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(bindings, max_size=8), st.sampled_from([R.TOPIC, R.GROUP]), st.text("ab", min_size=1, max_size=4),
           st.sampled_from([O.READ, O.WRITE, O.DESCRIBE, O.DESCRIBE_CONFIGS]), st.booleans())
    def check(acls, rtype, name, op, allow_if_no_acl):
        store = AclStore(tmp_path)
        store.bindings = dict.fromkeys(acls)
        store.by_pattern, store.prefix_lengths = acls_index(store.bindings)
        got = StandardAuthorizer(store, frozenset(), allow_if_no_acl).authorize(ALICE, HOST, op, rtype, name)
        assert got == _reference(acls, ALICE, HOST, op, rtype, name, allow_if_no_acl)

    check()


async def test_an_in_process_broker_with_users_and_acls(tmp_path):
    """shim.Broker: a secured broker and its ACLs in a few lines; a bad ACL is refused as CreateAcls would."""
    from shim import Broker
    from shim.security.acls import acl
    async with Broker(data_dir=tmp_path, listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_users=("alice:pw",),
                      authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer") as broker:
        broker.add_acls(acl(ALICE, "WRITE", topic="orders"))
        assert broker.node.authorizer.authorize(ALICE, HOST, O.WRITE, R.TOPIC, "orders")
        with pytest.raises(ValueError, match="only valid name for the CLUSTER resource"):
            broker.add_acls(AclBinding(R.CLUSTER, "mine", P.LITERAL, ALICE, "*", O.ALTER, A.ALLOW))
        broker.remove_acls(acl(ALICE, "WRITE", topic="orders"))
        assert not broker.node.authorizer.authorize(ALICE, HOST, O.WRITE, R.TOPIC, "orders")


@pytest.mark.parametrize("peer, host", [("/127.0.0.1", "127.0.0.1"), ("/::1", "0:0:0:0:0:0:0:1"),
                                        ("/::ffff:10.0.0.7", "10.0.0.7"), ("/fe80::1:abcd", "fe80:0:0:0:0:0:1:abcd")])
def test_acl_hosts_name_a_client_as_java_does(peer, host):
    """Kafka matches an ACL's host against InetAddress.getHostAddress() of the client."""
    from shim.apis.context import RequestContext
    assert RequestContext(None, None, peer).host == host
