"""ACL operations (any broker; KRaft forwards changes to the controller)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from aiokafka.admin._base import AdminBase, check, error_for, instances, raise_first
from aiokafka.admin.acl_types import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePattern,
    ResourcePatternType,
    ResourceType,
)
from aiokafka.errors import KafkaProtocolError
from aiokafka.protocol._gen import create_acls as _ca
from aiokafka.protocol._gen import delete_acls as _da
from aiokafka.protocol._gen import describe_acls as _dsa

__all__ = ["AclsMixin"]


def _binding(
    resource_type: int,
    name: str,
    pattern_type: int,
    principal: str,
    host: str,
    operation: int,
    permission: int,
) -> AclBinding:
    return AclBinding(
        ResourcePattern(ResourceType(resource_type), name, ResourcePatternType(pattern_type)),
        principal,
        host,
        AclOperation(operation),
        AclPermissionType(permission),
    )


class _FilterFields(TypedDict):
    """An ACL filter as DescribeAcls and DeleteAcls (each of its filters) send it."""

    resource_type_filter: int
    resource_name_filter: str | None
    pattern_type_filter: int
    principal_filter: str | None
    host_filter: str | None
    operation: int
    permission_type: int


def _filter_fields(f: AclBindingFilter) -> _FilterFields:
    return _FilterFields(
        resource_type_filter=int(f.resource_type),
        resource_name_filter=f.name,
        pattern_type_filter=int(f.pattern_type),
        principal_filter=f.principal,
        host_filter=f.host,
        operation=int(f.operation),
        permission_type=int(f.permission_type),
    )


class AclsMixin(AdminBase):
    """ACL operations of :class:`~aiokafka.admin.AIOKafkaAdminClient`."""

    async def describe_acls(self, acl_filter: AclBindingFilter | None = None) -> list[AclBinding]:
        """ACLs matching ``acl_filter`` (default: all).

        Raises:
            aiokafka.errors.SecurityDisabled: the cluster has no authorizer.
            aiokafka.errors.ClusterAuthorizationFailedError: not allowed to describe.
        """
        f = AclBindingFilter() if acl_filter is None else acl_filter
        if not isinstance(f, AclBindingFilter):
            raise TypeError("acl_filter must be an AclBindingFilter")
        request = _dsa.DescribeAclsRequest(**_filter_fields(f))
        response = await self._send_any(request)
        check(response.error_code, response.error_message, "describe ACLs")
        return [
            _binding(
                r.resource_type,
                r.resource_name,
                r.pattern_type,
                a.principal,
                a.host,
                a.operation,
                a.permission_type,
            )
            for r in response.resources
            for a in r.acls
        ]

    async def create_acls(self, acls: Sequence[AclBinding]) -> None:
        """Create ACLs (creating an existing one is not an error).

        The controller has committed them when this returns; brokers apply them from
        the metadata log a moment later, so an immediate ``describe_acls`` or access
        check may not reflect them yet.

        Raises:
            aiokafka.errors.SecurityDisabled: the cluster has no authorizer.
            aiokafka.errors.InvalidRequestError: and other per-binding errors; the
                other bindings are created, the exception names every failure.
        """
        bindings = instances("acls", acls, AclBinding)
        request = _ca.CreateAclsRequest(
            creations=[
                _ca.AclCreation(
                    resource_type=int(b.pattern.resource_type),
                    resource_name=b.pattern.name,
                    resource_pattern_type=int(b.pattern.pattern_type),
                    principal=b.principal,
                    host=b.host,
                    operation=int(b.operation),
                    permission_type=int(b.permission_type),
                )
                for b in bindings
            ]
        )
        response = await self._send_any(request)
        if len(response.results) != len(bindings):
            raise KafkaProtocolError(
                f"CreateAcls: {len(response.results)} results for {len(bindings)} ACLs"
            )
        raise_first(
            {
                b: error_for(r.error_code, r.error_message, f"create ACL {b}")
                for b, r in zip(bindings, response.results, strict=True)
            }
        )

    async def delete_acls(self, filters: Sequence[AclBindingFilter]) -> list[list[AclBinding]]:
        """Delete the ACLs matching each filter.

        As with :meth:`create_acls`, brokers apply the deletion shortly after the
        call returns.

        Returns:
            Per filter (in order), the ACLs it deleted.

        Raises:
            aiokafka.errors.SecurityDisabled: the cluster has no authorizer.
            aiokafka.errors.KafkaError: a per-filter or per-ACL error (the exception
                names every failure; other filters still delete).
        """
        flist = instances("filters", filters, AclBindingFilter)
        request = _da.DeleteAclsRequest(
            filters=[_da.DeleteAclsFilter(**_filter_fields(f)) for f in flist]
        )
        response = await self._send_any(request)
        errors: dict[Any, Any] = {}
        deleted: list[list[AclBinding]] = []
        for i, r in enumerate(response.filter_results):
            errors[i] = error_for(r.error_code, r.error_message, f"delete ACLs by {flist[i]}")
            done: list[AclBinding] = []
            for m in r.matching_acls:
                binding = _binding(
                    m.resource_type,
                    m.resource_name,
                    m.pattern_type,
                    m.principal,
                    m.host,
                    m.operation,
                    m.permission_type,
                )
                err = error_for(m.error_code, m.error_message, f"delete ACL {binding}")
                if err is None:
                    done.append(binding)
                else:
                    errors[binding] = err
            deleted.append(done)
        raise_first(errors)
        return deleted
