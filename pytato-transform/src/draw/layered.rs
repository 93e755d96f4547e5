//! A layered drawing in linear time, for drawings too large for `layout-rs`.
//!
//! `layout-rs` minimizes edge crossings, which takes time growing faster than the square of the
//! node count (seconds at a thousand nodes, hours at a hundred thousand). Past
//! [`LAYERED_FROM`](super::LAYERED_FROM) nodes the drawing is laid out here instead: each node in
//! the layer of its longest path from a node without inputs, the nodes of a layer side by side in
//! the order the drawing lists them, edges as straight lines. Its input is the DOT subset
//! [`super`] writes (one statement per line: `ID [attr="…", …];` or `ID -> ID;`).

use std::collections::HashMap;
use std::fmt::Write as _;

/// Width of a character of a label, in pixels (12 px sans-serif, generously).
const CHAR_WIDTH: usize = 7;
/// Height of a line of a label.
const LINE_HEIGHT: usize = 16;
/// Space around a label inside its box, and between boxes.
const PAD: usize = 8;
const GAP_X: usize = 24;
const GAP_Y: usize = 40;

/// One node of the drawing: its DOT identifier, its label's lines and its fill colour.
struct Node {
    id: String,
    lines: Vec<String>,
    fill: String,
}

/// A drawing as its statements give it: nodes in their order, edges by identifiers.
struct Drawing {
    nodes: Vec<Node>,
    edges: Vec<(String, String)>,
}

/// The value of `attr="…"` in `attrs` (DOT's escapes `\"` and `\\` undone, `\n` as a line
/// break kept as `\n`).
fn attribute(attrs: &str, attr: &str) -> Option<String> {
    let start = attrs.find(&format!("{attr}=\""))? + attr.len() + 2;
    let mut value = String::new();
    let mut chars = attrs[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(value),
            '\\' => match chars.next() {
                Some('n') => value.push('\n'),
                Some(other) => value.push(other),
                None => return None,
            },
            c => value.push(c),
        }
    }
    None
}

/// The node statement `ID [attrs]` of a line, if it is one.
fn node_statement(line: &str) -> Option<(&str, &str)> {
    let line = line.trim();
    let (id, attrs) = line.strip_suffix(';').unwrap_or(line).split_once(" [")?;
    (!matches!(id, "node" | "edge" | "graph") && !id.contains(' ')).then_some((id, attrs))
}

/// The number of nodes a drawing in the DOT subset of the [module docs](self) has.
pub(super) fn node_count(dot: &str) -> usize {
    dot.lines().filter(|line| node_statement(line).is_some()).count()
}

