"""The dataset registry: one :class:`DatasetSpec` per dataset, looked up by normalised name.

``load_dataset(name, variant)`` = fetch raw files (mirror / cache / download, sha256-verified) -> parse with the
spec's loader (cached as ``<root>/<dataset>/processed/base-v<N>.pt``) -> apply the variant's paper-specific
preprocessing (cached as ``<variant>[-<hash of the effective options>]-v<N>.pt``).
"""

from __future__ import annotations

import difflib
import importlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from dpgnn.atomic import atomic_open
from dpgnn.data.download import DatasetUnavailable, RawFile, data_root, fetch, locate, mirror_root
from dpgnn.utils import config_hash

if TYPE_CHECKING:
    from torch_geometric.data import Data

log = logging.getLogger("dpgnn.data")

#: Bump when a loader/variant changes its output, so stale processed caches are not reused.
PROCESS_VERSION = 2


@dataclass(frozen=True)
class LazyFunction:
    """The function at ``target`` (``"package.module.function"``), imported when first called: a registration names
    its loader without importing it, so that looking a dataset up loads no torch (the loaders import it)."""

    target: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the target function (its module is imported on the first call, then found in ``sys.modules``)."""
        module, name = self.target.rsplit(".", 1)
        return getattr(importlib.import_module(module), name)(*args, **kwargs)


@dataclass(frozen=True)
class Variant:
    """A paper's preprocessing of a dataset (split, class filter, normalisation...).

    ``build(base_data, **options) -> Data``; ``redirect=(dataset, variant)`` makes the variant an alias of
    another dataset's variant (used where the same name means different graphs in different papers).
    """

    name: str
    papers: tuple[str, ...]
    doc: str
    build: Callable[..., Data] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    redirect: tuple[str, str | None] | None = None


@dataclass
class DatasetSpec:
    """Everything the library knows about one dataset.

    Attributes:
        name: canonical name (``load_dataset`` accepts it in any case, with ``-``/``_`` or without).
        title: human-readable name.
        doc: source paper and statistics (shown by ``dpgnn data info``).
        papers: which of the papers (:func:`dpgnn.series.names`) use it.
        raw_files: canonical URL (+ sha256, mirror path) of every raw file.
        loader: ``{raw name: path} -> Data`` parser of the raw format (``None`` for pure alias entries).
        variants: paper-specific preprocessing, by name.
        stats: expected statistics of the base graph: nodes, edges (undirected, no self-loops unless noted),
            features, classes (``None`` = unknown here).
        aliases: other accepted names.
        note: caveats (name collisions, stand-ins, availability).
        public: ``False`` for data that was never released (WeNet).
        require_variant: the bare name is ambiguous across papers; a variant must be given.
        partial_ok: the loader works on whichever raw files are present (unions); at least one is needed.
    """

    name: str
    title: str
    doc: str
    papers: tuple[str, ...]
    raw_files: tuple[RawFile, ...] = ()
    loader: Callable[[dict[str, Path]], Data] | None = None
    variants: dict[str, Variant] = field(default_factory=dict)
    stats: dict[str, int | None] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    note: str = ""
    public: bool = True
    require_variant: bool = False
    partial_ok: bool = False
    group: str = ""
    default_variant: str | None = None
    raw_folder: str | None = None  # shared raw cache folder (e.g. all Facebook100 entries use "facebook100")

    @property
    def url(self) -> str:
        """The first raw file's download URL (``""`` for an entry without raw files)."""
        return self.raw_files[0].url if self.raw_files else ""

    def raw_dir(self, root: str | Path | None = None) -> Path:
        """Download cache of the raw files: ``<data root>/<raw_folder or name>/raw`` (root as :func:`data_root`)."""
        return data_root(root) / (self.raw_folder or self.name) / "raw"

    def processed_dir(self, root: str | Path | None = None) -> Path:
        """Cache of the processed graphs (one ``.pt`` per variant and options): ``<data root>/<name>/processed``."""
        return data_root(root) / self.name / "processed"


_REGISTRY: dict[str, DatasetSpec] = {}
_KEYS: dict[str, str] = {}  # normalised key (name or alias) -> canonical name


def normalize_name(name: str) -> str:
    """Case-, ``-``-, ``_``-, space- and dot-insensitive key: ``"FB100_Caltech36"`` -> ``"fb100caltech36"``."""
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a string, got {name!r}")
    return re.sub(r"[-_\s.]", "", name.lower())


def _with_builtins() -> None:
    """Register the package's own datasets (:mod:`dpgnn.data.datasets`, in their order) before the first lookup or
    registration. ``dpgnn.data`` imports nothing until asked, and the registrations name their loaders and variant
    builders without importing them, so that reading stored results and looking datasets up load no torch."""
    import dpgnn.data.datasets  # noqa: F401  (importing it registers every dataset; at once when done before)


