"""The launch path: from settings to a running sweep (plan, runner, guards, cluster, logs)."""
