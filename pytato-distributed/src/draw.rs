//! Drawing a partition: its parts, the messages into and out of them, and the outputs.

use std::fmt::Write;

use pytato_core::Result;
use pytato_transform::analysis::num_nodes;
use pytato_transform::draw::dot_to_svg;

use crate::partition::DistributedPartition;

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `partition` in Graphviz's DOT language: a box per part (its number of nodes and what it
/// computes), an ellipse per message (rank and tag), arrows in the order things must happen.
pub fn partition_to_dot(partition: &DistributedPartition) -> String {
    let mut s = format!(
        "digraph partition {{\n  rankdir=TB;\n  label=\"rank {}\";\n  node [style=filled, fontsize=12];\n",
        partition.rank
    );
    for part in &partition.parts {
        let outputs: Vec<&str> = part.outputs.names().collect();
        let nodes = num_nodes(&part.outputs.clone().into());
        let _ = writeln!(
            s,
            "  part{} [shape=box, fillcolor=\"lightyellow\", label=\"part {}\\n{nodes} nodes\\ncomputes {}\"];",
            part.id,
            part.id,
            escape(&outputs.join(", "))
        );
        for needed in &part.needed_parts {
            let _ = writeln!(s, "  part{needed} -> part{};", part.id);
        }
    }
    for (k, r) in partition.receives.iter().enumerate() {
        let _ = writeln!(
            s,
            "  recv{k} [shape=ellipse, fillcolor=\"lightblue\", label=\"{}\\nfrom rank {}, tag {}\\n{} {}\"];",
            escape(&r.name),
            r.src_rank,
            escape(&r.comm_tag.to_string()),
            r.shape,
            r.dtype
        );
        for part in partition.parts.iter().filter(|p| p.received.contains(&r.name)) {
            let _ = writeln!(s, "  recv{k} -> part{};", part.id);
        }
    }
    for (k, send) in partition.sends.iter().enumerate() {
        let _ = writeln!(
            s,
            "  send{k} [shape=ellipse, fillcolor=\"lightpink\", label=\"send {}\\nto rank {}, tag {}\\n{} {}\"];",
            escape(&send.data),
            send.dest_rank,
            escape(&send.comm_tag.to_string()),
            send.shape,
            send.dtype
        );
        match send.part {
            Some(p) => {
                let _ = writeln!(s, "  part{p} -> send{k};");
            }
            None => {
                if let Some(r) = partition.receives.iter().position(|r| r.name == send.data) {
                    let _ = writeln!(s, "  recv{r} -> send{k};");
                }
            }
        }
    }
    for (k, (user, value)) in partition.outputs.iter().enumerate() {
        let _ = writeln!(s, "  out{k} [shape=box, fillcolor=\"palegreen\", label=\"output {}\"];", escape(user));
        if let Some(part) =
            partition.parts.iter().find(|p| p.outputs.get(crate::partition::output_key(value)).is_some())
        {
            let _ = writeln!(s, "  part{} -> out{k};", part.id);
        } else if let Some(r) = partition.receives.iter().position(|r| r.name == *value) {
            let _ = writeln!(s, "  recv{r} -> out{k};");
        }
    }
    s.push_str("}\n");
    s
}

/// [`partition_to_dot`] laid out as an SVG document.
pub fn partition_to_svg(partition: &DistributedPartition) -> Result<String> {
    dot_to_svg(&partition_to_dot(partition))
}
