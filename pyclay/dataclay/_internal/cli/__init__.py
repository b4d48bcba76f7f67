"""Command-line tools: `dataclay` (local cluster) and `dataclaycmd` (administration)."""
