//! The words of a kernel command line: split (double quotes keep spaces),
//! merged with ours, and compared with ours.

use crate::result::BootParameter;

/// The running command line with ours: each existing parameter of the
/// same name replaced, every other kept in its place, ours appended before
/// any `--` (what follows it is init's).
pub fn merge(cmdline: &str, parameters: &[BootParameter]) -> String {
    let all = words(cmdline);
    let split = all.iter().position(|w| *w == "--").unwrap_or(all.len());
    let ours: Vec<&str> = parameters.iter().map(|p| p.text.as_str()).collect();
    let mut merged: Vec<&str> = all[..split]
        .iter()
        .copied()
        .filter(|w| !ours.iter().any(|o| key(o) == key(w)))
        .collect();
    merged.extend(&ours);
    merged.extend(&all[split..]);
    merged.join(" ")
}

/// A parameter's name: `nohz_full` of `nohz_full=1`.
pub(crate) fn key(word: &str) -> &str {
    word.split_once('=').map_or(word, |(k, _)| k)
}

/// The words of a command line; a double-quoted value keeps its spaces.
pub fn words(cmdline: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (None, false);
    for (i, c) in cmdline.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if let Some(s) = start.take() {
                    out.push(&cmdline[s..i]);
                }
                continue;
            }
            _ => {}
        }
        start.get_or_insert(i);
    }
    if let Some(s) = start {
        out.push(&cmdline[s..]);
    }
    out
}

/// The running line has this parameter with the same value: the last of
/// its name before `--` (the kernel takes the last), CPU lists compared as
/// sets, `isolcpus` flags in any order.
pub(crate) fn already(running: &[&str], ours: &str) -> bool {
    let end = running
        .iter()
        .position(|w| *w == "--")
        .unwrap_or(running.len());
    let Some(theirs) = running[..end].iter().rev().find(|w| key(w) == key(ours)) else {
        return false;
    };
    normal(theirs) == normal(ours)
}

fn normal(word: &str) -> (String, Vec<String>, Option<Vec<usize>>) {
    let Some((name, value)) = word.split_once('=') else {
        return (word.to_string(), Vec::new(), None);
    };
    let mut flags: Vec<String> = Vec::new();
    let mut cpus: Vec<&str> = Vec::new();
    for part in value.split(',') {
        if part.starts_with(|c: char| c.is_ascii_digit()) {
            cpus.push(part);
        } else {
            flags.push(part.to_string());
        }
    }
    flags.sort();
    let list = latlab_rt::sched::parse_cpu_list(&cpus.join(",")).ok();
    match list {
        Some(list) if flags.is_empty() || name == "isolcpus" => (name.into(), flags, Some(list)),
        _ => (word.to_string(), Vec::new(), None),
    }
}
