"""The review path: reading an experiment and showing it (tables, report, plots); no Ray, no torch."""
