//! The HTML report: one self-contained file (inline CSS and SVG, one small
//! inline script, no network) showing one result or comparing several.
//!
//! Inputs are typed [`Document`]s (latlab-document), read by the `schema`
//! field of the JSON; a kind the report does not know is shown as its JSON.
//!
//! ```
//! use latlab_report::html::{render, Document, Entry};
//! let text = r#"{"schema": "latlab.example", "answer": 42}"#;
//! let entry = Entry { label: "example".into(), document: Document::parse(text).unwrap() };
//! let html = render(&[entry], "latlab report");
//! assert!(html.starts_with("<!DOCTYPE html>"));
//! assert!(html.contains("latlab.example"));
//! ```
//!
//! One file per part of the page: [`page`] (the page and its style),
//! [`opening`], [`entry`] (the results and their labels), [`comparison`]
//! (results set against the first); then one file per document kind, each
//! implementing [`HtmlSection`](crate::formats::HtmlSection) for its kind
//! ([`run`] with [`split`] and [`system`], [`respond`], [`lockbench`],
//! [`simulation`], [`explain`], [`load`], [`watch`], [`tune`], [`peer`]); the plots
//! are built in [`mod@plots`] and drawn by [`svg`].

mod badge;
pub mod comparison;
mod delta;
pub mod entry;
pub mod explain;
mod list;
pub mod load;
pub mod lockbench;
pub mod opening;
pub mod page;
pub mod peer;
pub mod plots;
pub mod respond;
pub mod run;
pub mod simulation;
pub mod split;
pub mod svg;
pub mod system;
pub mod tune;
pub mod watch;

pub use entry::{auto_labels, load_name, Entry};
pub use latlab_document::Document;
pub use opening::{Cell, Opening};
pub use page::{plots, render, render_with_intro, render_with_opening};
// The page's style, which the board's pages (`crate::dashboard`) share.
pub(crate) use page::STYLE;

#[cfg(test)]
mod tests;
