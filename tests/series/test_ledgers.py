"""dpgnn.series.ledgers: guarantee fields backfilled from a stored row's configuration, nothing else changed."""

import gzip
import hashlib
import json
import math

import pandas as pd
import pytest

from dpgnn.methods import lpgcn, lpgnn
from dpgnn.privacy import progap
from dpgnn.privacy.guarantee import LEDGER_FIELDS, check_ledger
from dpgnn.results import ResultStore
from dpgnn.series.ledgers import BackfillError, backfill, rewrite_ledgers

GUARANTEE = (*LEDGER_FIELDS, "issues")


def _old(led):
    """A ledger as rows were stored before the guarantee fields existed (neighbouring had other wording)."""
    return {**{k: v for k, v in led.items() if k not in GUARANTEE}, "neighbouring": "old wording"}


def _row(method, led, value, **extra):
    return {
        "dataset": "cora",
        "method": method,
        "setting": "s",
        "metric": "acc",
        "value": value,
        "run": 0,
        "seed": 0,
        "level": led["level"],
        "epsilon": led["epsilon"],
        "delta": led["delta"],
        "config_hash": f"h{value}",
        "ledger": led,
        **extra,
    }


def _files(root):
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.name.endswith(".lock")}


@pytest.fixture
def store(tmp_path):
    fresh = {"pm": lpgcn.privacy_ledger("pm", 2.0, 7), "raw": lpgcn.privacy_ledger("raw", None, 7)}
    st = ResultStore("lpgcn", "test", root=tmp_path)
    st.append("table2", [_row("pm", _old(fresh["pm"]), 0.5, epochs=3), _row("raw", _old(fresh["raw"]), 0.75, epochs=4)])
    st.append("table2", [_row("pm", fresh["pm"], 0.25, epochs=5)])  # a newer row: already carries the fields
    pg = ResultStore("progap", "test", root=tmp_path)
    none = progap.privacy_ledger("none", depth=2)
    pg.append("runs", [_row("progap", _old(none), 0.6)])
    pg.compact("runs")  # an archive stays an archive
    led = lpgnn.privacy_ledger("mbm", 1.0, 2.0, 10, m=3)
    ResultStore("lpgnn", "test", root=tmp_path).append("runs", [_row("mbm", _old(led), 0.1)])
    return tmp_path, fresh, none, led


def test_backfill_adds_the_builders_fields_and_changes_nothing_else(store):
    root, fresh, none, led = store
    before = {
        (p, a): ResultStore(p, "test", root=root).load(a)
        for p, a in (("lpgcn", "table2"), ("progap", "runs"), ("lpgnn", "runs"))
    }
    changed = backfill("test", root=root)
    assert sorted(changed.values()) == [1, 1, 2]
    for (p, a), old in before.items():
        new = ResultStore(p, "test", root=root).load(a)
        other = [c for c in old.columns if c != "ledger"]
        pd.testing.assert_frame_equal(old[other], new[other])  # values, hashes, order
        for o, n in zip(old["ledger"], new["ledger"]):
            o, n = json.loads(o), check_ledger(n)
            assert {k: v for k, v in n.items() if k not in GUARANTEE} == {
                k: v for k, v in o.items() if k not in GUARANTEE
            }
    t2 = [json.loads(x) for x in ResultStore("lpgcn", "test", root=root).load("table2")["ledger"]]
    # a backfilled row says exactly what a fresh run's builder says
    assert {k: t2[0][k] for k in GUARANTEE if k in t2[0]} == {k: fresh["pm"][k] for k in GUARANTEE if k in fresh["pm"]}
    assert t2[0]["guarantee"] == "as_published" and t2[1]["guarantee"] == "sound"
    assert check_ledger(ResultStore("progap", "test", root=root).load("runs")["ledger"][0])["guarantee"] == "sound"
    lp = json.loads(ResultStore("lpgnn", "test", root=root).load("runs")["ledger"][0])
    assert lp["not_covered"] == led["not_covered"] and lp["accounted"] == led["accounted"]
    assert (root / "test" / "progap" / "runs.csv.gz").exists() and not (root / "test" / "progap" / "runs.csv").exists()
    with gzip.open(root / "test" / "progap" / "runs.csv.gz", "rt") as f:
        assert "guarantee" in f.read()


def test_backfill_is_idempotent(store):
    root = store[0]
    backfill("test", root=root)
    first = _files(root)
    assert not any(backfill("test", root=root).values())
    assert _files(root) == first


def test_a_file_of_complete_rows_is_left_byte_identical(tmp_path):
    st = ResultStore("lpgcn", "test", root=tmp_path)
    st.append("fig2", [_row("pm", lpgcn.privacy_ledger("pm", 1.0, 3), 0.5)])
    digest = hashlib.sha256(st.path("fig2").read_bytes()).hexdigest()
    assert backfill("test", "lpgcn", root=tmp_path) == {str(st.path("fig2")): 0}
    assert hashlib.sha256(st.path("fig2").read_bytes()).hexdigest() == digest


