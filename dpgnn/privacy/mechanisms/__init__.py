"""Randomisation mechanisms: local (per-feature ε-LDP) and central (Gaussian) noise, plus label randomised response.

Every mechanism object both adds noise and knows its privacy cost (:meth:`Mechanism.ledger`). The public contract,
used by notebooks, methods and external audits::

    m = get_mechanism(name, epsilon=..., low=0.0, high=1.0, **kw)
    m.perturb(x, generator=None)  # what a node sends (PGC: bits y ∈ {0,1}; LM/PM/Gaussian: noisy value; RR: labels)
    m(x, generator=None)          # server-side estimate of x  (= m.estimate(m.perturb(x, generator)))
    m.estimate(sent)              # server side alone (PGC: de-biasing, eq. 5; identity otherwise)
    m.variance(x)                 # analytic per-entry variance of m(x)

Inputs are torch tensors (any float dtype, any device; noise is drawn on the generator's device and moved to
``x.device``) or numpy arrays (returned as numpy). ``generator`` is a ``torch.Generator``, an int seed
(0 is a seed) or ``None`` (torch's global RNG). The same seed gives the same output.

Inputs outside ``[low, high]`` are **refused** with a ``ValueError`` (the privacy guarantee is only valid on the
declared domain, since the sensitivity is ``Δ = high − low``). Pass ``clip=True`` to clip them instead (a
``UserWarning`` says how many entries were clipped). NaN inputs are always refused.

Names are normalised (case, ``-``, ``_`` and spaces ignored); :func:`register_mechanism` adds new ones.

One module per family (:mod:`.local`, :mod:`.labels`, :mod:`.gaussian`) on the base class of :mod:`.base`;
:mod:`.registry` holds the names.
"""

from dpgnn.privacy.mechanisms.base import ArrayLike as ArrayLike
from dpgnn.privacy.mechanisms.base import GeneratorLike as GeneratorLike
from dpgnn.privacy.mechanisms.base import Mechanism
from dpgnn.privacy.mechanisms.gaussian import AnalyticGaussianMechanism, GaussianMechanism
from dpgnn.privacy.mechanisms.labels import RandomizedResponse
from dpgnn.privacy.mechanisms.local import LaplaceMechanism, PGCMechanism, PiecewiseMechanism
from dpgnn.privacy.mechanisms.registry import _DISPLAY as _DISPLAY  # the registry's own tables (same dicts)
from dpgnn.privacy.mechanisms.registry import _REGISTRY as _REGISTRY
from dpgnn.privacy.mechanisms.registry import available_mechanisms, get_mechanism, register_mechanism

__all__ = [
    "Mechanism",
    "LaplaceMechanism",
    "PiecewiseMechanism",
    "PGCMechanism",
    "RandomizedResponse",
    "GaussianMechanism",
    "AnalyticGaussianMechanism",
    "get_mechanism",
    "register_mechanism",
    "available_mechanisms",
]
