"""aiokafka 0.14 compatibility: its public surface compared with ours by introspection."""
