"""Real Apache Kafka brokers for aiokafka's tests and demos (see :mod:`tools.kafka.rig`)."""
