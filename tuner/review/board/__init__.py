"""``tuner dashboard``: every sweep of one or more storages in one served page, read-only.

catalog.py finds the experiments and sums each up (through the one reader, tuner/experiment.py),
pages.py draws the index and a sweep's live page, comparison.py sets sweeps side by side, access.py decides
who may ask, and server.py serves them with aiohttp.
"""
