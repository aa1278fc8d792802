"""Benchmarks: our client against its peers (``run_all.py``) and micro-benchmarks."""
