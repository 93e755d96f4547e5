//! numpy as an oracle: a persistent `python3 golden/fuzz_oracle.py` that evaluates cases.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use pytato_runtime::backend::NamedData;
use serde_json::{Value, json};

use super::case::FuzzCase;
use crate::golden::{decode, encode};

/// What numpy made of one run of a case.
pub enum NumpyAnswer {
    /// Its outputs.
    Outputs(NamedData),
    /// numpy raised `IndexError`: the library's `IndexOutOfBounds`.
    IndexError,
    /// numpy refused the program (the message says how).
    Refused(String),
}

/// A running numpy process.
pub struct Oracle {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../golden/fuzz_oracle.py")
}

impl Oracle {
    /// Starts numpy, or says why it cannot (no `python3`, no numpy 2).
    pub fn start() -> Result<Oracle, String> {
        // numpy 2's promotion rules (NEP 50) are the ones the library follows.
        let probe = Command::new("python3")
            .args(["-c", "import numpy, sys; sys.exit(int(numpy.__version__.split('.')[0]) < 2)"])
            .output();
        match probe {
            Ok(o) if o.status.success() => {}
            Ok(_) => return Err("python3 has no numpy 2 (pip install 'numpy>=2')".into()),
            Err(e) => return Err(format!("no python3: {e}")),
        }
        let mut child = Command::new("python3")
            .arg(script())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", script().display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Oracle { child, stdin, stdout })
    }

    /// numpy's answer for run `run` of `case`.
    pub fn ask(&mut self, case: &FuzzCase, run: usize) -> Result<NumpyAnswer, String> {
        let inputs: serde_json::Map<String, Value> =
            case.inputs.iter().map(|i| (i.name.clone(), encode(&case.input_data(i, run)))).collect();
        // Only the statements the outputs read: numpy evaluates eagerly, the library lazily.
        let live = case.without_dead_code();
        let request = json!({
            "inputs": inputs,
            "sizes": case.runs[run],
            "stmts": live.stmts.iter().map(|(n, e)| json!([n, e])).collect::<Vec<_>>(),
            "outputs": case.outputs.iter().map(|(n, t)| json!([n, t])).collect::<Vec<_>>(),
        });
        writeln!(self.stdin, "{request}").map_err(|e| format!("writing to numpy: {e}"))?;
        self.stdin.flush().map_err(|e| format!("writing to numpy: {e}"))?;
        let mut line = String::new();
        self.stdout.read_line(&mut line).map_err(|e| format!("reading from numpy: {e}"))?;
        let answer: Value = serde_json::from_str(&line).map_err(|e| format!("numpy answered {line:?}: {e}"))?;
        Ok(match answer.get("error").and_then(Value::as_str) {
            Some("IndexOutOfBounds") => NumpyAnswer::IndexError,
            Some(other) => NumpyAnswer::Refused(other.to_string()),
            None => NumpyAnswer::Outputs(
                answer["outputs"]
                    .as_object()
                    .ok_or("numpy answered without outputs")?
                    .iter()
                    .map(|(k, v)| (k.clone(), decode(v)))
                    .collect(),
            ),
        })
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
