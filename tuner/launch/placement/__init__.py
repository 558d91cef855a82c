"""Where a sweep runs: the Ray cluster it connects to or starts, each trial's resources, trials packed onto GPUs, token auth, jobs submitted to a cluster."""
