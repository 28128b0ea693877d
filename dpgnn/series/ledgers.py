"""Backfill the guarantee fields into stored result rows computed before the fields existed.

Every stored row's ``ledger`` must carry ``guarantee``, ``neighbouring``, ``not_covered`` and ``accounted``
(:func:`dpgnn.privacy.guarantee.check_ledger`). Rows trained before those fields existed lack them; re-running them
costs CPU-hours, yet the fields follow from the row's stored configuration alone (method, level, ε, the ledger's
mechanism and counts). :func:`backfill` derives them by calling the SAME statement builders the methods call when they
run (``dpgnn.methods.<paper>.privacy_ledger``, :func:`dpgnn.privacy.progap.guarantee_statement`,
:func:`dpgnn.methods.drw.guarantee_fields`, the audit modules' statements of the mechanism under audit, ...), so a
backfilled row says exactly what a fresh run would.

Only the ``ledger`` text of rows that lack a field changes; every other byte of the file (other columns, row order,
quoting, line endings) is kept, which :func:`rewrite_ledgers` checks by a round trip before it writes. A row whose
statement cannot be derived raises :class:`BackfillError` rather than being guessed. A second run changes nothing.
Where the builder also recomputes ε cheaply (LPGCN, LPGNN, PrivGNN), the stored ε must agree with it.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import json
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from dpgnn.atomic import gzip_bytes, write_bytes
from dpgnn.privacy.guarantee import LEDGER_FIELDS, PREPROCESSING, check_ledger, non_private
from dpgnn.results import _locked, results_dir

__all__ = [
    "BackfillError",
    "backfill",
    "backfill_file",
    "rewrite_ledgers",
    "guarantee_fields_for",
    "refresh_sound_file",
]

#: the keys a backfill adds (or, for ``neighbouring``, replaces by the builder's wording)
FIELDS = (*LEDGER_FIELDS, "issues")

Row = Mapping[str, str]


class BackfillError(ValueError):
    """A stored row whose guarantee statement cannot be derived from its stored configuration."""


def _num(x: Any, name: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise BackfillError(f"{name} must be a number, got {x!r}") from None
    if math.isnan(v):
        raise BackfillError(f"{name} is missing (NaN)")
    return v


def _same(a: Any, b: Any, name: str) -> None:
    """Raise unless the stored value ``a`` equals the builder's ``b`` (floats to 1e-9 relative)."""
    fa, fb = _num(a, f"stored {name}"), _num(b, f"derived {name}")
    if not (fa == fb or math.isclose(fa, fb, rel_tol=1e-9, abs_tol=1e-12)):
        raise BackfillError(
            f"stored {name} = {a!r} but the statement builder gives {b!r}: the row's configuration "
            "is not what the builder assumes"
        )


def _pick(led: Mapping[str, Any]) -> dict[str, Any]:
    return {k: led[k] for k in FIELDS if k in led}


# -- one deriver per paper: (row, stored ledger) -> the builder's guarantee fields --------------------------------
def lpgcn_guarantees(row: Row, led: Mapping[str, Any]) -> dict[str, Any]:
    """An LPGCN row's fields from :func:`dpgnn.methods.lpgcn.privacy_ledger` at its stored ε, mechanism and sizes."""
    from dpgnn.methods.lpgcn import privacy_ledger

    eps = _num(led.get("epsilon"), "ledger epsilon")
    if row.get("method") == "raw":
        new = privacy_ledger("raw", None, 1)
    else:
        d = _num(led.get("epsilon_node_total"), "ledger epsilon_node_total") / eps
        if abs(d - round(d)) > 1e-6 * max(1.0, d):
            raise BackfillError(f"epsilon_node_total / epsilon = {d} is not a feature count")
        new = privacy_ledger(row["method"], eps, int(round(d)))
        _same(led["epsilon_node_total"], new["epsilon_node_total"], "epsilon_node_total")
    if new["level"] != led.get("level") or new["mechanism"] != led.get("mechanism"):
        raise BackfillError(
            f"LPGCN {row.get('method')!r}: stored level/mechanism {led.get('level')!r}/"
            f"{led.get('mechanism')!r} differ from the builder's {new['level']!r}/{new['mechanism']!r}"
        )
    _same(led["epsilon"], new["epsilon"], "epsilon")
    return _pick(new)


