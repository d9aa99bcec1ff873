//! Readers for events that arrive as text: the tracefs `trace` file,
//! `trace-cmd report` output, and LTTng CTF traces printed by `babeltrace2`.
//!
//! Each produces [`TextEvent`]s: timestamp, CPU, task, event name and the
//! event's text, with `key=value` fields parsed out of the text.

use std::borrow::Cow;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// One event read from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEvent {
    /// Timestamp in ns (text carries µs or ns; missing digits are zero).
    pub ts: u64,
    /// CPU (`u32::MAX` when the source does not say).
    pub cpu: u32,
    /// Task id (`-1` when the source does not say).
    pub pid: i32,
    /// Task name (`<...>` when unknown).
    pub comm: String,
    /// Instance/buffer name (trace-cmd prefixes instance lines with `name: `).
    pub buffer: String,
    /// Latency flags column (`d..2.`), when present.
    pub flags: Option<String>,
    /// Subsystem, when the source says (CTF `kernel:...`; ftrace text does not).
    pub system: Option<String>,
    /// Event name.
    pub name: String,
    /// The event's text after `name: `.
    pub info: String,
    /// Events lost on this CPU just before this one (from `LOST`/`DROPPED` lines).
    pub lost_before: Option<u64>,
}

impl TextEvent {
    /// Fields parsed from the text: `key=value` (ftrace) or `key = value` (CTF).
    pub fn fields(&self) -> Vec<(&str, &str)> {
        parse_fields(&self.info)
    }

    /// One field's text.
    pub fn field(&self, name: &str) -> Option<&str> {
        parse_fields(&self.info)
            .into_iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }

    /// A numeric field (decimal or 0x hex).
    pub fn field_i64(&self, name: &str) -> Option<i64> {
        let v = self.field(name)?.trim_matches('"');
        if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
            u64::from_str_radix(h, 16).ok().map(|x| x as i64)
        } else {
            v.parse().ok()
        }
    }
}

/// Splits `a=1 b=foo c=[x]` or `a = 1, b = "x"` into pairs. Values run to the
/// next key or separator; quoted strings and brackets are kept whole.
pub fn parse_fields(info: &str) -> Vec<(&str, &str)> {
    let b = info.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // key
        while i < b.len() && (b[i] == b' ' || b[i] == b',' || b[i] == b'{' || b[i] == b'}') {
            i += 1;
        }
        let ks = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
            i += 1;
        }
        let key = &info[ks..i];
        let mut j = i;
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        if key.is_empty() || j >= b.len() || b[j] != b'=' {
            // not a field: skip one token
            while i < b.len() && b[i] != b' ' {
                i += 1;
            }
            if i == ks {
                i += 1;
            }
            continue;
        }
        j += 1;
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        let vs = j;
        let mut depth = 0i32;
        let mut quoted = false;
        while j < b.len() {
            let c = b[j];
            if quoted {
                if c == b'\\' {
                    j += 1;
                } else if c == b'"' {
                    quoted = false;
                }
            } else if c == b'"' {
                quoted = true;
            } else if c == b'[' || c == b'{' || c == b'(' {
                depth += 1;
            } else if c == b']' || c == b'}' || c == b')' {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            } else if depth == 0 && (c == b' ' || c == b',') {
                break;
            }
            j += 1;
        }
        let j = j.min(b.len());
        out.push((key, &info[vs..j]));
        i = j;
    }
    out
}

fn parse_ts(s: &str) -> Option<u64> {
    let (secs, frac) = match s.split_once('.') {
        Some((a, b)) => (a, b),
        None => (s, ""),
    };
    let secs: u64 = secs.trim().parse().ok()?;
    if frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut ns: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    for _ in frac.len()..9 {
        ns *= 10;
    }
    secs.checked_mul(1_000_000_000)?.checked_add(ns)
}