@pytest.mark.parametrize(
    "ledger, match",
    [
        # epsilon_node_total / epsilon is not a feature count
        ({**_old(lpgcn.privacy_ledger("pm", 2.0, 7)), "epsilon_node_total": 13.5}, "feature count"),
        # the stored mechanism is not what the method's builder gives
        ({**_old(lpgcn.privacy_ledger("pm", 2.0, 7)), "mechanism": "laplace"}, "mechanism"),
        # LPGNN: the stored total epsilon is not eps_x + eps_y, as the builder composes them
        ({**_old(lpgnn.privacy_ledger("mbm", 1.0, 2.0, 10, m=3)), "epsilon": 2.5}, "epsilon"),
        # LPGNN: a mechanism that names no feature method
        ({**_old(lpgnn.privacy_ledger("mbm", 1.0, 2.0, 10, m=3)), "mechanism": "features"}, "feature method"),
    ],
)
def test_an_underivable_row_raises_and_leaves_the_file(tmp_path, ledger, match):
    paper = "lpgnn" if "eps_x" in ledger else "lpgcn"
    st = ResultStore(paper, "test", root=tmp_path)
    st.append("table2", [_row("pm", ledger, 0.5)])
    raw = st.path("table2").read_bytes()
    with pytest.raises(BackfillError, match=match):
        backfill("test", root=tmp_path)
    assert st.path("table2").read_bytes() == raw


def test_an_unknown_paper_or_method_raises(tmp_path):
    ResultStore("newpaper", "test", root=tmp_path).append(
        "t", [_row("x", {"level": "node", "epsilon": 1.0, "delta": 0.0}, 0.5)]
    )
    with pytest.raises(BackfillError, match="no statement builder"):
        backfill("test", root=tmp_path)
    st = ResultStore("lpgcn", "test", root=tmp_path / "b")
    st.append("t", [_row("nope", {**_old(lpgcn.privacy_ledger("pm", 2.0, 7))}, 0.5)])
    with pytest.raises(BackfillError, match="nope"):
        backfill("test", root=tmp_path / "b")


def test_rewrite_keeps_mixed_line_endings_and_quoting():
    text = 'a,ledger,b\n1,"{""level"": ""none""}","x, y"\r\n2,{},\n'
    out = rewrite_ledgers(text, lambda row, led: {**led, "k": 1} if row["a"] == "1" else None)
    assert out == 'a,ledger,b\n1,"{""k"": 1, ""level"": ""none""}","x, y"\r\n2,{},\n'
    assert rewrite_ledgers(text, lambda row, led: None) == text
    with pytest.raises(BackfillError, match="round-trip"):
        rewrite_ledgers('a,ledger\n"1",{}\n', lambda row, led: None)  # needless quotes would be lost


def test_the_nonprivate_epsilon_stays_infinite(store):
    root = store[0]
    backfill("test", root=root)
    led = json.loads(ResultStore("lpgcn", "test", root=root).load("table2")["ledger"][1])
    assert math.isinf(led["epsilon"]) and led["neighbouring"] == "none (non-private)"


def _audit_row(artifact, method, led, **extra):
    return {**_row(method, led, 0.5, **extra), "artifact": artifact}


def test_audit_rows_get_the_statement_of_what_they_audit(tmp_path):
    from dpgnn.audit import argmax, canary, ldp

    st = ResultStore("audit", "test", root=tmp_path)
    st.append(
        "ldp",
        [
            _audit_row(
                "ldp",
                m,
                {"level": "ldp", "mechanism": m, "epsilon": 1.0, "delta": 0.0, "neighbouring": "feature entry"},
                broken=m == "broken_laplace",
            )
            for m in ("pgc", "broken_laplace")
        ],
    )
    st.append(
        "node",
        [
            _audit_row(
                "node",
                "mlp",
                {"level": "node", "epsilon": math.inf, "delta": 0.0, "noise_multiplier": 0.0, "neighbouring": "x"},
            )
        ],
    )
    st.append(
        "query",
        [
            _audit_row(
                "query",
                "q",
                {"level": "node", "epsilon": 0.5, "delta": 0.0, "mechanism": "Laplace(1/lam) on log_softmax, argmax"},
                lam=0.5,
                classes=4,
            )
        ],
    )
    assert sorted(backfill("test", "audit", root=tmp_path).values()) == [1, 1, 2]
    got = [check_ledger(x) for x in st.load("ldp")["ledger"]]
    assert {k: got[0][k] for k in GUARANTEE if k in got[0]} == ldp.guarantee_statement("pgc")
    assert got[0]["guarantee"] == "sound" and got[1]["guarantee"] == "as_published"
    node = check_ledger(st.load("node")["ledger"][0])
    assert {k: node[k] for k in GUARANTEE if k in node} == canary.node_statement(False)
    q = check_ledger(st.load("query")["ledger"][0])
    want = argmax.query_statement(0.5, 4, "log_softmax")
    assert {k: q[k] for k in GUARANTEE if k in q} == {k: want[k] for k in GUARANTEE}


