//! Whatever the bytes, the decoders answer (a document or an error) and
//! never panic: every fixture cut at many places, with bytes changed, and
//! with its numbers replaced by the largest ones a u64 holds.

use std::path::Path;

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("txt" | "json")))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    assert!(out.len() >= 14, "{} fixtures", out.len());
    out
}

/// Decodes, turning a panic into a test failure that names the input; a
/// document it returns has counts that later sums cannot overflow.
fn decode(name: &str, what: &str, bytes: &[u8]) {
    let result = std::panic::catch_unwind(|| latlab_peers::decode(bytes));
    let Ok(Ok(doc)) = result else {
        assert!(result.is_ok(), "{name} {what}: the decoder panicked");
        return;
    };
    for m in &doc.measurements {
        let pooled = m.pooled();
        for c in m.columns.iter().chain([&pooled]) {
            let in_histogram: u128 = c
                .histogram
                .iter()
                .flatten()
                .map(|b| u128::from(b.count))
                .sum();
            assert!(
                in_histogram <= u128::from(latlab_peers::MAX_SAMPLES) * 64,
                "{name} {what}: {in_histogram} samples"
            );
        }
    }
}

#[test]
fn every_fixture_cut_anywhere_is_an_answer() {
    for (name, bytes) in fixtures() {
        let step = (bytes.len() / 97).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            decode(&name, &format!("cut at {cut}"), &bytes[..cut]);
        }
    }
}

#[test]
fn every_fixture_with_bytes_changed_is_an_answer() {
    for (name, bytes) in fixtures() {
        let step = (bytes.len() / 61).max(1);
        for at in (0..bytes.len()).step_by(step) {
            for replacement in [b'0', b'9', b'-', b' ', b'\n', b'#', b'"', 0xff] {
                let mut changed = bytes.clone();
                changed[at] = replacement;
                decode(&name, &format!("byte {at} = {replacement:#x}"), &changed);
            }
        }
    }
}

#[test]
fn every_fixture_with_huge_numbers_is_an_answer() {
    for (name, bytes) in fixtures() {
        let text = String::from_utf8(bytes).unwrap();
        // Every run of digits, one at a time, as u64::MAX and as 0.
        let runs: Vec<(usize, usize)> = {
            let mut runs = Vec::new();
            let mut start = None;
            for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
                match (c.is_ascii_digit(), start) {
                    (true, None) => start = Some(i),
                    (false, Some(s)) => {
                        runs.push((s, i));
                        start = None;
                    }
                    _ => {}
                }
            }
            runs
        };
        let step = (runs.len() / 150).max(1);
        for &(s, e) in runs.iter().step_by(step) {
            for value in ["18446744073709551615", "0"] {
                let changed = format!("{}{value}{}", &text[..s], &text[e..]);
                decode(
                    &name,
                    &format!("number at {s} = {value}"),
                    changed.as_bytes(),
                );
            }
        }
    }
}