/// Parses one line of ftrace text (tracefs `trace` or `trace-cmd report`).
/// `Ok(None)` for headers, comments and blank lines.
pub fn parse_ftrace_line(line: &str) -> std::result::Result<Option<TextEvent>, String> {
    let t = line.trim_end();
    if t.trim().is_empty()
        || t.trim_start().starts_with('#')
        || t.starts_with("cpus=")
        || t.starts_with("version = ")
    {
        return Ok(None);
    }
    // Find " [NNN] " — the CPU column.
    let b = t.as_bytes();
    let mut cpu_at = None;
    let mut i = 0;
    while i + 2 < b.len() {
        if b[i] == b'[' && (i == 0 || b[i - 1] == b' ') {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j > i + 1 && j < b.len() && b[j] == b']' && (j + 1 == b.len() || b[j + 1] == b' ') {
                cpu_at = Some((i, j));
                break;
            }
        }
        i += 1;
    }
    let (open, close) = cpu_at.ok_or("no [CPU] column")?;
    let cpu: u32 = t[open + 1..close].parse().map_err(|_| "bad CPU number")?;
    let mut head = t[..open].trim_end();
    // Optional "(  TGID)" column.
    if head.ends_with(')') {
        if let Some(p) = head.rfind('(') {
            head = head[..p].trim_end();
        }
    }
    // Optional "buffer: " prefix (trace-cmd, instances): the comm-pid is the last token.
    let (buffer, task) = match head.trim_start().rsplit_once(' ') {
        Some((pre, task)) if pre.trim_end().ends_with(':') => {
            (pre.trim().trim_end_matches(':').to_string(), task)
        }
        _ => (String::new(), head.trim_start()),
    };
    let (comm, pid) = task.rsplit_once('-').ok_or("no comm-pid")?;
    let pid: i32 = pid.parse().map_err(|_| format!("bad pid in {task:?}"))?;
    let rest = t[close + 1..].trim_start();
    // Optional flags column, then "TIMESTAMP: name: info".
    let (flags, rest) = match rest.split_once(' ') {
        // Timestamps end with ':'; the latency flags (`d..2.`) do not.
        Some((f, r)) if !f.ends_with(':') && f.len() <= 6 => (Some(f.to_string()), r.trim_start()),
        _ => (None, rest),
    };
    let (ts, rest) = rest.split_once(':').ok_or("no timestamp")?;
    let ts = parse_ts(ts.trim()).ok_or_else(|| format!("bad timestamp {ts:?}"))?;
    let rest = rest.trim_start();
    let (name, info) = match rest.split_once(':') {
        Some((n, i)) if !n.contains(' ') => (n, i.trim_start()),
        _ => (rest, ""),
    };
    // tracefs prints trace_marker writes as `tracing_mark_write: text`;
    // trace-cmd as `print: tracing_mark_write: text`. Use one name for both.
    let (name, info) = if name == "tracing_mark_write" {
        ("print".to_string(), format!("tracing_mark_write: {info}"))
    } else {
        (name.to_string(), info.to_string())
    };
    Ok(Some(TextEvent {
        ts,
        cpu,
        pid,
        comm: comm.to_string(),
        buffer,
        flags,
        system: None,
        name,
        info,
        lost_before: None,
    }))
}

/// Parses `CPU:N [LOST x EVENTS]` / `CPU:N [x EVENTS DROPPED]` lines.
fn parse_lost(line: &str) -> Option<(u32, u64)> {
    let t = line.trim();
    let rest = t.strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    let cpu = cpu.trim().parse().ok()?;
    let n = rest
        .split(|c: char| !c.is_ascii_digit())
        .find(|s| !s.is_empty())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (rest.contains("LOST") || rest.contains("DROPPED")).then_some((cpu, n))
}

/// Reads ftrace text from a reader; `path` only names the source in errors.
pub fn read_ftrace_text(r: impl BufRead, path: &Path) -> Result<Vec<TextEvent>> {
    let mut out: Vec<TextEvent> = Vec::new();
    let mut lost: std::collections::HashMap<u32, u64> = Default::default();
    for (n, line) in r.split(b'\n').enumerate() {
        let line = line.map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let line = String::from_utf8_lossy(&line);
        if let Some((cpu, k)) = parse_lost(&line) {
            *lost.entry(cpu).or_default() += k;
            continue;
        }
        // Continuation lines (stack traces) belong to the previous event.
        if line.starts_with(' ') && line.trim_start().starts_with("=>") {
            if let Some(prev) = out.last_mut() {
                prev.info.push('\n');
                prev.info.push_str(line.trim_end());
                continue;
            }
        }
        match parse_ftrace_line(&line) {
            Ok(Some(mut ev)) => {
                ev.lost_before = lost.remove(&ev.cpu);
                out.push(ev);
            }
            Ok(None) => {}
            Err(msg) => {
                return Err(Error::Text {
                    path: path.to_path_buf(),
                    line: n + 1,
                    msg: format!("{msg}: {:?}", line.chars().take(120).collect::<String>()),
                })
            }
        }
    }
    Ok(out)
}

/// Reads an ftrace text file.
pub fn read_ftrace_text_file(path: &Path) -> Result<Vec<TextEvent>> {
    let f = std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    read_ftrace_text(std::io::BufReader::new(f), path)
}

