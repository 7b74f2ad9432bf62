"""CreateTopics checks a topic in the order Kafka's controller does (ReplicationControlManager.
createTopics): its name, that it does not exist, its configs, and only then its partitions and
replicas, so a request wrong in several ways gets the error Kafka gives."""

from __future__ import annotations

import datetime

import pytest

from shim.errors import ErrorCode

from apis_support import call


async def create(node, name, rf=1, configs=(), validate_only=False):
    def build(m):
        topic = m.CreatableTopic(name=name, num_partitions=1, replication_factor=rf, assignments=(),
                                 configs=tuple(m.CreatableTopicConfig(name=k, value=v) for k, v in configs))
        return m.CreateTopicsRequest(topics=(topic,), timeout=datetime.timedelta(seconds=5),
                                     validate_only=validate_only)
    (result,) = (await call(node, 19, 7, build)).topics
    return result.error_code, result.error_message


@pytest.mark.parametrize("validate_only", [False, True])
async def test_an_existing_topic_is_topic_already_exists_whatever_its_replication_factor(node, validate_only):
    node.logs.create_topic("t", 1)
    assert await create(node, "t", rf=2, validate_only=validate_only) == (
        ErrorCode.topic_already_exists, "Topic 't' already exists.")


async def test_a_bad_config_is_reported_before_the_replication_factor(node):
    code, _ = await create(node, "u", rf=2, configs=[("cleanup.policy", "nope")])
    assert code == ErrorCode.invalid_config
    assert (await create(node, "u", rf=2))[0] == ErrorCode.invalid_replication_factor
    assert (await create(node, "a b", rf=2))[0] == ErrorCode.invalid_topic_exception


async def test_a_name_given_twice_is_answered_once_and_not_created(node):
    """Kafka: ControllerApis.createTopics takes such names out of the request, then answers each once."""
    def build(m):
        topic = lambda name, n: m.CreatableTopic(name=name, num_partitions=n, replication_factor=1,  # noqa: E731
                                                 assignments=(), configs=())
        return m.CreateTopicsRequest(topics=(topic("d", 1), topic("ok", 1), topic("d", 2)),
                                     timeout=datetime.timedelta(seconds=5), validate_only=False)
    r = await call(node, 19, 7, build)
    assert [(t.name, t.error_code, t.error_message) for t in r.topics] == [
        ("ok", ErrorCode.none, None), ("d", ErrorCode.invalid_request, "Duplicate topic name.")]
    assert "ok" in node.logs.topics and "d" not in node.logs.topics
