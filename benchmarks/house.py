"""How easy is the house to take over? Size, duplication and hygiene metrics of a source tree, one CSV row each.

Measured on the tree given by ``--root`` (default: the repository this script lives in), from the source alone
(``ast`` and regular expressions; nothing of the package is imported, so an older tree measures the same way):

- ``modules_over_600``: modules of ``dpgnn/`` longer than 600 lines;
- ``functions_over_80``: functions and methods of ``dpgnn/`` longer than 80 lines (``def`` to its last line,
  decorators excluded), named ``path::Qualified.name``;
- ``optimizer_step_sites``: calls ``x.step()`` without arguments in ``dpgnn/`` whose receiver is not a learning-rate
  scheduler (a name containing ``sched``): every hand-written training loop has one;
- ``paper_list_places``: places in ``dpgnn/`` that spell out the list of papers: a tuple, list, set, dict (keys)
  or ``from ... import`` naming at least three of the five papers (as strings, names or path-like strings such as
  ``docs/papers/lpgcn.md``), counted once per enclosing top-level statement; a dataset's ``papers=`` and
  ``variants=`` arguments are facts about that dataset and are left out. Code that enumerates the modules of
  ``dpgnn.series`` (``pkgutil.iter_modules``, ``glob`` on a ``series`` path) counts as a place too;
- ``import_cycles`` and ``import_exceptions``: circles in the package's module-level import graph (the checker of
  ``tests/test_imports.py``, loaded from the measured tree) and the entries of that test's exception tables
  (module-level dicts, sets or tuples whose name contains ``LATE``, ``EXCEPT``, ``ALLOW`` or ``KNOWN``);
- ``ruff_check_violations`` and ``ruff_format_files``: what ``ruff check`` reports and how many files
  ``ruff format --check`` would reformat, run in the tree with its own configuration;
- ``issue_refs_code``: lines of ``*.py`` files (``dpgnn/``, ``tests/``, ``scripts/``, ``benchmarks/``) citing an
  issue or a helper of the project's history (``#`` and a number, ``issue`` and a number, an opening parenthesis
  before ``issue``, ``engineer`` and a capital letter); ``issue_refs_other``: the same in notebooks, ``docs/``, the
  README files and ``dpgnn/reference/*.csv``;
- ``public_without_docstring``: public functions, methods and classes of ``dpgnn/`` (no leading underscore, in a
  module without one, not nested in a function) without a docstring.

Writes ``benchmarks/results/house.csv`` (``metric, value, items, tree, commit, date``; ``items`` lists the
offenders, ``; ``-separated). The numbers before the house was cleaned up are in
``benchmarks/results/house_before.csv`` (``--root`` on the starting commit's worktree, ``--out`` that file).
``--readme`` writes the table of both between the ``house`` markers of ``benchmarks/README.md``.

    python benchmarks/house.py                 # this tree -> benchmarks/results/house.csv
    python benchmarks/house.py --readme        # the README table from the two CSVs
"""

from __future__ import annotations

import argparse
import ast
import csv
import datetime as dt
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "results" / "house.csv"
BEFORE = HERE / "results" / "house_before.csv"
README = HERE / "README.md"
BEGIN, END = "<!-- begin house -->", "<!-- end house -->"
COLUMNS = ["metric", "value", "items", "tree", "commit", "date"]

MODULE_MAX_LINES = 600
FUNCTION_MAX_LINES = 80
PAPERS = ("lpgcn", "lpgnn", "privgnn", "drw", "progap")
#: keyword arguments whose value is a fact about one dataset (which papers use it, its variant per paper)
DATASET_FACTS = ("papers", "variants")
_PAPER_WORD = re.compile(r"(?<![a-z0-9])(" + "|".join(PAPERS) + r")(?![a-z0-9])")
#: an issue number, a parenthesised issue, a helper named in the project's history; hex colours never match
ISSUE_REF = re.compile(r"(?<![\w&/:'\"])#\d{1,5}\b|\b[Ii]ssues? #?\d+|[(][Ii]ssue\b|\bengineer [A-Z]\b")
CODE_DIRS = ("dpgnn", "tests", "scripts", "benchmarks")
EXCEPTION_TABLE = re.compile(r"LATE|EXCEPT|ALLOW|KNOWN")

