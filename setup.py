"""Only the optional C extension; everything else is in pyproject.toml.

``optional=True``: without a compiler (or Python headers) the build warns and goes on;
``aiokafka.record.default_builder`` then uses its pure-Python append and
``aiokafka.producer.futures`` its pure-Python future fields.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "aiokafka.record._cbuilder",
            sources=["aiokafka/record/_cbuilder.c"],
            optional=True,
        ),
        Extension(
            "aiokafka.producer._cfuture",
            sources=["aiokafka/producer/_cfuture.c"],
            optional=True,
        ),
    ]
)
