"""Admin client ACLs against a broker with an authorizer.

The shared single-node broker has no authorizer (ACL calls give SECURITY_DISABLED
there), so this module starts its own node through the rig with KRaft's
StandardAuthorizer; PLAINTEXT connections (ANONYMOUS, used by the brokers too) are
super users, the SASL PLAIN user is not and is denied unless an ACL allows it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from aiokafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AIOKafkaAdminClient,
    ConfigResource,
    NewTopic,
    ResourcePattern,
    ResourcePatternType,
    ResourceType,
)
from aiokafka.consumer import AIOKafkaConsumer
from aiokafka.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    SecurityDisabled,
    TopicAuthorizationFailedError,
)
from aiokafka.producer import AIOKafkaProducer
from aiokafka.structs import TopicPartition
from tests.conftest import START_TIMEOUT
from tests.support.wait import eventually
from tools.kafka.fetch import ensure_jars
from tools.kafka.rig import KafkaCluster


@pytest.fixture(scope="module")
def secured() -> Iterator[KafkaCluster]:
    ensure_jars()
    cluster = KafkaCluster(
        1,
        listeners=["PLAINTEXT", "SASL_PLAINTEXT"],
        extra_config={
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:ANONYMOUS",
        },
        label="admin-acl",
    ).start(timeout=START_TIMEOUT)
    yield cluster
    cluster.stop()


@pytest.fixture
async def admin(secured: KafkaCluster) -> AsyncIterator[AIOKafkaAdminClient]:
    async with AIOKafkaAdminClient(
        bootstrap_servers=secured.bootstrap_servers, request_timeout_ms=15000
    ) as client:
        yield client


@pytest.fixture
async def user_admin(secured: KafkaCluster) -> AsyncIterator[AIOKafkaAdminClient]:
    user, password = secured.users["PLAIN"]
    async with AIOKafkaAdminClient(
        bootstrap_servers=secured.bootstrap("SASL_PLAINTEXT"),
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username=user,
        sasl_plain_password=password,
        request_timeout_ms=15000,
    ) as client:
        yield client


async def _acls(
    admin: AIOKafkaAdminClient, acl_filter: AclBindingFilter, expected: set[AclBinding]
) -> set[AclBinding]:
    # DescribeAcls reads the broker's copy, updated from the metadata log just after
    # the controller committed the change; poll until it caught up.
    for _ in range(50):
        got = set(await admin.describe_acls(acl_filter))
        if got == expected:
            break
        await asyncio.sleep(0.1)
    return got


async def test_acl_create_describe_enforce_delete(
    admin: AIOKafkaAdminClient, user_admin: AIOKafkaAdminClient, secured: KafkaCluster
) -> None:
    topic = f"acl-topic-{uuid.uuid4().hex[:8]}"
    await admin.create_topics([NewTopic(topic, 1, 1)], raise_errors=True)
    principal = f"User:{secured.users['PLAIN'][0]}"

    async def user_can_describe() -> bool:
        try:
            await user_admin.describe_topics([topic], raise_errors=True)
        except TopicAuthorizationFailedError:
            return False
        return True

    assert not await user_can_describe()

    allow = AclBinding(
        ResourcePattern(ResourceType.TOPIC, topic), principal, "*", AclOperation.DESCRIBE
    )
    prefixed = AclBinding(
        ResourcePattern(ResourceType.TOPIC, "acl-", ResourcePatternType.PREFIXED),
        principal,
        "*",
        AclOperation.READ,
        AclPermissionType.DENY,
    )
    await admin.create_acls([allow, prefixed])

    by_principal = AclBindingFilter(principal=principal)
    assert await _acls(admin, by_principal, {allow, prefixed}) == {allow, prefixed}
    by_match = await admin.describe_acls(
        AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.MATCH)
    )
    assert set(by_match) == {allow, prefixed}
    only_literal = await admin.describe_acls(
        AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL)
    )
    assert only_literal == [allow]

    # Second path: the authorizer now lets the SASL user describe the topic.
    assert await eventually(user_can_describe, bool)
    # ...but it may not administer ACLs itself.
    with pytest.raises(ClusterAuthorizationFailedError):
        await user_admin.describe_acls()

    deleted = await admin.delete_acls(
        [allow.to_filter(), AclBindingFilter(principal="User:nobody")]
    )
    assert deleted == [[allow], []]
    assert await _acls(admin, by_principal, {prefixed}) == {prefixed}
    assert not await eventually(user_can_describe, lambda allowed: not allowed)

    deleted = await admin.delete_acls([AclBindingFilter(principal=principal)])
    assert deleted == [[prefixed]]
    assert await _acls(admin, by_principal, set()) == set()
    await admin.delete_topics([topic])


async def _user_reads(secured: KafkaCluster, tp: TopicPartition) -> bool:
    """Whether the SASL user's consumer (no group) fetches ``tp``'s first record.

    False when the broker refuses the fetch with TOPIC_AUTHORIZATION_FAILED; neither
    within 10 s is a test failure.
    """
    user, password = secured.users["PLAIN"]
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=secured.bootstrap("SASL_PLAINTEXT"),
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username=user,
        sasl_plain_password=password,
        auto_offset_reset="earliest",
        request_timeout_ms=10000,
    )
    await consumer.start()
    try:
        consumer.assign([tp])
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while loop.time() < deadline:
            try:
                batches = await consumer.getmany(timeout_ms=500)
            except TopicAuthorizationFailedError:
                return False
            if batches.get(tp):
                assert batches[tp][0].value == b"secret"
                return True
        raise AssertionError(f"the user's fetch of {tp} neither succeeded nor was refused")
    finally:
        await consumer.stop()


async def test_deny_binding_denies_the_fetch(
    admin: AIOKafkaAdminClient, user_admin: AIOKafkaAdminClient, secured: KafkaCluster
) -> None:
    prefix = f"deny-{uuid.uuid4().hex[:8]}-"
    topic = prefix + "t"
    tp = TopicPartition(topic, 0)
    await admin.create_topics([NewTopic(topic, 1, 1)], raise_errors=True)
    async with AIOKafkaProducer(bootstrap_servers=secured.bootstrap_servers) as producer:
        await producer.send_and_wait(topic, b"secret", partition=0)
    principal = f"User:{secured.users['PLAIN'][0]}"
    allows = [
        AclBinding(ResourcePattern(ResourceType.TOPIC, topic), principal, "*", op)
        for op in (AclOperation.READ, AclOperation.DESCRIBE)
    ]
    deny = AclBinding(
        ResourcePattern(ResourceType.TOPIC, prefix, ResourcePatternType.PREFIXED),
        principal,
        "*",
        AclOperation.READ,
        AclPermissionType.DENY,
    )

    async def reads() -> bool:
        return await _user_reads(secured, tp)

    try:
        await admin.create_acls(allows)
        assert await eventually(reads, bool)

        # A DENY wins over the literal ALLOW: the same fetch is now refused...
        await admin.create_acls([deny])
        assert not await eventually(reads, lambda allowed: not allowed)
        # ...while DESCRIBE, which the DENY does not name, is still allowed.
        (desc,) = await user_admin.describe_topics([topic], raise_errors=True)
        assert desc.name == topic
        by_match = AclBindingFilter(ResourceType.TOPIC, topic, ResourcePatternType.MATCH)
        assert await _acls(admin, by_match, {*allows, deny}) == {*allows, deny}

        assert await admin.delete_acls([deny.to_filter()]) == [[deny]]
        assert await eventually(reads, bool)
    finally:
        await admin.delete_acls([AclBindingFilter(principal=principal)])
        await admin.delete_topics([topic])


async def test_acls_without_authorizer(kafka: KafkaCluster) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        with pytest.raises(SecurityDisabled):
            await admin.describe_acls()


async def test_unauthorized_items_come_back_per_item(
    admin: AIOKafkaAdminClient, user_admin: AIOKafkaAdminClient, secured: KafkaCluster
) -> None:
    """As in aiokafka 0.14, items the user may not see come back with their error
    code instead of raising; ``raise_errors=True`` raises them."""
    topic = f"acl-per-item-{uuid.uuid4().hex[:8]}"
    await admin.create_topics([NewTopic(topic, 1, 1)], raise_errors=True)
    group = f"acl-group-{uuid.uuid4().hex[:8]}"
    node = secured.nodes[0].node_id
    try:
        (desc,) = await user_admin.describe_topics([topic])
        assert isinstance(desc.error, TopicAuthorizationFailedError)
        assert desc["error_code"] == TopicAuthorizationFailedError.errno == 29

        (config,) = await user_admin.describe_configs([ConfigResource("TOPIC", topic)])
        assert isinstance(config.error, TopicAuthorizationFailedError)
        assert config.resources[0][0] == 29

        # The coordinator is given (aiokafka's group_coordinator_id), so the denial
        # is DescribeGroups' per-group code, not FindCoordinator's.
        (group_desc,) = await user_admin.describe_consumer_groups(
            [group], group_coordinator_id=node
        )
        assert isinstance(group_desc.error, GroupAuthorizationFailedError)
        assert group_desc.groups[0][:2] == (GroupAuthorizationFailedError.errno, group)
        with pytest.raises(GroupAuthorizationFailedError):
            await user_admin.describe_consumer_groups(
                [group], group_coordinator_id=node, raise_errors=True
            )
        with pytest.raises(TopicAuthorizationFailedError):
            await user_admin.describe_topics([topic], raise_errors=True)
    finally:
        await admin.delete_topics([topic], raise_errors=True)
