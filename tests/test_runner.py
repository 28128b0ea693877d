import json
import os
import signal
import subprocess
import sys
import time

import nbformat
import pytest

from dpgnn.runner import (
    code_digest,
    declared_parameters,
    discover,
    load_manifest,
    parse_parameters,
    plan,
    reproduce,
    rows_digest,
)
from dpgnn.utils import ROOT


def _notebook(body: str, params: str = "") -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell('profile: str = "smoke"\ndevice: str = "auto"\nforce: bool = False' + params)
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [cell, nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


PLOT = (
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([0, 1], [0, 1])\n"
    "from dpgnn import plotting\nplotting.savefig(fig, 'line', paper='alpha', profile=profile)"
)


@pytest.fixture
def project(tmp_path):
    for paper, name, body, params in [
        (
            "alpha",
            "01_ok.ipynb",
            "from pathlib import Path\nPath('out_' + profile + '.txt').write_text(device + str(runs))",
            "\nruns: int = 1  # runs",
        ),
        ("alpha", "02_fail.ipynb", "raise ValueError('deliberate failure')", ""),
        ("beta", "01_plot.ipynb", PLOT, ""),
    ]:
        (tmp_path / "notebooks" / paper).mkdir(parents=True, exist_ok=True)
        nbformat.write(_notebook(body, params), tmp_path / "notebooks" / paper / name)
    return tmp_path


def _status(manifest, paper=None):
    m = manifest if paper is None else manifest[manifest["paper"] == paper]
    return dict(zip(m["paper"] + "/" + m["notebook"], m["status"]))


@pytest.mark.slow
def test_reproduce_manifest_failure_isolation_resume_and_figures(project, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")  # a user's leftover setting must not strip figures from notebooks
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(project))
    manifest = reproduce(
        ["alpha", "beta"], profile="smoke", device="cpu", jobs=2, root=project, report=False, parameters={"runs": 3}
    )
    assert _status(manifest) == {"alpha/01_ok.ipynb": "ok", "alpha/02_fail.ipynb": "failed", "beta/01_plot.ipynb": "ok"}
    failed = manifest[manifest["status"] == "failed"].iloc[0]
    assert "deliberate failure" in failed["error"]
    assert set(manifest["code_version"]) == {__import__("dpgnn.utils").utils.code_version()}
    assert set(manifest["code_sha256"]) == {code_digest()}
    # parameters were injected (-p only where declared) and the working directory is the project root
    assert (project / "out_smoke.txt").read_text() == "cpu3"
    assert json.loads(manifest.set_index("notebook").loc["01_ok.ipynb", "parameters"]) == {"runs": 3}
    # the executed notebook holds its figure inline, and the figure files are written too
    executed = nbformat.read(project / "papermill_runs" / "smoke" / "beta" / "01_plot.ipynb", as_version=4)
    images = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1
    assert (project / "figures" / "smoke" / "alpha" / "line.pdf").exists()
    # second run: succeeded notebooks are cached (same notebook, parameters, code), the failed one runs again
    manifest = reproduce(["alpha"], profile="smoke", device="cpu", root=project, report=False, parameters={"runs": 3})
    assert _status(manifest, "alpha") == {"alpha/01_ok.ipynb": "cached", "alpha/02_fail.ipynb": "failed"}
    # other stored rows to draw from: executed again, then cached
    (project / "results" / "smoke" / "alpha").mkdir(parents=True)
    (project / "results" / "smoke" / "alpha" / "t.csv").write_text("value\n1\n")
    for status in ("ok", "cached"):
        manifest = reproduce(
            ["alpha"], profile="smoke", device="cpu", root=project, report=False, parameters={"runs": 3}
        )
        assert _status(manifest, "alpha")["alpha/01_ok.ipynb"] == status
    # other parameters: not cached
    manifest = reproduce(["alpha"], profile="smoke", device="cpu", root=project, report=False, notebooks=["alpha/01"])
    assert _status(manifest, "alpha")["alpha/01_ok.ipynb"] == "ok"
    assert (project / "out_smoke.txt").read_text() == "cpu1"
    # results from other code: said and, by choice, kept or rerun
    path = project / "papermill_runs" / "smoke" / "manifest.csv"
    m = load_manifest("smoke", project)
    m.loc[m["notebook"] == "01_ok.ipynb", ["code_version", "code_sha256"]] = ["0.0.1+gdeadbeef", "0" * 64]
    m.to_csv(path, index=False)
    manifest = reproduce(
        ["alpha"], profile="smoke", device="cpu", root=project, report=False, notebooks=["alpha/01"], stale="keep"
    )
    row = manifest.set_index("notebook").loc["01_ok.ipynb"]
    assert row["status"] == "stale" and "0.0.1+gdeadbeef" in row["error"]
    manifest = reproduce(["alpha"], profile="smoke", device="cpu", root=project, report=False, notebooks=["alpha/01"])
    assert _status(manifest, "alpha")["alpha/01_ok.ipynb"] == "ok"
    # --force re-executes
    manifest = reproduce(["beta"], profile="smoke", device="cpu", root=project, report=False, force=True)
    assert _status(manifest, "beta") == {"beta/01_plot.ipynb": "ok"}
    assert len(load_manifest("smoke", project)) == 3


def test_rows_digest_reads_the_series_store_else_every_store(tmp_path, monkeypatch):
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    empty = rows_digest("smoke", "compare")
    (tmp_path / "results" / "paper" / "bench").mkdir(parents=True)
    (tmp_path / "results" / "paper" / "bench" / "edge.csv").write_text("value\n1\n")
    own, every = rows_digest("paper", "bench"), rows_digest("smoke", "compare")
    assert every != empty  # a series without a store draws from every profile's stores
    (tmp_path / "results" / "paper" / "drw").mkdir()
    (tmp_path / "results" / "paper" / "drw" / "table1.csv.gz").write_bytes(b"rows")
    assert rows_digest("paper", "bench") == own and rows_digest("smoke", "compare") != every
    (tmp_path / "results" / "paper" / "bench" / "edge.csv").write_text("value\n2\n")
    assert rows_digest("paper", "bench") != own


def test_discover_select_parameters_and_bad_input(project):
    assert [(p, nb.name) for p, nb in discover(None, project)] == [
        ("alpha", "01_ok.ipynb"),
        ("alpha", "02_fail.ipynb"),
        ("beta", "01_plot.ipynb"),
    ]
    assert [nb.name for _, nb in plan(None, notebooks=["alpha/02", "notebooks/beta/01_plot.ipynb"], root=project)] == [
        "02_fail.ipynb",
        "01_plot.ipynb",
    ]
    assert declared_parameters(project / "notebooks" / "alpha" / "01_ok.ipynb") == [
        "profile",
        "device",
        "force",
        "runs",
    ]
    assert parse_parameters(["runs=2", "datasets=[cora, citeseer]", "name=x=y"]) == {
        "runs": 2,
        "datasets": ["cora", "citeseer"],
        "name": "x=y",
    }
    for bad, match in [(["runs"], "key=value"), (["profile=paper"], "--profile"), (["a=[1"], "YAML")]:
        with pytest.raises(ValueError, match=match):
            parse_parameters(bad)
    with pytest.raises(ValueError, match="unknown paper"):
        discover(["gamma"], project)
    with pytest.raises(ValueError, match="matches none"):
        plan(None, notebooks=["alpha/09"], root=project)
    with pytest.raises(ValueError, match="matches several"):
        plan(None, notebooks=["alpha/0"], root=project)
    with pytest.raises(ValueError, match="no selected notebook has a parameter 'runs'"):
        plan(["beta"], parameters={"runs": 2}, root=project)
    with pytest.raises(ValueError, match="profile"):
        reproduce(["alpha"], profile="huge", root=project)
    with pytest.raises(ValueError, match="jobs"):
        reproduce(["alpha"], jobs=0, root=project)
    assert "test" in plan.__globals__["PROFILES"]


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.slow
def test_interrupting_reproduce_stops_every_child_and_records_it(tmp_path, sig=signal.SIGTERM):
    """A real ``dpgnn reproduce`` in a subprocess: SIGTERM (SIGINT/Ctrl-C is handled alike) stops papermill and its
    kernel, the manifest says ``interrupted`` with the time, and the next run executes the notebook again."""
    import psutil

    nbdir = tmp_path / "notebooks" / "alpha"
    nbdir.mkdir(parents=True)
    body = (
        "import os, time\nfrom pathlib import Path\nPath('kernel.pid').write_text(str(os.getpid()))\n"
        "time.sleep(600 if Path('block').exists() else 0)"
    )
    nbformat.write(_notebook(body), nbdir / "01_sleep.ipynb")
    (tmp_path / "block").touch()
    env = {
        **os.environ,
        "DPGNN_HOME": str(tmp_path),
        "DPGNN_OUTPUT_ROOT": str(tmp_path),
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "dpgnn.cli", "reproduce", "alpha", "--profile", "smoke"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "kernel.pid").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read() if proc.poll() else "slow"
            time.sleep(0.2)
        kernel = int((tmp_path / "kernel.pid").read_text())
        children = psutil.Process(proc.pid).children(recursive=True)
        assert kernel in {c.pid for c in children} or _alive(kernel)
        assert load_manifest("smoke", tmp_path)["status"].tolist() == ["running"]
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig, out
    assert "stopping the running notebooks" in out
    time.sleep(0.5)
    assert not _alive(kernel), "the kernel survived"
    assert not [c.pid for c in children if _alive(c.pid)], "a child process survived"
    row = load_manifest("smoke", tmp_path).iloc[0]
    assert row["status"] == "interrupted" and row["ended"] >= row["started"] != ""
    # the next run executes it again
    (tmp_path / "block").unlink()
    manifest = reproduce(["alpha"], profile="smoke", device="cpu", root=tmp_path, report=False)
    assert manifest["status"].tolist() == ["ok"]


@pytest.mark.slow
def test_a_series_runs_in_one_worker_each_notebook_in_a_fresh_kernel(tmp_path):
    """A series' notebooks share one papermill worker (papermill loads once) but each gets a kernel of its own; a
    notebook that runs out of time stops the worker and its kernel, and the next one runs in a new worker."""
    body = (
        "import os, time\nfrom pathlib import Path\n"
        "Path(f'pids_{os.getpid()}.txt').write_text(f'{os.getppid()}')\ntime.sleep(naps)"
    )
    nbdir = tmp_path / "notebooks" / "alpha"
    nbdir.mkdir(parents=True)
    for name in ("01_a.ipynb", "02_b.ipynb", "03_slow.ipynb", "04_c.ipynb"):
        nb = _notebook(body, "\nnaps: int = 0  # seconds")
        if name == "03_slow.ipynb":
            nb.cells[1].source = nb.cells[1].source.replace("time.sleep(naps)", "time.sleep(600)")
        nbformat.write(nb, nbdir / name)
    manifest = reproduce(["alpha"], profile="smoke", device="cpu", root=tmp_path, report=False, timeout=20)
    status = dict(zip(manifest["notebook"], manifest["status"]))
    assert status == {"01_a.ipynb": "ok", "02_b.ipynb": "ok", "03_slow.ipynb": "failed", "04_c.ipynb": "ok"}
    assert "timed out after 20 s" in manifest.set_index("notebook").loc["03_slow.ipynb", "error"]
    kernels = {int(f.stem.split("_")[1]): int(f.read_text()) for f in tmp_path.glob("pids_*.txt")}
    assert len(kernels) == 4  # four kernels
    workers = sorted(set(kernels.values()))
    assert len(workers) == 2  # the first three notebooks in one worker, the last in a new one
    assert not any(_alive(pid) for pid in [*kernels, *workers]), "a kernel or a worker survived"


def test_echo_streams_cells_logs_and_throttled_progress():
    from dpgnn.notebook_process import Echo

    lines: list[str] = []
    echo = Echo("lpgcn/03", 12, lines.append, every=3600)
    for line in [
        "Executing Cell 7---------------------------------------",
        "some output",
        "Table 2 runs:   0%|          | 0/14 [00:00<?, ?it/s]",
        "Table 2 runs:  50%|#####     | 7/14 [00:10<00:10]",
        "INFO dpgnn.sweep: table2: 6 of 14 cells already stored, running 8",
        "not_run: flickr -- no files",
        "Table 2 runs: 100%|##########| 14/14 [00:20<00:00]",
    ]:
        echo(line + "\n")
    assert lines == [
        "[lpgcn/03] cell 7/12",
        "[lpgcn/03] Table 2 runs:   0%|          | 0/14 [00:00<?, ?it/s]",
        "[lpgcn/03] INFO dpgnn.sweep: table2: 6 of 14 cells already stored, running 8",
        "[lpgcn/03] not_run: flickr -- no files",
        "[lpgcn/03] Table 2 runs: 100%|##########| 14/14 [00:20<00:00]",
    ]


def _fake_compute(calls, *, interrupt=False):
    import pandas as pd

    def compute(papers, **kw):
        calls.append((list(papers), kw))
        if interrupt:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler interrupts this sleep
        return pd.DataFrame({"failed": [0]})

    return compute


def test_reproduce_computes_grid_cells_on_dask_first(tmp_path, monkeypatch):
    """`reproduce` = the paper series' grid cells on Dask, then the notebooks (which then only read); not with
    --notebook / -p, whose grids the engine does not know; a recomputation (force) is not repeated by the
    notebooks."""
    from dpgnn import engine, runner

    calls, executed = [], []
    monkeypatch.setattr(engine, "compute", _fake_compute(calls))
    monkeypatch.setattr(
        runner, "execute_notebook", lambda nb, out, log, params, **kw: (executed.append(params), ("ok", ""))[1]
    )
    for paper in ("lpgcn", "alpha"):
        (tmp_path / "notebooks" / paper).mkdir(parents=True)
        nbformat.write(_notebook("pass", "\nruns: int = 1  # runs"), tmp_path / "notebooks" / paper / "01_x.ipynb")
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    reproduce(None, profile="test", device="cpu", root=tmp_path, report=False, force=True, workers=2)
    assert [c[0] for c in calls] == [["lpgcn"]]  # only paper series have grid cells
    assert calls[0][1]["force"] is True and calls[0][1]["workers"] == 2 and calls[0][1]["profile"] == "test"
    assert [p["force"] for p in executed] == [False, False]
    reproduce(None, profile="test", device="cpu", root=tmp_path, report=False, notebooks=["lpgcn/01"])
    reproduce(None, profile="test", device="cpu", root=tmp_path, report=False, parameters={"runs": 2}, force=True)
    reproduce(None, profile="test", device="cpu", root=tmp_path, report=False, cells=False, force=True)
    assert len(calls) == 1
    assert executed[-1]["force"] is True


def test_force_executes_the_notebooks_again_and_an_interrupted_force_resumes(tmp_path, monkeypatch):
    """--force recomputes the cells on Dask, then executes every notebook again (not 'cached'), with force=False
    inside; a --force that dies before a notebook leaves it 'forced', and the next plain run executes it."""
    from dpgnn import engine, runner

    calls, executed = [], []
    monkeypatch.setattr(engine, "compute", _fake_compute(calls))
    die = {"at": None}

    def fake_execute(nb, out, log, params, **kw):
        if die["at"] == nb.name:
            raise KeyboardInterrupt  # the batch dies while this notebook runs
        executed.append(nb.name)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("{}")
        return "ok", ""

    monkeypatch.setattr(runner, "execute_notebook", fake_execute)
    (tmp_path / "notebooks" / "lpgcn").mkdir(parents=True)
    for name in ("01_a.ipynb", "02_b.ipynb"):
        nbformat.write(_notebook("pass"), tmp_path / "notebooks" / "lpgcn" / name)
    monkeypatch.setenv("DPGNN_OUTPUT_ROOT", str(tmp_path))
    reproduce(["lpgcn"], profile="test", device="cpu", root=tmp_path, report=False)
    manifest = reproduce(["lpgcn"], profile="test", device="cpu", root=tmp_path, report=False)
    assert set(manifest["status"]) == {"cached"} and executed == ["01_a.ipynb", "02_b.ipynb"]
    manifest = reproduce(["lpgcn"], profile="test", device="cpu", root=tmp_path, report=False, force=True)
    assert set(manifest["status"]) == {"ok"} and executed[2:] == ["01_a.ipynb", "02_b.ipynb"]
    die["at"] = "02_b.ipynb"
    with pytest.raises(KeyboardInterrupt):
        reproduce(["lpgcn"], profile="test", device="cpu", root=tmp_path, report=False, force=True)
    status = dict(zip(load_manifest("test", tmp_path)["notebook"], load_manifest("test", tmp_path)["status"]))
    assert status["01_a.ipynb"] == "ok" and status["02_b.ipynb"] in ("forced", "running")
    die["at"] = None
    manifest = reproduce(["lpgcn"], profile="test", device="cpu", root=tmp_path, report=False)
    assert dict(zip(manifest["notebook"], manifest["status"])) == {"01_a.ipynb": "cached", "02_b.ipynb": "ok"}
    assert executed[-1] == "02_b.ipynb"


def test_sigterm_while_computing_cells_exits_cleanly(monkeypatch):
    from dpgnn import engine, runner

    calls = []
    monkeypatch.setattr(engine, "compute", _fake_compute(calls, interrupt=True))
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as exc:
        runner.compute_cells(["drw", "learn"], profile="test")
    assert exc.value.code == 128 + signal.SIGTERM
    assert [c[0] for c in calls] == [["drw"]]
    assert signal.getsignal(signal.SIGTERM) is before  # the caller's handler is back


def test_a_first_run_orders_series_by_the_recorded_durations(tmp_path):
    """Without a manifest the recorded durations decide which series start first; a manifest's ok run wins."""
    from pathlib import Path

    from dpgnn.runner import Manifest, _series_cost, load_durations, record_durations

    ran = tmp_path / "manifest.csv"
    ran.write_text(
        "paper,notebook,status,duration_s\n"
        "a,01_x.ipynb,ok,5.0\na,02_y.ipynb,ok,6.0\nb,01_z.ipynb,ok,30.0\nc,01_w.ipynb,failed,99.0\n"
    )
    durations = tmp_path / "durations.csv"
    durations.write_text("profile,paper,notebook,duration_s\npaper,a,01_x.ipynb,1.0\nsmoke,old,01_q.ipynb,2.0\n")
    assert record_durations(ran, "smoke", durations) == 3  # the failed run is not a duration
    recorded = load_durations("smoke", durations)
    assert recorded == {("a", "01_x.ipynb"): 5.0, ("a", "02_y.ipynb"): 6.0, ("b", "01_z.ipynb"): 30.0}
    assert load_durations("paper", durations) == {("a", "01_x.ipynb"): 1.0}  # another profile's rows are kept

    empty = Manifest("smoke", tmp_path / "no_runs_here")
    empty.path.parent.mkdir(parents=True)
    chains = [[("a", Path("01_x.ipynb")), ("a", Path("02_y.ipynb"))], [("b", Path("01_z.ipynb"))]]
    order = sorted(chains, key=lambda items: _series_cost(empty, recorded, items), reverse=True)
    assert [items[0][0] for items in order] == ["b", "a"]  # 30 s before 11 s, though "a" has more notebooks
    empty.record({"paper": "a", "notebook": "01_x.ipynb", "status": "ok", "duration_s": "40.0"})
    order = sorted(chains, key=lambda items: _series_cost(empty, recorded, items), reverse=True)
    assert [items[0][0] for items in order] == ["a", "b"]  # this machine's own last run: 46 s
