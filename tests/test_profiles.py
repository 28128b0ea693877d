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
        cfg.not_a_setting
    with pytest.raises(TypeError, match="read-only"):
        cfg["runs"] = 1