/// Whether `path` looks like an LTTng CTF trace (a directory with a `metadata` file).
pub fn is_ctf_dir(path: &Path) -> bool {
    path.is_dir()
        && (path.join("metadata").is_file()
            || find_ctf_roots(path).map(|v| !v.is_empty()).unwrap_or(false))
}

fn is_ctf_stream(p: &Path) -> bool {
    let mut head = [0u8; 4];
    match std::fs::File::open(p).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head)) {
        Ok(()) => head == [0xc1, 0xfc, 0x1f, 0xc1] || head == [0xc1, 0x1f, 0xfc, 0xc1],
        Err(_) => false,
    }
}

fn find_ctf_roots(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![(path.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        if d.join("metadata").is_file() {
            out.push(d.clone());
            continue;
        }
        if depth < 6 {
            for e in std::fs::read_dir(&d)? {
                let e = e?;
                if e.file_type()?.is_dir() {
                    stack.push((e.path(), depth + 1));
                }
            }
        }
    }
    Ok(out)
}

/// Parses one line of `babeltrace2 --clock-seconds --no-delta` output.
pub fn parse_babeltrace_line(line: &str) -> std::result::Result<TextEvent, String> {
    let t = line.trim_end();
    let rest = t.strip_prefix('[').ok_or("no [timestamp]")?;
    let (ts, rest) = rest.split_once(']').ok_or("no [timestamp]")?;
    let ts = parse_ts(ts).ok_or_else(|| format!("bad timestamp {ts:?}"))?;
    let rest = rest.trim_start();
    // "[host ]name: { ctx }, { fields }" — the name is the token before the first ": " or ":" at end.
    let name_end = rest
        .find(": {")
        .or_else(|| rest.strip_suffix(':').map(|r| r.len()))
        .ok_or("no event name")?;
    let before = &rest[..name_end];
    let full = before.rsplit(' ').next().unwrap_or(before);
    let info = rest[name_end + 1..].trim_start();
    let (system, name) = match full.split_once(':') {
        Some((s, n)) => (Some(s.to_string()), n.to_string()),
        None => (None, full.to_string()),
    };
    // Scopes are `{ ... }, { ... }`: all but the last are context (cpu_id,
    // and vtid/procname when recorded); the last is the payload, whose
    // tid/comm name the event's subject, not the running task.
    let scopes = top_level_groups(info);
    let context = if scopes.len() > 1 {
        &scopes[..scopes.len() - 1]
    } else {
        &[][..]
    };
    let fields: Vec<(&str, &str)> = context.iter().flat_map(|s| parse_fields(s)).collect();
    let get = |k: &str| fields.iter().find(|(kk, _)| *kk == k).map(|(_, v)| *v);
    let cpu = get("cpu_id")
        .and_then(|v| v.parse().ok())
        .unwrap_or(u32::MAX);
    let pid = get("vtid")
        .or_else(|| get("tid"))
        .or_else(|| get("pid"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1);
    let comm = get("procname")
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| "<...>".into());
    Ok(TextEvent {
        ts,
        cpu,
        pid,
        comm,
        buffer: String::new(),
        flags: None,
        system,
        name,
        info: info.to_string(),
        lost_before: None,
    })
}

/// Top-level `{ ... }` groups of a babeltrace2 line.
fn top_level_groups(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let (mut depth, mut start, mut quoted) = (0i32, 0usize, false);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if quoted {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                quoted = false;
            }
        } else if c == b'"' {
            quoted = true;
        } else if c == b'{' {
            if depth == 0 {
                start = i;
            }
            depth += 1;
        } else if c == b'}' {
            depth -= 1;
            if depth == 0 {
                out.push(&s[start..=i]);
            }
        }
        i += 1;
    }
    out
}

/// Reads an LTTng CTF trace by running `babeltrace2` and parsing its text.
///
/// Files in the directory that are neither CTF streams nor `metadata`/`index`
/// (a LICENSE, a README) are hidden from babeltrace2, which would otherwise
/// refuse the whole directory.
pub fn read_ctf(path: &Path) -> Result<Vec<TextEvent>> {
    let mut out = Vec::new();
    for_each_ctf_event(path, |ev| {
        out.push(ev);
        Ok(())
    })?;
    Ok(out)
}

