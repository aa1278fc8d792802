"""asyncio client for Apache Kafka."""

__version__ = "1.0.0.dev0"
