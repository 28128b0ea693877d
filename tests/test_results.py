import json

import numpy as np
import pandas as pd
import pytest

from dpgnn.reference import load_reference, papers
from dpgnn.report import bootstrap_ci_halfwidth, build_report, compare, counts, spread
from dpgnn.results import ResultStore
from dpgnn.sweep import grid, run_grid
from dpgnn.utils import config_hash


def test_store_append_load_and_resume(tmp_path):
    store = ResultStore("lpgcn", "test", root=tmp_path)
    assert store.load("table2").empty
    store.append(
        "table2",
        [
            dict(
                dataset="cora",
                method="pgc",
                setting="eps=1",
                metric="micro_f1",
                value=57.0,
                config_hash="abc",
                ledger={"epsilon": 1.0},
            )
        ],
    )
    df = store.load("table2")
    assert len(df) == 1 and df.loc[0, "profile"] == "test" and df.loc[0, "paper"] == "lpgcn"
    assert json.loads(df.loc[0, "ledger"]) == {"epsilon": 1.0}
    assert "torch=" in df.loc[0, "versions"]
    # a new column later widens the header without losing old rows
    store.append(
        "table2",
        [
            dict(
                dataset="cora",
                method="lm",
                setting="eps=1",
                metric="micro_f1",
                value=50.0,
                config_hash="def",
                epochs=12,
            )
        ],
    )
    df = store.load("table2")
    assert len(df) == 2 and df["epochs"].isna().sum() == 1
    assert store.done("table2") == {"abc", "def"}
    # profiles are separate folders
    assert ResultStore("lpgcn", "paper", root=tmp_path).load("table2").empty


def test_compact_archives_rows_and_appends_continue(tmp_path):
    store = ResultStore("drw", "test", root=tmp_path)
    rows = [
        dict(
            dataset="cora",
            method="drw",
            setting="1-layer",
            metric="f1",
            value=float(i),
            config_hash=f"h{i}",
            ledger={"epsilon": 8.0, "event": {"count": i}},
        )
        for i in range(50)
    ]
    store.append("grid", rows)
    before = store.load("grid")
    arc = store.compact("grid")
    assert arc.name == "grid.csv.gz" and not store.path("grid").exists()
    assert arc.stat().st_size < 0.5 * len(before.to_csv(index=False))
    pd.testing.assert_frame_equal(store.load("grid"), before)
    assert store.artifacts() == ["grid"] and store.done("grid") == {f"h{i}" for i in range(50)}
    # new rows go to the live csv (a wider header there does not duplicate the archived rows)
    store.append(
        "grid",
        [dict(dataset="cora", method="drw", setting="1-layer", metric="f1", value=1.0, config_hash="new", seconds=3.0)],
    )
    store.append(
        "grid",
        [
            dict(
                dataset="cora",
                method="drw",
                setting="1-layer",
                metric="f1",
                value=2.0,
                config_hash="new2",
                seconds=4.0,
                steps=9,
            )
        ],
    )
    df = store.load("grid")
    assert len(df) == 52 and df["config_hash"].is_unique and df["steps"].notna().sum() == 1
    # compacting again folds the live rows in; clear removes both files
    store.compact("grid")
    assert len(store.load("grid")) == 52 and not store.path("grid").exists()
    store.clear("grid")
    assert store.load("grid").empty and store.artifacts() == []
    with pytest.raises(ValueError, match="no rows"):
        store.compact("grid")


def test_store_rejects_bad_names(tmp_path):
    with pytest.raises(ValueError, match="profile"):
        ResultStore("lpgcn", "a/b", root=tmp_path)
    with pytest.raises(ValueError, match="artifact"):
        ResultStore("lpgcn", "test", root=tmp_path).path("x/y")