_M = re.compile(r"^features=([a-z0-9]+)(?:\(m=(\d+)\))?; labels=rr$")


def lpgnn_guarantees(row: Row, led: Mapping[str, Any]) -> dict[str, Any]:
    """An LPGNN row's fields from :func:`dpgnn.methods.lpgnn.privacy_ledger` at its stored mechanism and ε."""
    from dpgnn.methods.lpgnn import privacy_ledger

    match = _M.match(str(led.get("mechanism", "")))
    if not match:
        raise BackfillError(f"LPGNN mechanism {led.get('mechanism')!r} does not name the feature method")
    meth, m = match.group(1), match.group(2)
    m = None if m is None else int(m)
    # the feature count matters only to pick an unstored m (MBM) or as m itself (1BM); both are in the mechanism
    new = privacy_ledger(
        meth,
        _num(led.get("eps_x"), "eps_x"),
        _num(led.get("eps_y"), "eps_y"),
        num_features=m or 1,
        m=m if meth == "mbm" else None,
    )
    if new["mechanism"] != led["mechanism"] or new["level"] != led.get("level"):
        raise BackfillError(
            f"LPGNN: stored level/mechanism {led.get('level')!r}/{led['mechanism']!r} differ from "
            f"the builder's {new['level']!r}/{new['mechanism']!r}"
        )
    for k in ("epsilon", "delta", "feature_epsilon"):
        _same(led.get(k), new[k], k)
    return _pick(new)


def drw_guarantees(row: Row, led: Mapping[str, Any]) -> dict[str, Any]:
    """A DRW/FDP row's fields from :func:`dpgnn.methods.drw.guarantee_fields`; GCN/MLP rows are non-private."""
    from dpgnn.methods.drw import guarantee_fields

    if led.get("level") == "none" and row.get("method") in ("gcn", "mlp"):
        return _pick({"level": "none", **non_private()})  # train_nondp's statement
    if led.get("level") != "feature":
        raise BackfillError(f"DRW row with level {led.get('level')!r} and method {row.get('method')!r}")
    cal = led.get("clip_calibration")
    if cal == "data-dependent (not private)":
        clip = None
    elif cal == "fixed":
        clip = _num(led.get("clip_total"), "clip_total")
    else:
        raise BackfillError(f"DRW clip_calibration {cal!r} unknown")
    # ``scaling``/``select`` entered the ledger with the sound mode; earlier rows ran the paper's pipeline, the
    # defaults of prepare (train_zscore) and train_dp (best_val), the only one the code had then
    return guarantee_fields(
        scaling=led.get("scaling", "train_zscore"),
        clip_norm=clip,
        select=led.get("select", "best_val"),
        method=row["method"],
    )


@functools.cache
def _privgnn_ledger(
    lam: float, q: int, gamma: float, delta: float, classes: int, delta_sound: float, standardized: bool
) -> dict[str, Any]:
    from dpgnn.methods import privgnn as P

    return P.privacy_ledger(
        "privgnn",
        lam=lam,
        queries=q,
        gamma=gamma,
        delta=delta,
        num_classes=classes,
        delta_sound=delta_sound,
        standardized=standardized,
    )


