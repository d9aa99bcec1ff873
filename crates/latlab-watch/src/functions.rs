//! Kernel function names of the timer callbacks the kernel side logs by
//! address (`hrtimer_expire_entry`'s `function`), from `/proc/kallsyms`,
//! named as `latlab explain` names them from a trace's kallsyms: the
//! symbol that starts there, `sym+0x10` inside one, else the address.
//!
//! `/proc/kallsyms` is some 120,000 lines: it is not held. The addresses a
//! window brings that are not known yet are looked up together in one pass
//! over the file, and the names kept (a few dozen callbacks in practice;
//! forgotten all at once past [`FUNCTION_CACHE`], so a watch of days stays
//! bounded). Where the file shows no addresses (`kptr_restrict` hides them
//! from a process without `CAP_SYSLOG`), it is not read again, and the
//! callbacks are named by address ([`FunctionNames::hidden`]).

use std::collections::HashMap;
use std::io::BufRead;
use std::path::PathBuf;

/// Function names the cache keeps at most.
pub const FUNCTION_CACHE: usize = 4096;

/// Callback addresses to kernel function names, looked up in
/// `/proc/kallsyms` once each.
#[derive(Debug)]
pub struct FunctionNames {
    source: PathBuf,
    known: HashMap<u64, String>,
    /// The file listed no address (hidden, or unreadable): not read again.
    hidden: bool,
    /// Passes over the file so far.
    reads: u64,
}

impl Default for FunctionNames {
    fn default() -> Self {
        FunctionNames::from_file("/proc/kallsyms")
    }
}

impl FunctionNames {
    /// Names from the running kernel's `/proc/kallsyms`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names from a file in `/proc/kallsyms`'s format (`ADDR TYPE NAME
    /// [MODULE]` lines).
    pub fn from_file(path: impl Into<PathBuf>) -> Self {
        FunctionNames {
            source: path.into(),
            known: HashMap::new(),
            hidden: false,
            reads: 0,
        }
    }

    /// Looks up the addresses of `addrs` not known yet, in one pass over
    /// the file (none when all are known). 0 is no function.
    pub fn resolve(&mut self, addrs: impl IntoIterator<Item = u64>) {
        let mut wanted: Vec<u64> = addrs
            .into_iter()
            .filter(|&a| a != 0 && !self.known.contains_key(&a))
            .collect();
        if wanted.is_empty() {
            return;
        }
        wanted.sort_unstable();
        wanted.dedup();
        if self.known.len() + wanted.len() > FUNCTION_CACHE {
            self.known.clear();
        }
        let found = if self.hidden {
            None
        } else {
            self.reads += 1;
            std::fs::File::open(&self.source)
                .ok()
                .and_then(|f| lookup(std::io::BufReader::new(f), &wanted).ok())
                .flatten()
        };
        if found.is_none() {
            self.hidden = true;
        }
        for (i, &addr) in wanted.iter().enumerate() {
            let name = match found.as_ref().and_then(|f| f[i].as_ref()) {
                Some((name, start)) if *start == addr => name.clone(),
                Some((name, start)) => format!("{name}+{:#x}", addr - start),
                None => format!("{addr:#x}"),
            };
            self.known.insert(addr, name);
        }
    }

    /// The name of the function at `addr` (looked up now when not known).
    pub fn name(&mut self, addr: u64) -> &str {
        self.resolve([addr]);
        self.known.get(&addr).map_or("0x0", |s| s.as_str())
    }

    /// Whether the file showed no addresses (or could not be read): the
    /// callbacks are named by address.
    pub fn hidden(&self) -> bool {
        self.hidden
    }

    /// Passes over the file so far.
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// Names kept now.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether no name is kept.
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }
}

/// A kernel symbol: its name and start address.
pub type Symbol = (String, u64);