/// The nodes and edges of a drawing in the DOT subset of the [module docs](self), nodes in the
/// order their statements come.
fn parse(dot: &str) -> Drawing {
    let (mut nodes, mut edges) = (Vec::new(), Vec::new());
    for line in dot.lines().map(str::trim) {
        let statement = line.strip_suffix(';').unwrap_or(line);
        if statement.contains(" [") {
            let Some((id, attrs)) = node_statement(line) else { continue };
            let lines = attribute(attrs, "label").unwrap_or_else(|| id.to_string());
            let fill = attribute(attrs, "fillcolor").unwrap_or_else(|| "white".to_string());
            let lines = lines.split('\n').map(str::to_string).collect();
            nodes.push(Node { id: id.to_string(), lines, fill });
        } else if let Some((from, to)) = statement.split_once(" -> ") {
            edges.push((from.trim().to_string(), to.trim().to_string()));
        }
    }
    Drawing { nodes, edges }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The drawing `dot` (in the subset of the [module docs](self)) as an SVG document, laid out in
/// layers. Edges naming a node without a statement are left out.
pub(super) fn layered_svg(dot: &str) -> String {
    let Drawing { nodes, edges } = parse(dot);
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    let edges: Vec<(usize, usize)> =
        edges.iter().filter_map(|(a, b)| Some((*index.get(a.as_str())?, *index.get(b.as_str())?))).collect();
    // Longest paths by Kahn's algorithm (iterative: a chain of a million nodes is a million
    // layers, not a million frames); nodes on a cycle, which a DAG's drawing has none of, stay
    // in layer 0.
    let mut users = vec![Vec::new(); nodes.len()];
    let mut inputs_left = vec![0usize; nodes.len()];
    for &(from, to) in &edges {
        users[from].push(to);
        inputs_left[to] += 1;
    }
    let mut layer = vec![0usize; nodes.len()];
    let mut ready: Vec<usize> = (0..nodes.len()).filter(|&i| inputs_left[i] == 0).collect();
    while let Some(node) = ready.pop() {
        for &user in &users[node] {
            layer[user] = layer[user].max(layer[node] + 1);
            inputs_left[user] -= 1;
            if inputs_left[user] == 0 {
                ready.push(user);
            }
        }
    }
    let size = |n: &Node| {
        let chars = n.lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        (chars * CHAR_WIDTH + 2 * PAD, n.lines.len() * LINE_HEIGHT + 2 * PAD)
    };
    let layers = layer.iter().max().map_or(0, |&l| l + 1);
    let mut heights = vec![0usize; layers];
    for (i, n) in nodes.iter().enumerate() {
        heights[layer[i]] = heights[layer[i]].max(size(n).1);
    }
    let mut tops = Vec::with_capacity(layers);
    let mut y = GAP_Y / 2;
    for h in &heights {
        tops.push(y);
        y += h + GAP_Y;
    }
    // Boxes left to right in each layer, in the order of the statements.
    let mut next_x = vec![GAP_X / 2; layers];
    let mut boxes = Vec::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        let (w, h) = size(n);
        boxes.push((next_x[layer[i]], tops[layer[i]], w, h));
        next_x[layer[i]] += w + GAP_X;
    }
    let width = next_x.iter().max().copied().unwrap_or(0);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{y}\" font-family=\"sans-serif\" \
         font-size=\"12\">\n<!-- {} nodes in {layers} layers (pytato_transform::draw, layered) -->\n<defs><marker \
         id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" \
         orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\"/></marker></defs>",
        nodes.len()
    );
    for &(from, to) in &edges {
        let (fx, fy, fw, fh) = boxes[from];
        let (tx, ty, tw, _) = boxes[to];
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{ty}\" stroke=\"black\" marker-end=\"url(#arrow)\"/>",
            fx + fw / 2,
            fy + fh,
            tx + tw / 2
        );
    }
    for (n, &(x, y, w, h)) in nodes.iter().zip(&boxes) {
        let _ = writeln!(
            svg,
            "<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{}\" stroke=\"black\"/>",
            xml_escape(&n.fill)
        );
        for (k, line) in n.lines.iter().enumerate() {
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                x + PAD,
                y + PAD + (k + 1) * LINE_HEIGHT - 4,
                xml_escape(line)
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_edges_of_the_dot_subset_are_read_back() {
        let dot = "digraph g {\n  rankdir=TB;\n  node [shape=box];\n  n0 [label=\"a \\\"q\\\"\\nb\", fillcolor=\"red\"];\n  \
                   n1 [shape=ellipse, fillcolor=\"blue\", label=\"c\"];\n  n0 -> n1;\n  n1 -> missing;\n}\n";
        let Drawing { nodes, edges } = parse(dot);
        assert_eq!(nodes.len(), 2);
        assert_eq!((nodes[0].id.as_str(), &nodes[0].lines[..]), ("n0", &["a \"q\"".to_string(), "b".to_string()][..]));
        assert_eq!((nodes[1].fill.as_str(), nodes[1].lines.as_slice()), ("blue", &["c".to_string()][..]));
        assert_eq!(edges, [("n0".to_string(), "n1".to_string()), ("n1".to_string(), "missing".to_string())]);
        let svg = layered_svg(dot);
        assert_eq!((svg.matches("<rect").count(), svg.matches("<line").count()), (2, 1));
        assert!(svg.contains("a &quot;q&quot;") && svg.contains("2 nodes in 2 layers"));
    }

    #[test]
    fn each_node_is_below_every_node_it_uses() {
        // a diamond with a shortcut: d uses b (layer 1) and a (layer 0), so d is in layer 2
        let dot = "  a [label=\"a\"];\n  b [label=\"b\"];\n  c [label=\"c\"];\n  d [label=\"d\"];\n  \
                   a -> b;\n  a -> c;\n  b -> d;\n  a -> d;\n";
        let svg = layered_svg(dot);
        let ys: Vec<usize> = svg
            .lines()
            .filter(|l| l.starts_with("<rect"))
            .map(|l| l.split("y=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap())
            .collect();
        assert!(ys[0] < ys[1] && ys[1] == ys[2] && ys[2] < ys[3], "{ys:?}");
        assert!(svg.contains("4 nodes in 3 layers"));
    }
}
