"""dpgnn: a reproducible companion to five papers on differentially private graph neural networks.

Sub-packages (no module imports "upward"):

- :mod:`dpgnn.privacy` -- mechanisms, privacy events, accountants, calibration (pure math, no graphs).
- :mod:`dpgnn.data`    -- dataset registry (URLs + sha256, offline mirror), transforms, splits, synthetic graphs.
- :mod:`dpgnn.nn`      -- layers and models.
- :mod:`dpgnn.methods` -- one module per paper method.
- :mod:`dpgnn.results`, :mod:`dpgnn.report`, :mod:`dpgnn.runner`, :mod:`dpgnn.plotting`, :mod:`dpgnn.cli`.
"""

__version__ = "0.1.0"
