"""The guarantee statement contract (``dpgnn.privacy.guarantee``) and the fields on stored rows of the series that
compute without training (PrivGNN's ε tables, DRW's sampling bound, LPGCN's analytic variances)."""

from __future__ import annotations

import json

import pytest

from dpgnn.privacy.guarantee import (
    AS_PUBLISHED,
    CLIPPING,
    LEDGER_FIELDS,
    MODEL_SELECTION,
    PREPROCESSING,
    SOUND,
    check_ledger,
    non_private,
    statement,
)
from dpgnn.profiles import settings
from dpgnn.results import ResultStore


def test_statement_rules():
    s = statement(SOUND, "add/remove one directed edge", accounted="K Gaussians")
    assert s == {
        "guarantee": "sound",
        "neighbouring": "add/remove one directed edge",
        "not_covered": [],
        "accounted": "K Gaussians",
    }
    p = statement(AS_PUBLISHED, "x", accounted="y", not_covered=[CLIPPING, PREPROCESSING, CLIPPING])
    assert p["not_covered"] == [CLIPPING, PREPROCESSING]
    with pytest.raises(ValueError, match="sound guarantee"):
        statement(SOUND, "x", accounted="y", not_covered=[MODEL_SELECTION])
    with pytest.raises(ValueError, match="as_published guarantee must say"):
        statement(AS_PUBLISHED, "x", accounted="y")
    with pytest.raises(ValueError, match="not_covered entries"):
        statement(AS_PUBLISHED, "x", accounted="y", not_covered=["vibes"])
    with pytest.raises(ValueError, match="guarantee must be one of"):
        statement("roughly", "x", accounted="y")
    with pytest.raises(ValueError, match="neighbouring"):
        statement(SOUND, " ", accounted="y")
    assert check_ledger(json.dumps(non_private()))["guarantee"] == SOUND
    with pytest.raises(ValueError, match="lacks"):
        check_ledger({"level": "node", "epsilon": 1.0})


def _check_store(store, artifacts):
    n = 0
    for a in artifacts:
        df = store.load(a)
        assert len(df), a
        for led in df["ledger"]:
            led = check_ledger(led)
            assert all(f in led for f in LEDGER_FIELDS)
            n += 1
    return n


def test_rows_of_computing_series_carry_the_fields(tmp_path):
    from dpgnn.series import drw, privgnn

    st = ResultStore("privgnn", "test", root=tmp_path)
    out = privgnn.run_epsilon(settings("privgnn", "test", eps_lambdas=[1.0]), st)
    assert _check_store(st, list(out)) > 0
    t9 = st.load("table9_eps")
    pub = t9[t9["method"] == "privgnn"]
    assert {json.loads(s)["guarantee"] for s in pub["ledger"]} == {AS_PUBLISHED}
    snd = t9[t9["method"] == "privgnn (sound)"]
    assert len(snd) == len(pub) and {json.loads(s)["guarantee"] for s in snd["ledger"]} == {SOUND}
    from dpgnn.methods.privgnn import DATASETS
    from dpgnn.privacy.privgnn import sound_epsilon

    for r in snd.itertuples():  # the sound rows are the exact accountant at the stated δ, whatever the paper printed
        info = DATASETS[r.dataset]
        assert r.value == sound_epsilon(r.lam, int(r.queries), r.gamma, info.delta_stated, info.classes)
    side = privgnn.epsilon_side_by_side(st, "table9_eps")
    assert side.loc[side["method"] == "privgnn", "sound / paper"].dropna().gt(0).all()
    st2 = ResultStore("drw", "test", root=tmp_path)
    drw.run_bound(settings("drw", "test"), st2)
    assert _check_store(st2, ["bound"]) > 0
