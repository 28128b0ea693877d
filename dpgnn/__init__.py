"""dpgnn: a reproducible companion to five papers on differentially private graph neural networks.

Sub-packages (no module imports "upward"):

- :mod:`dpgnn.privacy` -- mechanisms, privacy events, accountants, calibration (pure math, no graphs).
- :mod:`dpgnn.data`    -- dataset registry (URLs + sha256, offline mirror), transforms, splits, synthetic graphs.
- :mod:`dpgnn.nn`      -- layers and models.
- :mod:`dpgnn.methods` -- one module per paper method.
- :mod:`dpgnn.results`, :mod:`dpgnn.report`, :mod:`dpgnn.runner`, :mod:`dpgnn.plotting`, :mod:`dpgnn.cli`.
- :mod:`dpgnn.api`     -- your own graph: ``dpgnn.fit``, ``dpgnn.load``, ``dpgnn.describe`` (imported on first use).
"""

import os as _os

__version__ = "0.1.0"

_API = ("fit", "load", "describe", "TrainedModel")


def __getattr__(name: str):
    """``dpgnn.fit`` / ``load`` / ``describe`` / ``TrainedModel`` from :mod:`dpgnn.api`, imported on first use (so
    ``import dpgnn`` stays light: no torch)."""
    if name in _API:
        import dpgnn.api

        return getattr(dpgnn.api, name)
    raise AttributeError(f"module 'dpgnn' has no attribute {name!r}")


def _batch_kernel() -> None:
    """In a kernel started by ``dpgnn reproduce`` (``DPGNN_BATCH=1``) nobody watches widgets: progress bars are
    text (``tqdm.auto`` resolves to the plain ``tqdm``), so they reach papermill's log, the terminal (the runner
    echoes them) and the executed notebook; ``dpgnn`` log lines at INFO (e.g. how many grid cells were already
    stored) go to stderr. Interactive JupyterLab sessions keep the widgets and the default logging."""
    import logging

    import tqdm.auto
    import tqdm.std

    tqdm.auto.tqdm, tqdm.auto.trange = tqdm.std.tqdm, tqdm.std.trange
    log = logging.getLogger("dpgnn")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


if _os.environ.get("DPGNN_BATCH") == "1":
    _batch_kernel()
