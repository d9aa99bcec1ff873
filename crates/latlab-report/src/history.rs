//! The terminal listing of `latlab history`: one stored result per line;
//! and what a deletion freed ([`deleted`]).
//!
//! ```
//! use latlab_history::Entry;
//! let entry = Entry { id: 7, uid: "u".into(), board: None, schema: "latlab.run".into(),
//!     started_at: "2026-11-24T10:00:00Z".into(), host: Some("rpi4".into()), arch: None,
//!     kernel: None, preemption: None, load: None, variant: None, max_ns: Some(41_000),
//!     p999_ns: None, verdict: Some("pass".into()) };
//! let text = latlab_report::history::listing(&[entry]);
//! assert!(text.starts_with("id  when (UTC)"));
//! assert!(text.lines().nth(1).unwrap().contains("2026-11-24 10:00:00  run"));
//! ```

use latlab_history::{Deletion, Entry};
use latlab_measure::units::format_ns;

/// One column of the listing.
struct Column {
    header: &'static str,
    /// Numbers right-aligned, words left.
    right: bool,
    cell: fn(&Entry) -> String,
}

/// The listing, one result per line: the setup (what the kind measured)
/// when a result has one, the board when a result came from a board.
pub fn listing(entries: &[Entry]) -> String {
    fn or(v: &Option<String>, none: &str) -> String {
        v.clone().unwrap_or_else(|| none.into())
    }
    let column = |header, right, cell| Column {
        header,
        right,
        cell,
    };
    let mut columns = vec![
        column("id", true, |e| e.id.to_string()),
        column("when (UTC)", false, |e| {
            e.started_at
                .replace('T', " ")
                .trim_end_matches('Z')
                .to_string()
        }),
        column("kind", false, |e| e.kind().to_string()),
    ];
    if entries.iter().any(|e| e.variant.is_some()) {
        columns.push(column("setup", false, |e| or(&e.variant, "-")));
    }
    if entries.iter().any(|e| e.board.is_some()) {
        columns.push(column("board", false, |e| or(&e.board, "-")));
    }
    columns.extend([
        column("host", false, |e| or(&e.host, "?")),
        column("kernel", false, |e| or(&e.kernel, "?")),
        column("preempt", false, |e| or(&e.preemption, "?")),
        column("load", false, |e| or(&e.load, "none")),
        column("max", true, |e| e.max_ns.map_or("-".into(), format_ns)),
        column("verdict", false, |e| or(&e.verdict, "-")),
    ]);
    let rows: Vec<Vec<String>> = entries
        .iter()
        .map(|e| columns.iter().map(|c| (c.cell)(e)).collect())
        .collect();
    let mut widths: Vec<usize> = columns.iter().map(|c| c.header.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut text = String::new();
        for ((cell, w), c) in cells.iter().zip(&widths).zip(&columns) {
            if c.right {
                text.push_str(&format!("{cell:>w$}  "));
            } else {
                text.push_str(&format!("{cell:<w$}  "));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(columns.iter().map(|c| c.header).collect());
    for row in &rows {
        line(row.iter().map(String::as_str).collect());
    }
    out
}

/// The line `latlab history --delete` prints: how many results went, their
/// ids, from where, and (SQLite) how the file shrank.
pub fn deleted(deletion: &Deletion) -> String {
    let s = if deletion.ids.len() == 1 { "" } else { "s" };
    let ids: Vec<String> = deletion.ids.iter().map(i64::to_string).collect();
    let mut text = format!(
        "deleted {} result{s} (id{s} {}) from {}",
        deletion.ids.len(),
        ids.join(", "),
        deletion.location
    );
    if let (Some(after), Some(before)) = (deletion.size_after, deletion.size_before) {
        text.push_str(&format!(
            "; the file is now {} (was {})",
            mib(after),
            mib(before)
        ));
    }
    text.push('\n');
    text
}

/// Bytes in MiB as shown: `1.25 MiB`.
fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1u64 << 20) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deletion_says_what_went_and_what_the_file_became() {
        let mut deletion = Deletion {
            ids: vec![3],
            location: "h.sqlite".into(),
            size_before: Some(3 << 20),
            size_after: Some(5 << 18),
        };
        assert_eq!(
            deleted(&deletion),
            "deleted 1 result (id 3) from h.sqlite; the file is now 1.25 MiB (was 3.00 MiB)\n"
        );
        deletion.ids = vec![1, 2];
        (deletion.size_before, deletion.size_after) = (None, None);
        assert_eq!(
            deleted(&deletion),
            "deleted 2 results (ids 1, 2) from h.sqlite\n"
        );
    }
}
