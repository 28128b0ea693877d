"""The package's import structure: no circle, no upward import.

The graph is built from the source with ``ast``: an edge ``a -> b`` for every ``import``/``from … import`` that runs
when module ``a`` is imported (module level, including ``if``/``try`` blocks and class bodies; imports inside
functions run later, on demand, and are left out, as are ``if TYPE_CHECKING:`` blocks). ``from p import x`` points
at the module ``p.x`` when that is a module, else at ``p``.

Layers, bottom to top (a layer imports only from itself and the layers below):

- bottom: ``privacy``, ``data``, ``nn``, ``utils``, ``results``, ``metrics``, ``reference``, ``fidelity`` --
  never ``methods``, ``series``, ``profiles``, ``engine``, ``runner``, ``cli``;
- ``methods`` -- never ``series``, ``profiles`` or ``cli``;
- ``series`` and ``profiles`` (the series' settings, found through the series registry) -- never ``cli``;
- the typer command-line interfaces live in ``dpgnn/cli/`` only (``dpgnn.privacy`` is pure math) and nothing
  outside ``dpgnn.cli`` imports them.

Imports inside functions (and ``importlib.import_module("dpgnn.…")`` calls) obey the same layers, except the
lookups by name listed in :data:`LATE_LOOKUPS`, each with its reason (none today: plug-ins register themselves
with the registry of their own layer, :mod:`dpgnn.methods` or :mod:`dpgnn.series`).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__import__("dpgnn").__file__).resolve().parent
BOTTOM = ("privacy", "data", "nn", "utils", "results", "metrics", "reference", "fidelity")
UPPER = ("methods", "series", "profiles", "engine", "runner", "cli")
RULES = {
    **{low: UPPER for low in BOTTOM},
    "methods": ("series", "profiles", "cli"),
    "series": ("cli",),
    "profiles": ("cli",),
}
CLI_LIBRARIES = ("typer", "click")
#: (module, layer it may reach inside a function, by name) -> why
LATE_LOOKUPS: dict[tuple[str, str], str] = {}


def _modules(root: Path) -> dict[str, Path]:
    """``dpgnn.x.y`` -> its file, for every module of the package under ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = ("dpgnn",) + path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _module_level_imports(tree: ast.Module):
    """Import nodes executed at import time (not inside functions, not under ``if TYPE_CHECKING``)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        elif isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


def import_graph(root: Path = PACKAGE) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(edges between ``dpgnn`` modules, external top-level packages imported) per module."""
    modules = _modules(root)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    external: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in _module_level_imports(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:  # relative import: resolve against this module's package
                    pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join(pkg + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                if target == "dpgnn" or target.startswith("dpgnn."):
                    while target not in modules:  # `import dpgnn.x.y` of a name inside a module
                        target = target.rsplit(".", 1)[0]
                    if target != name:
                        edges[name].add(target)
                else:
                    external[name].add(target.split(".")[0])
    return edges, external


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def layering_violations(edges: dict[str, set[str]], external: dict[str, set[str]]) -> list[str]:
    bad = []
    for mod, targets in sorted(edges.items()):
        forbidden = RULES.get(_layer(mod), ())
        for t in sorted(targets):
            if _layer(t) in forbidden:
                bad.append(f"{mod} imports {t} (the {_layer(mod)!r} layer must not import {_layer(t)!r})")
            if _layer(t) == "cli" and _layer(mod) != "cli":
                bad.append(f"{mod} imports the command-line interface {t}")
    for mod, libs in sorted(external.items()):
        cli_libs = sorted(set(libs) & set(CLI_LIBRARIES))
        if cli_libs and _layer(mod) != "cli":
            bad.append(f"{mod} imports {', '.join(cli_libs)}: command-line interfaces live in dpgnn/cli/")
    return bad


def late_imports(root: Path = PACKAGE) -> dict[str, set[str]]:
    """``dpgnn`` modules each module imports inside functions, statically or by ``importlib.import_module`` with a
    literal (or f-string) name; an f-string's variable part is dropped (``dpgnn.series.{paper}`` ->
    ``dpgnn.series``)."""
    out: dict[str, set[str]] = {}
    for name, path in _modules(root).items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
                and node.args
            ):
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value)
                elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                    found.add(str(arg.values[0].value).rstrip("."))
        out[name] = {f for f in found if f == "dpgnn" or f.startswith("dpgnn.")}
    return out


# ---------------------------------------------------------------------------------------------------------------
def test_the_package_has_no_import_circle():
    edges, _ = import_graph()
    assert len(edges) > 50
    assert find_cycles(edges) == []


def test_no_upward_import_and_the_clis_live_in_dpgnn_cli():
    edges, external = import_graph()
    assert layering_violations(edges, external) == []


def test_imports_inside_functions_respect_the_layers_too():
    bad = []
    for mod, targets in sorted(late_imports().items()):
        for t in sorted(targets):
            if _layer(t) in RULES.get(_layer(mod), ()) and (mod, _layer(t)) not in LATE_LOOKUPS:
                bad.append(f"{mod} imports {t} inside a function")
    assert bad == []
    late = late_imports()
    for mod, layer in LATE_LOOKUPS:  # no stale exception
        assert any(_layer(t) == layer for t in late[mod]), (mod, layer)


