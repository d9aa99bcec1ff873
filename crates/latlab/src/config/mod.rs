//! Each command's arguments resolved and validated into the configuration
//! its library crates take: a library never sees a half-checked option.

pub mod explain;
pub mod load;
pub mod lockbench;
pub mod record;
pub mod respond;
pub mod run;
pub mod watch;

/// Fails, naming the usable CPUs and the flag `flag` to fix, unless `cpu`
/// is one of `usable` (online and allowed).
pub fn check_usable(cpu: usize, usable: &[usize], flag: &str) -> anyhow::Result<()> {
    if !usable.contains(&cpu) {
        anyhow::bail!(
            "CPU {cpu} is not usable (online and allowed CPUs: {}); see {flag}",
            latlab_report::text::record::cpu_list(usable)
        );
    }
    Ok(())
}
