"""What the audits cover, by name: the local mechanisms (:mod:`dpgnn.audit.ldp`), the central-DP training methods
(:mod:`dpgnn.audit.central`) and the membership-inference shadow designs and protocols (:mod:`dpgnn.audit.mia`).

A module without torch: the audit series build their profiles and grids and read stored rows from these names
without loading the audits' code. Each name is also importable from the module that audits it.
"""

from __future__ import annotations

__all__ = ["MECHANISMS", "BROKEN", "UNIT_OF", "CENTRAL_METHODS", "SHADOW_SIZES", "PROTOCOLS"]

# LDP mechanism name -> (label, privacy unit, kind); kind says how inputs/statistics are formed
MECHANISMS: dict[str, tuple[str, str, str]] = {
    "laplace": ("LM (LPGCN)", "feature entry", "scalar_clip"),
    "piecewise": ("PM (LPGCN)", "feature entry", "scalar"),
    "pgc": ("PGC / Duchi (LPGCN)", "feature entry", "scalar"),
    "mbm": ("multi-bit (LPGNN)", "node feature vector", "vector_sum"),
    "1bm": ("1-bit, m = d (LPGNN baseline)", "node feature vector", "vector_sum"),
    "lpm": ("Laplace, scale d/ε (LPGNN baseline)", "node feature vector", "vector_clip"),
    "agm": ("analytic Gaussian (LPGNN baseline)", "node feature vector", "vector_sum"),
    "rr": ("randomized response (LPGNN labels)", "node label", "label"),
}
#: the deliberately broken LDP controls (:class:`dpgnn.audit.ldp.HalvedScaleLaplace`), as :data:`MECHANISMS`
BROKEN: dict[str, tuple[str, str, str]] = {
    "broken_laplace": ("LM with noise scale halved (broken on purpose)", "feature entry", "scalar_clip"),
}

#: audited central-DP training method -> privacy unit it claims (the neighbouring relation of its accountant)
UNIT_OF = {"progap-node": "node", "dp-gnn": "node", "drw": "feature", "fdp": "feature"}
CENTRAL_METHODS = tuple(UNIT_OF)

#: shadow sizes of :func:`~dpgnn.audit.mia.shadow_sensitivity`; ``"quarter"`` is the default design of
#: :func:`~dpgnn.audit.mia.run_attacks`
SHADOW_SIZES = ("quarter", "half", "target")
#: how the attack is built and scored: the usual score AUROC, or the published implementation's
#: (:mod:`dpgnn.audit.mia`)
PROTOCOLS = ("score", "rebmigraph")