/// Like [`read_ctf`] but streams events to `f` (bounded memory).
pub fn for_each_ctf_event(path: &Path, mut f: impl FnMut(TextEvent) -> Result<()>) -> Result<()> {
    let roots = find_ctf_roots(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if roots.is_empty() {
        return Err(Error::Tool {
            program: "babeltrace2",
            msg: format!(
                "{}: no CTF trace (no `metadata` file) found",
                path.display()
            ),
        });
    }
    // A clean view of each trace: symlinks to metadata, index and stream files.
    let view =
        std::env::temp_dir().join(format!("latlab-ctf-{}-{}", std::process::id(), roots.len()));
    let _ = std::fs::remove_dir_all(&view);
    let io = |source| Error::Io {
        path: view.clone(),
        source,
    };
    let mut inputs = Vec::new();
    for (k, root) in roots.iter().enumerate() {
        let d = view.join(k.to_string());
        std::fs::create_dir_all(&d).map_err(io)?;
        for e in std::fs::read_dir(root).map_err(io)? {
            let e = e.map_err(io)?;
            let name = e.file_name();
            let p = e.path();
            let keep = name == "metadata" || name == "index" || (p.is_file() && is_ctf_stream(&p));
            if keep {
                let target = std::fs::canonicalize(&p).map_err(io)?;
                std::os::unix::fs::symlink(target, d.join(&name)).map_err(io)?;
            }
        }
        inputs.push(d);
    }
    let result = run_babeltrace(&inputs, &mut f);
    let _ = std::fs::remove_dir_all(&view);
    result
}

fn run_babeltrace(inputs: &[PathBuf], f: &mut impl FnMut(TextEvent) -> Result<()>) -> Result<()> {
    use std::process::{Command, Stdio};
    let mut child = Command::new("babeltrace2")
        .arg("--clock-seconds")
        .arg("--no-delta")
        .args(inputs)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::Tool {
            program: "babeltrace2",
            msg: if e.kind() == std::io::ErrorKind::NotFound {
                "not installed; reading LTTng CTF traces needs it: install the Debian/Ubuntu package `babeltrace2` (apt-get install babeltrace2)".into()
            } else {
                format!("cannot run: {e}")
            },
        })?;
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut s);
        s
    });
    let reader = std::io::BufReader::with_capacity(1 << 16, stdout);
    let mut first_err = None;
    for (n, line) in reader.lines().enumerate() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                first_err = Some(Error::Tool {
                    program: "babeltrace2",
                    msg: format!("reading its output: {e}"),
                });
                break;
            }
        };
        match parse_babeltrace_line(&line) {
            Ok(ev) => {
                if let Err(e) = f(ev) {
                    first_err = Some(e);
                    break;
                }
            }
            Err(msg) => {
                first_err = Some(Error::Tool {
                    program: "babeltrace2",
                    msg: format!(
                        "output line {}: {msg}: {:?}",
                        n + 1,
                        line.chars().take(120).collect::<String>()
                    ),
                });
                break;
            }
        }
    }
    if first_err.is_some() {
        let _ = child.kill();
    }
    let status = child.wait().map_err(|e| Error::Tool {
        program: "babeltrace2",
        msg: format!("wait: {e}"),
    })?;
    let stderr = err_thread.join().unwrap_or_default();
    if let Some(e) = first_err {
        return Err(e);
    }
    if !status.success() {
        let last: Vec<&str> = stderr.lines().rev().take(3).collect();
        return Err(Error::Tool {
            program: "babeltrace2",
            msg: format!(
                "failed ({status}): {}",
                last.into_iter().rev().collect::<Vec<_>>().join(" | ")
            ),
        });
    }
    Ok(())
}