METRICS = {
    "modules_over_600": "modules of dpgnn/ over 600 lines",
    "functions_over_80": "functions/methods of dpgnn/ over 80 lines",
    "optimizer_step_sites": "optimizer .step() call sites in dpgnn/",
    "paper_list_places": "places in dpgnn/ that spell out the list of papers",
    "import_cycles": "import circles in dpgnn/",
    "import_exceptions": "exceptions in tests/test_imports.py",
    "ruff_check_violations": "ruff check violations",
    "ruff_format_files": "files ruff format would change",
    "issue_refs_code": "issue numbers / history notes in *.py (lines)",
    "issue_refs_other": "issue numbers / history notes in notebooks, docs, reference CSVs (lines)",
    "public_without_docstring": "public functions/classes of dpgnn/ without a docstring",
}


# ---------------------------------------------------------------------------------------------------------------
# the package's files
# ---------------------------------------------------------------------------------------------------------------
def package_files(root: Path) -> list[Path]:
    """Every ``*.py`` file of ``root/dpgnn``, sorted."""
    return sorted((root / "dpgnn").rglob("*.py"))


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _defs(tree: ast.AST, prefix: str = "", in_function: bool = False) -> Iterator[tuple[str, ast.AST, bool]]:
    """``(qualified name, node, nested in a function)`` of every function and class, depth first."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{node.name}"
            yield name, node, in_function
            inner = in_function or not isinstance(node, ast.ClassDef)
            yield from _defs(node, f"{name}.", inner)
        else:
            yield from _defs(node, prefix, in_function)


# ---------------------------------------------------------------------------------------------------------------
# the metrics, each ``root -> sorted list of offenders`` (the value is its length unless said otherwise)
# ---------------------------------------------------------------------------------------------------------------
def long_modules(root: Path, limit: int = MODULE_MAX_LINES) -> dict[str, int]:
    """``{path: lines}`` of the package's modules over ``limit`` lines."""
    out = {}
    for path in package_files(root):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            out[_rel(root, path)] = n
    return out


def long_functions(root: Path, limit: int = FUNCTION_MAX_LINES) -> dict[str, int]:
    """``{path::qualname: lines}`` of the package's functions and methods over ``limit`` lines."""
    out = {}
    for path in package_files(root):
        for name, node, _ in _defs(_parse(path)):
            if isinstance(node, ast.ClassDef):
                continue
            n = node.end_lineno - node.lineno + 1
            if n > limit:
                out[f"{_rel(root, path)}::{name}"] = n
    return out


def optimizer_steps(root: Path) -> list[str]:
    """``path:line receiver`` of every argument-less ``x.step()`` whose receiver is not a scheduler."""
    out = []
    for path in package_files(root):
        for node in ast.walk(_parse(path)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "step"
                and not node.args
                and not node.keywords
            ):
                receiver = ast.unparse(node.func.value)
                if "sched" not in receiver.lower():
                    out.append(f"{_rel(root, path)}:{node.lineno} {receiver}")
    return out


def _papers_named(node: ast.AST) -> set[str]:
    """The papers an element of a literal names: a string (``"lpgcn"``, ``"docs/papers/drw.md"``) or a name."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and " " not in node.value:
        found = set(_PAPER_WORD.findall(node.value))
        return found if len(found) == 1 else set()
    if isinstance(node, ast.Name) and node.id in PAPERS:
        return {node.id}
    if isinstance(node, ast.Attribute) and node.attr in PAPERS:
        return {node.attr}
    return set()


def _lists_papers(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        elts = node.elts
    elif isinstance(node, ast.Dict):
        elts = [k for k in node.keys if k is not None]
    elif isinstance(node, ast.ImportFrom):
        elts = [ast.Name(a.name) for a in node.names]
    else:
        return False
    named: set[str] = set()
    for e in elts:
        named |= _papers_named(e)
    return len(named) >= 3


def _enumerates_series(node: ast.AST) -> bool:
    """A call that lists the modules of ``dpgnn.series`` (``pkgutil.iter_modules(series.__path__)``, a glob)."""
    if not isinstance(node, ast.Call):
        return False
    fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    if fn not in ("iter_modules", "walk_packages", "glob", "rglob", "iterdir", "listdir", "scandir"):
        return False
    text = ast.unparse(node)
    return "series.__path__" in text or any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and "series" in n.value for n in ast.walk(node)
    )


def _scope(stmt: ast.stmt) -> str:
    """A top-level statement's name: the function or class, the assigned name, else its first words."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name
    if isinstance(stmt, ast.AnnAssign):
        return ast.unparse(stmt.target)
    if isinstance(stmt, ast.Assign):
        return ", ".join(ast.unparse(t) for t in stmt.targets)
    return ast.unparse(stmt).splitlines()[0][:40]