def register(spec: DatasetSpec) -> DatasetSpec:
    """Add ``spec`` to the registry (its name and aliases must be new)."""
    _with_builtins()
    for key in (spec.name, *spec.aliases):
        k = normalize_name(key)
        if k in _KEYS and _KEYS[k] != spec.name:
            raise ValueError(f"dataset name {key!r} already registered for {_KEYS[k]!r}")
        _KEYS[k] = spec.name
    _REGISTRY[spec.name] = spec
    return spec


def get_spec(name: str) -> DatasetSpec:
    """The :class:`DatasetSpec` of ``name``; unknown names raise ``ValueError`` listing the valid ones."""
    _with_builtins()
    key = normalize_name(name)
    if key in _KEYS:
        return _REGISTRY[_KEYS[key]]
    close = difflib.get_close_matches(key, list(_KEYS), n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(repr(_KEYS[c]) for c in dict.fromkeys(close))}?" if close else ""
    valid = ", ".join(sorted(s for s in _REGISTRY if not s.startswith("fb100-")))
    raise ValueError(
        f"Unknown dataset {name!r}.{hint} Valid names: {valid}, and fb100-<university> for any "
        f"of the 100 Facebook100 universities (e.g. fb100-caltech36)."
    )


def all_specs() -> list[DatasetSpec]:
    """Every registered :class:`DatasetSpec`, in registration order (aliases not repeated)."""
    _with_builtins()
    return list(_REGISTRY.values())


def _resolve_variant(spec: DatasetSpec, variant: str | None) -> Variant | None:
    if variant is None and spec.default_variant is not None:
        variant = spec.default_variant
    if variant is None:
        if spec.require_variant:
            raise ValueError(
                f"{spec.name!r} names different graphs in different papers; pass variant= one of "
                f"{sorted(spec.variants)}. {spec.note}"
            )
        return None
    key = normalize_name(variant)
    for vname, v in spec.variants.items():
        if normalize_name(vname) == key:
            return v
    raise ValueError(
        f"Unknown variant {variant!r} of {spec.name!r}; valid variants: "
        f"{sorted(spec.variants) or 'none (load without variant)'}"
    )


def _options_tag(options: dict[str, Any]) -> str:
    return f"-{config_hash(options)}" if options else ""


def _processed_path(spec: DatasetSpec, variant: str | None, options: dict[str, Any], root) -> Path:
    return spec.processed_dir(root) / f"{variant or 'base'}{_options_tag(options)}-v{PROCESS_VERSION}.pt"


def _not_public(spec: DatasetSpec) -> DatasetUnavailable:
    return DatasetUnavailable(f"Dataset {spec.name!r} is not public and cannot be downloaded or mirrored. {spec.note}")


def _torch_load(path: Path) -> Data:
    import torch

    return torch.load(path, weights_only=False)


def _torch_save(obj: Data, path: Path) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as f:
        torch.save(obj, f)


def _load_base(spec: DatasetSpec, root, download: bool) -> Data:
    path = _processed_path(spec, None, {}, root)
    if path.is_file():
        return _torch_load(path)
    if not spec.public:
        raise _not_public(spec)
    raw_dir = spec.raw_dir(root)
    paths = fetch(spec.name, spec.raw_files, raw_dir, download=download, allow_missing=spec.partial_ok)
    if spec.partial_ok and not paths:
        # nothing present: report every file as missing (without attempting downloads of all of them)
        fetch(spec.name, spec.raw_files, raw_dir, download=False)
    assert spec.loader is not None
    data = spec.loader(paths)
    if spec.partial_ok:
        # the union depends on which files were present: do not cache it under a fixed name
        return data
    _torch_save(data, path)
    return data


def load_dataset(
    name: str, variant: str | None = None, *, root: str | Path | None = None, download: bool = True, **options: Any
) -> Data:
    """Load dataset ``name`` (optionally a paper ``variant``) as a PyG ``Data``.

    ``x`` is float32, ``y`` long (-1 = unlabelled; float multi-label for PPI), ``edge_index`` undirected (both
    directions, sorted, no duplicates, no self-loops), masks where the dataset/variant defines a split.
    ``options`` override a variant's parameters (e.g. ``seed=1``, ``min_class_size=500``) and are part of the
    cache key. Processed results are cached under ``root`` (default ``$DPGNN_DATA_DIR`` or ``<repo>/data``).

    Raises ``ValueError`` for unknown names/variants, :class:`DatasetUnavailable` when raw files are neither
    mirrored, cached nor downloadable (or the data is not public), ``ChecksumError`` on a sha256 mismatch.
    """
    spec = get_spec(name)
    if not spec.public:
        raise _not_public(spec)
    v = _resolve_variant(spec, variant)
    if v is not None and v.redirect is not None:
        target, tvariant = v.redirect
        return load_dataset(target, tvariant, root=root, download=download, **options)
    if v is None:
        if options:
            raise TypeError(f"options {sorted(options)} only apply to a variant of {spec.name!r}")
        return _load_base(spec, root, download)
    unknown = set(options) - set(v.options)
    if unknown:
        raise TypeError(
            f"variant {v.name!r} of {spec.name!r} has no option(s) {sorted(unknown)}; valid: {sorted(v.options)}"
        )
    effective = {**v.options, **options}
    path = _processed_path(spec, v.name, effective, root)
    if path.is_file() and not spec.partial_ok:
        return _torch_load(path)
    base = _load_base(spec, root, download)
    assert v.build is not None
    data = v.build(base, **effective)
    if not spec.partial_ok:
        _torch_save(data, path)
    return data


