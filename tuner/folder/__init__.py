"""The experiment folder's format: every file a sweep writes in it or beside it, and the records they hold.

Launch writes these files and tuner/experiment.py, their one reader, reads them back for the review, a resume
and the schedulers alike; both take the names and the records from here, so the format has one owner. What an
experiment folder holds (``names`` has each name):

  tuner_config.yaml        the sweep's settings (tuner/settings.py), with the folder's format version (``format``)
  plan.txt                 the plan as printed before the first trial
  plan.json                the numbers of that plan a view reads (trials at once) (``plan``)
  spent.json               what the sweep spent: wall time, epochs, GPU-hours, most trials at once (``spent``)
  fates.json               why each trial ended where it did, as decided (``fates``)
  best_config.json         the end-of-sweep summary: best trial, config, checkpoint
  pareto.json              the front, on several objectives
  report.html              the review page
  unsaved_trials.json      trial folders a killed driver started after its last saved state, which a
                           resume ran again as new trials: kept, left out of the review (``unsaved``)
  experiment_state-*.json  Ray's own state: statuses, error files (``tuner/ray_compat/state_file.py``, its one parser)
  tuner.pkl, search_gen_state-*.pkl   Ray's pickled tuner and search state
  TRIAL/                   one folder a trial: params.json, progress.csv, result.json, checkpoints (each
                           with .tuner-manifest.json: ``checkpoints``), stdout.log and stderr.log (what the
                           trial printed), crash.txt; damaged-checkpoint_*: a damaged one set aside on resume
  .tuner-claim             which process holds the experiment now

and beside it, while a sweep runs (``storage.sidecar``: Ray copies its own staging folder over files written
inside the experiment), the driver's running counts: ``.tuner-spent.json``, ``.tuner-fates.jsonl``,
``.tuner-statuses.json``, ``.tuner-stalled.json``, ``.tuner-packing.json``.
"""