/// Renders a text event in `trace-cmd report` layout.
pub fn render_line(ev: &TextEvent, out: &mut Vec<u8>) {
    use std::io::Write;
    if !ev.buffer.is_empty() {
        let _ = write!(out, "{}: ", ev.buffer);
    }
    let us = ev.ts.saturating_add(500) / 1000;
    let cpu: Cow<str> = if ev.cpu == u32::MAX {
        "???".into()
    } else {
        format!("{:03}", ev.cpu).into()
    };
    let name = &ev.name;
    let pid: Cow<str> = if ev.pid < 0 {
        "?".into()
    } else {
        ev.pid.to_string().into()
    };
    let _ = write!(
        out,
        "{:>16}-{:<5} [{cpu}] {:5}.{:06}: {name}:",
        ev.comm,
        pid,
        us / 1_000_000,
        us % 1_000_000
    );
    out.extend(std::iter::repeat_n(
        b' ',
        20usize.saturating_sub(name.len()) + 1,
    ));
    out.extend_from_slice(ev.info.as_bytes());
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracefs_trace_lines_with_flags_and_tgid() {
        let e = parse_ftrace_line("          <idle>-0       [001] d..2.   123.456789: sched_switch: prev_comm=swapper/1 prev_pid=0 ==> next_comm=a b next_pid=7")
            .unwrap()
            .unwrap();
        assert_eq!(
            (e.comm.as_str(), e.pid, e.cpu, e.ts),
            ("<idle>", 0, 1, 123_456_789_000)
        );
        assert_eq!(e.flags.as_deref(), Some("d..2."));
        assert_eq!(e.name, "sched_switch");
        assert_eq!(e.field("prev_pid"), Some("0"));
        assert_eq!(e.field_i64("next_pid"), Some(7));
        let e = parse_ftrace_line("   kworker/u4:1-55      (     55) [000] .....  9.000001: print: tracing_mark_write: hi").unwrap().unwrap();
        assert_eq!((e.comm.as_str(), e.pid), ("kworker/u4:1", 55));
        assert_eq!(e.info, "tracing_mark_write: hi");
        assert_eq!(e.name, "print");
        let e = parse_ftrace_line("  a-1 [000] ..... 9.000001: tracing_mark_write: hi")
            .unwrap()
            .unwrap();
        assert_eq!(
            (e.name.as_str(), e.info.as_str()),
            ("print", "tracing_mark_write: hi")
        );
        assert!(parse_ftrace_line("# tracer: nop").unwrap().is_none());
        assert!(parse_ftrace_line("garbage").is_err());
    }

    #[test]
    fn trace_cmd_report_lines_with_buffer_prefix() {
        let e = parse_ftrace_line("latlab-fixture-6226:  memfd:sealed-91-2736  [001]   343.214161: hrtimer_start:        hrtimer=0xffffc900027ffaf8 function=hrtimer_wakeup/0x0")
            .unwrap()
            .unwrap();
        assert_eq!(e.buffer, "latlab-fixture-6226");
        assert_eq!((e.comm.as_str(), e.pid), ("memfd:sealed-91", 2736));
        assert_eq!(e.flags, None);
        assert_eq!(e.field("function"), Some("hrtimer_wakeup/0x0"));
        let mut out = Vec::new();
        render_line(&e, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "latlab-fixture-6226:  memfd:sealed-91-2736  [001]   343.214161: hrtimer_start:        hrtimer=0xffffc900027ffaf8 function=hrtimer_wakeup/0x0\n"
        );
    }

    #[test]
    fn babeltrace_lines() {
        let e = parse_babeltrace_line("[1412670961.211281739] lager sched_migrate_task: { cpu_id = 1 }, { comm = \"lttng-consumerd\", tid = 496, prio = 20, orig_cpu = 1, dest_cpu = 2 }").unwrap();
        assert_eq!(e.ts, 1_412_670_961_211_281_739);
        // tid/comm in the payload name the migrated task, not the running one.
        assert_eq!((e.cpu, e.pid, e.comm.as_str()), (1, -1, "<...>"));
        assert_eq!(e.name, "sched_migrate_task");
        assert_eq!(e.field_i64("dest_cpu"), Some(2));
        let e = parse_babeltrace_line(
            "[1.000000001] kernel:irq_handler_entry: { cpu_id = 0 }, { irq = 32, name = \"a, b\" }",
        )
        .unwrap();
        assert_eq!(e.system.as_deref(), Some("kernel"));
        assert_eq!(e.field("name"), Some("\"a, b\""));
        assert!(parse_babeltrace_line("nope").is_err());
        let e = parse_babeltrace_line(
            "[2.5] x: { cpu_id = 3 }, { vtid = 9, procname = \"rt\" }, { v = 1 }",
        )
        .unwrap();
        assert_eq!(
            (e.cpu, e.pid, e.comm.as_str(), e.ts),
            (3, 9, "rt", 2_500_000_000)
        );
    }

    #[test]
    fn lost_lines_attach_to_the_next_event() {
        let text = "cpus=2\nCPU:1 [LOST 5 EVENTS]\n  a-1 [001] 1.000000: x: y=1\n  a-1 [000] 1.000001: x: y=2\n";
        let v = read_ftrace_text(text.as_bytes(), Path::new("t")).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].lost_before, Some(5));
        assert_eq!(v[1].lost_before, None);
        let bad = read_ftrace_text(
            "  a-1 [001] 1.0: x: y\nbad line\n".as_bytes(),
            Path::new("t"),
        )
        .unwrap_err();
        assert!(bad.to_string().contains("t:2"), "{bad}");
    }
}
