//! What a report opens with before the results.

use std::fmt::Write;

use super::badge::met_badge;
use crate::markup::escape;

/// What a report opens with before the results: a table (e.g. `scenario
/// characterize`'s requirement classes met or missed, as the terminal shows
/// them), then paragraphs of plain text (escaped when rendered).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Opening {
    /// The heading of the opening section (none: no heading).
    pub heading: Option<String>,
    /// The table's column headers (empty: no table).
    pub columns: Vec<String>,
    /// The table's rows, one cell per column.
    pub rows: Vec<Vec<Cell>>,
    /// Paragraphs after the table.
    pub paragraphs: Vec<String>,
}

/// One cell of an [`Opening`]'s table.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Plain text.
    Text(String),
    /// A requirement met (`true`) or missed, shown as a coloured badge.
    Met(bool),
}

impl Opening {
    /// An opening of paragraphs only.
    pub fn paragraphs(paragraphs: &[String]) -> Opening {
        Opening {
            paragraphs: paragraphs.to_vec(),
            ..Opening::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.heading.is_none() && self.columns.is_empty() && self.paragraphs.is_empty()
    }

    pub(crate) fn render(&self, h: &mut String) {
        if self.is_empty() {
            return;
        }
        h.push_str("<section class=\"compare\" id=\"intro\">");
        if let Some(heading) = &self.heading {
            let _ = write!(h, "<h2>{}</h2>", escape(heading));
        }
        if !self.columns.is_empty() {
            h.push_str("<table class=\"opening\"><tr>");
            for (i, column) in self.columns.iter().enumerate() {
                let class = if i == 0 { " class=\"l\"" } else { "" };
                let _ = write!(h, "<th{class}>{}</th>", escape(column));
            }
            h.push_str("</tr>\n");
            for row in &self.rows {
                h.push_str("<tr>");
                for (i, cell) in row.iter().enumerate() {
                    // The first column names the row; a last one of text may be long.
                    let class = match (i, cell) {
                        (0, _) => " class=\"l\"",
                        (i, Cell::Text(_)) if i + 1 == row.len() => " class=\"l wrap\"",
                        _ => "",
                    };
                    match cell {
                        Cell::Text(text) => {
                            let _ = write!(h, "<td{class}>{}</td>", escape(text));
                        }
                        Cell::Met(met) => {
                            let _ = write!(h, "<td{class}>{}</td>", met_badge(*met));
                        }
                    }
                }
                h.push_str("</tr>\n");
            }
            h.push_str("</table>\n");
        }
        for paragraph in &self.paragraphs {
            let _ = write!(h, "<p>{}</p>", escape(paragraph));
        }
        h.push_str("</section>\n");
    }
}
