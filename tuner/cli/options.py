"""Options that several commands share, said once."""

from __future__ import annotations

import click

from tuner.settings import DEFAULT_STORAGE

# where a command given an experiment's NAME looks for it: the folder a sweep's --storage-path kept it in
storage_path_option = click.option(
    "--storage-path",
    envvar="TUNER_STORAGE_PATH",
    metavar="PATH",
    help="Folder (or s3://, gs:// URI) a NAME is looked for in, as the sweep's --storage-path kept it. "
    f"[default: TUNER_STORAGE_PATH, else {DEFAULT_STORAGE}]",
)
