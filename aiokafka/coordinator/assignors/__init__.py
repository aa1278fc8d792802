"""aiokafka 0.x import path of the partition assignors (compatibility shim).

See :mod:`aiokafka.consumer.group.assignors`.
"""
