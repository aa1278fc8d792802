"""Code generators for the Kafka protocol codec and the error table.

Run ``python -m tools.codegen`` to regenerate, ``python -m tools.codegen --check`` to
verify that the committed generated modules match what the generators produce now.
"""
