"""Tests against the second peers: librdkafka's mock cluster and Tansu (not Kafka)."""
