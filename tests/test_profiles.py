import dataclasses

import pytest

from dpgnn import series
from dpgnn.profiles import Profile, apply, field_names, settings


def test_settings_overrides_and_errors():
    cfg = settings("lpgcn", "smoke", runs=3, datasets=None)
    assert cfg.runs == 3 and cfg.datasets == ["cora", "citeseer", "twitch"] and cfg.profile == "smoke"
    assert cfg.paper == "lpgcn" and settings("lpgcn", "paper").runs == 10
    with pytest.raises(ValueError, match="unknown series 'nope'"):
        settings("nope", "smoke")
    with pytest.raises(ValueError, match="unknown profile"):
        settings("lpgcn", "huge")
    with pytest.raises(ValueError, match=r"unknown setting\(s\) \['epochs'\] for lpgcn; valid: \[.*'nc.patience'"):
        settings("lpgcn", "smoke", epochs=3)
    with pytest.raises(ValueError, match="runs"):
        settings("lpgcn", "smoke", runs=0)
    with pytest.raises(AttributeError):
        _ = cfg.not_a_setting
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.runs = 1
    with pytest.raises(ValueError, match="defines no profiles"):
        settings("learn", "smoke")


def test_nested_fields_are_set_as_part_dot_field_and_the_profile_is_left_alone():
    base = series.get("lpgcn").profiles["smoke"]
    cfg = settings("lpgcn", "smoke", **{"nc.patience": 3, "lp.max_epochs": 7, "seed": None})
    assert (cfg.nc.patience, cfg.nc.max_epochs, cfg.lp.max_epochs, cfg.seed) == (3, 100, 7, base.seed)
    assert base.nc.patience == 20 and base.profile == ""  # the registered profile is never changed
    assert "nc.max_epochs" in field_names(cfg) and "nc" not in field_names(cfg) and "profile" not in field_names(cfg)
    with pytest.raises(ValueError, match=r"unknown setting\(s\) \['nc.nope'\]"):
        settings("lpgcn", "smoke", **{"nc.nope": 1})


@dataclasses.dataclass(frozen=True)
class _Part:
    k: int
    """a nested value"""


@dataclasses.dataclass(frozen=True)
class _Plain:  # a profile class that does not derive from Profile: overrides still apply
    runs: int
    """runs"""
    part: _Part
    """a group of keys"""


def _register(monkeypatch, name, profiles, order):
    series.all_series()  # discover first, so the real series are there
    monkeypatch.setattr(series, "_REGISTRY", dict(series._REGISTRY))
    series.register(series.Series(name, title=name, kind="study", order=order, profiles=profiles))


def test_plain_dataclasses_and_dict_profiles_work_too(monkeypatch):
    _register(monkeypatch, "toy_plain", {"test": _Plain(runs=1, part=_Part(k=2))}, 98)
    cfg = settings("toy_plain", "test", **{"part.k": 5})
    assert cfg == _Plain(runs=1, part=_Part(k=5))
    _register(monkeypatch, "toy_dict", {"test": {"runs": 1, "datasets": ["cora"]}}, 99)
    cfg = settings("toy_dict", "test", datasets=["citeseer"])
    assert cfg.datasets == ["citeseer"] and cfg.profile == "test" and cfg["runs"] == 1
    with pytest.raises(TypeError, match="read-only"):
        cfg["runs"] = 2
    with pytest.raises(ValueError, match="unknown setting"):
        settings("toy_dict", "test", epochs=1)
    assert apply({"a": 1}, {"a": None}) == {"a": 1}


def test_one_list_of_profile_names_and_every_series_keeps_typed_profiles():
    from dpgnn import cli, runner
    from dpgnn.profiles import PROFILE_NAMES, check_profile, series_profiles

    assert PROFILE_NAMES == ("smoke", "test", "paper")
    assert runner.PROFILES is PROFILE_NAMES and cli.PROFILES is PROFILE_NAMES
    with_profiles = [s.name for s in series.all_series() if s.profiles]
    assert {"lpgcn", "lpgnn", "drw", "privgnn", "progap", "audit", "privacy"} <= set(with_profiles)
    for paper in with_profiles:
        assert tuple(series_profiles(paper)) == PROFILE_NAMES, paper
        assert settings(paper, "test").profile == "test"
        for cfg in series_profiles(paper).values():
            if dataclasses.is_dataclass(cfg):  # typed: one frozen class per series, the same for every profile
                assert type(cfg).__dataclass_params__.frozen and isinstance(cfg, Profile), paper
                assert type(cfg) is type(series_profiles(paper)["paper"]), paper
    assert check_profile("test") == "test"
    with pytest.raises(ValueError, match="profile must be one of"):
        check_profile("huge")
