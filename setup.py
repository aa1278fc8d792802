"""Only the optional C extension; everything else is in pyproject.toml.

``optional=True``: without a compiler (or Python headers) the build warns and goes on;
``aiokafka.record.default_builder`` then uses its pure-Python append,
``aiokafka.consumer.record_decode`` its pure-Python record decoding and
``aiokafka.producer.futures`` its pure-Python future fields,
``aiokafka.consumer.fetch_records`` its pure-Python record cursor,
``aiokafka.metrics.stats`` its pure-Python ``Sensor.record`` and
``AIOKafkaConsumer.__anext__`` a coroutine for each record.
"""

import sys

from setuptools import Extension, setup

# A call of a function the compiler has not seen is an error, not a warning: C would
# take it as returning int, and the module would build and then fail at import with an
# undefined symbol (a header included under the wrong #if did that once).
_STRICT = [] if sys.platform == "win32" else ["-Werror=implicit-function-declaration"]

#: Every C extension: one source file beside the module it speeds up, and the header
#: they share.
_EXTENSIONS = (
    "aiokafka/record/_cbuilder.c",
    "aiokafka/record/_cdecode.c",
    "aiokafka/consumer/_cready.c",
    "aiokafka/producer/_cfuture.c",
    "aiokafka/metrics/_csensor.c",
)

setup(
    ext_modules=[
        Extension(
            source[: -len(".c")].replace("/", "."),
            sources=[source],
            depends=["aiokafka/_cext.h"],
            extra_compile_args=_STRICT,
            optional=True,
        )
        for source in _EXTENSIONS
    ]
)
