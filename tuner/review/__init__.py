"""The review path: showing an experiment (tables, report, plots), read through tuner/experiment.py; no Ray,
no torch."""
