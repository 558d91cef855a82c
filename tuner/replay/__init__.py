"""Replay: recorded learning curves played through a sweep's own scheduler and searcher on a simulated clock."""
