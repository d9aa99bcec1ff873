//! A list of plain-text items (warnings, what a file does not say).

use std::fmt::Write;

use crate::markup::escape;

/// Appends `items` as `<ul class="{class}">`, each escaped; nothing when
/// there are none.
pub(crate) fn list(h: &mut String, class: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = write!(h, "<ul class=\"{class}\">");
    for item in items {
        let _ = write!(h, "<li>{}</li>", escape(item));
    }
    h.push_str("</ul>\n");
}
