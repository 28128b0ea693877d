"""Land result rows computed elsewhere -- a background worktree, the files a lent GPU machine sent back -- into this
checkout's ``results/``: per stored artifact, the rows of cells this checkout lacks are appended as they were
stored there (:meth:`dpgnn.results.ResultStore.merge_from`), so both sides may have gone on from the same rows.

    python scripts/land_rows.py /work/wt/bg --profile paper              # every paper of the profile
    python scripts/land_rows.py /work/.device/4 --profile paper --paper bench

``SOURCE`` is a folder holding ``results/<profile>/<paper>/<artifact>.csv`` (or ``.csv.gz``), or holding
``results.tar.gz`` with that tree (what ``scripts/gpu_grid.sh`` sends back), or that archive itself. Prints the rows
appended per artifact, then the commands that bring the ledgers, the README, the notebooks and the report up to
date with them (the paper's notebooks: ``dpgnn reproduce --profile paper -n <paper>/... -p train=false``).
"""

from __future__ import annotations

import argparse
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def land(source: Path, profile: str, papers: list[str] | None = None, dest: Path = ROOT) -> dict[tuple[str, str], int]:
    """``{(paper, artifact): rows appended}`` for every artifact of ``profile`` stored under ``source``, appended to
    the stores under ``dest`` (this checkout)."""
    from dpgnn.results import ResultStore

    archive = source if source.is_file() else source / "results.tar.gz"
    if archive.is_file():
        with tempfile.TemporaryDirectory() as tmp, tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
            return land(Path(tmp), profile, papers, dest)
    base = source / "results" / profile
    if not base.is_dir():
        raise SystemExit(f"land_rows: no {base} (give the folder that holds results/ or results.tar.gz)")
    names = papers or sorted(p.name for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
    out = {}
    for paper in names:
        theirs, ours = (
            ResultStore(paper, profile, root=source / "results"),
            ResultStore(paper, profile, root=dest / "results"),
        )
        for artifact in theirs.artifacts():
            out[(paper, artifact)] = ours.merge_from(theirs, artifact)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "source", type=Path, help="a folder holding results/<profile>/<paper>/*.csv or results.tar.gz, or that archive"
    )
    ap.add_argument("--profile", default="paper", help="the profile whose rows land (default paper)")
    ap.add_argument("--paper", action="append", help="only this paper (repeatable; default every paper found)")
    args = ap.parse_args(argv)
    if args.source.resolve() == ROOT:
        raise SystemExit("land_rows: the source is this checkout")
    landed = land(args.source, args.profile, args.paper)
    for (paper, artifact), n in landed.items():
        if n:
            print(f"{paper}/{artifact}: {n} row(s) appended")
    changed = sorted({paper for (paper, _), n in landed.items() if n})
    if not changed:
        print("land_rows: nothing new")
        return 0
    print("then:")
    for paper in changed:
        print(f'  python -c "from dpgnn.series.ledgers import backfill; backfill({args.profile!r}, {paper!r})"')
    print("  python -m pytest -q tests/test_stored_ledgers.py && python -m dpgnn.readme")
    print(f"  dpgnn reproduce --profile {args.profile} -n <notebooks of {', '.join(changed)}> -p train=false")
    print(f"  dpgnn report --profile {args.profile}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