def dataset_available(name: str, variant: str | None = None, *, root: str | Path | None = None) -> bool:
    """Whether ``name`` (/``variant``) can be loaded here without network: processed cache or raw files present.

    Cheap: looks at file existence only, never hashes nor downloads. Unknown names raise ``ValueError``.
    """
    spec = get_spec(name)
    if not spec.public:
        return False
    if variant is None and spec.require_variant and spec.default_variant is None:
        return any(dataset_available(name, v, root=root) for v in spec.variants)
    v = _resolve_variant(spec, variant)
    if v is not None and v.redirect is not None:
        return dataset_available(v.redirect[0], v.redirect[1], root=root)
    if v is not None and _processed_path(spec, v.name, dict(v.options), root).is_file():
        return True
    if _processed_path(spec, None, {}, root).is_file():
        return True
    raw_dir = spec.raw_dir(root)
    present = [locate(r, raw_dir) is not None for r in spec.raw_files]
    return any(present) if spec.partial_ok else (bool(present) and all(present))


def paper_dataset_available(name: str, paper: str | None = None) -> bool | None:
    """Whether ``paper``'s graph named ``name`` can be loaded here (the paper's own variant where the registry has
    one: an ambiguous name such as ``facebook`` may be mirrored for one paper and not another); ``None`` when
    ``name`` is not a registered dataset (a synthetic graph, say), which callers treat as available."""
    try:
        spec = get_spec(name)
        variant = paper if paper is not None and paper in spec.variants else None
        return dataset_available(name, variant)
    except (ValueError, KeyError):
        return None


def _variants_text(spec: DatasetSpec) -> str:
    parts = []
    for vname, v in spec.variants.items():
        tgt = f"->{v.redirect[0]}" + (f"/{v.redirect[1]}" if v.redirect[1] else "") if v.redirect else ""
        parts.append(vname + tgt)
    return ", ".join(parts)


def list_datasets(*, root: str | Path | None = None) -> pd.DataFrame:
    """One row per registered dataset: name, variants, papers, nodes, edges, features, classes, source URL,
    available here, note. ``edges`` counts undirected edges of the base graph (self-loops excluded)."""
    rows = []
    for spec in all_specs():
        rows.append(
            {
                "name": spec.name,
                "title": spec.title,
                "variants": _variants_text(spec),
                "papers": ",".join(spec.papers),
                "nodes": spec.stats.get("nodes"),
                "edges": spec.stats.get("edges"),
                "features": spec.stats.get("features"),
                "classes": spec.stats.get("classes"),
                "url": spec.url,
                "available": dataset_available(spec.name, root=root),
                "note": spec.note,
            }
        )
    df = pd.DataFrame(rows)
    for col in ("nodes", "edges", "features", "classes"):
        df[col] = df[col].astype("Int64")
    return df


def describe(name: str, *, root: str | Path | None = None) -> str:
    """Long description of a dataset: docstring, variants, raw files (URL, sha256, where expected)."""
    spec = get_spec(name)
    m = mirror_root()
    raw_dir = spec.raw_dir(root)
    lines = [f"{spec.name} — {spec.title}", "", spec.doc.strip(), ""]
    if spec.aliases:
        lines.append(f"aliases: {', '.join(spec.aliases)}")
    lines.append(f"papers: {', '.join(spec.papers) or '-'}")
    st = ", ".join(f"{k}={v if v is not None else '?'}" for k, v in spec.stats.items())
    if st:
        lines.append(f"statistics (registry): {st}")
    if spec.note:
        lines.append(f"note: {spec.note}")
    if spec.variants:
        lines.append("variants:")
        for vname, v in spec.variants.items():
            target = f" -> {v.redirect[0]} ({v.redirect[1] or 'base'})" if v.redirect else ""
            opts = f" options={v.options}" if v.options else ""
            lines.append(f"  - {vname} [{', '.join(v.papers)}]{target}{opts}: {v.doc}")
    if spec.raw_files:
        lines.append(f"raw files (cache folder {raw_dir}; mirror {m or '$DPGNN_DATA_MIRROR unset'}):")
        for r in spec.raw_files:
            here = locate(r, raw_dir)
            lines.append(
                f"  - {r.name}\n      url: {r.url}\n"
                f"      sha256: {' | '.join(r.sha256) or 'unknown (recorded on first download)'}"
                f"\n      mirror path: {r.mirror or '(not mirrored)'}\n      present here: {here or 'no'}"
            )
    lines.append(f"available here: {'yes' if dataset_available(spec.name, root=root) else 'no'}")
    return "\n".join(lines)