def privgnn_guarantees(row: Row, led: Mapping[str, Any]) -> dict[str, Any]:
    """A PrivGNN-family row's fields from its method's ledger builder at the stored noise, steps and rate."""
    from dpgnn.methods import privgnn as P

    method = row.get("method")
    if method in ("b1", "b2", "b3", "mlp", "b4"):
        return _pick(P.privacy_ledger(method))
    ds = row.get("dataset")
    if ds not in P.DATASETS:
        raise BackfillError(f"PrivGNN dataset {ds!r} unknown")
    info = P.DATASETS[ds]
    nc = [PREPROCESSING] if ds in P.STANDARDIZED else []
    if method in ("pate_g", "pate_m"):
        acc = led.get("accountant")
        if acc not in ("pate_moments", "pate_moments_data_dependent"):
            raise BackfillError(f"PATE accountant {acc!r} unknown")
        return P.pate_statement(
            int(_num(led.get("steps"), "steps")), data_dependent=acc.endswith("_data_dependent"), not_covered=nc
        )
    if method in ("privgnn", "privgnn_code"):
        lam = 1.0 / _num(led.get("noise_scale"), "noise_scale")
        lam = float(row["lam"]) if row.get("lam") else lam
        q, gamma = int(_num(led.get("steps"), "steps")), _num(led.get("sample_rate"), "sample_rate")
        new = _privgnn_ledger(
            lam, q, gamma, _num(led.get("delta"), "delta"), info.classes, info.delta_stated, ds in P.STANDARDIZED
        )
        if method == "privgnn":
            _same(led.get("epsilon"), new["epsilon"], "epsilon")
            return _pick(new)
        from dpgnn.series.privgnn import log_softmax_ledger

        if not math.isinf(_num(led.get("epsilon"), "epsilon")):
            raise BackfillError("a privgnn_code row must have epsilon = inf")
        return _pick(log_softmax_ledger(new))
    raise BackfillError(f"PrivGNN method {method!r} unknown")


def progap_guarantees(row: Row, led: Mapping[str, Any]) -> dict[str, Any]:
    """A ProGAP/GAP-family row's fields from :func:`dpgnn.privacy.progap.guarantee_statement` at its level."""
    from dpgnn.privacy.progap import edge_sensitivity, guarantee_statement

    level = led.get("level")
    method = led.get("method", row.get("method"))
    if level == "none":
        return guarantee_statement("none")
    if method == "edgerand" and level == "edge":
        from dpgnn.methods.progap_baselines import edgerand_statement

        return edgerand_statement()
    if method == "dp-gnn" and level == "node":
        from dpgnn.methods.dp_gnn import dp_gnn_statement

        return dp_gnn_statement(int(_num(led.get("steps"), "steps")))
    if level == "edge":
        # edge_relation entered the ledger with the undirected option; earlier rows used the authors' directed
        # relation, which their stored NAP sensitivity (1) confirms
        relation = led.get("edge_relation", "directed")
        if "sensitivity_nap" in led:
            _same(led["sensitivity_nap"], edge_sensitivity(relation), "sensitivity_nap")
        z = _num(led.get("noise_multiplier"), "noise_multiplier")
        aggs = int(_num(led.get("aggregations"), "aggregations"))
        return guarantee_statement("edge", edge_relation=relation, aggregations=aggs if z > 0 else 0)
    if level == "node":
        return guarantee_statement(
            "node",
            aggregations=int(_num(led.get("aggregations"), "aggregations")),
            dpsgd_runs=int(_num(led.get("dpsgd_runs"), "dpsgd_runs")),
        )
    raise BackfillError(f"ProGAP row with level {level!r} and method {method!r}")


_QUERY = re.compile(r"^Laplace\(1/lam\) on ([a-z_]+), argmax$")


