"""Explorer plumbing: :func:`explore` (a static figure, plus widgets that redraw it), the course's graph and
the helpers the explorers share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
import torch


def _int(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _adjacency(edge_index: torch.Tensor, n: int) -> sp.csr_matrix:
    e = edge_index.cpu().numpy()
    a = sp.coo_matrix((np.ones(e.shape[1]), (e[0], e[1])), shape=(n, n)).tocsr()
    a = ((a + a.T) > 0).astype(np.float64)
    a.setdiag(0)
    a.eliminate_zeros()
    return a


def _widget(name: str, spec: Any, value: Any):
    import ipywidgets as w

    style = {"description_width": "initial"}
    if isinstance(spec, (list, tuple)) and spec and all(isinstance(s, str) for s in spec):
        return w.Dropdown(options=list(spec), value=value, description=name, style=style)
    if isinstance(spec, tuple) and len(spec) == 4 and spec[3] == "log":
        lo, hi, step, _ = spec
        return w.FloatLogSlider(
            value=value, min=lo, max=hi, step=step, base=10, description=name, continuous_update=False, style=style
        )
    lo, hi, step = spec
    cls = w.IntSlider if all(isinstance(s, int) for s in spec) and isinstance(value, int) else w.FloatSlider
    return cls(value=value, min=lo, max=hi, step=step, description=name, continuous_update=False, style=style)


def _png(fig: plt.Figure) -> Any:
    """A figure as an IPython PNG image (shown the same whatever matplotlib backend the kernel runs)."""
    import io

    from IPython.display import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return Image(data=buf.getvalue(), format="png")


def explore(
    data_fn: Callable[..., Mapping[str, Any]],
    draw_fn: Callable[[Mapping[str, Any]], plt.Figure],
    controls: Mapping[str, Any],
    **defaults: Any,
) -> Mapping[str, Any]:
    """Show ``draw_fn(data_fn(**defaults))`` and, where ipywidgets exists, controls that redraw it in place.

    ``controls`` maps an argument of ``data_fn`` to a widget spec: ``(low, high, step)`` (a slider; ints give an
    integer slider), ``(low_exp, high_exp, step, "log")`` (a log10 slider), or a list of strings (a dropdown).
    Every controlled argument needs its default in ``defaults``. Returns the default figure's data. Under
    papermill/nbconvert the figure is an ordinary output (the static fallback); the controls need a live kernel.
    """
    from IPython.display import display

    missing = sorted(set(controls) - set(defaults))
    if missing:
        raise ValueError(f"controls {missing} need a default value")
    data = data_fn(**defaults)
    handle = display(_png(draw_fn(data)), display_id=True)
    try:
        import ipywidgets as w
    except ImportError:  # pragma: no cover - ipywidgets is a dependency; this keeps a bare kernel working
        return data
    widgets = {k: _widget(k, spec, defaults[k]) for k, spec in controls.items()}

    def redraw(_change: Any = None) -> None:
        args = dict(defaults, **{k: wd.value for k, wd in widgets.items()})
        handle.update(_png(draw_fn(data_fn(**args))))

    for wd in widgets.values():
        wd.observe(redraw, names="value")
    display(w.HBox(list(widgets.values()), layout=w.Layout(flex_flow="row wrap")))
    return data


def course_graph(name: str = "cora", seed: int = 0) -> Any:
    """A real graph for the course (``dpgnn.data.load_dataset(name)``); where its files are neither mirrored nor
    downloadable, a contextual SBM stand-in of Cora's size (printed, never silent)."""
    from dpgnn.data import DatasetUnavailable, load_dataset
    from dpgnn.data.synthetic import csbm

    try:
        return load_dataset(name)
    except DatasetUnavailable as err:
        print(f"not_run: {name} is unavailable ({str(err).splitlines()[0]}); using a CSBM stand-in of 2,708 nodes")
        data = csbm(num_nodes=2708, num_classes=7, num_features=16, avg_degree=3.9, seed=seed)
        gen = torch.Generator().manual_seed(seed)
        data.train_mask = torch.zeros(data.num_nodes, dtype=torch.bool)
        data.train_mask[torch.randperm(data.num_nodes, generator=gen)[:140]] = True
        return data