def paper_lists(root: Path) -> list[str]:
    """``path:line scope`` of each top-level statement of the package that spells out the papers or enumerates the
    series modules (one entry per statement, however many literals it holds)."""
    out = []
    for path in package_files(root):
        tree = _parse(path)
        for stmt in tree.body:
            facts = {
                id(kw.value)
                for n in ast.walk(stmt)
                if isinstance(n, ast.Call)
                for kw in n.keywords
                if kw.arg in DATASET_FACTS
            }
            skip = {id(n) for f in ast.walk(stmt) if id(f) in facts for n in ast.walk(f)}
            hit = next(
                (n for n in ast.walk(stmt) if id(n) not in skip and (_lists_papers(n) or _enumerates_series(n))),
                None,
            )
            if hit is not None:
                out.append(f"{_rel(root, path)}:{hit.lineno} {_scope(stmt)}")
    return out


def _import_checker(root: Path):
    """``tests/test_imports.py`` of the measured tree as a module (None when it has none)."""
    path = root / "tests" / "test_imports.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("_house_test_imports", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(root))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(root))
    return module


def import_cycles(root: Path) -> list[str]:
    """The circles of the package's module-level import graph, each ``a -> b -> ...`` (the checker of the tree's
    ``tests/test_imports.py``, applied to the tree's ``dpgnn/``)."""
    checker = _import_checker(root)
    if checker is None:
        return ["no tests/test_imports.py"]
    edges, _ = checker.import_graph(root / "dpgnn")
    return [" -> ".join(c) for c in checker.find_cycles(edges)]


def import_exceptions(root: Path) -> list[str]:
    """Entries of ``tests/test_imports.py``'s exception tables (module-level names with LATE/EXCEPT/ALLOW/KNOWN)."""
    path = root / "tests" / "test_imports.py"
    if not path.exists():
        return []
    out = []
    for stmt in _parse(path).body:
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        )
        for t in targets:
            if isinstance(t, ast.Name) and EXCEPTION_TABLE.search(t.id) and stmt.value is not None:
                v = stmt.value
                elts = v.keys if isinstance(v, ast.Dict) else getattr(v, "elts", [])
                out += [f"{t.id}: {ast.unparse(e)}" for e in elts if e is not None]
    return out


def _ruff(root: Path, *args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("ruff")
    cmd = [str(exe) if exe.exists() else "ruff", *args]
    return subprocess.run(cmd, cwd=root, capture_output=True, text=True)


def ruff_violations(root: Path) -> list[str]:
    """``path:line code`` of every ``ruff check`` violation (the tree's own configuration)."""
    res = _ruff(root, "check", ".", "--output-format", "json", "--no-cache")
    try:
        found = json.loads(res.stdout or "[]")
    except json.JSONDecodeError:
        return [f"ruff failed: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else res.returncode}"]
    return sorted(
        f"{Path(v['filename']).resolve().relative_to(root.resolve()).as_posix()}:{v['location']['row']} {v['code']}"
        for v in found
    )


def ruff_unformatted(root: Path) -> list[str]:
    """Files ``ruff format --check`` would reformat."""
    res = _ruff(root, "format", "--check", ".", "--no-cache")
    return sorted(
        line.removeprefix("Would reformat: ").strip()
        for line in res.stdout.splitlines()
        if line.startswith("Would reformat: ")
    )


def _issue_lines(root: Path, paths: list[Path]) -> list[str]:
    out = []
    for path in paths:
        for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            m = ISSUE_REF.search(line)
            if m:
                out.append(f"{_rel(root, path)}:{i} {m.group(0)}")
    return out


def issue_refs_code(root: Path) -> list[str]:
    """Lines of the tree's Python files that cite an issue number or a helper of the project's history."""
    paths = sorted(p for d in CODE_DIRS if (root / d).is_dir() for p in (root / d).rglob("*.py"))
    return _issue_lines(root, paths)


def issue_refs_other(root: Path) -> list[str]:
    """The same in notebooks, ``docs/``, README files and the reference CSVs (what readers read)."""
    paths = sorted(
        [
            *(root / "notebooks").rglob("*.ipynb"),
            *(root / "docs").rglob("*.md"),
            *(root / "dpgnn" / "reference").glob("*.csv"),
        ]
        + [p for p in (root / "README.md", root / "CONTRIBUTING.md", root / "benchmarks" / "README.md") if p.exists()]
    )
    return _issue_lines(root, paths)


def missing_docstrings(root: Path) -> list[str]:
    """``path::qualname`` of public functions, methods and classes of the package without a docstring."""
    out = []
    for path in package_files(root):
        if path.stem.startswith("_") and path.stem != "__init__":
            continue
        for name, node, nested in _defs(_parse(path)):
            if nested or any(part.startswith("_") for part in name.split(".")):
                continue
            if ast.get_docstring(node) is None:
                out.append(f"{_rel(root, path)}::{name}")
    return out


def _sized(d: dict[str, int]) -> list[str]:
    return [f"{k} ({v})" for k, v in sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))]


