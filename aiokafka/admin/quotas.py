"""Client quota operations (KIP-546; any broker, forwarded to the controller)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiokafka.admin._base import AdminBase, check, error_for, instances, raise_first
from aiokafka.admin.quota_types import (
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilterComponent,
)
from aiokafka.protocol._gen import alter_client_quotas as _acq
from aiokafka.protocol._gen import describe_client_quotas as _dcq

__all__ = ["QuotasMixin"]


class QuotasMixin(AdminBase):
    """Client quota operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def describe_client_quotas(
        self, components: Sequence[ClientQuotaFilterComponent] = (), strict: bool = False
    ) -> dict[ClientQuotaEntity, dict[str, float]]:
        """Quotas of the entities matching every filter component.

        Args:
            components: Filter components (empty with ``strict=False``: all).
            strict: Only entities with exactly the filtered entity types.

        Raises:
            aiokafka.errors.InvalidRequestError: e.g. an unknown entity type.
        """
        components = instances("components", components, ClientQuotaFilterComponent)
        request = _dcq.DescribeClientQuotasRequest(
            components=[
                _dcq.ComponentData(
                    entity_type=c.entity_type, match_type=int(c.match_type), match=c.match
                )
                for c in components
            ],
            strict=bool(strict),
        )
        response = await self._send_any(request)
        check(response.error_code, response.error_message, "describe client quotas")
        return {
            ClientQuotaEntity.of({e.entity_type: e.entity_name for e in entry.entity}): {
                v.key: v.value for v in entry.values
            }
            for entry in response.entries or ()
        }

    async def alter_client_quotas(
        self, alterations: Sequence[ClientQuotaAlteration], validate_only: bool = False
    ) -> None:
        """Set or remove quotas of entities.

        Raises:
            aiokafka.errors.InvalidRequestError: e.g. an unknown quota key. Per
                entity: the others still change; the exception names every failure.
        """
        items = instances("alterations", alterations, ClientQuotaAlteration)
        request = _acq.AlterClientQuotasRequest(
            entries=[
                _acq.AlterClientQuotasRequestEntryData(
                    entity=[
                        _acq.EntityData(entity_type=t, entity_name=n) for t, n in a.entity.entries
                    ],
                    ops=[
                        _acq.OpData(
                            key=op.key, value=float(op.value or 0.0), remove=op.value is None
                        )
                        for op in a.ops
                    ],
                )
                for a in items
            ],
            validate_only=bool(validate_only),
        )
        response = await self._send_any(request)
        out: dict[Any, Any] = {}
        for e in response.entries:
            entity = ClientQuotaEntity.of({d.entity_type: d.entity_name for d in e.entity})
            out[entity] = error_for(e.error_code, e.error_message, f"alter quotas of {entity}")
        raise_first(out)
