"""Chaos scenario on a real three-broker cluster (``make chaos``; ``tests/chaos`` runs a short one).

``schedule.py`` derives the faults from a seed, ``run.py`` starts the cluster behind fault
proxies, runs the client workers (``workers.py``, one process each) and applies the faults,
``check.py`` reads everything back with kafka-python and computes the figures.
``python -m tools.chaos --help`` lists the options.
"""
