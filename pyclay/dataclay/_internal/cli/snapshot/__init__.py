"""`dataclay export` and `dataclay import`: the snapshot format, its signatures, reading, placing and reviewing."""
