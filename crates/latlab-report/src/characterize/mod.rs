//! The answer of `latlab scenario characterize` (what `make run` runs):
//! from an idle run and a loaded, explained run, which requirement classes
//! of the papers this machine meets, and what stands in the way.
//!
//! [`Characterization`] is the typed answer, built from the two steps'
//! result documents only, so the same answer comes out of the files a run
//! left behind. Its renderers: the terminal summary
//! ([`crate::formats::TerminalText`], also `summary.txt`) and the opening of
//! the HTML report ([`Characterization::opening`]).

mod html;
mod model;
mod text;

pub use model::{
    Characterization, CharacterizeError, ClassRow, Explained, RunFigures, EXPLAIN_THRESHOLD,
    FULL_LOAD,
};

#[cfg(test)]
mod tests;
