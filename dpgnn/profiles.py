"""Run profiles: the profile names, and the settings of one series' profile for its notebooks and the CLI.

Each series keeps its own profiles as typed, frozen settings: one frozen dataclass per series (a subclass of
:class:`Profile`), with nested frozen dataclasses for groups of related keys, and ``PROFILES`` mapping each profile
name to an instance::

    @dataclass(frozen=True)
    class Training:
        max_epochs: int
        \"\"\"most epochs per run (Sec. 5.1)\"\"\"
        patience: int
        \"\"\"epochs without a better validation score before stopping\"\"\"


    @dataclass(frozen=True)
    class LPGCNProfile(Profile):
        datasets: list[str]
        \"\"\"datasets of Fig. 2-5 and Table 3\"\"\"
        nc: Training
        \"\"\"node classification runs of Table 2\"\"\"


    PROFILES = {"smoke": LPGCNProfile(datasets=["cora"], nc=Training(100, 20)), "test": ..., "paper": ...}

Every field carries a one-line docstring (meaning, unit, paper section). The record of the series in the registry
(:class:`dpgnn.series.Series`, ``profiles=PROFILES``) is where :func:`settings` finds them.

Notebooks take ``profile`` as a parameter and call :func:`settings`, which returns the profile with any
non-``None`` overrides applied by :func:`dataclasses.replace` (e.g. ``datasets=["cora"]``); a nested field is named
``part.field`` (``settings("lpgcn", "smoke", **{"nc.patience": 5})``, ``dpgnn run lpgcn --set nc.patience=5``).
An unknown name raises a one-line ``ValueError`` listing the valid ones. Settings are read as attributes
(``cfg.runs``, ``cfg.nc.patience``), never as a mapping. Keeping the numbers in the series, not in the notebooks'
parameter cells, means the parameters cell holds no derived values and papermill overrides stay small.

A series whose ``PROFILES`` values are still plain dicts gets a read-only :class:`Settings` dict (attribute access
too), with the same override rules.

This module imports nothing from ``dpgnn`` at module level (``dpgnn --help`` reads :data:`PROFILE_NAMES` from it
without loading anything heavy) and the series registry only when :func:`settings` is called; nothing below
:mod:`dpgnn.series` imports it.

- ``smoke``: minutes on a 2-core CPU; ``test``: the smallest end-to-end execution (the test suite runs every
  notebook with it); ``paper``: the papers' settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The profile names, in the order the CLI lists them; the runner, the CLI and every series use this one tuple.
PROFILE_NAMES: tuple[str, ...] = ("smoke", "test", "paper")
#: fields :func:`settings` fills in and no override may set
_BOOKKEEPING = ("paper", "profile")


@dataclass(frozen=True)
class Profile:
    """Base of every series' profile dataclass: the series and the profile name, filled in by :func:`settings`."""

    paper: str = field(default="", kw_only=True)
    """the series these settings belong to (set by :func:`settings`)"""
    profile: str = field(default="", kw_only=True)
    """the profile name, one of :data:`PROFILE_NAMES` (set by :func:`settings`)"""


class Settings(dict):
    """A dict whose keys are also attributes (``cfg.runs``); read-only after creation. The settings of a series
    whose profiles are still plain dicts, and of hand-made grids (tests, benchmarks)."""

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


def series_profiles(paper: str) -> Mapping[str, Any]:
    """The profiles of the registered series ``paper`` (:attr:`dpgnn.series.Series.profiles`)."""
    from dpgnn import series

    profiles = series.get(paper).profiles
    if not profiles:
        raise ValueError(f"series {paper!r} defines no profiles")
    return profiles


def field_names(cfg: Any) -> list[str]:
    """The names an override may set on ``cfg``: its fields, a nested dataclass' fields as ``part.field``, sorted
    (for a dict: its keys)."""
    if not dataclasses.is_dataclass(cfg):
        return sorted(cfg)
    out = []
    for f in dataclasses.fields(cfg):
        if f.name in _BOOKKEEPING:
            continue
        value = getattr(cfg, f.name)
        if dataclasses.is_dataclass(value):
            out += [f"{f.name}.{sub}" for sub in field_names(value)]
        else:
            out.append(f.name)
    return sorted(out)


def apply(cfg: Any, overrides: Mapping[str, Any], *, what: str = "settings") -> Any:
    """``cfg`` with the non-``None`` ``overrides`` applied (``dataclasses.replace``; ``part.field`` names a nested
    field). An unknown name is a one-line ``ValueError`` naming ``what`` and listing the valid names."""
    given = {k: v for k, v in overrides.items() if v is not None}
    valid = field_names(cfg)
    unknown = sorted(k for k in given if k not in valid)
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown} for {what}; valid: {valid}")
    if not dataclasses.is_dataclass(cfg):
        return {**cfg, **given}
    top = {k: v for k, v in given.items() if "." not in k}
    parts: dict[str, dict[str, Any]] = {}
    for key, value in given.items():
        if "." in key:
            part, rest = key.split(".", 1)
            parts.setdefault(part, {})[rest] = value
    for part, sub in parts.items():
        top[part] = apply(getattr(cfg, part), sub, what=what)
    return dataclasses.replace(cfg, **top) if top else cfg


def settings(paper: str, profile: str, **overrides: Any) -> Any:
    """The ``profile`` settings of ``paper`` with the non-``None`` ``overrides`` applied (:func:`apply`).

    Args:
        paper: a registered series (:func:`dpgnn.series.names`), e.g. ``"lpgcn"``.
        profile: one of the series' profiles (``smoke``, ``test``, ``paper``).
        **overrides: field values to replace; ``None`` keeps the profile's value (a notebook parameter left at
            ``None``); a nested field is named ``part.field``.

    Returns:
        The series' profile dataclass instance, with ``paper`` and ``profile`` set (a read-only
        :class:`Settings` dict for a series whose profiles are plain dicts).

    A profile with a ``with_overrides(**overrides)`` method applies the overrides itself (PrivGNN's: its nested
    parts' fields by their flat names, e.g. ``fidelity_k``, as its notebooks' parameters are named). Unknown papers,
    profiles or override names raise a one-line ``ValueError`` listing the valid choices.
    """
    profiles = series_profiles(paper)
    if profile not in profiles:
        raise ValueError(f"unknown profile {profile!r} for {paper}; valid: {sorted(profiles)}")
    chosen = profiles[profile]
    if hasattr(chosen, "with_overrides"):
        cfg = chosen.with_overrides(**{k: v for k, v in overrides.items() if v is not None})
    else:
        cfg = apply(chosen, overrides, what=paper)
    runs = cfg.get("runs") if isinstance(cfg, Mapping) else getattr(cfg, "runs", None)
    if isinstance(runs, int) and runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    if isinstance(cfg, Mapping):
        return Settings({**cfg, "paper": paper, "profile": profile})
    names = {f.name for f in dataclasses.fields(cfg)}
    return dataclasses.replace(cfg, **{k: v for k, v in (("paper", paper), ("profile", profile)) if k in names})


__all__ = [
    "PROFILE_NAMES",
    "Profile",
    "Settings",
    "apply",
    "check_profile",
    "field_names",
    "series_profiles",
    "settings",
]
