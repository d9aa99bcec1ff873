//! The text of a result file: indented like `serde_json`'s pretty printer,
//! except that an array holding only numbers (or arrays of numbers) stays on
//! one line. A histogram's runs of counts are most of a result, and one
//! number per line made a 5 s run's file 2.4 MB where its content is 0.1 MB;
//! the structure around them stays readable in a pager.
//!
//! ```
//! let value = serde_json::json!({"cpus": [0, 1], "histogram": [[5, 2, 1], [20, 1]]});
//! let text = latlab_document::text::to_text(&value).unwrap();
//! assert_eq!(text, "{\n  \"cpus\": [0,1],\n  \"histogram\": [[5,2,1],[20,1]]\n}\n");
//! ```

use serde::Serialize;

/// `value` as result-file text (see the module), ending in a newline.
pub fn to_text<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let compact = serde_json::to_vec(value)?;
    let mut out = Vec::with_capacity(compact.len() + compact.len() / 4);
    lay_out(&compact, &mut out);
    out.push(b'\n');
    // Only ASCII punctuation and whitespace were added to valid UTF-8.
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// Indents compact JSON `input` into `out`.
fn lay_out(input: &[u8], out: &mut Vec<u8>) {
    // For each open container: whether it is laid out on several lines.
    let mut open: Vec<bool> = Vec::new();
    let mut i = 0;
    while i < input.len() {
        let byte = input[i];
        match byte {
            b'"' => {
                let end = string_end(input, i);
                out.extend_from_slice(&input[i..end]);
                i = end;
                continue;
            }
            b'[' | b'{' => {
                let end = matching_close(input, i);
                let inner = &input[i + 1..end];
                if inner.is_empty() || (byte == b'[' && only_numbers(inner)) {
                    out.extend_from_slice(&input[i..=end]);
                    i = end + 1;
                    continue;
                }
                out.push(byte);
                open.push(true);
                new_line(out, open.len());
            }
            b']' | b'}' => {
                open.pop();
                new_line(out, open.len());
                out.push(byte);
            }
            b',' => {
                out.push(b',');
                new_line(out, open.len());
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.push(byte),
        }
        i += 1;
    }
}

fn new_line(out: &mut Vec<u8>, depth: usize) {
    out.push(b'\n');
    out.resize(out.len() + 2 * depth, b' ');
}

/// The index just past the string that starts at `start` (a `"`).
fn string_end(input: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < input.len() {
        match input[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    input.len()
}

/// The index of the bracket that closes the one at `start`.
fn matching_close(input: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < input.len() {
        match input[i] {
            b'"' => {
                i = string_end(input, i);
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    input.len() - 1
}

/// True when compact JSON `inner` (an array's content) holds no string and
/// no object: numbers, `true`/`false`/`null` and arrays of them.
fn only_numbers(inner: &[u8]) -> bool {
    !inner.iter().any(|&b| b == b'"' || b == b'{')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn objects_and_arrays_with_strings_are_laid_out_as_serde_json_pretty_does() {
        let value = json!({
            "schema": "latlab.run",
            "warnings": ["a \"quoted\" [bracket], {brace}", "b"],
            "threads": [{"cpu": 0, "worst": [{"latency_ns": 5}], "empty": [], "none": {}}],
            "related": [["mm_page_alloc", 3]],
            "nested": {"a": {"b": 1.5, "c": null}}
        });
        assert_eq!(
            to_text(&value).unwrap(),
            serde_json::to_string_pretty(&value).unwrap() + "\n"
        );
    }

    #[test]
    fn arrays_of_numbers_stay_on_one_line_and_the_text_reads_back() {
        let value = json!({
            "histogram": [[5, 2, 1, 0, 0, 4], [20, 1]],
            "steal_ns": [[0, 12], [1, 0]],
            "cpus": [0, 1, 2],
            "flags": [true, null, -1.5e-7]
        });
        let text = to_text(&value).unwrap();
        assert_eq!(
            text,
            "{\n  \"cpus\": [0,1,2],\n  \"flags\": [true,null,-1.5e-7],\n  \
             \"histogram\": [[5,2,1,0,0,4],[20,1]],\n  \"steal_ns\": [[0,12],[1,0]]\n}\n"
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    }
}
