"""Stage runner: records sharded by rank, append-only part files, resume, merge, stats."""
