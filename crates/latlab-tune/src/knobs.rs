//! (knobs: being written.)
