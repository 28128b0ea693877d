import pytest

from dpgnn.profiles import settings


def test_settings_overrides_and_errors():
    cfg = settings("lpgcn", "smoke", runs=3, datasets=None)
    assert cfg.runs == 3 and cfg.datasets == ["cora", "citeseer", "twitch"] and cfg.profile == "smoke"
    assert settings("lpgcn", "paper").runs == 10
    with pytest.raises(ValueError, match="unknown paper"):
        settings("nope", "smoke")
    with pytest.raises(ValueError, match="unknown profile"):
        settings("lpgcn", "huge")
    with pytest.raises(ValueError, match="unknown setting"):
        settings("lpgcn", "smoke", epochs=3)
    with pytest.raises(ValueError, match="runs"):
        settings("lpgcn", "smoke", runs=0)
    with pytest.raises(AttributeError, match="available"):
        _ = cfg.not_a_setting
    with pytest.raises(TypeError, match="read-only"):
        cfg["runs"] = 1


def test_one_list_of_profile_names_and_every_series_keeps_its_profiles():
    import pkgutil

    import dpgnn.series
    from dpgnn import cli, results, runner
    from dpgnn.profiles import PROFILE_NAMES, check_profile, series_profiles

    assert PROFILE_NAMES == ("smoke", "test", "paper")
    assert runner.PROFILES is PROFILE_NAMES and results.PROFILES is PROFILE_NAMES and cli.PROFILES is PROFILE_NAMES
    papers = [m.name for m in pkgutil.iter_modules(dpgnn.series.__path__) if not m.name.startswith("_")]
    with_profiles = [p for p in papers if hasattr(__import__(f"dpgnn.series.{p}", fromlist=["x"]), "PROFILES")]
    assert {"lpgcn", "lpgnn", "drw", "privgnn", "progap"} <= set(with_profiles)
    for paper in with_profiles:
        assert tuple(series_profiles(paper)) == PROFILE_NAMES, paper
        assert settings(paper, "test").profile == "test"
    assert check_profile("test") == "test"
    with pytest.raises(ValueError, match="profile must be one of"):
        check_profile("huge")
