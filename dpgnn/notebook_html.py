"""Executed notebooks as HTML pages that load nothing from the network (the report site's ``notebooks/`` pages).

nbconvert's ``lab`` template without the scripts it would fetch from a CDN (require.js, MathJax, the Jupyter widget
manager, mermaid), so a page reads the same offline:

- LaTeX in markdown (``$...$``, ``$$...$$``, ``\\begin{...}...\\end{...}``) becomes MathML here, with
  ``latex2mathml``; browsers render MathML natively. Math that ``latex2mathml`` cannot parse is shown as its LaTeX
  source in ``<code>``, never dropped;
- a widget output (the course's explorer controls) becomes one line saying where to use it: its state needs a live
  kernel, and its figure is an ordinary output beside it;
- relative links and images written for the notebook's folder in the repository (``notebooks/<series>/``, e.g.
  ``../../docs/papers/lpgcn.md#models-and-training``) are rewritten to reach the same files from the page's own folder.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from dpgnn.utils import ROOT

__all__ = ["latex_to_mathml", "render_notebook", "rewrite_links"]

_WIDGET = "application/vnd.jupyter.widget-view+json"
#: the lab template minus every block that loads a script from outside
_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""
_LINK = re.compile(r'(?P<attr>\b(?:href|src))="(?P<url>[^"]*)"')


def latex_to_mathml(tex: str, *, display: bool) -> str:
    """MathML for the LaTeX ``tex`` (``display``: a block equation), or the LaTeX in ``<code>`` where
    ``latex2mathml`` cannot parse it."""
    import latex2mathml.exceptions
    from latex2mathml.converter import convert

    known = tuple(e for e in vars(latex2mathml.exceptions).values() if isinstance(e, type) and issubclass(e, Exception))
    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except (*known, IndexError, KeyError, ValueError):  # its parse errors, and what its parser trips on
        return f'<code class="tex">{html.escape(tex)}</code>'


def rewrite_links(body: str, source_dir: Path, page_dir: Path) -> str:
    """Point the relative ``href``/``src`` links of ``body``, written for files next to ``source_dir``, at the same
    files from ``page_dir`` (fragments kept; absolute URLs, ``data:`` and ``#anchor`` links left alone)."""

    def fix(m: re.Match) -> str:
        url = html.unescape(m["url"])
        parts = urlsplit(url)
        if not url or parts.scheme or parts.netloc or url.startswith(("#", "/")):
            return m[0]
        target = os.path.normpath(source_dir / unquote(parts.path))
        new = Path(os.path.relpath(target, page_dir)).as_posix() + (f"#{parts.fragment}" if parts.fragment else "")
        return f'{m["attr"]}="{html.escape(new)}"'

    return _LINK.sub(fix, body)


def _exporter():
    """An HTMLExporter whose markdown math becomes MathML and whose template loads nothing from outside."""
    from jinja2 import DictLoader, pass_context
    from nbconvert import HTMLExporter
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class MathMLRenderer(IPythonRenderer):
        def block_math(self, body: str) -> str:
            return latex_to_mathml(body, display=True)

        def inline_math(self, body: str) -> str:
            return latex_to_mathml(body, display=False)

        def latex_environment(self, name: str, body: str) -> str:
            return latex_to_mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", display=True)

    class OfflineHTMLExporter(HTMLExporter):
        @pass_context
        def markdown2html(self, context, source):
            cell = context.get("cell", {})
            renderer = MathMLRenderer(
                escape=False,
                attachments=cell.get("attachments", {}),
                embed_images=self.embed_images,
                path=context.get("resources", {}).get("metadata", {}).get("path", ""),
                anchor_link_text=self.anchor_link_text,
                exclude_anchor_links=self.exclude_anchor_links,
                **self.lexer_options,
            )
            return MarkdownWithMath(renderer=renderer).render(source)

    return OfflineHTMLExporter(
        template_name="lab", template_file="offline.html.j2", extra_loaders=[DictLoader({"offline.html.j2": _TEMPLATE})]
    )


def render_notebook(src: Path, dest: Path, *, repo_notebook: Path) -> bool:
    """Write the executed notebook ``src`` as the offline HTML page ``dest``; ``False`` when ``src`` is unreadable
    (e.g. a run killed mid-write). ``repo_notebook`` is the notebook in the repository that ``src`` ran: its folder
    is what the notebook's relative links are written for, and widget outputs name it."""
    import nbformat

    try:
        nb = nbformat.read(src, as_version=4)
    except (OSError, ValueError, nbformat.ValidationError):  # unreadable, not JSON, or not a notebook
        return False
    nb.metadata.pop("widgets", None)
    name = (
        Path(os.path.relpath(repo_notebook, ROOT)).as_posix()
        if repo_notebook.is_relative_to(ROOT)
        else repo_notebook.name
    )
    note = (
        f'<p class="widget-note"><i>Interactive controls: open <code>{html.escape(name)}</code> in JupyterLab '
        "to use them.</i></p>"
    )
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if _WIDGET in out.get("data", {}):
                out["data"] = {"text/html": note}
    body, _ = _exporter().from_notebook_node(nb)
    body = rewrite_links(body, repo_notebook.parent, dest.parent)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(body, encoding="utf-8")
    return True
