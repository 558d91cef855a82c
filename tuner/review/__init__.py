"""The review path: showing an experiment (tables, report, plots), read through tuner/folder/experiment.py; no Ray,
no torch."""
