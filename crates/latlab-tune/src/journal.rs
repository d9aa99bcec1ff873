//! (journal: being written.)