def audit_guarantees(row: Row, led: Mapping[str, Any]) -> dict[str, Any]:
    """An audit row states the guarantee of the mechanism (or trained model) under audit at its claimed ε, built by
    the audit modules from the methods' builders (:mod:`dpgnn.audit`); Fig. 4's rows are PrivGNN's own."""
    from dpgnn.audit import argmax, canary, ldp

    art = row.get("artifact")
    if art == "ldp":
        name = led.get("mechanism")
        if name not in ldp.MECHANISMS and name not in ldp.BROKEN:
            raise BackfillError(f"LDP audit mechanism {name!r} unknown")
        if row.get("broken") and (row["broken"] == "True") != (name in ldp.BROKEN):
            raise BackfillError(f"LDP audit row broken={row['broken']!r} disagrees with mechanism {name!r}")
        return ldp.guarantee_statement(name)
    if art == "edge":
        if led.get("level") != "edge" or led.get("mechanism") != "NAP Gaussian":
            raise BackfillError(f"edge audit row with level/mechanism {led.get('level')!r}/{led.get('mechanism')!r}")
        if not _num(led.get("sigma"), "sigma") > 0:
            raise BackfillError("an edge audit row with a finite epsilon must have noise (sigma > 0)")
        return canary.edge_statement(int(_num(led.get("aggregations"), "aggregations")))
    if art == "node":
        eps, z = _num(led.get("epsilon"), "epsilon"), _num(led.get("noise_multiplier"), "noise_multiplier")
        if math.isinf(eps) and z == 0:
            return canary.node_statement(False)
        if math.isfinite(eps) and z > 0:
            return canary.node_statement(True)
        raise BackfillError(
            f"node audit row with epsilon {eps} and noise multiplier {z}: a finite epsilon needs "
            "noise, an infinite one is the no-noise control"
        )
    if art == "query":
        match = _QUERY.match(str(led.get("mechanism", "")))
        if not match:
            raise BackfillError(f"query audit mechanism {led.get('mechanism')!r} does not name where the noise is")
        lam = _num(led.get("epsilon"), "epsilon")
        if row.get("lam"):
            _same(row["lam"], lam, "lam")
        return argmax.query_statement(lam, int(_num(row.get("classes"), "classes")), match.group(1))
    if art in ("fig4", "fig4_shadows"):
        return privgnn_guarantees(row, led)
    raise BackfillError(f"audit artifact {art!r} unknown")


def bench_guarantees(row: Row, led: Mapping[str, Any]) -> dict[str, Any]:
    """A bench row's fields from :func:`dpgnn.bench.protocol.cell_statement` on its stored columns and ledger."""
    from dpgnn.bench.protocol import cell_statement

    return cell_statement(row["guarantee"], json.loads(row["not_covered"] or "[]"), led["run"], led["search"])


def guarantee_fields_for(paper: str, row: Row, ledger: Mapping[str, Any]) -> dict[str, Any]:
    """The guarantee fields of one stored row of ``paper`` (row: the CSV's text fields; ledger: its parsed JSON),
    from the deriver its series registers (:attr:`dpgnn.series.Series.guarantees`)."""
    from dpgnn import series

    derive = series.get(paper).guarantees if paper in series.names() else None
    if derive is None:
        known = [s.name for s in series.all_series() if s.guarantees]
        raise BackfillError(f"no statement builder for paper {paper!r}; known: {known}")
    fields = _pick(derive(row, ledger))
    missing = [f for f in LEDGER_FIELDS if f not in fields]
    if missing:
        raise BackfillError(f"the builder for {paper!r} gave no {missing}")
    return fields


# -- file rewriting ----------------------------------------------------------------------------------------------
def _records(text: str) -> list[tuple[list[str], str]]:
    """``text``'s CSV records, each with its own line terminator (a file appended to by different writers may mix
    ``\\r\\n`` and ``\\n``); checked: each record re-serialised with its terminator gives its raw text back."""
    raw: list[str] = []

    def lines():
        *full, last = text.split("\n")  # only "\n" ends a physical line ("\r" stays inside it)
        for line in [f + "\n" for f in full] + ([last] if last else []):
            raw.append(line)
            yield line

    out = []
    for rec in csv.reader(lines()):
        chunk = "".join(raw)
        raw.clear()
        term = "\r\n" if chunk.endswith("\r\n") else "\n" if chunk.endswith("\n") else ""
        if _dump(rec, term) != chunk:
            raise BackfillError(f"a record does not round-trip through the csv module byte for byte: {chunk[:120]!r}")
        out.append((rec, term))
    return out


