//! Drawing DAGs: DOT text, SVG rendered in pure Rust (no graphviz install needed), and an HTML page.
//!
//! Each node shows its kind, name, shape, dtype and tags (an index lambda also its expression,
//! shortened); edges run in data-flow direction, from the array used to its user, and each output
//! gets a box of its own.
//!
//! ```
//! use pytato_core::DType;
//! use pytato_frontend as pt;
//! use pytato_transform::draw::{to_dot, to_svg};
//! let x = pt::placeholder("x", [3], DType::F64)?;
//! let y = pt::sin(&x)?;
//! let dot = to_dot(&(&y).into());
//! assert!(dot.starts_with("digraph"));
//! assert!(to_svg(&(&y).into())?.contains("<svg"));
//! # Ok::<(), pytato_core::Error>(())
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;

mod layered;

use layout::backends::svg::SVGWriter;
use layout::gv::{DotParser, GraphBuilder};
use pytato_core::{Array, Error, NodeKind, Result};
use pytato_runtime::backend::Outputs;

use crate::mapper::topological_sort;

/// Longest expression shown in a node label.
const MAX_EXPR_CHARS: usize = 48;
/// Longest tag shown in a label, in characters.
const MAX_TAG_CHARS: usize = 80;

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max { s.to_string() } else { s.chars().take(max - 1).collect::<String>() + "…" }
}

/// The lines of a node's label.
fn label(node: &Array) -> Vec<String> {
    let mut lines = vec![match node.name() {
        Some(n) => format!("{} {n}", node.kind_name()),
        None => node.kind_name().to_string(),
    }];
    lines.push(format!("{} {}", node.shape(), node.dtype()));
    match node.kind() {
        NodeKind::IndexLambda(il) => lines.push(shorten(&il.expr.to_string(), MAX_EXPR_CHARS)),
        NodeKind::Einsum(e) => lines.push(format!("{} operands", e.args.len())),
        NodeKind::Roll { shift, axis, .. } => lines.push(format!("shift {shift} along {axis}")),
        NodeKind::AxisPermutation { axes, .. } => lines.push(format!("axes {axes:?}")),
        NodeKind::Stack { axis, .. } | NodeKind::Concatenate { axis, .. } => lines.push(format!("axis {axis}")),
        NodeKind::Nonzero { count, .. } => lines.push(format!("count {count}")),
        NodeKind::Scatter { mode, .. } => lines.push(format!("mode {mode:?}")),
        NodeKind::Scan { axis, op, .. } => lines.push(format!("{op:?} along axis {axis}")),
        NodeKind::SearchSorted { side, .. } => lines.push(format!("side {side:?}")),
        NodeKind::Sort { axis, descending, result, .. } => {
            lines.push(format!("{result:?} along axis {axis}{}", if *descending { ", descending" } else { "" }))
        }
        NodeKind::CallResult { function, name, .. } => lines.push(format!("result {name} of {function:?}")),
        NodeKind::DistributedRecv { src_rank, comm_tag } => lines.push(format!("from rank {src_rank}, tag {comm_tag}")),
        NodeKind::DistributedSendRefHolder { send, .. } => {
            lines.push(format!("sends to rank {}, tag {}", send.dest_rank, send.comm_tag))
        }
        _ => {}
    }
    // One line per tag: a creation site names a file, a line and its code.
    for tag in node.tags().iter() {
        lines.push(shorten(&format!("tag {:?}", tag.get()), MAX_TAG_CHARS));
    }
    for (i, axis) in node.axes().iter().enumerate() {
        if !axis.tags.is_empty() {
            lines.push(shorten(&format!("axis {i}: {}", axis.tags), MAX_EXPR_CHARS));
        }
    }
    lines
}

fn fill(node: &Array) -> &'static str {
    match node.kind() {
        NodeKind::Placeholder { .. } | NodeKind::SizeParam { .. } => "lightblue",
        NodeKind::DataWrapper { .. } => "lightcyan",
        NodeKind::IndexLambda(_) => "lightyellow",
        NodeKind::Einsum(_) => "lightpink",
        _ => "lightgrey",
    }
}

/// The DAG of `outputs` in Graphviz's DOT language.
pub fn to_dot(outputs: &Outputs) -> String {
    let entries = outputs.entries();
    let roots: Vec<Array> = entries.iter().map(|(_, a)| a.clone()).collect();
    let nodes = topological_sort(&roots);
    let ids: HashMap<usize, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id(), i)).collect();
    let mut s = String::from("digraph pytato {\n  rankdir=TB;\n  node [shape=box, style=filled, fontsize=12];\n");
    for (i, node) in nodes.iter().enumerate() {
        let text = label(node).iter().map(|l| escape(l)).collect::<Vec<_>>().join("\\n");
        let _ = writeln!(s, "  n{i} [label=\"{text}\", fillcolor=\"{}\"];", fill(node));
    }
    for (i, node) in nodes.iter().enumerate() {
        for child in node.children() {
            let _ = writeln!(s, "  n{} -> n{i};", ids[&child.id()]);
        }
    }
    for (k, (name, array)) in entries.iter().enumerate() {
        let _ = writeln!(s, "  out{k} [label=\"output {}\", fillcolor=\"palegreen\"];", escape(name));
        let _ = writeln!(s, "  n{} -> out{k};", ids[&array.id()]);
    }
    s.push_str("}\n");
    s
}

