import pytest

import dpgnn.methods as methods
from dpgnn.methods import RunResult, register


def test_register_and_get_roundtrip_and_duplicates_refused():
    @register("lpgcn", "toy-method", "none", description="a test entry")
    def toy(data, config, *, seed, device="auto"):
        return RunResult(metrics={"val": 0.5, "test": config["t"] + seed}, ledger={})

    spec = methods.get("LPGCN", "Toy-Method", "none")
    assert spec.key == ("lpgcn", "toy-method", "none") and spec.description == "a test entry"
    assert methods.run("lpgcn", "toy-method", "none", None, {"t": 0.25}, seed=0).test == 0.25
    assert ("lpgcn", "toy-method", "none") in methods.available("lpgcn")

    def other(data, config, *, seed, device="auto"):
        raise AssertionError

    with pytest.raises(ValueError, match="already registered"):
        register("lpgcn", "toy-method", "none")(other)
    methods._REGISTRY.pop(("lpgcn", "toy-method", "none"))


def test_unknown_keys_list_the_valid_ones():
    with pytest.raises(ValueError, match="valid papers"):
        methods.get("nosuch", "x", "none")
    with pytest.raises(ValueError, match="valid levels"):
        methods.get("lpgcn", "x", "galaxy")
    with pytest.raises(ValueError, match="unknown method 'nosuch'"):
        methods.get("drw", "nosuch", "node")


def test_run_result_properties():
    r = RunResult(metrics={"test": 0.7}, ledger={})
    assert r.test == 0.7 and r.val != r.val  # NaN when no validation metric