/// Per address of `wanted` (sorted), the symbol containing it and the
/// symbol's start, from kallsyms text read line by line; `None` when the
/// text lists no address at all (all zero: hidden). Of several symbols at
/// one address the last listed is taken, and an address past the last
/// symbol matches only that symbol's exact address, as latlab-ftrace's
/// `Kallsyms::lookup` does for a trace's kallsyms.
pub fn lookup(text: impl BufRead, wanted: &[u64]) -> std::io::Result<Option<Vec<Option<Symbol>>>> {
    // Per wanted address: the best start so far and its name (the buffers
    // reused: a pass replaces them many times).
    let mut best: Vec<Option<u64>> = vec![None; wanted.len()];
    let mut best_name: Vec<Vec<u8>> = vec![Vec::new(); wanted.len()];
    let mut highest = 0u64;
    for line in text.split(b'\n') {
        let line = line?;
        let mut words = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty());
        let (Some(addr), Some(_ty), Some(name)) = (words.next(), words.next(), words.next()) else {
            continue;
        };
        let Some(start) = std::str::from_utf8(addr)
            .ok()
            .and_then(|a| u64::from_str_radix(a, 16).ok())
            .filter(|&a| a != 0)
        else {
            continue;
        };
        highest = highest.max(start);
        // The wanted addresses at or above this symbol's start.
        let from = wanted.partition_point(|&a| a < start);
        for i in from..wanted.len() {
            if best[i].is_none_or(|s| start >= s) {
                best[i] = Some(start);
                best_name[i].clear();
                best_name[i].extend_from_slice(name);
            }
        }
    }
    if highest == 0 {
        return Ok(None);
    }
    Ok(Some(
        wanted
            .iter()
            .zip(best.iter().zip(&best_name))
            .map(|(&addr, (start, name))| {
                let start = (*start)?;
                // Past the last symbol: only its exact address.
                if start == highest && start != addr {
                    return None;
                }
                Some((String::from_utf8_lossy(name).into_owned(), start))
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "ffffffff81000000 T _stext\n\
        ffffffff81a0b2c0 t tcp_pace_kick\n\
        ffffffff81a0b400 T tcp_release_cb\n\
        ffffffff81120000 T hrtimer_wakeup\n\
        ffffffffc0a01230 t my_timer_fn\t[mymod]\n\
        ffffffffc0a01300 t my_other_fn\t[mymod]\n";

    #[test]
    fn addresses_are_named_as_explain_names_them() {
        let wanted = [
            0x10,
            0xffff_ffff_8112_0000,
            0xffff_ffff_81a0_b2c0,
            0xffff_ffff_81a0_b2d0,
            0xffff_ffff_c0a0_1230,
            0xffff_ffff_c0a0_1300,
            0xffff_ffff_c0a0_1310,
        ];
        let got = lookup(TEXT.as_bytes(), &wanted).unwrap().unwrap();
        let names: Vec<Option<(&str, u64)>> = got
            .iter()
            .map(|o| o.as_ref().map(|(n, s)| (n.as_str(), *s)))
            .collect();
        assert_eq!(
            names,
            [
                None,
                Some(("hrtimer_wakeup", 0xffff_ffff_8112_0000)),
                Some(("tcp_pace_kick", 0xffff_ffff_81a0_b2c0)),
                Some(("tcp_pace_kick", 0xffff_ffff_81a0_b2c0)),
                Some(("my_timer_fn", 0xffff_ffff_c0a0_1230)),
                Some(("my_other_fn", 0xffff_ffff_c0a0_1300)),
                // Past the last symbol: only its exact address.
                None,
            ]
        );
    }

    #[test]
    fn hidden_addresses_name_nothing_and_are_not_read_again() {
        let hidden = "0000000000000000 T _stext\n0000000000000000 t tcp_pace_kick\n";
        assert_eq!(lookup(hidden.as_bytes(), &[0x1234]).unwrap(), None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kallsyms");
        std::fs::write(&path, hidden).unwrap();
        let mut f = FunctionNames::from_file(&path);
        assert_eq!(f.name(0xffff_ffff_81a0_b2c0), "0xffffffff81a0b2c0");
        assert!(f.hidden());
        assert_eq!(f.name(0xffff_ffff_81a0_b400), "0xffffffff81a0b400");
        assert_eq!(f.reads(), 1);
    }

    #[test]
    fn each_address_is_looked_up_once_in_one_pass_per_batch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kallsyms");
        std::fs::write(&path, TEXT).unwrap();
        let mut f = FunctionNames::from_file(&path);
        f.resolve([
            0xffff_ffff_81a0_b2c0,
            0xffff_ffff_8112_0000,
            0,
            0xffff_ffff_81a0_b2c0,
        ]);
        assert_eq!(f.reads(), 1);
        assert_eq!(f.len(), 2);
        assert_eq!(f.name(0xffff_ffff_81a0_b2c0), "tcp_pace_kick");
        assert_eq!(f.name(0xffff_ffff_8112_0000), "hrtimer_wakeup");
        assert_eq!(f.reads(), 1, "known names are not looked up again");
        assert_eq!(f.name(0xffff_ffff_81a0_b2c8), "tcp_pace_kick+0x8");
        assert_eq!(f.reads(), 2);
        assert!(!f.hidden());
    }

    #[test]
    fn the_cache_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kallsyms");
        std::fs::write(&path, TEXT).unwrap();
        let mut f = FunctionNames::from_file(&path);
        for batch in 0..3u64 {
            f.resolve(
                (0..FUNCTION_CACHE as u64 / 2).map(|i| 0xffff_ffff_8100_0000 + (batch << 20) + i),
            );
            assert!(f.len() <= FUNCTION_CACHE);
        }
        assert_eq!(f.reads(), 3);
    }

    #[test]
    fn this_kernels_hrtimer_wakeup_is_named() {
        // As root, /proc/kallsyms shows addresses: the address it gives
        // hrtimer_wakeup is named back.
        let Ok(text) = std::fs::read_to_string("/proc/kallsyms") else {
            return;
        };
        let Some(addr) = text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            let (a, _, n) = (w.next()?, w.next()?, w.next()?);
            (n == "hrtimer_wakeup").then(|| u64::from_str_radix(a, 16).ok())?
        }) else {
            return;
        };
        let mut f = FunctionNames::new();
        if addr == 0 {
            assert_eq!(f.name(0xffff_ffff_8100_0000), "0xffffffff81000000");
            assert!(f.hidden());
        } else {
            assert_eq!(f.name(addr), "hrtimer_wakeup");
        }
    }
}
