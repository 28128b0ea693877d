"""Plot helpers: one colour per method across panels, one figure legend with every label."""

from __future__ import annotations

import matplotlib
import pandas as pd

from dpgnn import plotting


def _frame():
    rows = []
    for panel, methods in (("a", ["m2", "m3"]), ("b", ["m1", "m2", "m3", "lm"])):
        for m in methods:
            for x in (1, 2):
                rows.append({"panel": panel, "method": m, "x": x, "y": x * (1 + len(m))})
    return pd.DataFrame(rows)


def test_lines_keep_each_method_colour_across_panels_and_legend_has_all_labels():
    fig = plotting.lines(_frame(), x="x", y="y", hue="method", col="panel")
    colours = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            label = line.get_label()
            if not label.startswith("_"):
                colours.setdefault(label, set()).add(matplotlib.colors.to_hex(line.get_color()))
    # error-bar containers label their data line; collect from the containers too
    for ax in fig.axes:
        for cont in ax.containers:
            colours.setdefault(cont.get_label(), set()).add(matplotlib.colors.to_hex(cont.lines[0].get_color()))
    assert colours and all(len(v) == 1 for v in colours.values()), colours
    assert colours["LM"] == {plotting.PALETTE["lm"]}  # the project palette wins where it has the method
    assert len({next(iter(v)) for v in colours.values()}) == len(colours)  # distinct methods, distinct colours
    (legend,) = fig.legends
    assert sorted(t.get_text() for t in legend.get_texts()) == ["LM", "m1", "m2", "m3"]


def test_lines_categorical_ticks():
    fig = plotting.lines(_frame(), x="x", y="y", hue="method", col="panel", xticks={1: "0.01", 2: "∞"})
    for ax in fig.axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == ["0.01", "∞"]


def test_up_to_thirteen_unpaletted_methods_get_distinct_colours():
    colours = plotting._colours([f"m{i}" for i in range(13)] + ["lm"])
    assert len(set(colours.values())) == 14 and colours["lm"] == plotting.PALETTE["lm"]
    assert not set(colours[f"m{i}"] for i in range(13)) & set(plotting.PALETTE.values())


def test_log_axis_ticks_are_the_data_values_and_markers_only_when_not_connected():
    df = pd.DataFrame({"x": [0.25, 1.0, 4.0, 0.25, 1.0, 4.0], "y": [1, 2, 3, 2, 3, 4], "method": ["a"] * 3 + ["b"] * 3})
    fig = plotting.lines(df, x="x", y="y", hue="method", logx=True, connect=False)
    (ax,) = [a for a in fig.axes if a.get_visible()]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.25", "1", "4"]
    assert not any(t.get_text() for t in ax.get_xticklabels(minor=True))
    assert all(c.lines[0].get_linestyle() == "None" for c in ax.containers)


def test_saved_figures_are_byte_identical_when_redrawn(tmp_path):
    paths = []
    for root in ("a", "b"):
        fig = plotting.lines(_frame(), x="x", y="y", hue="method", col="panel")
        paths.append(plotting.savefig(fig, "f", paper="p", profile="test", root=tmp_path / root))
    for a, b in zip(*paths):
        assert a.read_bytes() == b.read_bytes(), a.name
