"""Consumer-group membership: join/sync state machine, heartbeats, offsets and assignors."""
