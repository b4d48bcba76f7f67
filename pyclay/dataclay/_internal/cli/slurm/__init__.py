"""`dataclay slurm`: a cluster inside a Slurm job (the plan, the job directory, each node's servers)."""
