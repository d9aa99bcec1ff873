//! Starting the binary and checking how it ended.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// Spawns `command` with its stdout and stderr piped, for `wait_with_output`.
pub fn spawn_piped(command: &mut Command) -> Child {
    command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("latlab runs")
}

/// Asserts that the command exited with success; the message is its
/// stdout and stderr.
#[track_caller]
pub fn assert_success(output: &Output) {
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout_of(output),
        stderr_of(output)
    );
}

/// Asserts that the command exited with status 1 (an error, as rtla's);
/// returns its stderr, for the test to check the message.
#[track_caller]
pub fn assert_error(output: &Output) -> String {
    let stderr = stderr_of(output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    stderr
}

/// The command's stderr as text.
pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The command's stdout as text.
pub fn stdout_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `bytes` parsed as JSON; a panic that shows them when they are not.
#[track_caller]
pub fn json_of(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", String::from_utf8_lossy(bytes)))
}

/// The JSON document in the file at `path`.
#[track_caller]
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    json_of(text.as_bytes())
}
