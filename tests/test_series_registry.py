"""The series registry: one record per series, and every list of series in the package reads it."""

import pytest

from dpgnn import engine, methods, series
from dpgnn.reference import papers as reference_files
from dpgnn.utils import ROOT


def test_the_canonical_order_and_the_kinds():
    assert series.names(kind="paper") == ["lpgcn", "lpgnn", "privgnn", "drw", "progap"]
    assert series.names() == series.names("paper") + series.names("study") + series.names("course")
    assert engine.grid_papers() == series.names(kind="paper") + ["bench"]  # the benchmark study has cells too
    assert {s.paper for s in engine.select()} == set(series.names(kind="paper"))  # the default: the papers
    assert [s.order for s in series.all_series()] == sorted(s.order for s in series.all_series())


def test_each_record_matches_what_it_points_at():
    folders = sorted(p.name for p in (ROOT / "notebooks").iterdir() if any(p.glob("*.ipynb")))
    assert sorted(s.notebooks.removeprefix("notebooks/") for s in series.all_series()) == folders
    assert sorted(s.name for s in series.all_series() if s.reference) == reference_files()
    for s in series.all_series():
        assert s is series.get(s.name)
        if s.docs:  # the title is the docs page's first heading
            assert (ROOT / s.docs).read_text(encoding="utf-8").splitlines()[0] == f"# {s.title}", s.name
        if s.kind == "paper":
            assert s.citation and s.cells and s.run and s.side_by_side and s.plot, s.name
            assert methods.available(s.name), s.name  # its methods are registered under its name
            assert all(spec.paper == s.name for spec in s.cells.values()), s.name
    assert methods.papers() == sorted(series.names(kind="paper"))


def test_unknown_names_and_duplicates_are_refused(monkeypatch):
    with pytest.raises(ValueError, match=r"unknown series 'common'; valid: \['lpgcn', 'lpgnn'"):
        series.get("common")  # a helper module, not a series
    with pytest.raises(ValueError, match="kind must be one of"):
        series.Series("x", title="x", kind="blog", order=100)
    monkeypatch.setattr(series, "_REGISTRY", dict(series._REGISTRY))
    with pytest.raises(ValueError, match="already registered"):
        series.register(series.Series("lpgcn", title="another", kind="paper", order=1))
    with pytest.raises(ValueError, match="order 1 is taken by 'lpgcn'"):
        series.register(series.Series("newpaper", title="new", kind="paper", order=1))


def test_a_spec_whose_cells_ignore_the_device_is_cpu_only():
    """A cell function that never reads its ``device`` computes on the CPU: its spec must say ``cpu_only``, else a
    GPU machine's rows would record the GPU the engine offered (``cell_device``) for a CPU computation."""
    import ast
    import inspect
    import textwrap

    from dpgnn.engine import select

    for spec in select(None, None) + select(["bench"], None):
        for fn in (f for f in (spec.run, spec.batch) if f is not None):
            fn = getattr(fn, "func", fn)
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
            device = tree.args.args[-1].arg
            reads = any(isinstance(n, ast.Name) and n.id == device for n in ast.walk(tree))
            assert reads or spec.cpu_only, f"{spec.paper}/{spec.name}: {fn.__name__} ignores {device!r}"
