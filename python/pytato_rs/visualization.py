"""pytato's ``pytato.visualization``: the DAG drawn.

:func:`get_dot_graph` gives Graphviz's dot language; :func:`show_dot_graph` writes a drawing laid
out by the library itself (no Graphviz needed) as SVG, or as an HTML page around it."""

from __future__ import annotations

import tempfile

from ._native import (
    get_dot_graph,
    get_html_graph,
    get_placeholder_data_flow_dot,
    get_placeholder_data_flow_svg,
    get_svg_graph,
)


def _write_drawing(output_to, draw):
    """Writes ``draw[suffix]()`` for the file ``output_to`` names (pytato's format names
    ``"svg"``, ``"browser"``/``"html"`` or ``None`` for a temporary file, or a path ending in
    ``.svg``, ``.html`` or ``.dot``) and returns the file's path."""
    formats = {"svg": ".svg", "html": ".html", "browser": ".html", None: ".html"}
    if output_to in formats:
        suffix = formats[output_to]
        with tempfile.NamedTemporaryFile("w", suffix=suffix, delete=False) as f:
            path = f.name
    else:
        path = str(output_to)
        suffix = path[path.rfind(".") :]
        if suffix not in draw:
            raise ValueError(f"drawings are written to .svg, .html or .dot files, not {path!r}")
    text = draw[suffix]()
    with open(path, "w") as f:
        f.write(text)
    return path


def _html_page(svg, title):
    import html

    body = svg[svg.find("<svg"):]  # the drawing without its XML declaration
    return f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title></head>" \
           f"<body>{body}</body></html>\n"


def show_dot_graph(result, output_to=None, title="pytato DAG"):
    """Writes the drawing of ``result`` (an expression, a dictionary of them, or a
    :class:`~pytato_rs.distributed.DistributedGraphPartition`: its parts, receives and sends) and
    returns the file's path. ``output_to`` is pytato's format name (``"svg"``, or
    ``"browser"``/``"html"`` for an HTML page, the default) written to a temporary file, or a
    path ending in ``.svg``, ``.html`` or ``.dot`` (dot language, as :func:`get_dot_graph`)."""
    from ._native import DistributedGraphPartition

    if isinstance(result, DistributedGraphPartition):
        return _write_drawing(output_to, {
            ".dot": result._dot,
            ".svg": result._svg,
            ".html": lambda: _html_page(result._svg(), title),
        })
    return _write_drawing(output_to, {
        ".dot": lambda: get_dot_graph(result),
        ".svg": lambda: get_svg_graph(result),
        ".html": lambda: get_html_graph(result, title),
    })


def show_fancy_placeholder_data_flow(dag, output_to=None, title="pytato placeholder data flow", **kwargs):
    """Writes the data flow from the placeholders of ``dag`` into its outputs (pytato's
    ``show_fancy_placeholder_data_flow``: placeholders with their shapes and dtypes, the
    operations between them and the outputs by kind alone, nothing else) and returns the file's
    path; ``output_to`` as in :func:`show_dot_graph`. pytato's Graphviz options (``kwargs``) have
    no meaning for the library's own layout and are ignored."""
    return _write_drawing(output_to, {
        ".dot": lambda: get_placeholder_data_flow_dot(dag),
        ".svg": lambda: get_placeholder_data_flow_svg(dag),
        ".html": lambda: _html_page(get_placeholder_data_flow_svg(dag), title),
    })


__all__ = [
    "get_dot_graph",
    "get_html_graph",
    "get_svg_graph",
    "show_dot_graph",
    "show_fancy_placeholder_data_flow",
]