def test_run_grid_only_runs_missing_cells(tmp_path):
    store = ResultStore("demo", "test", root=tmp_path)
    calls = []

    def fn(cell):
        calls.append(cell)
        return [dict(metric="m1", value=cell["x"] * 2), dict(metric="m2", value=cell["x"] * 3)]

    cells = grid(x=[1, 2, 3], run=[0])
    out = run_grid(store, "art", cells[:2], fn)
    assert len(calls) == 2 and len(out) == 4
    out = run_grid(store, "art", cells, fn)  # resumes: only x=3 runs
    assert len(calls) == 3 and len(out) == 6
    assert set(out["config_hash"]) == {config_hash(c) for c in cells}
    run_grid(store, "art", cells, fn, force=True)
    assert len(calls) == 6


def test_run_grid_keeps_finished_cells_when_a_cell_fails(tmp_path):
    store = ResultStore("demo", "test", root=tmp_path)

    def fn(cell):
        if cell["x"] == 2:
            raise RuntimeError("boom")
        return dict(metric="m", value=1.0)

    with pytest.raises(RuntimeError, match="boom"):
        run_grid(store, "art", grid(x=[1, 2, 3]), fn)
    assert store.load("art")["x"].tolist() == [1]


def test_run_grid_reuses_cells_stored_under_another_artifact(tmp_path):
    store = ResultStore("demo", "test", root=tmp_path)
    calls = []

    def fn(cell):
        calls.append(cell["x"])
        return [dict(metric="m", value=cell["x"] * 2.0)]

    run_grid(store, "table", grid(x=[1, 2], run=[0]), fn)
    out = run_grid(store, "sweep", grid(x=[1, 2, 3], run=[0]), fn, share=["table", "missing"])
    assert calls == [1, 2, 3]  # x=1 and x=2 copied from "table", only x=3 trained
    assert sorted(out["value"]) == [2.0, 4.0, 6.0] and set(out["artifact"]) == {"sweep"}
    assert set(out["config_hash"]) == {config_hash(c) for c in grid(x=[1, 2, 3], run=[0])}
    run_grid(store, "sweep", grid(x=[1, 2, 3], run=[0]), fn, share=["table"], force=True)
    assert calls == [1, 2, 3, 1, 2, 3]  # force recomputes every cell: none is copied from a donor


def _append_many(root, tag, n):
    store = ResultStore("demo", "test", root=root)
    for i in range(n):
        row = dict(dataset="d", method=tag, metric="m", value=float(i), config_hash=f"{tag}{i}")
        if i % 10 == 0:
            row[f"extra_{tag}_{i}"] = 1  # a new column: the live file is rewritten with a wider header
        store.append("art", [row, dict(row, metric="m2")])


def test_concurrent_appends_from_processes_lose_no_rows(tmp_path):
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(tmp_path, t, 60)) for t in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    assert all(p.exitcode == 0 for p in procs)
    df = ResultStore("demo", "test", root=tmp_path).load("art")
    assert len(df) == 240 and df.groupby("method").size().to_dict() == {"a": 120, "b": 120}
    assert set(df["config_hash"]) == {f"{t}{i}" for t in "ab" for i in range(60)}


def test_store_locks_live_outside_the_results_folder(tmp_path):
    from dpgnn.results import lock_path

    store = ResultStore("demo", "test", root=tmp_path / "results")
    store.append("art", [dict(dataset="d", method="m", metric="acc", value=1.0, config_hash="h")])
    store.replace("pure", [dict(dataset="d", method="m", metric="acc", value=1.0, config_hash="h")])
    store.record_skip("pubmed", "raw files missing")
    assert sorted(p.name for p in (tmp_path / "results").rglob("*")) == [
        "art.csv",
        "demo",
        "pure.csv",
        "skipped.csv",
        "test",
    ]
    lock = lock_path(store.path("art"))
    assert lock.is_file() and tmp_path not in lock.parents
    assert lock_path(tmp_path / "results" / "x" / ".." / "test" / "demo" / "art.csv") == lock  # one lock per file
    assert lock_path(store.path("pure")) != lock


