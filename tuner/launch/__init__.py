"""The launch path, in the order a sweep takes it: ``resolve`` (the settings in one step), ``plan`` (everything
decided before launch; ``--dry-run`` stops there), ``runner`` (the one place that builds ``ray.tune.Tuner``)
and ``resume``; ``registry`` finds spaces and trainables, ``warm_start`` reads earlier sweeps.

Beside that path, one sub-package per concern: ``guards/`` (how a sweep ends on its own and why trials ended),
``placement/`` (where it runs: the cluster, resources, GPU packing, auth, jobs), ``watching/`` (what the person
at the terminal sees: the live table, TensorBoard, the live report) and ``trial/`` (what runs in each trial's
own process).
"""
