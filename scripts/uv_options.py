"""Print uv's options for this machine's pip configuration, one per line, so setup.sh's uv installs what pip would.

uv reads none of pip's configuration (``pip.conf`` files, ``PIP_*`` variables). This script asks pip itself
(``python -m pip config list``: files and environment, already merged) and maps what it finds:
``index-url``, ``extra-index-url``, ``find-links``, ``constraint``, ``no-index``, ``trusted-host`` to uv's options
(``--name=value``), ``cert``, ``timeout``/``default-timeout`` and ``proxy`` to ``env:NAME=value`` lines (uv reads
those from the environment). As in pip, a ``PIP_*`` variable beats the ``install`` section, which beats ``global``.
Any failure exits non-zero: setup.sh then installs with pip, never with uv on a partial configuration.

    python scripts/uv_options.py        # run by the venv's python, whose pip reads the configuration
"""

from __future__ import annotations

import ast
import subprocess
import sys

# pip's settings that change where packages come from, and their uv options (each value may list several)
LIST_OPTIONS = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
    "trusted-host": "--allow-insecure-host",
}
ENV_OPTIONS = {"cert": "SSL_CERT_FILE", "timeout": "UV_HTTP_TIMEOUT", "default-timeout": "UV_HTTP_TIMEOUT"}
# pip applies the command's section over `global`, and its environment variables over both
RANK = {"global": 0, "install": 1, ":env:": 2}


def effective(listing: str) -> dict[str, str]:
    """The setting pip's ``install`` uses for each name, from ``pip config list``'s lines (``section.name='value'``)."""
    best: dict[str, tuple[int, str]] = {}
    for line in listing.splitlines():
        key, sep, raw = line.partition("=")
        section, _, name = key.partition(".")
        if not sep or section not in RANK:
            continue
        value = ast.literal_eval(raw)
        if name not in best or RANK[section] >= best[name][0]:
            best[name] = (RANK[section], str(value))
    return {name: value for name, (_, value) in best.items()}


def uv_options(settings: dict[str, str]) -> list[str]:
    """uv's options and ``env:`` lines for pip's effective settings."""
    out = []
    for name, option in LIST_OPTIONS.items():
        out += [f"{option}={value}" for value in settings.get(name, "").split()]
    if settings.get("no-index", "").lower() in ("1", "true", "yes", "on"):
        out.append("--no-index")
    for name in ("cert", "timeout", "default-timeout"):
        if settings.get(name):
            out.append(f"env:{ENV_OPTIONS[name]}={settings[name]}")
    if settings.get("proxy"):
        out += [f"env:HTTPS_PROXY={settings['proxy']}", f"env:HTTP_PROXY={settings['proxy']}"]
    return out


def main() -> int:
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True
    ).stdout
    print("\n".join(uv_options(effective(listing))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
