"""The notebook series on disk and their parameters: which notebooks ``dpgnn reproduce`` finds (one folder per
series under ``notebooks/``, in execution order), how ``--notebook`` names pick some of them, which names a
notebook's ``parameters`` cell declares, and how ``-p key=value`` items are read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dpgnn.utils import ROOT

#: Parameters every notebook takes; set by ``reproduce``'s own options, never by ``-p``.
RESERVED = ("profile", "device", "force")


def notebooks_dir(root: Path | None = None) -> Path:
    """The ``notebooks/`` folder of ``root`` (default: the repository)."""
    return Path(root or ROOT) / "notebooks"


def _series_folders(root: Path | None = None) -> dict[str, Path]:
    """Series name -> its notebook folder under ``root``, for every folder that holds notebooks: the registered
    series' folders (:attr:`dpgnn.series.Series.notebooks`), then any other folder of ``notebooks/`` (a series
    of one's own, run by the folder's name)."""
    from dpgnn import series

    base = Path(root or ROOT)
    out = {s.name: base / s.notebooks for s in series.all_series()}
    d = notebooks_dir(root)
    claimed = set(out.values())
    for folder in sorted(d.iterdir()) if d.exists() else []:
        if folder.is_dir() and folder not in claimed:
            out.setdefault(folder.name, folder)
    return {name: f for name, f in sorted(out.items()) if any(f.glob("*.ipynb"))}


def available_papers(root: Path | None = None) -> list[str]:
    """The notebook series under ``root`` (:func:`_series_folders`), by name."""
    return list(_series_folders(root))


def discover(papers: list[str] | None = None, root: Path | None = None) -> list[tuple[str, Path]]:
    """(paper, notebook path) pairs in execution order."""
    folders = _series_folders(root)
    known = list(folders)
    names = papers or known
    unknown = [p for p in names if p not in known]
    if unknown:
        raise ValueError(f"unknown paper series {unknown}; available: {known}")
    return [(p, nb) for p in names for nb in sorted(folders[p].glob("*.ipynb"))]


def select(todo: list[tuple[str, Path]], notebooks: list[str]) -> list[tuple[str, Path]]:
    """The notebooks of ``todo`` named by ``notebooks``: ``paper/NN_name``, ``paper/NN`` (a unique prefix), with
    or without ``.ipynb`` or a leading ``notebooks/``; a name matching none or several is a ``ValueError``."""
    chosen: list[tuple[str, Path]] = []
    for name in notebooks:
        key = name.strip().removeprefix("notebooks/").removesuffix(".ipynb")
        if "/" not in key:
            raise ValueError(f"notebook {name!r}: give it as paper/name, e.g. lpgcn/03_node_link_prediction")
        paper, stem = key.split("/", 1)
        hits = [(p, nb) for p, nb in todo if p == paper and nb.stem == stem]
        hits = hits or [(p, nb) for p, nb in todo if p == paper and nb.stem.startswith(stem)]
        if len(hits) != 1:
            names = [f"{p}/{nb.stem}" for p, nb in (hits or todo)]
            raise ValueError(f"notebook {name!r} matches {'none' if not hits else 'several'} of {names}")
        if hits[0] not in chosen:
            chosen.append(hits[0])
    return chosen


def declared_parameters(nb: Path) -> list[str]:
    """Names assigned in ``nb``'s ``parameters`` cell (what papermill's ``-p`` can set)."""
    import ast

    import nbformat

    for cell in nbformat.read(nb, as_version=4).cells:
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            names = []
            for node in ast.parse(cell.source).body:
                if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    names.append(node.target.id)
                elif isinstance(node, ast.Assign):
                    names += [t.id for t in node.targets if isinstance(t, ast.Name)]
            return names
    return []


def parse_parameters(items: list[str] | None, option: str = "-p") -> dict[str, Any]:
    """``["key=value", ...]`` → dict; values are read as YAML (``runs=2`` an int, ``datasets=[cora]`` a list,
    ``x=null`` None); a key may name a nested setting as ``part.field`` (:func:`dpgnn.profiles.apply`). A
    malformed item or a reserved name (set by its own option) is a ``ValueError``; messages
    name the command-line ``option`` the items came from (``-p`` of ``reproduce``, ``--set`` of ``run``)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not all(part.isidentifier() for part in key.split(".")):
            raise ValueError(f"{option} {item!r}: expected key=value, e.g. {option} runs=2 or {option} datasets=[cora]")
        if key in RESERVED:
            raise ValueError(f"{option} {key!r}: set by --{key}, not by {option}")
        try:
            out[key] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError as exc:
            raise ValueError(f"{option} {item!r}: the value is not valid YAML ({exc.__class__.__name__})") from None
    return out
