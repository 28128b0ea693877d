"""dpgnn.engine on a real LocalCluster of 2 worker processes: identical rows to the sequential loop, a killed
worker's cell retried without duplicate rows, a killed driver resumed with only the missing cells, an interrupted
--force that keeps the old rows and resumes from its staged cells, stale-code reporting, the dry run, the SLURM
job script and the CLI."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import engine_toy
import pandas as pd
import pytest

from dpgnn import engine
from dpgnn.engine import planning
from dpgnn.results import ResultStore
from dpgnn.sweep import grid, run_grid
from dpgnn.utils import config_hash

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client

    cluster = engine.local_cluster(2, 1)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    return tmp_path


def _toy(root: Path) -> pd.DataFrame:
    return ResultStore("toy", "test").load("grid")


_SEQUENTIAL = """
import torch
torch.set_num_threads(1)
from dpgnn.profiles import settings
from dpgnn.results import ResultStore
from dpgnn.series import lpgcn as series
cfg = settings("lpgcn", "test")
store = ResultStore("lpgcn", "test")
series.run_estimation_error(cfg, store)
series.run_table2(cfg, store, device="cpu")
from dpgnn.series import lpgnn
lpgnn.run(settings("lpgnn", "test"), ResultStore("lpgnn", "test"), ["fig_a", "table_c"], device="cpu")
"""


def test_rows_identical_to_the_sequential_run(client, tmp_path, monkeypatch):
    """Every row equal except wall times (LPGCN's link-prediction cells included: their edge split draws PyG's
    negatives from a private generator, which a Dask worker's event loop cannot advance)."""
    from dpgnn.profiles import settings
    from dpgnn.series import lpgcn as series

    # the sequential loop (what the notebooks run), in a fresh process with the workers' environment
    env = {**os.environ, **engine.worker_env(1), "DPGNN_OUTPUT_ROOT": str(tmp_path / "seq")}
    subprocess.run([sys.executable, "-c", _SEQUENTIAL], env=env, check=True, capture_output=True)
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path / "dask"))
    out = engine.compute(
        ["lpgcn", "lpgnn"],
        profile="test",
        artifacts=["fig2", "fig3", "table2", "fig_a", "table_c"],
        client=client,
        device="cpu",
        progress=False,
    )
    cfg = settings("lpgcn", "test")
    assert out["missing"].sum() == 0 and out["computed"].sum() == len(series.table2_cells(cfg)) + 3 + 2
    par = ResultStore("lpgcn", "test")
    for paper, art in (("lpgcn", "fig2"), ("lpgcn", "fig3"), ("lpgcn", "table2"), ("lpgnn", "runs")):
        a = engine.comparable(ResultStore(paper, "test", root=tmp_path / "seq" / "results").load(art))
        b = engine.comparable(ResultStore(paper, "test").load(art))
        assert len(a) and a.shape == b.shape
        pd.testing.assert_frame_equal(a, b)
    assert set(par.load("table2")["cell_device"]) == {"cpu"} and (par.load("table2")["cell_seconds"] > 0).all()
    # the notebook path with train=False reads them without training
    assert len(series.run_table2(cfg, par, train=False)) == len(par.load("table2"))


def test_cells_of_one_batch_key_run_as_one_task_with_the_same_rows(client, root, tmp_path, monkeypatch):
    log = tmp_path / "batches"
    out = engine.run_specs(
        [(engine_toy.BATCHED, {"n": 7, "batch_log": str(log)})], "test", client=client, progress=False
    )
    assert out["computed"].sum() == 7 and out["missing"].sum() == 0
    # x // 3: {0, 1, 2} and {3, 4, 5} as two batches; {6} alone runs as a plain cell
    assert sorted(int(b) for b in log.read_text().split()) == [3, 3]
    batched = engine.comparable(_toy(root))
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path / "one_by_one"))
    engine.run_specs([(engine_toy.SPEC, {"n": 7})], "test", client=client, progress=False)
    pd.testing.assert_frame_equal(engine.comparable(_toy(root)), batched)


def test_longest_jobs_are_estimated_from_stored_cell_times(root):
    store = ResultStore("toy", "test")
    store.append(
        "grid",
        [
            {**c, "config_hash": config_hash(c), "cell_seconds": 1.0 + c["x"], "method": "toy"}
            for c in engine_toy.cells({"n": 3})
        ],
    )
    targets, _ = planning.plan_targets([(engine_toy.SPEC, {"n": 5})], "test", force=False, stale="keep")
    tasks = {
        h: planning.Task(h, "toy", c, engine_toy.SPEC, {}, [(t, h)])
        for t in targets.values()
        for h, c in t.cells.items()
    }
    est = planning.cost_estimates(targets)
    assert est[("toy", "grid")][("", "")] == pytest.approx(2.0)  # mean of the stored 1, 2, 3 s
    assert planning.cost(list(tasks.values()), est) == pytest.approx(5 * 2.0)


