"""The Kafka consumer: subscription state, fetching and consumer-group membership."""

from aiokafka.consumer.config import ConsumerConfig
from aiokafka.consumer.consumer import AIOKafkaConsumer
from aiokafka.consumer.subscription import SubscriptionState

__all__ = ["AIOKafkaConsumer", "ConsumerConfig", "SubscriptionState"]
