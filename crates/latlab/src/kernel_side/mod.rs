//! What `latlab run` measures in the kernel beside its own samples: the
//! interrupt/preemption split (BPF) and the kernel trace.

pub mod split;
pub mod trace;