def test_killed_worker_cell_is_retried_without_duplicate_rows(client, root):
    marker = root / "killed"
    cfg = {"n": 6, "kill_x": 2, "marker": str(marker), "sleep": 0.2}
    out = engine.run_specs([(engine_toy.SPEC, cfg)], "test", client=client, progress=False)
    assert marker.exists()  # a worker died inside cell 2
    df = _toy(root)
    assert out["computed"].item() == 6 and out["failed"].item() == 0
    assert len(df) == 12 and df.groupby("config_hash").size().eq(2).all() and df["config_hash"].nunique() == 6


def test_killed_driver_resumes_with_only_the_missing_cells(client, root):
    log = root / "calls.log"
    cfg = {"n": 10, "sleep": 1.0, "log": str(log)}
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {str(TESTS)!r})
        import engine_toy
        from dpgnn import engine
        engine.run_specs([(engine_toy.SPEC, {cfg!r})], "test", scheduler={client.scheduler.address!r},
                         progress=False)
    """)
    env = {**os.environ, "DPGNN_OUTPUT_ROOT": str(root)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True)
    path = ResultStore("toy", "test").path("grid")
    t0 = time.time()
    while time.time() - t0 < 120:
        if path.exists() and _toy(root)["config_hash"].nunique() >= 3:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver dies with cells in flight
    proc.wait()
    before = set(_toy(root)["config_hash"])
    assert 3 <= len(before) < 10
    time.sleep(1.5)  # the scheduler releases the dead client's futures
    out = engine.run_specs([(engine_toy.SPEC, {**cfg, "sleep": 0.0})], "test", client=client, progress=False)
    df = _toy(root)
    assert out["computed"].item() == 10 - len(before)  # only the missing cells
    assert df["config_hash"].nunique() == 10 and len(df) == 20  # no duplicates


def test_interrupted_force_keeps_the_old_rows_and_a_complete_one_swaps(client, root, capsys):
    engine.run_specs([(engine_toy.SPEC, {"n": 4})], "test", client=client, progress=False)
    old = _toy(root)
    out = engine.run_specs(
        [(engine_toy.SPEC, {"n": 4, "offset": 100.0, "fail_x": 3})], "test", client=client, force=True, progress=False
    )
    assert out["failed"].item() == 1 and "old rows stay" in capsys.readouterr().out
    pd.testing.assert_frame_equal(_toy(root), old)  # nothing swapped in
    log = root / "ran.txt"
    out = engine.run_specs(
        [(engine_toy.SPEC, {"n": 4, "offset": 100.0, "log": str(log)})],
        "test",
        client=client,
        force=True,
        progress=False,
    )
    assert "3 of the 4 cells to recompute already staged by this code" in capsys.readouterr().out
    assert log.read_text().split() == ["3"] and out["computed"].item() == 1  # it resumed: only the failed cell ran
    new = _toy(root)
    assert len(new) == 8 and (new[new["metric"] == "m"]["value"] > 100).all()
    assert not any(ResultStore("toy", "test").dir.joinpath(".staging").glob("*.csv"))


def test_stale_cells_reported_and_rerun_on_request(client, root, capsys):
    engine.run_specs([(engine_toy.SPEC, {"n": 3})], "test", client=client, progress=False)
    store = ResultStore("toy", "test")
    df = store.load("grid")
    df.loc[df["config_hash"] == df["config_hash"].iloc[0], "versions"] = "dpgnn=0.0.1+gdeadbeef;torch=1"
    store.clear("grid")
    store.append("grid", df.to_dict("records"))
    out = engine.run_specs([(engine_toy.SPEC, {"n": 3})], "test", client=client, progress=False)
    text = capsys.readouterr().out
    assert "3 of 3 cells stored, 1 of them from other code;" in text
    assert text.count("from other code: kept (--stale rerun recomputes them)") == 1  # said once, not per artifact
    assert out["from_other_code"].item() == 1 and out["computed"].item() == 0
    out = engine.run_specs([(engine_toy.SPEC, {"n": 3})], "test", client=client, stale="rerun", progress=False)
    assert out["computed"].item() == 1 and out["from_other_code"].item() == 0
    assert len(store.load("grid")) == 6 and not store.load("grid")["versions"].str.contains("deadbeef").any()


def test_dry_run_estimates_the_cost_from_stored_cell_times(root, capsys):
    store = ResultStore("toy", "test")
    store.append(
        "grid",
        [
            {**c, "metric": "m", "value": 1.0, "config_hash": h, "cell_seconds": 2.0, "cell_device": "cuda:0"}
            for c in engine_toy.cells({"n": 2})
            for h in [__import__("dpgnn.utils", fromlist=["x"]).config_hash(c)]
        ],
    )
    out = engine.run_specs([(engine_toy.SPEC, {"n": 6})], "test", dry_run=True)
    text = capsys.readouterr().out
    assert "toy/grid (grid): 2 of 6 cells stored; 4 to compute, est. 8 s at 2.0 s/cell on cuda:0" in text
    assert "total: 6 cells, 2 stored, 4 to compute (est. 8 s), 0 not run (dataset not here)" in text
    assert out["est_seconds"].item() == pytest.approx(8.0) and len(store.load("grid")) == 2


def test_dry_run_counts_cells_of_datasets_not_here_as_not_run(root, capsys, monkeypatch):
    """A spec without its own availability check asks the data registry for the paper's graph."""
    from dpgnn.data import registry

    monkeypatch.setattr(registry, "paper_dataset_available", lambda name, paper=None: name != "toy-absent")

    def with_absent(cfg):
        return [*engine_toy.cells(cfg), *({**c, "dataset": "toy-absent"} for c in engine_toy.cells(cfg))]

    pairs = [(dataclasses.replace(engine_toy.SPEC, cells=with_absent), {"n": 2})]
    out = engine.run_specs(pairs, "test", dry_run=True)
    text = capsys.readouterr().out
    assert "0 of 4 cells stored; 2 to compute" in text and "; 2 not run (dataset not here)" in text
    assert out["missing"].item() == 2 and out["unavailable"].item() == 2
    assert "total: 4 cells, 0 stored, 2 to compute" in text


