"""Notebook-facing experiment series: one module per paper.

A series function turns a profile's settings into a resumable grid of runs (:mod:`dpgnn.sweep`), stores tidy rows
(:mod:`dpgnn.results`), and draws figures only from the stored rows (:mod:`dpgnn.plotting`). Methods themselves
live in :mod:`dpgnn.methods`; this layer only orchestrates them.
"""

from __future__ import annotations

import logging

from dpgnn.data import DatasetUnavailable
from dpgnn.results import ResultStore

log = logging.getLogger(__name__)


def load_or_skip(store: ResultStore, dataset: str, loader, *, artifact: str = "*"):
    """``loader(dataset)`` or ``None`` when its files are unavailable.

    A skipped dataset is announced with one visible line and recorded in the store, so the report marks its
    cells ``not_run`` with the reason; a later successful load clears the record.
    """
    try:
        data = loader(dataset)
    except DatasetUnavailable as exc:
        first = str(exc).strip().splitlines()[0]
        print(f"not_run: {dataset} -- {first}")
        store.record_skip(dataset, str(exc), artifact=artifact)
        return None
    store.clear_skip(dataset, artifact=artifact)
    return data
