"""Apache Kafka's AlterUserScramCredentialsRequestTest and DescribeUserScramCredentialsRequestTest,
replayed as they are written, with raw requests (compat.wire): what no Admin can send (an empty user
name, mechanism 0 or 10, one credential named twice in one request) and the answer per user, with
Kafka's error codes and messages. No JVM; the user names carry the run's prefix, so the scenarios
hold on any broker."""

from __future__ import annotations

import importlib

import pytest

from shim.errors import ErrorCode as E
from shim.protocol.messages import request_class

ALTER, DESCRIBE = 51, 50
SHA256, SHA512, UNKNOWN = 1, 2, 0
SALT, SALTED = b"salt", b"saltedPassword"


def _module(key: int):
    return importlib.import_module(request_class(key, 0).__module__)


@pytest.fixture
def users(compat_target):
    p = compat_target.prefix + "-scramreq-"
    return {name: p + name for name in ("user1", "user2", "user3@user3.com", "user4", "user5", "user6", "unknownUser")}


def alter(wire, deletions=(), upsertions=()):
    m = _module(ALTER)
    r = wire.call(ALTER, 0, deletions=tuple(m.ScramCredentialDeletion(name=n, mechanism=mech) for n, mech in deletions),
                  upsertions=tuple(m.ScramCredentialUpsertion(name=n, mechanism=mech, iterations=i, salt=SALT,
                                                              salted_password=SALTED) for n, mech, i in upsertions))
    return [(x.user, x.error_code, x.error_message) for x in r.results]


def describe(wire, names):
    m = _module(DESCRIBE)
    r = wire.call(DESCRIBE, 0, users=None if names is None else tuple(m.UserName(name=n) for n in names))
    return r.error_code, [(x.user, x.error_code, x.error_message,
                           sorted((c.mechanism, c.iterations) for c in x.credential_infos)) for x in r.results]


def test_alter_nothing_and_describe_nothing(wire, users):
    """testAlterNothing, testDescribeNothing and testDescribeWithNull (no credential of this run exists)."""
    assert alter(wire) == []
    for names in ((), None):
        code, results = describe(wire, names)
        assert code == E.none and [r for r in results if r[0] in users.values()] == []


def test_alter_same_thing_twice(wire, users):
    """testAlterSameThingTwice: one credential named twice is DUPLICATE_RESOURCE for its user."""
    u1, u2 = users["user1"], users["user2"]
    assert alter(wire, upsertions=[(u1, SHA256, 4096), (u2, SHA256, 4096)]) == [(u1, E.none, None), (u2, E.none, None)]
    for deletions, upsertions in (([(u1, SHA256), (u1, SHA256)], [(u2, SHA256, 4096), (u2, SHA256, 4096)]),
                                  ([(u1, SHA256), (u2, SHA256)], [(u1, SHA256, 4096), (u2, SHA256, 4096)])):
        results = alter(wire, deletions, upsertions)
        assert sorted(r[0] for r in results) == [u1, u2] and {r[1] for r in results} == {E.duplicate_resource}


def test_alter_empty_user(wire):
    """testAlterEmptyUser: one result per request, UNACCEPTABLE_CREDENTIAL "Username must not be empty"."""
    for deletions, upsertions in (([("", SHA256)], []), ([], [("", SHA256, 4096)]),
                                  ([("", SHA256), ("", SHA256)], [("", SHA256, 4096)])):
        assert alter(wire, deletions, upsertions) == [("", E.unacceptable_credential, "Username must not be empty")]


def test_alter_unknown_mechanism(wire, users):
    """testAlterUnknownMechanism: a user with any unknown mechanism (0 or 10) fails whole, valid ones too."""
    u1, u2, u4, u5, u6 = (users[n] for n in ("user1", "user2", "user4", "user5", "user6"))
    results = alter(wire, [(u1, UNKNOWN), (u1, SHA256), (u2, 10)],
                    [(u4, UNKNOWN, 8192), (u4, SHA256, 8192), (u5, 10, 8192), (u6, UNKNOWN, 8192)])
    assert sorted(results) == sorted((u, E.unsupported_sasl_mechanism, "Unknown SCRAM mechanism")
                                     for u in (u1, u2, u4, u5, u6))


def test_iterations_and_missing_credentials(wire, users):
    """testAlterTooFewIterations, testAlterTooManyIterations, testDeleteSomethingThatDoesNotExist,
    and DescribeUserScramCredentialsRequestTest's testDescribeSameUserTwice and testUnknownUser."""
    u1, unknown = users["user3@user3.com"], users["unknownUser"]
    assert alter(wire, upsertions=[(u1, SHA256, 1)]) == [(u1, E.unacceptable_credential, "Too few iterations")]
    assert alter(wire, upsertions=[(u1, SHA256, 2**31 - 1)]) == [(u1, E.unacceptable_credential, "Too many iterations")]
    [(user, code, _)] = alter(wire, deletions=[(u1, SHA256)])
    assert (user, code) == (u1, E.resource_not_found)
    assert describe(wire, [u1, u1]) == (E.none, [(u1, E.duplicate_resource, "Cannot describe SCRAM credentials for "
                                                  f"the same user twice in a single request: {u1}", [])])
    assert describe(wire, [unknown]) == (E.none, [(unknown, E.resource_not_found, "Attempt to describe a user "
                                                   f"credential that does not exist: {unknown}", [])])