def _absent_only(cfg):
    return [{**c, "dataset": "toy-absent"} for c in engine_toy.cells(cfg)]


@pytest.mark.parametrize(
    ("recorded_as", "expected"),
    [
        ("grid", "toy-absent: its raw files are not in the mirror (the series' own words)"),
        ("*", "toy-absent: its raw files are not in the mirror (the series' own words)"),
        (None, "dataset files unavailable offline"),
    ],
)
def test_a_spec_check_keeps_the_reason_its_series_recorded(root, recorded_as, expected):
    """A dataset that fails the spec's cheap check is recorded ``not_run`` with the reason its series already wrote
    (for the artifact, else for all of the paper's), the generic reason only where there is none; nothing runs."""
    store = ResultStore("toy", "test")
    if recorded_as is not None:
        store.record_skip(
            "toy-absent",
            "toy-absent: its raw files are not in the mirror (the series' own words)",
            artifact=recorded_as,
        )
    spec = dataclasses.replace(engine_toy.SPEC, cells=_absent_only, available=lambda cfg, name: name != "toy-absent")
    out = engine.run_specs([(spec, {"n": 2})], "test", progress=False)
    sk = store.skipped()
    assert sk.loc[sk["artifact"] == "grid", "reason"].tolist() == [expected]
    assert out["skipped"].item() == "toy-absent" and out["computed"].item() == 0
    assert store.load("grid").empty


def _fails_at_3(c):
    if c["x"] == 3:
        raise RuntimeError("boom")
    return {"metric": "m", "value": 10 * c["x"]}