/// The data flow from the placeholders of `outputs` into its outputs, in Graphviz's DOT language
/// (upstream's `show_fancy_placeholder_data_flow`): only the placeholders, the nodes that depend
/// on one and the outputs, each operation labelled by its kind alone; data wrappers, size
/// parameters and what depends on no placeholder are left out. [`to_dot`] draws everything.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_transform::draw::placeholder_data_flow_dot;
/// let x = pt::placeholder("x", [3], DType::F64)?;
/// let c = pt::data_wrapper(pytato_core::ArrayData::F64(ndarray::arr1(&[1.0, 2.0, 3.0]).into_dyn()), None)?;
/// let dot = placeholder_data_flow_dot(&(&(&pt::sin(&x)? + &c)).into());
/// assert!(dot.contains("x: (3,) float64") && !dot.contains("DataWrapper"));
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn placeholder_data_flow_dot(outputs: &Outputs) -> String {
    let entries = outputs.entries();
    let roots: Vec<Array> = entries.iter().map(|(_, a)| a.clone()).collect();
    let nodes = topological_sort(&roots);
    // Children come first: a node carries data from a placeholder where one of its children does.
    let mut flows: HashMap<usize, usize> = HashMap::new();
    let mut s = String::from("digraph pytato {\n  rankdir=TB;\n  node [shape=box, style=filled, fontsize=12];\n");
    for node in &nodes {
        let placeholder = matches!(node.kind(), NodeKind::Placeholder { .. });
        if !placeholder && !node.children().iter().any(|c| flows.contains_key(&c.id())) {
            continue;
        }
        let i = flows.len();
        flows.insert(node.id(), i);
        let (text, color) = match node.name() {
            Some(name) if placeholder => (format!("{name}: {} {}", node.shape(), node.dtype()), fill(node)),
            _ => (node.kind_name().to_string(), "white"),
        };
        let _ = writeln!(s, "  n{i} [label=\"{}\", fillcolor=\"{color}\"];", escape(&text));
        for child in node.children() {
            if let Some(c) = flows.get(&child.id()) {
                let _ = writeln!(s, "  n{c} -> n{i};");
            }
        }
    }
    for (k, (name, array)) in entries.iter().enumerate() {
        if let Some(i) = flows.get(&array.id()) {
            let _ = writeln!(s, "  out{k} [label=\"output {}\", fillcolor=\"palegreen\"];", escape(name));
            let _ = writeln!(s, "  n{i} -> out{k};");
        }
    }
    s.push_str("}\n");
    s
}

/// The DAG of `outputs` as an SVG document, laid out in pure Rust by `layout-rs`.
pub fn to_svg(outputs: &Outputs) -> Result<String> {
    dot_to_svg(&to_dot(outputs))
}

/// Drawings of at least this many nodes are laid out in layers by this crate, in linear time,
/// rather than by `layout-rs`, whose crossing minimization takes seconds at a thousand nodes and
/// grows faster than their square.
pub const LAYERED_FROM: usize = 400;

/// A drawing in the DOT subset this module writes, as an SVG document (for other drawings of
/// DAGs, such as a distributed partition's); from [`LAYERED_FROM`] nodes in simple layers.
pub fn dot_to_svg(dot: &str) -> Result<String> {
    if layered::node_count(dot) >= LAYERED_FROM {
        return Ok(layered::layered_svg(dot));
    }
    let mut parser = DotParser::new(dot);
    let graph =
        parser.process().map_err(|e| Error::invalid("to_svg", format!("DOT the drawer made does not parse: {e}")))?;
    let mut builder = GraphBuilder::new();
    builder.visit_graph(&graph);
    let mut visual = builder.get();
    if visual.num_nodes() == 0 {
        // Nothing to draw (data flow from no placeholders): the layout engine asserts on an empty
        // graph, so the empty drawing is written here.
        return Ok("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\"></svg>\n".to_string());
    }
    let mut svg = SVGWriter::new();
    visual.do_it(false, false, false, &mut svg);
    Ok(svg.finalize())
}

/// A self-contained HTML page: the SVG drawing, node counts, and the DOT source.
pub fn to_html(outputs: &Outputs, title: &str) -> Result<String> {
    let svg = to_svg(outputs)?;
    let counts = crate::analysis::node_type_counts(outputs);
    let rows: String = counts.iter().map(|(k, n)| format!("<tr><td>{k}</td><td>{n}</td></tr>")).collect();
    let html_escape = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    Ok(format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{t}</title>\
         <style>body{{font-family:sans-serif}} td{{padding:0 1em}} pre{{background:#f4f4f4;padding:1em}}</style></head>\n\
         <body><h1>{t}</h1>\n<p>{n} nodes, depth {d}.</p>\n<table>{rows}</table>\n{svg}\n\
         <details><summary>DOT source</summary><pre>{dot}</pre></details>\n</body></html>\n",
        t = html_escape(title),
        n = crate::analysis::num_nodes(outputs),
        d = crate::analysis::depth(outputs),
        dot = html_escape(&to_dot(outputs)),
    ))
}