def test_swap_in_waits_for_the_store_lock_and_keeps_other_rows(tmp_path):
    """A writer holding the artifact's lock (an append in another process) blocks the swap-in until it is done; the
    swap then replaces only the staged cells' rows and clears the staging store."""
    import threading

    from dpgnn.results import _locked

    store = ResultStore("demo", "test", root=tmp_path)
    store.append("art", [dict(metric="m", value=v, config_hash=h) for h, v in (("a", 1.0), ("b", 2.0))])
    store.staging().append("art", [dict(metric="m", value=20.0, config_hash="b")])
    before = store.path("art").read_bytes()
    with _locked(store.path("art")):
        swap = threading.Thread(target=store.swap_in, args=("art", {"b"}))
        swap.start()
        swap.join(timeout=1.0)
        assert swap.is_alive()  # waiting for the lock
        assert store.path("art").read_bytes() == before
    swap.join(timeout=30)
    assert not swap.is_alive()
    df = store.load("art").sort_values("config_hash")
    assert df["value"].tolist() == [1.0, 20.0]
    assert store.staging().load("art").empty


def test_a_run_over_an_unavailable_dataset_leaves_git_status_clean(tmp_path, monkeypatch):
    """In a fresh repository with the project's .gitignore, a paper-profile run that skips an unavailable dataset
    records the skip where the report reads it and leaves no untracked file (no skip log, no lock) behind."""
    import shutil
    import subprocess
    import urllib.error

    import dpgnn.data.download as dl
    from dpgnn.data import load_dataset
    from dpgnn.series import load_or_skip
    from dpgnn.utils import ROOT

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "clone"
    repo.mkdir()
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
            cwd=repo,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    git("init", "-q")
    git("add", ".gitignore")
    git("commit", "-q", "-m", "ignore rules")
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(repo))
    monkeypatch.setenv("DPGNN_DATA_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DPGNN_DATA_MIRROR", str(tmp_path / "empty-mirror"))

    def offline(url, dest):
        raise urllib.error.URLError("offline")

    monkeypatch.setattr(dl, "DOWNLOADER", offline)
    store = ResultStore("lpgnn", "paper")
    assert load_or_skip(store, "pubmed", load_dataset, artifact="fig_a") is None
    assert store.skipped()[["artifact", "dataset"]].values.tolist() == [["fig_a", "pubmed"]]  # the report reads it
    assert (repo / "results" / "paper" / "lpgnn" / "skipped.csv").is_file()
    assert git("status", "--porcelain", "--untracked-files=all") == ""
    store.append("fig_a", [dict(dataset="cora", method="m", metric="acc", value=0.5, config_hash="h")])
    assert git("status", "--porcelain", "--untracked-files=all").splitlines() == ["?? results/paper/lpgnn/fig_a.csv"]
    assert not list(repo.rglob("*.lock"))


