"""Long-running mutation fuzzer for the decoders of bytes that come off the wire.

``python -m tools.fuzz`` (``make fuzz``) feeds at least a million mutated inputs to
every generated response decoder (through :func:`aiokafka.protocol.api.decode_response`)
and to the record readers (v2 batches in every codec, legacy v0/v1 message sets,
``MemoryRecords`` and the consumer's ``decode_batch`` fast path). Each input must end
in a result or the typed error its target allows, within 100 ms, and the process must
not grow by more than 100 MB; anything else is a failure whose reproducer is saved.

Modules: :mod:`.mutate` (the byte mutations), :mod:`.targets` (decoders and their
valid seeds), :mod:`.runner` (the deterministic, multiprocess driver and the summary).
"""
