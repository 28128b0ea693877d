"""Multi-bit mechanism (LPGNN, Sajadmanesh & Gatica-Perez, CCS 2021, Sec. 4.1, Algorithm 1;
docs/papers/lpgnn.md#multi-bit-mechanism).

A node holding ``x ∈ [α, β]^d`` spends its whole feature budget ``ε`` on one report ``x* ∈ {−1, 0, 1}^d``:

* **Encoder** (node side, Algorithm 1): draw a set ``S`` of ``m`` coordinates uniformly without replacement; for
  ``i ∈ S`` draw ``t_i ~ Bernoulli(1/(e^{ε/m}+1) + (x_i−α)/(β−α) · (e^{ε/m}−1)/(e^{ε/m}+1))`` and send
  ``x*_i = 2 t_i − 1``; for ``i ∉ S`` send ``x*_i = 0``.
* **Rectifier** (server side): ``x'_i = d(β−α)/(2m) · (e^{ε/m}+1)/(e^{ε/m}−1) · x*_i + (α+β)/2``, an unbiased
  estimate of ``x_i`` (``E[x*_i] = (m/d)·(2(x_i−α)/(β−α) − 1)·tanh(ε/2m)``).
* **Sampling parameter** ``m``: the paper's rule ``m* = max(1, min(d, ⌊ε/2.18⌋))`` (``m=None``), or an explicit
  integer in ``[1, d]`` (``m = d`` is the one-bit mechanism "1bm" applied to every coordinate with ``ε/d``).

- Neighbouring relation: LDP — any two feature *vectors* ``x, x' ∈ [α, β]^d`` of one node.
- Sensitivity: the choice of ``S`` does not depend on ``x``; each sampled coordinate is an ``ε/m``-LDP randomised
  bit, so ``P(x*|x)/P(x*|x') ≤ (e^{ε/m})^m = e^ε`` for every output.
- Guarantee: ε-LDP per node for the whole vector (Theorem 1 of the paper).
- Variance of ``x'_i``: ``(d/m)·((β−α)/2)²·coth²(ε/2m) − (x_i − (α+β)/2)²``.

``perturb`` returns ``x*`` (dense, same dtype); :meth:`MultiBitMechanism.encode_sparse` returns only the ``m``
non-zero entries per node (``rows, cols, signs``) without materialising an ``n × d`` random matrix, which is what
large graphs need. ``m(x)`` = rectified estimate ``x'``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
import torch

from dpgnn.privacy.lpgnn import M_RULE_CONSTANT, optimal_m
from dpgnn.privacy.mechanisms import GeneratorLike, Mechanism, register_mechanism
from dpgnn.privacy.mechanisms.base import _resolve_generator, _uniform

__all__ = ["MultiBitMechanism", "optimal_m", "M_RULE_CONSTANT"]


def _check_num_features(d: Any) -> int:
    if isinstance(d, bool) or not isinstance(d, (numbers.Integral, np.integer)) or int(d) < 1:
        raise ValueError(f"num_features must be an integer >= 1, got {d!r}")
    return int(d)


class MultiBitMechanism(Mechanism):
    """Multi-bit encoder + rectifier of LPGNN (Algorithm 1); the module docstring has the formulas.

    - Neighbouring relation: LDP — any two feature vectors ``x, x' ∈ [low, high]^d`` of one node.
    - Sensitivity: each of the ``m`` sampled coordinates is one randomised bit with budget ``ε/m`` (the sampled
      set does not depend on ``x``), so every output's probability ratio is at most ``e^ε``.
    - Guarantee: ε-LDP per node for the whole feature vector (the paper's Theorem 1).

    Args:
        epsilon: the node's whole feature budget ε > 0 (finite).
        low, high: the public feature range [α, β] (default [0, 1]).
        m: sampling parameter; ``None`` = the paper's rule :func:`optimal_m`, else an integer in ``[1, d]``
            (checked against ``d = x.shape[-1]`` at use, and against ``num_features`` at once when given).
        num_features: optional ``d`` fixed at construction (validates ``m`` early).
    """

    name = "multibit"
    neighbouring = "LDP: any two feature vectors of one node in [low, high]^d"

    def __init__(
        self,
        epsilon: float,
        low: float = 0.0,
        high: float = 1.0,
        *,
        m: int | None = None,
        num_features: int | None = None,
        clip: bool = False,
    ) -> None:
        super().__init__(epsilon, low, high, clip=clip)
        if m is not None and (isinstance(m, bool) or not isinstance(m, (numbers.Integral, np.integer)) or m < 1):
            raise ValueError(f"m must be None (the paper's rule) or an integer in [1, d], got {m!r}")
        self.m = None if m is None else int(m)
        self.num_features = None if num_features is None else _check_num_features(num_features)
        if self.num_features is not None:
            self.m_for(self.num_features)

    # -- parameters ---------------------------------------------------------------------------------------------
    def m_for(self, d: int) -> int:
        """The sampling parameter used for vectors of dimension ``d`` (validates an explicit ``m`` ≤ d)."""
        d = _check_num_features(d)
        if self.num_features is not None and d != self.num_features:
            raise ValueError(f"x has {d} features but the mechanism was built with num_features={self.num_features}")
        if self.m is None:
            return optimal_m(self.epsilon, d)
        if self.m > d:
            raise ValueError(f"m must be an integer in [1, d] = [1, {d}], got m={self.m}")
        return self.m

    def scale(self, d: int) -> float:
        """Rectifier factor ``d(β−α)/(2m) · coth(ε/2m)``."""
        m = self.m_for(d)
        return d * self.span / (2.0 * m) / math.tanh(self.epsilon / (2.0 * m))

    @property
    def guarantee(self) -> str:
        """``"<ε>-LDP per node (whole feature vector)"`` (Theorem 1 of the paper)."""
        return f"{self.epsilon:g}-LDP per node (whole feature vector)"

    def ledger(self) -> dict[str, Any]:
        """:meth:`Mechanism.ledger` plus ``m``: the explicit sampling parameter, or the paper's rule in words."""
        out = super().ledger()
        out["m"] = "rule max(1, min(d, floor(eps/2.18)))" if self.m is None else self.m
        return out

    def __repr__(self) -> str:
        m = "rule" if self.m is None else self.m
        return f"MultiBitMechanism(epsilon={self.epsilon:g}, low={self.low:g}, high={self.high:g}, m={m})"

    # -- exact probabilities (tests, audits) ----------------------------------------------------------------------
    def prob_plus(self, x: torch.Tensor, m: int) -> torch.Tensor:
        """``P(t_i = 1 | x_i)`` of a sampled coordinate (Algorithm 1, line 4)."""
        th = math.tanh(self.epsilon / (2.0 * m))
        return (1.0 - th) / 2.0 + (x - self.low) / self.span * th

    def output_probability(self, x: Any, out: Any) -> float:
        """Exact ``P(x* = out | x)`` for one vector ``x`` (shape ``(d,)``) and one report ``out ∈ {−1,0,1}^d``."""
        xt = torch.as_tensor(x, dtype=torch.float64)
        ot = torch.as_tensor(out, dtype=torch.float64)
        if xt.dim() != 1 or ot.shape != xt.shape:
            raise ValueError("x and out must be vectors of the same length d")
        self._check_domain(xt, "x")
        d = xt.numel()
        m = self.m_for(d)
        support = ot != 0
        if int(support.sum()) != m or bool(((ot != 0) & (ot.abs() != 1)).any()):
            return 0.0
        p = self.prob_plus(xt[support], m)
        bits = torch.where(ot[support] > 0, p, 1.0 - p)
        return float(bits.prod()) / math.comb(d, m)

    # -- encoder ----------------------------------------------------------------------------------------------------
    def encode_sparse(
        self, x: Any, generator: GeneratorLike = None, *, chunk: int = 4096
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Node side for every row of ``x`` (``n × d``): the non-zero entries of ``x*`` as ``(rows, cols, signs)``.

        Each row gets ``m`` distinct coordinates (uniform without replacement: the ``m`` smallest of ``d`` uniform
        keys, drawn ``chunk`` rows at a time) and a ±1 sign per coordinate. Fully vectorised.
        """
        t, _, _ = self._to_tensor(x, "x")
        if t.dim() != 2:
            raise ValueError(f"x must be a matrix (nodes × features), got shape {tuple(t.shape)}")
        t = self._check_domain(t, "x")
        n, d = t.shape
        m = self.m_for(d)
        gen = _resolve_generator(generator, t.device)
        cols = []
        for start in range(0, n, chunk):
            rows_here = min(chunk, n - start)
            if m == d:
                cols.append(torch.arange(d, device=t.device).expand(rows_here, d))
            elif m == 1:
                where = gen.device if gen is not None else t.device
                cols.append(torch.randint(0, d, (rows_here, 1), generator=gen, device=where).to(t.device))
            else:
                keys = _uniform(torch.Size((rows_here, d)), gen, t.device, torch.float32)
                cols.append(keys.topk(m, dim=1, largest=False).indices)
        col = torch.cat(cols).reshape(-1)
        row = torch.arange(n, device=t.device).repeat_interleave(m)
        p = self.prob_plus(t[row, col].to(torch.float64), m)
        u = _uniform(p.shape, gen, t.device, torch.float64)
        signs = torch.where(u < p, 1.0, -1.0).to(t.dtype)
        return row, col, signs

    def _perturb(self, x: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
        squeeze = x.dim() == 1
        x2 = x.unsqueeze(0) if squeeze else x.reshape(-1, x.shape[-1])
        row, col, signs = self.encode_sparse(x2, gen)
        out = torch.zeros_like(x2)
        out[row, col] = signs
        return out.reshape(x.shape)

    def _estimate(self, sent: torch.Tensor) -> torch.Tensor:
        if sent.dim() == 0:
            raise ValueError("sent must be a vector or a matrix of reports in {-1, 0, 1}")
        if bool(((sent != 0) & (sent.abs() != 1)).any()):
            raise ValueError("sent must hold multi-bit reports x* in {-1, 0, 1}")
        return sent * self.scale(sent.shape[-1]) + (self.low + self.high) / 2.0

    def _variance(self, x: torch.Tensor) -> torch.Tensor:
        d = x.shape[-1]
        m = self.m_for(d)
        c = self.scale(d)
        return c * c * m / d - (x - (self.low + self.high) / 2.0) ** 2

    def perturb(self, x: Any, generator: GeneratorLike = None) -> Any:
        """Node side: the report ``x* ∈ {−1, 0, 1}^d`` of every row of ``x`` (a vector or ``n × d``), dense, same
        shape and dtype; ``m`` non-zero entries per row (:meth:`encode_sparse` gives only those)."""
        if getattr(x, "ndim", 1) == 0:
            raise ValueError("x must be a feature vector or a matrix (nodes × features)")
        return super().perturb(x, generator)


register_mechanism("multibit", MultiBitMechanism)
register_mechanism("mbm", MultiBitMechanism)
