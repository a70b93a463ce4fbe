"""Torch's logging and warnings silenced while a failure becomes a hint."""

import logging
import warnings
from contextlib import contextmanager


@contextmanager
def quiet():
    """Silence dynamo's and opcheck's logging of a failure about to become a hint."""
    logger, level = logging.getLogger("torch"), logging.getLogger("torch").level
    logger.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings(action="ignore"):
            yield
    finally:
        logger.setLevel(level)
