"""Test helpers shared by the integration and chaos tests (fault proxy, ...)."""
