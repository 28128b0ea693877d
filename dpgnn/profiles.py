"""Run profiles: the profile names, and the settings of one paper's profile for its notebooks.

Each series keeps its own profiles (``dpgnn.series.<paper>.PROFILES = {"smoke": {...}, "test": {...}, "paper":
{...}}``); notebooks take ``profile`` as a parameter and call :func:`settings`, which returns the profile's values
with any non-``None`` notebook overrides applied (e.g. ``datasets=["cora"]``). Keeping the numbers in the series,
not in the notebooks' parameter cells, means the parameters cell holds no derived values and papermill overrides
stay small.

This module is a bottom-layer helper: it imports nothing from ``dpgnn`` at module level. :func:`settings` finds a
series by name when it is called (``importlib``, a plugin lookup), so no module import points upward.

- ``smoke``: minutes on a 2-core CPU; ``test``: the smallest end-to-end execution (the test suite runs every
  notebook with it); ``paper``: the papers' settings.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

#: The profile names, in the order the CLI lists them; the runner, the results store, the CLI and every series
#: use this one tuple.
PROFILE_NAMES: tuple[str, ...] = ("smoke", "test", "paper")


class Settings(dict):
    """A dict whose keys are also attributes (``cfg.runs``); read-only after creation."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no setting {name!r}; available: {sorted(self)}") from None

    def __setitem__(self, key, value):  # pragma: no cover - defensive
        raise TypeError("settings are read-only; pass overrides to dpgnn.profiles.settings()")


def check_profile(profile: str) -> str:
    """``profile`` if it is one of :data:`PROFILE_NAMES`, else ``ValueError`` listing them."""
    if profile not in PROFILE_NAMES:
        raise ValueError(f"profile must be one of {PROFILE_NAMES}, got {profile!r}")
    return profile


def series_profiles(paper: str) -> Mapping[str, Mapping[str, Any]]:
    """``dpgnn.series.<paper>.PROFILES`` (looked up by name when called)."""
    import pkgutil

    series = importlib.import_module("dpgnn.series")
    names = sorted(m.name for m in pkgutil.iter_modules(series.__path__) if not m.name.startswith("_"))
    if paper not in names:
        raise ValueError(f"unknown paper {paper!r}; valid: {names}")
    profiles = getattr(importlib.import_module(f"dpgnn.series.{paper}"), "PROFILES", None)
    if not profiles:
        raise ValueError(f"dpgnn.series.{paper} defines no PROFILES")
    return profiles


def settings(paper: str, profile: str, **overrides: Any) -> Settings:
    """The ``profile`` settings of ``paper`` with the non-``None`` ``overrides`` applied.

    Profiles come from ``dpgnn.series.<paper>.PROFILES`` (:func:`series_profiles`): dicts, or typed profiles (frozen
    dataclasses that are mappings of their top-level fields) with a ``with_overrides(**overrides)`` method that
    applies the overrides itself. Unknown papers, profiles or override keys raise ``ValueError`` listing the valid
    choices.
    """
    profiles = series_profiles(paper)
    if profile not in profiles:
        raise ValueError(f"unknown profile {profile!r} for {paper}; valid: {sorted(profiles)}")
    chosen = profiles[profile]
    given = {k: v for k, v in overrides.items() if v is not None}
    if hasattr(chosen, "with_overrides"):  # a typed profile applies its own (nested parts by their flat names)
        base = dict(chosen.with_overrides(**given))
    else:
        base = dict(chosen)
        unknown = sorted(k for k in given if k not in base)
        if unknown:
            raise ValueError(f"unknown setting(s) {unknown} for {paper}; valid: {sorted(base)}")
        base.update(given)
    if isinstance(base.get("runs"), int) and base["runs"] < 1:
        raise ValueError(f"runs must be >= 1, got {base['runs']}")
    base["paper"], base["profile"] = paper, profile
    return Settings(base)


__all__ = ["PROFILE_NAMES", "Settings", "check_profile", "series_profiles", "settings"]
