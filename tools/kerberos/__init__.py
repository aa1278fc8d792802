"""Kerberos for the GSSAPI tests: a throwaway MIT KDC on 127.0.0.1 (:mod:`.kdc`) and the
rig broker's Kerberos listener settings (:mod:`.broker`)."""

from .broker import GSSAPI_LISTENER, GssapiListener
from .kdc import KdcUnavailable, MiniKdc, kdc_missing_reason

__all__ = ["GSSAPI_LISTENER", "GssapiListener", "KdcUnavailable", "MiniKdc", "kdc_missing_reason"]
