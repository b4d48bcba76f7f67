"""What more than one command family shares: the cluster settings, the state file, erasure, class archives."""
