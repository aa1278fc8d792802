"""The Kafka consumer: subscription state, fetching and consumer-group membership."""
