"""Accountants: turn privacy events into (ε, δ). Thin and immutable; the math lives in :mod:`dpgnn.privacy.rdp`
and :mod:`dpgnn.privacy.analytic`.

Every accountant has the same contract (checked by one test that all of them must pass)::

    acc = get_accountant("rdp")               # or RdpAccountant(orders=None)
    acc2 = acc.compose(event, count=1)        # a NEW accountant; ``acc`` is unchanged (immutable)
    acc2.get_epsilon(delta)                   # float
    acc2.get_epsilon_and_order(delta)         # (float, optimal RDP order or None)
    acc2.supports(event)                      # bool

Accountants (names are normalised like mechanism names):

- ``"rdp"`` (:class:`RdpAccountant`, default): Rényi DP on a wide grid of orders with exact per-event curves where
  known and the tight RDP → (ε, δ) conversion. Supports every event of :mod:`dpgnn.privacy.events` whose sampled
  events wrap a Gaussian or Laplace event, and the FDP step :class:`dpgnn.privacy.fdp.FdpSampledGaussianEvent`
  (Daigavane et al.'s multi-term hypergeometric RDP; on the orders :data:`dpgnn.privacy.fdp.FDP_ORDERS` it gives
  exactly :func:`dpgnn.privacy.fdp.fdp_epsilon`). The other accountants refuse the FDP event with a
  ``NotImplementedError`` naming what they support.
- ``"exact_gaussian"`` (:class:`ExactGaussianAccountant`): only compositions of (unsampled) Gaussian events; the
  composition is one Gaussian with ``z = (Σ z_k^-2)^-1/2`` converted with the exact Balle–Wang profile (the tight
  accountant for that case; what autodp's ``ComposeGaussian`` + ``get_approxDP`` compute, used by ProGAP).
- ``"autodp"`` (:class:`AutodpAccountant`): autodp's Mechanism API (``ExactGaussianMechanism``,
  ``LaplaceMechanism``, ``AmplificationBySampling``, ``Composition``/``ComposeGaussian``, ``get_approxDP``), as in
  the ProGAP and DRW authors' code. Reproduces their numbers.
- ``"autodp_rdp_acct"`` (:class:`AutodpRdpAcctAccountant`): autodp's legacy ``rdp_acct.anaRDPacct`` with
  ``compose_poisson_subsampled_mechanisms`` / ``compose_subsampled_mechanism`` / ``compose_mechanism`` and
  ``get_eps``, as in the PrivGNN authors' code. Reproduces PrivGNN's ε table.
- ``"pld"`` (:class:`PldAccountant`): privacy-loss-distribution accounting with Google's ``dp_accounting`` (0.6.0,
  ``dp_accounting.pld.PLDAccountant``; Koskela et al. 2020, Doroshenko et al. 2022): the tight (ε, δ) of
  compositions of Gaussian and Laplace events, unsampled or Poisson-subsampled (add/remove neighbouring, both
  adjacency directions), up to a discretisation that is rounded *pessimistically* (the value is never below the
  exact ε). Sampling without replacement (replace-one) and the FDP step use the dominating pairs of
  :mod:`dpgnn.privacy.sampled_pld` (symmetrised, so both directions of every step are covered). Much tighter than
  RDP at few steps (z = 0.6, q = 0.001, T = 10, δ = 1e-5: 0.333 vs 2.04). Counts above
  :data:`dpgnn.privacy.sampled_pld.MAX_COMPOSITIONS`, and loss grids too large to build
  (:mod:`dpgnn.privacy.pld_limits`), are refused in one line (use ``"rdp"``).

The default ``"rdp"`` is always sound; it is at least as tight as the autodp paths for the RDP-based cases because
it uses the same (or exact) RDP curves and a tighter conversion.

One module per accountant (:mod:`.rdp`, :mod:`.exact_gaussian`, :mod:`.autodp`, :mod:`.pld`) on the base class of
:mod:`.base`; :mod:`.registry` holds the names.
"""

from dpgnn.privacy.accountant.autodp import AutodpAccountant, AutodpCompositionAccountant, AutodpRdpAcctAccountant
from dpgnn.privacy.accountant.base import Accountant
from dpgnn.privacy.accountant.exact_gaussian import ExactGaussianAccountant
from dpgnn.privacy.accountant.pld import PldAccountant
from dpgnn.privacy.accountant.rdp import RdpAccountant, event_rdp
from dpgnn.privacy.accountant.registry import available_accountants, epsilon, get_accountant, register_accountant

__all__ = [
    "Accountant",
    "RdpAccountant",
    "ExactGaussianAccountant",
    "AutodpAccountant",
    "AutodpCompositionAccountant",
    "AutodpRdpAcctAccountant",
    "PldAccountant",
    "event_rdp",
    "epsilon",
    "get_accountant",
    "register_accountant",
    "available_accountants",
]
