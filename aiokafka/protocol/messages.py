"""Every generated Kafka message class, and the request/response classes by API key.

``from aiokafka.protocol.messages import ApiVersionsRequest, MetadataRequest``.

Struct classes whose name is unique across all APIs are exported under that name. A
name used by several APIs with different fields (``PartitionData`` in Fetch and in the
share-group APIs, ...) is exported qualified by the message that defines it, e.g.
``FetchRequestPartitionData``; the unqualified class is in its API's module under
:mod:`aiokafka.protocol._gen`.
"""

from __future__ import annotations

from aiokafka.protocol._gen._index import *  # noqa: F403
from aiokafka.protocol._gen._index import REQUEST_TYPES as REQUEST_TYPES
from aiokafka.protocol._gen._index import RESPONSE_TYPES as RESPONSE_TYPES
from aiokafka.protocol._gen._index import __all__ as __all__
