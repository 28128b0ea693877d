"""Fixtures shared by every test directory."""

import sys

import pytest


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test drew: pyplot keeps every open figure alive, so a session of plotting tests would
    otherwise hold hundreds of them (and warn once more than 20 are open)."""
    yield
    if "matplotlib.pyplot" in sys.modules:  # only tests that drew something imported pyplot
        sys.modules["matplotlib.pyplot"].close("all")