@pytest.mark.parametrize(("force", "stale"), [(False, "keep"), (False, "rerun"), (True, "keep")])
def test_run_grid_and_the_engine_plan_the_same_cells(root, monkeypatch, capsys, force, stale):
    """On one stored state (cells 0-2 of 6 stored, cell 1 by other code), the engine's plan and its dry-run counts
    name exactly the cells the sequential loop then runs, in the same order."""
    cfg = {"n": 6}
    store = ResultStore("toy", "test")
    run_grid(store, "grid", engine_toy.cells(cfg)[:3], lambda c: engine_toy.run(cfg, c, "cpu"))
    df = store.load("grid")
    df.loc[df["x"] == 1, "versions"] = "dpgnn=0.0.1+gdeadbeef;torch=1"
    store.clear("grid")
    store.append("grid", df.to_dict("records"))

    targets, _ = planning.plan_targets([(engine_toy.SPEC, cfg)], "test", force=force, stale=stale)
    t = targets[("toy", "grid")]
    planned = [h for h in t.cells if h not in t.done or h in t.redo]
    summary = engine.run_specs([(engine_toy.SPEC, cfg)], "test", dry_run=True, force=force, stale=stale)
    ran = []

    def recorded(cell):
        ran.append(config_hash(cell))
        return engine_toy.run(cfg, cell, "cpu")

    run_grid(store, "grid", engine_toy.cells(cfg), recorded, force=force, stale=stale)
    assert ran == planned
    assert len(ran) == {(False, "keep"): 3, (False, "rerun"): 4, (True, "keep"): 6}[(force, stale)]
    assert summary["missing"].item() == len(ran) and summary["stored"].item() == 3
    assert summary["from_other_code"].item() == 1


def test_run_grid_force_swaps_only_when_complete(root):
    store = ResultStore("demo", "test")
    run_grid(store, "art", grid(x=[1, 2, 3]), lambda c: {"metric": "m", "value": c["x"]})
    before = store.load("art")

    with pytest.raises(RuntimeError, match="boom"):
        run_grid(store, "art", grid(x=[1, 2, 3]), _fails_at_3, force=True)
    pd.testing.assert_frame_equal(store.load("art"), before)
    calls = []

    def counted(c):
        calls.append(c["x"])
        return {"metric": "m", "value": 10 * c["x"]}

    run_grid(store, "art", grid(x=[1, 2, 3]), counted, force=True)
    assert calls == [3]  # the interrupted force's staged cells are kept, not run again
    assert sorted(store.load("art")["value"]) == [10, 20, 30]
    assert not any(store.dir.joinpath(".staging").glob("*.csv"))


def test_staged_rows_of_other_code_or_other_cells_are_run_again(root):
    store = ResultStore("demo", "test")
    run_grid(store, "art", grid(x=[1, 2, 3]), lambda c: {"metric": "m", "value": c["x"]})

    with pytest.raises(RuntimeError, match="boom"):
        run_grid(store, "art", grid(x=[1, 2, 3]), _fails_at_3, force=True)
    staging = store.staging()
    staged = staging.load("art")
    staged.loc[staged["x"] == 1, "versions"] = "dpgnn=0.0.1+gdeadbeef;torch=1"  # staged by other code
    staging.clear("art")
    staging.append("art", staged.to_dict("records"))
    calls = []

    def counted(c):
        calls.append(c["x"])
        return {"metric": "m", "value": 100 * c["x"]}

    run_grid(store, "art", grid(x=[1, 3]), counted, force=True)  # x = 2 staged, but no longer in the grid
    assert calls == [1, 3]
    df = store.load("art").sort_values("x")
    assert df["value"].tolist() == [100, 2, 300]  # x = 2 keeps its stored row: its staged one is not swapped in


def test_cluster_size_never_oversubscribes():
    assert engine.cluster_size(None, 1, 1, "cpu", cores=2, gpus=0) == 2
    assert engine.cluster_size(None, 2, 1, "cpu", cores=16, gpus=0) == 8
    assert engine.cluster_size(None, 1, 4, "auto", cores=16, gpus=2) == 8  # 4 workers per GPU
    with pytest.raises(ValueError, match="oversubscribe"):
        engine.cluster_size(3, 1, 1, "cpu", cores=2, gpus=0)


def test_slurm_job_script():
    cluster = engine.slurm_cluster(
        queue="gpu", account="lab", cores=8, memory="32GB", walltime="02:00:00", job_extra_directives=["--gres=gpu:1"]
    )
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    assert "#SBATCH -p gpu" in script and "#SBATCH -A lab" in script and "#SBATCH --gres=gpu:1" in script
    assert "#SBATCH -t 02:00:00" in script and "OMP_NUM_THREADS=8" in script and "MKL_CBWR=" in script
    assert "distributed.cli.dask_worker" in script and "--nthreads 8" in script


