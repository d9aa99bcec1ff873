//! The `.dat` header of a capture: the instance's formats and the system
//! it ran on (page size, clock, uname, command names, kallsyms).

use std::collections::BTreeMap;
use std::fs::{self};
use std::path::{Path, PathBuf};

use super::Capture;
use crate::dat::{self, DatHeader};
use crate::error::Result;
use crate::tracefs::{read_file, read_text, Tracefs};

impl Capture {
    pub(super) fn build_header(&self) -> Result<DatHeader> {
        let inst = self.inst();
        let tracefs = inst.tracefs();
        let mut h = DatHeader {
            page_size: self.page_size as u32,
            header_page: tracefs.read("events/header_page")?,
            header_event: tracefs.read("events/header_event")?,
            trace_clock: self.trace_clock.clone(),
            ..Default::default()
        };
        let ftrace_dir = tracefs.path("events/ftrace");
        if let Ok(entries) = fs::read_dir(&ftrace_dir) {
            let mut names: Vec<PathBuf> =
                entries.flatten().map(|e| e.path().join("format")).collect();
            names.sort();
            for p in names.into_iter().filter(|p| p.exists()) {
                h.ftrace_formats.push(read_file(&p)?);
            }
        }
        let mut systems: BTreeMap<&str, Vec<Vec<u8>>> = BTreeMap::new();
        for ev in &self.events {
            let p = inst.path(&format!("events/{}/{}/format", ev.system, ev.name));
            systems.entry(&ev.system).or_default().push(read_file(&p)?);
        }
        h.event_formats = systems
            .into_iter()
            .map(|(s, f)| (s.to_string(), f))
            .collect();
        if self.kallsyms {
            h.kallsyms = read_file(Path::new("/proc/kallsyms")).unwrap_or_default();
        }
        h.printk_formats = tracefs.read("printk_formats").unwrap_or_default();
        h.cmdlines = cmdlines(tracefs);
        for &cpu in &self.cpus {
            let mut text = format!("CPU: {cpu}\n").into_bytes();
            text.extend(
                inst.read(&format!("per_cpu/cpu{cpu}/stats"))
                    .unwrap_or_default()
                    .bytes(),
            );
            text.push(0);
            h.options.push((dat::OPTION_CPUSTAT, text));
        }
        let mut clock = inst.read("trace_clock").unwrap_or_default().into_bytes();
        clock.push(0);
        h.options.push((dat::OPTION_TRACECLOCK, clock));
        h.options.push((dat::OPTION_UNAME, nul_terminated(uname())));
        h.options.push((
            dat::OPTION_VERSION,
            nul_terminated(format!("latlab {}", env!("CARGO_PKG_VERSION"))),
        ));
        h.options.push((
            dat::OPTION_CPUCOUNT,
            (self.ncpus as u32).to_ne_bytes().to_vec(),
        ));
        Ok(h)
    }
}

pub(super) fn nul_terminated(s: String) -> Vec<u8> {
    let mut v = s.into_bytes();
    v.push(0);
    v
}

pub(super) fn current_clock(clocks: &str) -> String {
    clocks
        .split_whitespace()
        .find(|c| c.starts_with('['))
        .map(|c| c.trim_matches(['[', ']']).to_string())
        .unwrap_or_else(|| "local".into())
}

pub(super) fn host_page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

/// The kernel's long size, from the `commit` field of `header_page`.
pub(super) fn header_page_long_size(tracefs: &Tracefs) -> Option<usize> {
    let text = read_text(&tracefs.path("events/header_page")).ok()?;
    let line = text.lines().find(|l| l.contains("commit;"))?;
    let size = line
        .split(';')
        .find_map(|p| p.trim().strip_prefix("size:"))?;
    size.trim().parse().ok()
}

pub(super) fn uname() -> String {
    // SAFETY: utsname is plain data; uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a valid utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {} {}",
        field(&u.sysname),
        field(&u.nodename),
        field(&u.release),
        field(&u.version)
    )
}

/// `pid comm` lines: the kernel's saved_cmdlines, completed from /proc.
pub(super) fn cmdlines(tracefs: &Tracefs) -> Vec<u8> {
    let mut map: BTreeMap<u32, String> = BTreeMap::new();
    if let Ok(text) = read_text(&tracefs.path("saved_cmdlines")) {
        for line in text.lines() {
            if let Some((pid, comm)) = line.split_once(' ') {
                if let Ok(pid) = pid.parse() {
                    map.insert(pid, comm.to_string());
                }
            }
        }
    }
    if let Ok(entries) = fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            add_comm(&mut map, pid, &e.path());
            if let Ok(tasks) = fs::read_dir(e.path().join("task")) {
                for t in tasks.flatten() {
                    if let Ok(tid) = t.file_name().to_string_lossy().parse::<u32>() {
                        add_comm(&mut map, tid, &t.path());
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for (pid, comm) in map {
        out.extend_from_slice(format!("{pid} {comm}\n").as_bytes());
    }
    out
}

pub(super) fn add_comm(map: &mut BTreeMap<u32, String>, pid: u32, dir: &Path) {
    if map.contains_key(&pid) {
        return;
    }
    if let Ok(c) = fs::read_to_string(dir.join("comm")) {
        map.insert(pid, c.trim_end().to_string());
    }
}