def test_grid_rejects_duplicates_and_empty_axes(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        grid(x=[])
    store = ResultStore("demo", "test", root=tmp_path)
    with pytest.raises(ValueError, match="duplicate"):
        run_grid(store, "art", [{"x": 1}, {"x": 1}], lambda c: {"value": 0})


def test_spread_conventions():
    v = [1.0, 2.0, 3.0, 4.0]
    assert spread(v, "std_ddof0") == pytest.approx(np.std(v))
    assert spread(v, "std") == pytest.approx(np.std(v, ddof=1))
    # bootstrap CI half-width of the mean shrinks like 1/sqrt(n) and is near 1.96*sd/sqrt(n)
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    assert bootstrap_ci_halfwidth(x) == pytest.approx(1.96 * x.std() / 20, rel=0.15)
    with pytest.raises(ValueError, match="spread_kind"):
        spread(v, "iqr")


def test_compare_status_and_tolerance():
    ref = pd.DataFrame(
        [
            dict(
                paper="p",
                artifact="t",
                dataset="d",
                method="m",
                setting="s",
                metric="acc",
                value=50.0,
                spread=0.5,
                spread_kind="std_ddof0",
                tolerance=2.0,
                approx=False,
                source="Table 1",
            ),
            dict(
                paper="p",
                artifact="t",
                dataset="d",
                method="m2",
                setting="s",
                metric="acc",
                value=50.0,
                spread=3.0,
                spread_kind="std_ddof0",
                tolerance=2.0,
                approx=False,
                source="Table 1",
            ),
            dict(
                paper="p",
                artifact="t",
                dataset="e",
                method="m",
                setting="s",
                metric="acc",
                value=50.0,
                spread=None,
                spread_kind="none",
                tolerance=2.0,
                approx=True,
                source="Fig 1",
            ),
        ]
    )
    ours = pd.DataFrame(
        [
            dict(paper="p", artifact="t", dataset="d", method="m", setting="s", metric="acc", value=v)
            for v in (52.5, 53.5)
        ]
        + [  # mean 53.0: 3 points off, tolerance max(2, 1.0) = 2 -> outside
            dict(paper="p", artifact="t", dataset="d", method="m2", setting="s", metric="acc", value=55.0)
        ]
    )  # tol 6
    skipped = pd.DataFrame([dict(artifact="*", dataset="e", reason="raw files missing")])
    rep = compare(ref, ours, profile="test", skipped=skipped).set_index("method", append=True)
    rows = rep.reset_index().set_index(["dataset", "method"])
    assert rows.loc[("d", "m"), "status"] == "outside" and rows.loc[("d", "m"), "n_runs"] == 2
    assert rows.loc[("d", "m"), "ours_spread"] == pytest.approx(0.5)
    assert rows.loc[("d", "m2"), "status"] == "within" and rows.loc[("d", "m2"), "tolerance"] == 6.0
    assert rows.loc[("e", "m"), "status"] == "not_run" and "raw files missing" in rows.loc[("e", "m"), "note"]
    c = counts(rep.reset_index())
    assert c[["within", "outside", "not_run"]].sum().tolist() == [1, 1, 1]


def test_reference_data_is_well_formed():
    assert "lpgcn" in papers()
    ref = load_reference("lpgcn")
    assert not ref.duplicated(["artifact", "dataset", "method", "setting", "metric"]).any()
    assert ref["source"].str.len().min() > 20
    t2 = load_reference("lpgcn", "table2")
    # Table 2: 5 datasets x (3 mechanisms x 3 eps + RAW) x 2 tasks
    assert len(t2) == 5 * 10 * 2
    assert (
        t2.query("dataset == 'cora' and method == 'pgc' and setting == 'eps=5' and metric == 'micro_f1'")[
            "value"
        ].item()
        == 80.2
    )
    with pytest.raises(ValueError, match="available"):
        load_reference("lpgcn", "table99")
    with pytest.raises(ValueError, match="no reference data"):
        load_reference("nopaper")


def test_build_report_writes_files(tmp_path):
    rep = build_report("test", papers=["lpgcn"], root=tmp_path)
    assert (rep["status"] == "not_run").all()
    for ext in ("csv", "md", "html"):
        assert (tmp_path / "test" / f"report.{ext}").exists()
    cols = pd.read_csv(tmp_path / "test" / "report.csv").columns
    for c in [
        "paper",
        "artifact",
        "dataset",
        "method",
        "setting",
        "metric",
        "paper_value",
        "paper_spread",
        "ours_value",
        "ours_spread",
        "n_runs",
        "profile",
        "status",
    ]:
        assert c in cols


def test_replace_with_identical_rows_leaves_the_file_byte_identical(tmp_path, monkeypatch):
    import dpgnn.results as results

    store = ResultStore("lpgcn", "test", root=tmp_path)
    rows = [
        dict(
            dataset="cora",
            method=m,
            setting="eps=1",
            metric="variance",
            value=v,
            config_hash=m,
            ledger={"epsilon": 1.0},
        )
        for m, v in (("lm", 0.5), ("pm", 0.25))
    ]
    store.replace("fig1", rows)
    path = store.path("fig1")
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    # later: other code and another time; the same values must not touch the file
    monkeypatch.setattr(results.time, "strftime", lambda fmt: "2099-01-01T00:00:00")
    store2 = ResultStore("lpgcn", "test", root=tmp_path)
    store2._versions = "dpgnn=9.9.9;torch=0"
    store2.replace("fig1", rows)
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime
    # one changed value: only that row gets the new provenance, the other keeps its stored one
    store2.replace("fig1", [rows[0], {**rows[1], "value": 0.75}])
    df = store2.load("fig1").set_index("method")
    assert df.loc["pm", "value"] == 0.75 and df.loc["pm", "timestamp"] == "2099-01-01T00:00:00"
    assert df.loc["lm", "timestamp"] != "2099-01-01T00:00:00" and df.loc["lm", "versions"] != store2._versions
    # replace writes exactly what append writes (same format as every other artifact)
    fresh = [ResultStore("lpgcn", "test", root=tmp_path / d) for d in ("x", "y")]
    fresh[0].append("fig1", rows)
    fresh[1].replace("fig1", rows)
    assert fresh[0].path("fig1").read_bytes() == fresh[1].path("fig1").read_bytes()
    store2.replace("fig1", [])
    assert not path.exists() and store2.load("fig1").empty


def test_skipped_is_written_in_a_stable_order_and_not_rewritten_when_unchanged(tmp_path):
    a, b = ResultStore("lpgcn", "test", root=tmp_path / "a"), ResultStore("lpgcn", "test", root=tmp_path / "b")
    skips = [("fig3", "flickr", "no files"), ("fig2", "flickr", "no files"), ("*", "elliptic", "no files")]
    for art, ds, why in skips:
        a.record_skip(ds, why, artifact=art)
    for art, ds, why in reversed(skips):
        b.record_skip(ds, why, artifact=art)
    pa, pb = a.dir / "skipped.csv", b.dir / "skipped.csv"
    assert pa.read_bytes() == pb.read_bytes()
    mtime = pa.stat().st_mtime_ns
    a.record_skip("flickr", "no files", artifact="fig2")  # recorded again, as a rerun does
    a.clear_skip("cora", artifact="fig2")  # nothing to clear
    assert pa.stat().st_mtime_ns == mtime
    assert list(a.skipped()["artifact"]) == ["*", "fig2", "fig3"]


def test_rerunning_a_pure_computation_leaves_the_files_byte_identical(tmp_path, monkeypatch):
    """The LPGCN variance notebook recomputes its artifacts whole; rerunning it must not rewrite them."""
    import dpgnn.results as results
    from dpgnn.data import DatasetUnavailable
    from dpgnn.methods import lpgcn as method
    from dpgnn.profiles import settings
    from dpgnn.series import lpgcn

    def unavailable(name):
        raise DatasetUnavailable(f"{name}: no files here")

    monkeypatch.setattr(method, "prepare", unavailable)  # analytic figures and skip records, no data needed
    cfg = settings("lpgcn", "test", datasets=["flickr", "cora"])
    lpgcn.run_variance(cfg, ResultStore("lpgcn", "test", root=tmp_path))
    files = sorted(p for p in (tmp_path / "test" / "lpgcn").glob("*.csv"))
    assert files
    before = {p.name: p.read_bytes() for p in files}
    monkeypatch.setattr(results.time, "strftime", lambda fmt: "2099-01-01T00:00:00")
    lpgcn.run_variance(cfg, ResultStore("lpgcn", "test", root=tmp_path))
    assert {p.name: p.read_bytes() for p in files} == before


def test_merge_from_appends_only_the_cells_this_store_lacks_as_stored(tmp_path):
    """Two copies of a store that both went on from the same rows (here a main checkout and a GPU run): the merge
    appends the other's new cells with their stored text, skips the cells both have, and widens the header for a
    column only the other has; merging again appends nothing."""

    def row(h, value, **extra):
        return dict(dataset="cora", method="pgc", setting="s", metric="f1", value=value, config_hash=h, **extra)

    main, gpu = (
        ResultStore("bench", "paper", root=tmp_path / "main"),
        ResultStore("bench", "paper", root=tmp_path / "gpu"),
    )
    for s in (main, gpu):
        s.append("edge", [row("a", 1.0)])
    main.append("edge", [row("b", 2.0)])
    gpu.append("edge", [row("c", 0.1 + 0.2, cell_device="cuda:0"), row("b", 9.0)])
    gpu.compact("edge")  # the other's rows may sit in its archive
    gpu.append("edge", [row("d", 4.0)])
    assert main.merge_from(gpu, "edge") == 2
    got = main.load("edge").set_index("config_hash")
    assert list(got.index) == ["a", "b", "c", "d"]
    assert got.loc["b", "value"] == 2.0  # a cell both have keeps this store's row
    assert got.loc["c", "value"] == 0.1 + 0.2 and got.loc["c", "cell_device"] == "cuda:0"
    other = gpu.load("edge").set_index("config_hash")
    assert got.loc["d", "timestamp"] == other.loc["d", "timestamp"]
    before = main.path("edge").read_bytes()
    assert main.merge_from(gpu, "edge") == 0 and main.path("edge").read_bytes() == before
    assert main.merge_from(ResultStore("bench", "paper", root=tmp_path / "none"), "edge") == 0
    # an artifact computed whole (no config hashes, stored with replace) is not merged row by row
    for s in (main, gpu):
        s.replace("eps", [dict(dataset="cora", method="m", setting="s", metric="epsilon", value=1.0)])
    assert main.merge_from(gpu, "eps") == 0 and len(main.load("eps")) == 1


def test_land_rows_merges_every_artifact_of_a_profile(tmp_path):
    """``scripts/land_rows.py``: every artifact of every paper under the source's ``results/<profile>/`` lands in
    the destination's stores; a folder without results is one line, nothing written."""
    import importlib.util
    import tarfile
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("land_rows", Path(__file__).parents[1] / "scripts" / "land_rows.py")
    land_rows = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(land_rows)

    def rows(*hashes):
        return [dict(dataset="d", method="m", setting="s", metric="f1", value=1.0, config_hash=h) for h in hashes]

    src, dst = tmp_path / "src", tmp_path / "dst"
    ResultStore("bench", "paper", root=src / "results").append("edge", rows("a", "b"))
    ResultStore("drw", "paper", root=src / "results").append("table1", rows("c"))
    ResultStore("bench", "paper", root=dst / "results").append("edge", rows("a"))
    ResultStore("bench", "smoke", root=src / "results").append("edge", rows("z"))
    got = land_rows.land(src, "paper", dest=dst)
    assert got == {("bench", "edge"): 1, ("drw", "table1"): 1}
    assert ResultStore("drw", "paper", root=dst / "results").done("table1") == {"c"}
    assert land_rows.land(src, "paper", ["bench"], dest=dst) == {("bench", "edge"): 0}
    sent = tmp_path / "sent"  # what scripts/gpu_grid.sh sends back: one archive of the results tree
    sent.mkdir()
    ResultStore("bench", "paper", root=src / "results").append("edge", rows("d"))
    with tarfile.open(sent / "results.tar.gz", "w:gz") as tar:
        tar.add(src / "results", arcname="results")
    assert land_rows.land(sent, "paper", dest=dst) == {("bench", "edge"): 1, ("drw", "table1"): 0}
    assert land_rows.land(sent / "results.tar.gz", "paper", dest=dst) == {("bench", "edge"): 0, ("drw", "table1"): 0}
    assert ResultStore("bench", "paper", root=dst / "results").done("edge") == {"a", "b", "d"}
    with pytest.raises(SystemExit, match="no .*results/paper"):
        land_rows.land(tmp_path / "empty", "paper", dest=dst)
    assert not (tmp_path / "empty").exists()
