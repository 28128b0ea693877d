"""``dpgnn epsilon lpgnn``: the per-node local privacy of one LPGNN data collection (docs/papers/lpgnn.md#setting to
docs/papers/lpgnn.md#label-randomised-response).

The statement is :func:`dpgnn.privacy.lpgnn.budget`, built from the same rules as the method's result-row
ledger (:func:`dpgnn.privacy.lpgnn.privacy_ledger`): ``ε = ε_x + ε_y`` by
basic composition of the feature report (ε_x-LDP) and the label report (ε_y-LDP), ``δ = 0`` (``1e-10`` with the
analytic-Gaussian baseline ``agm``). An infinite budget means that part is sent unperturbed (no privacy for it).

    dpgnn epsilon lpgnn --feature-epsilon 1 --label-epsilon 1 --num-features 1432 [--mechanism mbm|1bm|lpm|agm]
"""

from __future__ import annotations

import json
import math
from typing import Any

import typer

from dpgnn.cli.options import option_errors, relation_text
from dpgnn.privacy.lpgnn import budget

__all__ = ["register"]


def _js(v: Any) -> Any:
    return "inf" if isinstance(v, float) and math.isinf(v) else v


def register(app: typer.Typer) -> None:
    """Add ``lpgnn`` to ``dpgnn epsilon``."""

    @app.command("lpgnn")
    def lpgnn(
        feature_epsilon: float = typer.Option(
            ..., "--feature-epsilon", "-x", help="Feature budget eps_x per node (whole vector), > 0 or inf."
        ),
        label_epsilon: float = typer.Option(..., "--label-epsilon", "-y", help="Label budget eps_y, > 0 or inf."),
        num_features: int = typer.Option(..., "--num-features", "-d", help="Feature dimension d, >= 1."),
        mechanism: str = typer.Option("mbm", "--mechanism", help="mbm, 1bm, lpm or agm."),
        m: int | None = typer.Option(
            None, "--m", help="Multi-bit sampling parameter in [1, d] (default: the paper's rule)."
        ),
        as_json: bool = typer.Option(False, "--json", help="Print exactly one JSON object."),
    ) -> None:
        """Per-node epsilon of LPGNN: feature (multi-bit / baselines) + label (randomised response) reports."""
        with option_errors():
            out = budget(feature_epsilon, label_epsilon, num_features, mechanism, m)
            payload = {
                "command": "lpgnn",
                **{k: _js(v) for k, v in out.items()},
                "sensitivity": "none (local DP: each report's ratio is bounded for any two inputs)",
            }
            if as_json:
                typer.echo(json.dumps(payload))
            else:
                typer.echo(
                    f"lpgnn: epsilon = {out['epsilon']:.6g} at delta = {out['delta']:g} per node "
                    f"[eps_x={feature_epsilon:g} ({mechanism}, m={out.get('m')}), eps_y={label_epsilon:g}, "
                    f"d={num_features}; {relation_text(out['neighbouring'], payload['sensitivity'])}]"
                )