def test_profiles_and_privacy_import_nothing_from_above():
    edges, _ = import_graph()
    assert {_layer(t) for t in edges["dpgnn.profiles"]} <= set(BOTTOM)  # the series registry only when called
    assert not any(_layer(t) == "profiles" for m, ts in edges.items() if _layer(m) in BOTTOM for t in ts)
    privacy = {t for m, ts in edges.items() if _layer(m) == "privacy" for t in ts}
    # pure math: it imports only itself and the fidelity vocabulary (a leaf: dpgnn.fidelity imports no dpgnn module)
    assert {_layer(t) for t in privacy} <= {"privacy", "fidelity"}, "dpgnn.privacy imports only itself"
    assert not edges.get("dpgnn.fidelity"), "dpgnn.fidelity is a leaf"


# the checker itself: it must see what it is meant to see
def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_checker_finds_circles_upward_imports_and_stray_clis(tmp_path):
    root = _write(
        tmp_path / "dpgnn",
        {
            "__init__.py": "",
            "results.py": "import importlib\nfrom dpgnn.series import lpgcn\n",  # upward (bottom -> series)
            "series/__init__.py": "",
            "series/lpgcn.py": "from dpgnn import results\nfrom ..methods import m\n",
            "methods/__init__.py": "",
            "methods/m.py": "def f():\n    from dpgnn.series import lpgcn\n",
            "privacy/__init__.py": "",
            "privacy/cli.py": "import typer\nfrom dpgnn.privacy import cli_x\n",
            "privacy/cli_x.py": "from dpgnn.privacy.cli import app\n",
            "cli/__init__.py": "import typer\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from dpgnn.series import lpgcn\n",
        },
    )
    edges, external = import_graph(root)
    assert edges["dpgnn.series.lpgcn"] == {"dpgnn.results", "dpgnn.methods.m"}  # relative import resolved
    assert edges["dpgnn.methods.m"] == set()  # inside a function: not a module-level import
    assert edges["dpgnn.cli"] == set()  # TYPE_CHECKING only
    assert sorted(find_cycles(edges)) == [
        ["dpgnn.privacy.cli", "dpgnn.privacy.cli_x"],
        ["dpgnn.results", "dpgnn.series.lpgcn"],
    ]
    bad = layering_violations(edges, external)
    assert any("dpgnn.results imports dpgnn.series.lpgcn" in b for b in bad)
    assert any("dpgnn.privacy.cli imports typer" in b for b in bad)
    assert not any(b.startswith("dpgnn.cli ") for b in bad)
    late = late_imports(root)
    assert late["dpgnn.methods.m"] == {"dpgnn.series"} and "dpgnn.series" in late["dpgnn.cli"]


@pytest.mark.parametrize("module", ["dpgnn.cli", "dpgnn.cli.epsilon", "dpgnn.cli.data", "dpgnn.profiles"])
def test_modules_are_found(module):
    edges, _ = import_graph()
    assert module in edges


#: what a notebook that reads stored rows and draws imports (the series' grid cells are computed beforehand)
READ_AND_DRAW = ("dpgnn.plotting", "dpgnn.profiles", "dpgnn.report", "dpgnn.results", "dpgnn.series")
#: libraries only computing needs: a read-and-draw notebook's kernel starts without them
COMPUTE_ONLY = ("torch", "torch_geometric")


def _compute_only_loaded_by(code: str) -> str:
    """Which of :data:`COMPUTE_ONLY` a fresh interpreter has loaded after running ``code`` (a sorted list, printed)."""
    code += f"import sys\nprint(sorted(k for k in {COMPUTE_ONLY!r} if k in sys.modules))\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE.parent), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


@pytest.mark.parametrize(
    "notebook_modules",
    [
        *([f"dpgnn.series.{name}"] for name in ("lpgcn", "lpgnn", "privgnn", "drw", "progap", "privacy")),
        ["dpgnn.bench", "dpgnn.bench.report", "dpgnn.compare"],
        ["dpgnn.series.audit", "dpgnn.series.audit_white_box"],
    ],
    ids=lambda modules: modules[0],
)
def test_reading_stored_results_imports_no_torch(notebook_modules):
    """A fresh interpreter importing what a read-and-draw notebook imports loads neither torch nor torch_geometric
    (each takes seconds to import, about half of such a notebook's run)."""
    modules = [*READ_AND_DRAW, *notebook_modules]
    code = f"import importlib\nfor m in {modules!r}:\n    importlib.import_module(m)\n"
    loaded = _compute_only_loaded_by(code)
    assert loaded == "[]", f"importing {modules} loaded {loaded}"


def test_looking_a_dataset_up_imports_no_torch():
    """A registry lookup (spec, availability for a paper) loads neither torch nor torch_geometric: the registrations
    name their loaders and paper variants without importing them (``dpgnn report`` asks for every paper's graphs)."""
    code = (
        "from dpgnn.data.registry import dataset_available, get_spec, paper_dataset_available\n"
        "get_spec('cora'); dataset_available('cora')\n"
        "paper_dataset_available('facebook', 'lpgnn'); paper_dataset_available('fb100-wisconsin87', 'progap')\n"
    )
    loaded = _compute_only_loaded_by(code)
    assert loaded == "[]", f"a registry lookup loaded {loaded}"