def test_cli_run_usage_errors_and_dry_run(root):
    from typer.testing import CliRunner

    from dpgnn.cli import app

    r = CliRunner()
    assert r.invoke(app, ["run", "nosuch", "--dry-run"]).exit_code == 2
    assert r.invoke(app, ["run", "lpgcn", "--artifact", "fig_z", "--dry-run"]).exit_code == 2
    assert r.invoke(app, ["run", "lpgcn", "--stale", "maybe", "--dry-run"]).exit_code == 2
    assert r.invoke(app, ["run", "lpgcn", "--workers", "64", "--threads-per-worker", "64"]).exit_code == 2
    res = r.invoke(
        app, ["run", "lpgcn", "lpgnn", "--profile", "test", "--artifact", "table2", "--artifact", "fig_a", "--dry-run"]
    )
    assert res.exit_code == 0, res.output
    assert "lpgcn/table2 (table2): 0 of 4 cells stored; 4 to compute" in res.output
    assert "lpgnn/fig_a (runs): 0 of 1 cells stored" in res.output and "fig3" not in res.output


def test_cli_run_interrupted_says_what_is_kept(root, monkeypatch):
    """Ctrl-C (or a time limit's SIGINT) during ``dpgnn run``: one line saying the finished cells are stored, exit
    status 130, no traceback."""
    from typer.testing import CliRunner

    from dpgnn import engine
    from dpgnn.cli import app

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "compute", interrupted)
    res = CliRunner().invoke(app, ["run", "lpgcn", "--profile", "test", "--artifact", "table2", "--workers", "1"])
    assert res.exit_code == 130
    assert "interrupted; finished cells are stored" in res.output and "Traceback" not in res.output


def test_cli_run_set_replaces_profile_settings(root):
    """``--set KEY=VALUE`` reaches the cells (here: 3 authors'-code runs instead of the test profile's 1); an
    unknown key is a usage error before any work."""
    from typer.testing import CliRunner

    from dpgnn.cli import app

    r = CliRunner()
    base = r.invoke(app, ["run", "privgnn", "--profile", "test", "--artifact", "authors_code", "--dry-run"])
    assert base.exit_code == 0, base.output
    assert "privgnn/authors_code (authors_code): 0 of 1 cells stored; 1 to compute" in base.output
    res = r.invoke(
        app,
        [
            "run",
            "privgnn",
            "--profile",
            "test",
            "--artifact",
            "authors_code",
            "--dry-run",
            "--set",
            "fidelity_runs=3",
            "--set",
            "fidelity_k=[5]",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "privgnn/authors_code (authors_code): 0 of 3 cells stored; 3 to compute" in res.output
    bad = r.invoke(app, ["run", "privgnn", "--profile", "test", "--set", "no_such_setting=1", "--dry-run"])
    assert bad.exit_code == 2 and "no_such_setting" in bad.output
    bad = r.invoke(app, ["run", "privgnn", "--profile", "test", "--set", "fidelity_k", "--dry-run"])
    assert bad.exit_code == 2 and "--set 'fidelity_k': expected key=value" in bad.output


def _device_row(cfg, cell, device):
    return [{"value": 1.0, "device_seen": device}]


def test_a_cpu_only_spec_runs_and_is_recorded_on_the_cpu_whatever_device_is_offered():
    """The bench trains on the CPU: on a GPU machine its cells must say ``cpu``, not the GPU the engine offered."""
    import torch

    from dpgnn.series.bench import CELLS as BENCH
    from dpgnn.sweep import CellSpec

    spec = CellSpec("toy", "grid", "grid", lambda cfg: [{"x": 1}], _device_row, cpu_only=True)
    for run in (
        lambda: engine.execute(spec, {}, {"x": 1}, "cuda"),
        lambda: engine.execute_job(spec, {}, [{"x": 1}], "cuda")[0],
    ):
        res = run()
        assert res["device"] == "cpu" and res["rows"][0]["device_seen"] == "cpu"
    if not torch.cuda.is_available():  # the same spec offered CUDA without the flag: refused here
        with pytest.raises(ValueError, match="CUDA is not available"):
            engine.execute(dataclasses.replace(spec, cpu_only=False), {}, {"x": 1}, "cuda")
    assert all(s.cpu_only for s in BENCH.values())


def test_a_run_offered_a_gpu_says_which_grids_compute_on_the_cpu(root, capsys):
    out = engine.run_specs([(dataclasses.replace(engine_toy.SPEC, cpu_only=True), {"n": 2})], "test", dry_run=True)
    assert "on the CPU whatever the device" not in capsys.readouterr().out  # auto on a machine without a GPU
    engine.run_specs(
        [(dataclasses.replace(engine_toy.SPEC, cpu_only=True), {"n": 2})], "test", device="cuda", dry_run=True
    )
    text = capsys.readouterr().out
    assert "on the CPU whatever the device (their cells never use a GPU): toy/grid" in text and len(out) == 1