def _dump(rec: list[str], term: str) -> str:
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator=term or "\n").writerow(rec)
    return buf.getvalue() if term else buf.getvalue()[:-1]


def rewrite_ledgers(text: str, fix: Callable[[dict[str, str], dict[str, Any]], dict[str, Any] | None]) -> str:
    """``text`` (a CSV with a ``ledger`` column) with each row's ledger replaced by ``fix(row, ledger)`` where that
    is not None; every other byte is kept (each record must round-trip through the csv module unchanged)."""
    if not text:
        return text
    recs = _records(text)
    header = recs[0][0]
    if "ledger" not in header:
        raise BackfillError("the file has no ledger column")
    li = header.index("ledger")
    parts = [_dump(*recs[0])]
    for rec, term in recs[1:]:
        if len(rec) != len(header):
            raise BackfillError(f"a row has {len(rec)} fields, the header {len(header)}")
        new = fix(dict(zip(header, rec)), json.loads(rec[li]) if rec[li] else {})
        if new is not None:
            rec = list(rec)
            rec[li] = json.dumps(new, sort_keys=True, default=str)  # as ResultStore writes a ledger
        parts.append(_dump(rec, term))
    return "".join(parts)


def _read_text(path: Path) -> str:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", newline="") as f:
            return f.read()
    with open(path, newline="") as f:
        return f.read()


def _rewrite_file(path: Path, fix: Callable[[dict[str, str], dict[str, Any]], dict[str, Any] | None]) -> None:
    """:func:`rewrite_ledgers` on one stored CSV (``.csv`` or ``.csv.gz``) under the store's lock; the file is
    replaced atomically, and only when a ledger changed."""
    with _locked(path.with_name(path.name.removesuffix(".gz"))):
        text = _read_text(path)
        new = rewrite_ledgers(text, fix)
        if new != text:
            data = new.encode()
            write_bytes(path, gzip_bytes(data, path.name) if path.suffix == ".gz" else data, if_changed=True)


def backfill_file(path: Path | str, paper: str) -> int:
    """Add the guarantee fields to every row of one stored CSV (``.csv`` or ``.csv.gz``) that lacks one; returns the
    number of rows changed (0: the file is left byte-identical). Rows that already pass :func:`check_ledger` are
    not touched. Raises :class:`BackfillError` for a row whose statement cannot be derived."""
    path = Path(path)
    changed = 0

    def fix(row: dict[str, str], led: dict[str, Any]) -> dict[str, Any] | None:
        nonlocal changed
        if led and all(f in led for f in LEDGER_FIELDS):
            return None
        if not led:
            raise BackfillError(f"{path}: a row has no ledger (method {row.get('method')!r})")
        try:
            out = {**led, **guarantee_fields_for(paper, row, led)}
        except ValueError as e:  # BackfillError, or a builder refusing the stored configuration
            raise BackfillError(
                f"{path}: row method={row.get('method')!r} dataset={row.get('dataset')!r}: {e}"
            ) from None
        check_ledger(out)
        changed += 1
        return out

    _rewrite_file(path, fix)
    return changed


def backfill(profile: str, paper: str | None = None, root: Path | str | None = None) -> dict[str, int]:
    """Backfill every stored CSV of ``profile`` (one paper or all) that has a ``ledger`` column; returns
    ``{path: rows changed}``. Idempotent: a second call changes nothing."""
    base = results_dir(profile, "_", Path(root) if root else None).parent
    papers = [paper] if paper else sorted(p.name for p in base.iterdir() if p.is_dir()) if base.exists() else []
    out: dict[str, int] = {}
    for pp in papers:
        for path in sorted((base / pp).glob("*.csv*")):
            if not path.name.endswith((".csv", ".csv.gz")):
                continue
            with gzip.open(path, "rt", newline="") if path.suffix == ".gz" else open(path, newline="") as f:
                header = next(csv.reader(f), [])
            if "ledger" in header:
                out[str(path)] = backfill_file(path, pp)
    return out


