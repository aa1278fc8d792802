"""The package's top-level names: pinned so a removal or rename is a visible change."""

import aiokafka


def test_all_is_pinned() -> None:
    assert sorted(aiokafka.__all__) == sorted(
        [
            "AIOKafkaAdminClient",
            "AIOKafkaClient",
            "AIOKafkaConsumer",
            "AIOKafkaProducer",
            "ConsumerRebalanceListener",
            "ConsumerRecord",
            "OffsetAndMetadata",
            "OffsetAndTimestamp",
            "RecordMetadata",
            "TopicPartition",
            "__version__",
        ]
    )


def test_every_exported_name_resolves() -> None:
    for name in aiokafka.__all__:
        assert getattr(aiokafka, name) is not None, name
    assert aiokafka.AIOKafkaProducer.__module__ == "aiokafka.producer.producer"
    assert aiokafka.AIOKafkaConsumer.__module__ == "aiokafka.consumer.consumer"