def measure(root: Path = ROOT, ruff: bool = True) -> dict[str, list[str]]:
    """Every metric of :data:`METRICS` on ``root``: its offenders (the value is how many)."""
    out = {
        "modules_over_600": _sized(long_modules(root)),
        "functions_over_80": _sized(long_functions(root)),
        "optimizer_step_sites": optimizer_steps(root),
        "paper_list_places": paper_lists(root),
        "import_cycles": import_cycles(root),
        "import_exceptions": import_exceptions(root),
        "issue_refs_code": issue_refs_code(root),
        "issue_refs_other": issue_refs_other(root),
        "public_without_docstring": missing_docstrings(root),
    }
    if ruff:
        out["ruff_check_violations"] = ruff_violations(root)
        out["ruff_format_files"] = ruff_unformatted(root)
    return {k: out[k] for k in METRICS if k in out}


def _commit(root: Path) -> str:
    res = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True, text=True
    )
    return (res.stdout.strip() or "?") + ("+changes" if dirty.stdout.strip() else "")


def write(rows: dict[str, list[str]], out: Path, tree: str, commit: str) -> None:
    date = dt.date.today().isoformat()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for metric, items in rows.items():
            writer.writerow(
                {
                    "metric": metric,
                    "value": len(items),
                    "items": "; ".join(items),
                    "tree": tree,
                    "commit": commit,
                    "date": date,
                }
            )


def _read(path: Path) -> dict[str, dict[str, str]]:
    if not path.exists():
        return {}
    with path.open(newline="", encoding="utf-8") as fh:
        return {r["metric"]: r for r in csv.DictReader(fh)}


def table(before: Path = BEFORE, now: Path = OUT) -> str:
    """The README table: each metric before the clean-up and now, from the two CSVs."""
    b, n = _read(before), _read(now)
    first = next(iter(b.values()), {})
    last = next(iter(n.values()), {})
    lines = [
        f"| metric | before ({first.get('commit', '?')}, {first.get('date', '?')}) | "
        f"now ({last.get('commit', '?')}, {last.get('date', '?')}) |",
        "|---|---|---|",
    ]
    for metric, label in METRICS.items():
        if metric in b or metric in n:
            lines.append(f"| {label} | {b.get(metric, {}).get('value', '')} | {n.get(metric, {}).get('value', '')} |")
    return "\n".join(lines) + "\n"


def write_readme(readme: Path = README) -> None:
    text = readme.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{readme}: no {BEGIN} ... {END} block")
    head, rest = text.split(BEGIN, 1)
    readme.write_text(f"{head}{BEGIN}\n{table()}{END}{rest.split(END, 1)[1]}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="the source tree to measure (default: this repository)")
    ap.add_argument("--out", type=Path, default=OUT, help=f"the CSV to write (default {OUT.relative_to(ROOT)})")
    ap.add_argument("--label", default=None, help="the tree's name in the CSV (default: the root's folder name)")
    ap.add_argument("--readme", action="store_true", help="only rewrite benchmarks/README.md's table from the CSVs")
    args = ap.parse_args(argv)
    if args.readme:
        write_readme()
        print(table(), end="")
        return 0
    root = args.root.resolve()
    if not (root / "dpgnn").is_dir():
        raise SystemExit(f"{root}: no dpgnn/ package to measure")
    rows = measure(root)
    write(rows, args.out, args.label or root.name, _commit(root))
    for metric, items in rows.items():
        print(f"{len(items):5d}  {METRICS[metric]}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
