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

setup(
    ext_modules=[
        Extension(
            "aiokafka.record._cbuilder",
            sources=["aiokafka/record/_cbuilder.c"],
            depends=["aiokafka/_cext.h"],
            extra_compile_args=_STRICT,
            optional=True,
        ),
        Extension(
            "aiokafka.record._cdecode",
            sources=["aiokafka/record/_cdecode.c"],
            depends=["aiokafka/_cext.h"],
            extra_compile_args=_STRICT,
            optional=True,
        ),
        Extension(
            "aiokafka.consumer._cready",
            sources=["aiokafka/consumer/_cready.c"],
            depends=["aiokafka/_cext.h"],
            extra_compile_args=_STRICT,
            optional=True,
        ),
        Extension(
            "aiokafka.producer._cfuture",
            sources=["aiokafka/producer/_cfuture.c"],
            depends=["aiokafka/_cext.h"],
            extra_compile_args=_STRICT,
            optional=True,
        ),
        Extension(
            "aiokafka.metrics._csensor",
            sources=["aiokafka/metrics/_csensor.c"],
            depends=["aiokafka/_cext.h"],
            extra_compile_args=_STRICT,
            optional=True,
        ),
    ]
)
