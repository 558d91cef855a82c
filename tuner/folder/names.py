"""The name of every file tuner keeps in or beside an experiment folder (see tuner/folder/__init__.py)."""

from __future__ import annotations

# inside the experiment
CONFIG_FILE = "tuner_config.yaml"
PLAN_FILE = "plan.txt"
PLAN_DATA_FILE = "plan.json"
SPENT_FILE = "spent.json"
FATES_FILE = "fates.json"
BEST_FILE = "best_config.json"
PARETO_FILE = "pareto.json"
REPORT_FILE = "report.html"
CLAIM_FILE = ".tuner-claim"
UNSAVED_FILE = "unsaved_trials.json"

# inside a trial's folder
STDOUT_FILE, STDERR_FILE = "stdout.log", "stderr.log"
OUTPUT_FILES = (STDOUT_FILE, STDERR_FILE)
CRASH_FILE = "crash.txt"
MANIFEST_FILE = ".tuner-manifest.json"  # inside each checkpoint: its files' sizes and checksums
DAMAGED_PREFIX = "damaged-"  # a checkpoint found damaged, set aside under this name

# Ray's own files are named in tuner/ray_compat/state_file.py

# beside the experiment, while a sweep runs (storage.sidecar)
SPENT_SIDECAR = ".tuner-spent.json"
FATES_SIDECAR = ".tuner-fates.jsonl"
STATUS_SIDECAR = ".tuner-statuses.json"
STALL_SIDECAR = ".tuner-stalled.json"
PACKING_SIDECAR = ".tuner-packing.json"
# every one of them: a new sweep at a path forgets what the driver kept for an earlier one there
SIDECARS = (SPENT_SIDECAR, FATES_SIDECAR, STATUS_SIDECAR, STALL_SIDECAR, PACKING_SIDECAR)
