"""The package's top-level names: pinned so a removal or rename is a visible change."""

import aiokafka


def test_all_is_pinned() -> None:
    assert sorted(aiokafka.__all__) == sorted(
        [
            "AIOKafkaAdminClient",
            "AIOKafkaClient",
            "AIOKafkaConsumer",
            "AIOKafkaProducer",
            "AIOKafkaShareConsumer",
            "ConsumerRebalanceListener",
            "ConsumerRecord",
            "ConsumerStoppedError",
            "IllegalOperation",
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


def test_importing_the_package_does_not_import_asyncio() -> None:
    import subprocess
    import sys

    code = "import sys, aiokafka; sys.exit('asyncio' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_unknown_attribute_raises_attribute_error() -> None:
    import pytest

    with pytest.raises(AttributeError, match="no_such_name"):
        _ = aiokafka.no_such_name  # type: ignore[attr-defined]


def test_lazy_table_matches_all() -> None:
    assert sorted([*aiokafka._LAZY, "__version__"]) == sorted(aiokafka.__all__)
