"""What makes a sweep end on its own and say why trials ended: stalls, hung trials, deaths, the budget, signals, a full storage, the epoch limit."""
