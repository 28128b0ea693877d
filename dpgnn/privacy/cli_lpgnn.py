"""``dpgnn epsilon lpgnn``: the per-node local privacy of one LPGNN data collection (docs/papers/lpgnn.md#setting to docs/papers/lpgnn.md#label-randomised-response).

A node sends its feature vector once through a feature mechanism (ε_x-LDP for the whole vector) and, if it is a
training/validation node, its label once through randomised response (ε_y-LDP). Everything the server does after
(KProp, training, Drop, model selection) is post-processing, so by basic composition of two pure-LDP reports the
node is protected with ``ε = ε_x + ε_y`` (``δ = 0``; ``δ = 1e-10`` with the analytic-Gaussian baseline ``agm``,
which is (ε_x, δ)-LDP). An infinite budget means that part is sent unperturbed (no privacy for it).

    dpgnn epsilon lpgnn --feature-epsilon 1 --label-epsilon 1 --num-features 1432 [--mechanism mbm|1bm|lpm|agm]
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Optional

import typer

from dpgnn.privacy.multibit import optimal_m

FEATURE_MECHANISMS = ("mbm", "1bm", "lpm", "agm")
AGM_DELTA = 1e-10


def _budget(value: float, option: str) -> float:
    v = float(value)
    if math.isnan(v) or v <= 0:
        raise ValueError(f"{option} must be > 0 (use inf for no perturbation), got {value}")
    return v


def lpgnn_budget(feature_epsilon: float, label_epsilon: float, num_features: int, mechanism: str = "mbm",
                 m: Optional[int] = None) -> Dict[str, Any]:
    """The privacy statement of one LPGNN collection as a dict (used by the CLI and by result ledgers)."""
    ex = _budget(feature_epsilon, "--feature-epsilon")
    ey = _budget(label_epsilon, "--label-epsilon")
    if mechanism not in FEATURE_MECHANISMS:
        raise ValueError(f"--mechanism must be one of {list(FEATURE_MECHANISMS)}, got {mechanism!r}")
    if isinstance(num_features, bool) or int(num_features) != num_features or num_features < 1:
        raise ValueError(f"--num-features must be an integer >= 1, got {num_features}")
    d = int(num_features)
    out: Dict[str, Any] = {"feature_epsilon": ex, "label_epsilon": ey, "num_features": d, "mechanism": mechanism}
    if m is not None and mechanism != "mbm":
        raise ValueError("--m applies to the multi-bit mechanism (mbm) only")
    if math.isfinite(ex):
        if mechanism == "mbm":
            mm = optimal_m(ex, d) if m is None else int(m)
            if not 1 <= mm <= d:
                raise ValueError(f"--m must be an integer in [1, d] = [1, {d}], got {m}")
        else:
            mm = d if mechanism == "1bm" else None
        out["m"] = mm
        out["epsilon_per_sampled_coordinate"] = ex / mm if mm else ex / d
    eps = ex + ey  # basic composition of the two pure-LDP reports (inf if either is sent in the clear)
    out["epsilon"] = eps
    out["delta"] = AGM_DELTA if (mechanism == "agm" and math.isfinite(ex)) else 0.0
    out["neighbouring"] = "LDP: any two (feature vector, label) pairs of one node"
    out["accountant"] = "basic composition of feature and label reports (pure LDP; post-processing after)"
    return out


def _js(v: Any) -> Any:
    return "inf" if isinstance(v, float) and math.isinf(v) else v


def register(app: typer.Typer) -> None:
    from dpgnn.privacy.cli import option_errors  # imported here: cli imports this module

    @app.command("lpgnn")
    def lpgnn(
        feature_epsilon: float = typer.Option(..., "--feature-epsilon", "-x",
                                              help="Feature budget eps_x per node (whole vector), > 0 or inf."),
        label_epsilon: float = typer.Option(..., "--label-epsilon", "-y", help="Label budget eps_y, > 0 or inf."),
        num_features: int = typer.Option(..., "--num-features", "-d", help="Feature dimension d, >= 1."),
        mechanism: str = typer.Option("mbm", "--mechanism", help="mbm, 1bm, lpm or agm."),
        m: Optional[int] = typer.Option(None, "--m", help="Multi-bit sampling parameter in [1, d] "
                                                          "(default: the paper's rule)."),
        as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
    ) -> None:
        """Per-node epsilon of LPGNN: feature (multi-bit / baselines) + label (randomised response) reports."""
        with option_errors():
            out = lpgnn_budget(feature_epsilon, label_epsilon, num_features, mechanism, m)
            payload = {"command": "lpgnn", **{k: _js(v) for k, v in out.items()}}
            if as_json:
                typer.echo(json.dumps(payload))
            else:
                typer.echo(f"lpgnn: epsilon = {out['epsilon']:.6g} at delta = {out['delta']:g} per node "
                           f"[eps_x={feature_epsilon:g} ({mechanism}, m={out.get('m')}), eps_y={label_epsilon:g}, "
                           f"d={num_features}]")
