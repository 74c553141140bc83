import logging

import pytest


@pytest.fixture(autouse=True)
def _quiet_request_logs():
    """Thousands of refused requests each log a warning; a failure says what it needs itself."""
    loggers = [logging.getLogger(name) for name in ("django.request", "django.security", "axes")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    yield
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)
