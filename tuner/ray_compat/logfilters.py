"""Filters on Ray's own loggers, each installed once however often a sweep starts in one process."""

from __future__ import annotations

import logging


def install_filter(logger_name: str, flt: logging.Filter) -> None:
    logger = logging.getLogger(logger_name)
    if not any(type(f) is type(flt) for f in logger.filters):
        logger.addFilter(flt)