@pytest.mark.parametrize(
    "artifact, ledger, match",
    [
        ("node", {"level": "node", "epsilon": 1.0, "delta": 1e-4, "noise_multiplier": 0.0}, "needs noise"),
        ("ldp", {"level": "ldp", "mechanism": "nope", "epsilon": 1.0, "delta": 0.0}, "unknown"),
        (
            "edge",
            {
                "level": "edge",
                "mechanism": "NAP Gaussian",
                "epsilon": 1.0,
                "delta": 1e-3,
                "sigma": 0.0,
                "aggregations": 1,
            },
            "noise",
        ),
        ("query", {"level": "node", "epsilon": 1.0, "delta": 0.0, "mechanism": "Laplace on logits"}, "noise is"),
        ("other", {"level": "node", "epsilon": 1.0, "delta": 0.0}, "artifact"),
    ],
)
def test_an_underivable_audit_row_raises(tmp_path, artifact, ledger, match):
    st = ResultStore("audit", "test", root=tmp_path)
    st.append(artifact, [_audit_row(artifact, "m", ledger, classes=10)])
    raw = st.path(artifact).read_bytes()
    with pytest.raises(BackfillError, match=match):
        backfill("test", "audit", root=tmp_path)
    assert st.path(artifact).read_bytes() == raw


def test_refresh_sound_recomputes_privgnn_and_edgerand_rows_and_nothing_else(tmp_path):
    """A tightened or corrected sound accountant: stored rows get the value today's builders give from the row's
    own ledger parameters; every other row and byte stays; a second pass changes nothing."""
    from dpgnn.methods.privgnn import privacy_ledger
    from dpgnn.privacy.privgnn import sound_epsilon
    from dpgnn.series.ledgers import refresh_sound_file

    priv = privacy_ledger("privgnn", lam=0.4, queries=300, gamma=0.3, delta=1e-3, num_classes=10, delta_sound=1e-4)
    old_priv = {**priv, "epsilon_sound": 99.0}
    old_edge = {
        "level": "edge",
        "method": "edgerand",
        "epsilon": 2.0,
        "delta": 0.0,
        "guarantee": "sound",
        "neighbouring": "add/remove one undirected edge",
        "not_covered": [],
        "accounted": "old",
    }
    other = {
        "level": "node",
        "epsilon": 1.0,
        "epsilon_sound": 5.0,
        "guarantee": "sound",
        "neighbouring": "x",
        "not_covered": [],
        "accounted": "y",
    }
    rows = [
        {"method": m, "value": v, "ledger": json.dumps(led, sort_keys=True)}
        for m, v, led in (("privgnn", 0.5, old_priv), ("edgerand", 0.6, old_edge), ("dp_gnn", 0.7, other))
    ]
    path = tmp_path / "rows.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert refresh_sound_file(path) == 2
    new = pd.read_csv(path)
    leds = [json.loads(t) for t in new["ledger"]]
    assert leds[0]["epsilon_sound"] == sound_epsilon(0.4, 300, 0.3, 1e-4, 10)
    assert leds[1]["guarantee"] == "as_published" and leds[1]["epsilon_sound"] == pytest.approx(2.2)
    assert leds[2] == other and list(new["value"]) == [0.5, 0.6, 0.7]
    before = path.read_bytes()
    assert refresh_sound_file(path) == 0 and path.read_bytes() == before


def test_refresh_restates_bench_rows_from_their_selected_run_and_search(tmp_path):
    from dpgnn.series.ledgers import refresh_sound_file

    flaw = "the removed node's own row is not covered by the sensitivity"
    run = {"guarantee": "as_published", "issues": [flaw], "not_covered": [], "accounted": "1 query"}
    run["neighbouring"] = "n"
    search = {"tuning": "random search, K ~ geometric"}
    stale = {
        "guarantee": "as_published",
        "neighbouring": "n",
        "not_covered": [],
        "accounted": "old wording",
        "issues": ["a stale reason"],
        "run": run,
        "search": search,
    }
    row = {"method": "progap", "guarantee": "as_published", "not_covered": "[]", "value": 0.5}
    path = tmp_path / "node.csv"
    pd.DataFrame([{**row, "ledger": json.dumps(stale, sort_keys=True)}]).to_csv(path, index=False)
    assert refresh_sound_file(path) == 1
    led = json.loads(pd.read_csv(path)["ledger"][0])
    assert led["issues"] == [flaw] and led["run"] == run and led["search"] == search
    assert led["accounted"].startswith("the selected trial's run (1 query)")
    before = path.read_bytes()
    assert refresh_sound_file(path) == 0 and path.read_bytes() == before
