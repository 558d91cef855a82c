"""What a trial's own process runs: the trainable in the form it came in, its per-trial duties, and its output kept in files."""
