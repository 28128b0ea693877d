"""Run profiles per paper series: ``smoke`` (minutes on a 2-core CPU) and ``paper`` (the papers' settings).

Notebooks take ``profile`` as a parameter and call :func:`settings`, which returns the profile's values with any
non-``None`` notebook overrides applied (e.g. ``datasets=["cora"]``). Keeping the numbers here, not in the
notebooks' parameter cells, means the parameters cell holds no derived values and papermill overrides stay small.
"""

from __future__ import annotations

from typing import Any

_LPGCN_DATASETS = ["citeseer", "cora", "elliptic", "flickr", "twitch"]

PROFILES: dict[str, dict[str, dict[str, Any]]] = {
    "lpgcn": {
        "smoke": {
            "datasets": ["cora", "citeseer", "twitch"],       # Fig. 2-5, Table 3
            "table2_datasets": ["cora"],                       # Table 2 (training runs)
            "variance_epsilons": [1.0 + 0.25 * i for i in range(17)],  # Fig. 1/4/5: eps in [1, 5]
            # smoke keeps every notebook <= 60 s on 2 idle CPU cores: Fig. 2 at the ends of the paper's ε range
            # (ε = 1 is the point compared with the paper), Table 2 with one run at ε = 1 and 9
            "mae_epsilons": [1.0, 9.0],
            "table2_epsilons": [1.0, 9.0],
            "methods": ["lm", "pm", "pgc", "raw"],
            "runs": 1,
            "nc_max_epochs": 100, "nc_min_epochs": 10, "nc_patience": 20,
            "lp_max_epochs": 100, "lp_min_epochs": 20, "lp_check_every": 10, "lp_patience": 10,
            "seed": 12345,
        },
        # "test": the smallest end-to-end execution, used by the test suite to run every notebook with papermill
        "test": {
            "datasets": ["cora"], "table2_datasets": ["cora"],
            "variance_epsilons": [1.0, 3.0, 5.0], "mae_epsilons": [1.0, 9.0], "table2_epsilons": [1.0],
            "methods": ["pgc", "raw"], "runs": 1,
            "nc_max_epochs": 5, "nc_min_epochs": 1, "nc_patience": 2,
            "lp_max_epochs": 10, "lp_min_epochs": 2, "lp_check_every": 5, "lp_patience": 1,
            "seed": 0,
        },
        "paper": {
            "datasets": _LPGCN_DATASETS,
            "table2_datasets": _LPGCN_DATASETS,
            "variance_epsilons": [1.0 + 0.1 * i for i in range(41)],
            "mae_epsilons": [1.0, 3.0, 5.0, 7.0, 9.0],
            "table2_epsilons": [1.0, 5.0, 9.0],
            "methods": ["lm", "pm", "pgc", "raw"],
            "runs": 10,
            "nc_max_epochs": 500, "nc_min_epochs": 10, "nc_patience": 20,
            "lp_max_epochs": 500, "lp_min_epochs": 100, "lp_check_every": 10, "lp_patience": 10,
            "seed": 12345,
        },
    },
}


class Settings(dict):
    """A dict whose keys are also attributes (``cfg.runs``); read-only after creation."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no setting {name!r}; available: {sorted(self)}") from None

    def __setitem__(self, key, value):  # pragma: no cover - defensive
        raise TypeError("settings are read-only; pass overrides to dpgnn.profiles.settings()")


def _profiles(paper: str) -> dict[str, dict[str, Any]]:
    """Profiles of ``paper``: from :data:`PROFILES`, else the ``PROFILES`` dict of ``dpgnn.series.<paper>``."""
    if paper in PROFILES:
        return PROFILES[paper]
    import importlib
    import pkgutil

    import dpgnn.series as series

    names = sorted(set(PROFILES) | {m.name for m in pkgutil.iter_modules(series.__path__)})
    if paper not in names:
        raise ValueError(f"unknown paper {paper!r}; valid: {names}")
    profiles = getattr(importlib.import_module(f"dpgnn.series.{paper}"), "PROFILES", None)
    if not profiles:
        raise ValueError(f"dpgnn.series.{paper} defines no PROFILES")
    return profiles


def settings(paper: str, profile: str, **overrides: Any) -> Settings:
    """The ``profile`` settings of ``paper`` with the non-``None`` ``overrides`` applied.

    Profiles come from :data:`PROFILES` or, for a series that keeps its own, ``dpgnn.series.<paper>.PROFILES``.
    Unknown papers, profiles or override keys raise ``ValueError`` listing the valid choices.
    """
    profiles = _profiles(paper)
    if profile not in profiles:
        raise ValueError(f"unknown profile {profile!r} for {paper}; valid: {sorted(profiles)}")
    base = dict(profiles[profile])
    unknown = sorted(k for k, v in overrides.items() if v is not None and k not in base)
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown} for {paper}; valid: {sorted(base)}")
    base.update({k: v for k, v in overrides.items() if v is not None})
    if isinstance(base.get("runs"), int) and base["runs"] < 1:
        raise ValueError(f"runs must be >= 1, got {base['runs']}")
    base["paper"], base["profile"] = paper, profile
    return Settings(base)


__all__ = ["PROFILES", "Settings", "settings"]
