"""Only the optional C extension; everything else is in pyproject.toml.

``optional=True``: without a compiler (or Python headers) the build warns and goes on;
``aiokafka.record.default_builder`` then uses its pure-Python append,
``aiokafka.consumer.record_decode`` its pure-Python record decoding and
``aiokafka.producer.futures`` its pure-Python future fields and
``AIOKafkaConsumer.__anext__`` a coroutine for each record.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "aiokafka.record._cbuilder",
            sources=["aiokafka/record/_cbuilder.c"],
            depends=["aiokafka/_cext.h"],
            optional=True,
        ),
        Extension(
            "aiokafka.record._cdecode",
            sources=["aiokafka/record/_cdecode.c"],
            optional=True,
        ),
        Extension(
            "aiokafka.consumer._cready",
            sources=["aiokafka/consumer/_cready.c"],
            optional=True,
        ),
        Extension(
            "aiokafka.producer._cfuture",
            sources=["aiokafka/producer/_cfuture.c"],
            depends=["aiokafka/_cext.h"],
            optional=True,
        ),
    ]
)
