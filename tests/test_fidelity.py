"""A fidelity is its string everywhere a stored config or a CSV sees it, and only ``parse`` makes one."""

import json

import pandas as pd
import pytest

from dpgnn.fidelity import FIDELITIES, Fidelity, parse
from dpgnn.utils import config_hash


@pytest.mark.parametrize("value", FIDELITIES)
def test_a_fidelity_serialises_formats_and_hashes_as_its_string(value):
    f = parse(value)
    assert f is Fidelity(value) and f == value and str(f) == f"{f}" == value and repr(f) == repr(value)
    assert json.dumps({"fidelity": f}) == json.dumps({"fidelity": value})
    assert config_hash({"fidelity": f}) == config_hash({"fidelity": value})
    assert pd.DataFrame({"fidelity": [f]}).to_csv() == pd.DataFrame({"fidelity": [value]}).to_csv()


def test_an_unknown_fidelity_is_one_line_naming_the_valid_ones():
    with pytest.raises(ValueError, match=r"teacher must be one of \('paper', 'authors_code'\), got 'sound'"):
        parse("sound", "teacher")
