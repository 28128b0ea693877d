"""Registrations: every dataset of the five papers, with canonical URLs, sha256 and paper variants.

sha256 values of mirrored files come from the offline mirror's MANIFEST (byte-for-byte copies of the public
files unless noted); ``()`` = public hash unknown (recorded on first download, then enforced). Every raw file also
has a mirror path (``RawFile.mirror``): the place a mirror that adds the file later must use.

One module per family of datasets, registered in this order (the order of ``dpgnn data list``): :mod:`.planetoid`,
:mod:`.karateclub`, :mod:`.facebook100`, :mod:`.amazon_credit`, :mod:`.ogb`, :mod:`.pyg`, :mod:`.paper_names`;
the paper variants they share are built by :mod:`.variants`.
"""

# importing a module registers its datasets: this order is the order of the listing
# isort: off
from dpgnn.data.datasets.variants import GLOBAL_SEED
from dpgnn.data.datasets.planetoid import PLANETOID_SHA256, PLANETOID_URL
from dpgnn.data.datasets.karateclub import KC_URL
from dpgnn.data.datasets.facebook100 import FB100_FILES, FB100_SHA256, FB100_STATS, FB100_URL
from dpgnn.data.datasets.amazon_credit import NIFTY_URL
from dpgnn.data.datasets.ogb import OGB_URL
from dpgnn.data.datasets.pyg import ELLIPTIC_URL, GDRIVE
from dpgnn.data.datasets import paper_names  # noqa: F401  (registers WeNet and the ambiguous paper names)
# isort: on

__all__ = [
    "ELLIPTIC_URL",
    "FB100_FILES",
    "FB100_SHA256",
    "FB100_STATS",
    "FB100_URL",
    "GDRIVE",
    "GLOBAL_SEED",
    "KC_URL",
    "NIFTY_URL",
    "OGB_URL",
    "PLANETOID_SHA256",
    "PLANETOID_URL",
]