# -- sound values re-derived when their accountant tightens -------------------------------------------------------
def _privgnn_sound(row: dict[str, str], led: dict[str, Any]) -> dict[str, Any] | None:
    """``led`` with its sound ε recomputed from its own parameters by today's accountant (PrivGNN-family rows with a
    finite ``epsilon_sound``; PATE rows get theirs), or None for every other row."""
    from dpgnn.methods.privgnn import SUBSAMPLING_OF
    from dpgnn.privacy.pate import pate_epsilon
    from dpgnn.privacy.privgnn import sound_epsilon

    acc = str(led.get("accountant", ""))
    if acc.startswith("pate_moments"):
        new = pate_epsilon(
            1.0 / _num(led.get("noise_scale"), "noise_scale"),
            int(_num(led.get("steps"), "steps")),
            _num(row.get("delta") or led.get("delta"), "delta"),
        ).epsilon_sound
        return None if led.get("epsilon_sound") == new else {**led, "epsilon_sound": new}
    if (
        "epsilon_per_query_sound" not in led
        or "epsilon_sound" not in led
        or not math.isfinite(_num(led["epsilon_sound"], "epsilon_sound"))
    ):
        return None  # not a PrivGNN statement (those carry the per-query ε₀), or ε = ∞
    how = SUBSAMPLING_OF.get(str(row.get("method")), "per_query")
    classes = led.get("num_classes")
    new = sound_epsilon(
        1.0 / _num(led.get("noise_scale"), "noise_scale"),
        int(_num(led.get("steps"), "steps")),
        _num(led.get("sample_rate"), "sample_rate"),
        _num(led.get("delta_sound"), "delta_sound"),
        None if classes is None else int(classes),
        subsampling=how,
    )
    return None if led["epsilon_sound"] == new else {**led, "epsilon_sound": new}


def _edgerand_sound(row: dict[str, str], led: dict[str, Any]) -> dict[str, Any] | None:
    """An EdgeRand row's ledger with today's statement (:func:`dpgnn.methods.progap_baselines.edgerand_statement`)
    and its ``epsilon_sound``, or None for every other row."""
    if led.get("method") != "edgerand" or led.get("level") != "edge":
        return None
    from dpgnn.methods.progap_baselines import edgerand_epsilon_sound, edgerand_statement

    new = {**led, **edgerand_statement(), "epsilon_sound": edgerand_epsilon_sound(_num(led["epsilon"], "epsilon"))}
    return None if new == led else new


def _bench_statement(row: dict[str, str], led: dict[str, Any]) -> dict[str, Any] | None:
    """A bench row's ledger with today's cell statement (:func:`bench_guarantees`) in place of its guarantee
    fields, or None for every other row (bench rows carry the selected ``run`` and the ``search``) and for a row
    whose statement is unchanged."""
    if not ({"run", "search"} <= set(led) and "guarantee" in row):
        return None
    new = {**{k: v for k, v in led.items() if k not in FIELDS}, **bench_guarantees(row, led)}
    return None if new == led else new


def refresh_sound_file(path: Path | str) -> int:
    """Recompute the sound ε of every PrivGNN/PATE/EdgeRand row of one stored CSV from the row's own ledger
    parameters (:func:`_privgnn_sound`, :func:`_edgerand_sound`) and the statement of every bench row
    (:func:`_bench_statement`), keeping every other byte; returns the number of rows changed."""
    path = Path(path)
    changed = 0

    def fix(row: dict[str, str], led: dict[str, Any]) -> dict[str, Any] | None:
        nonlocal changed
        out = (_privgnn_sound(row, led) or _edgerand_sound(row, led) or _bench_statement(row, led)) if led else None
        changed += out is not None
        return out

    _rewrite_file(path, fix)
    return changed
