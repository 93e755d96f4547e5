"""pytato's ``pytato.visualization``: the DAG drawn.

:func:`get_dot_graph` gives Graphviz's dot language; :func:`show_dot_graph` writes a drawing laid
out by the library itself (no Graphviz needed) as SVG, or as an HTML page around it."""

from __future__ import annotations

import tempfile

from ._native import get_dot_graph, get_html_graph, get_svg_graph


def show_dot_graph(result, output_to=None, title="pytato DAG"):
    """Writes the drawing of ``result`` (an expression or a dictionary of them) and returns the
    file's path. ``output_to`` is pytato's format name (``"svg"``, or ``"browser"``/``"html"``
    for an HTML page, the default) written to a temporary file, or a path ending in ``.svg``,
    ``.html`` or ``.dot`` (dot language, as :func:`get_dot_graph`)."""
    formats = {"svg": ".svg", "html": ".html", "browser": ".html", None: ".html"}
    if output_to in formats:
        suffix = formats[output_to]
        with tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False) as f:
            path = f.name
    else:
        path = str(output_to)
        suffix = path[path.rfind(".") :]
        if suffix not in (".svg", ".html", ".dot"):
            raise ValueError(f"show_dot_graph writes .svg, .html or .dot files, not {path!r}")
    draw = {".dot": get_dot_graph, ".svg": get_svg_graph, ".html": lambda r: get_html_graph(r, title)}
    text = draw[suffix](result)
    with open(path, "w") as f:
        f.write(text)
    return path


__all__ = ["get_dot_graph", "get_html_graph", "get_svg_graph", "show_dot_graph"]
