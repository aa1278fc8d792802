"""Only the optional C extension; everything else is in pyproject.toml.

``optional=True``: without a compiler (or Python headers) the build warns and goes on,
and ``aiokafka.record.default_builder`` uses its pure-Python append.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "aiokafka.record._cbuilder",
            sources=["aiokafka/record/_cbuilder.c"],
            optional=True,
        )
    ]
)
