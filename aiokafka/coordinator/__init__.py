"""aiokafka 0.x import paths of the consumer-group assignors (compatibility shims).

The code lives in :mod:`aiokafka.consumer.group.assignors`.
"""
