"""Tests that run on uvloop's event loop (see conftest.py)."""
