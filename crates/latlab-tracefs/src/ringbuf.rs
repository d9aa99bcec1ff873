//! How big the per-CPU ring buffers of a capture are, and why.
//!
//! The kernel's default (1408 KiB per CPU on most kernels) holds about 50 ms
//! of a memory-heavy load's events: a reader thread that waits a little
//! longer than that for a CPU on a loaded machine loses events. A streaming
//! capture therefore sizes the buffers from the memory the machine has
//! available ([`auto_kb`]), and its readers double a CPU's buffer when a
//! drain finds it more than half full ([`grow_kb`]), within the same budget.

/// The share of `MemAvailable` all ring buffers together may take.
pub const MEMORY_SHARE: u64 = 16;
/// The largest automatic starting size per CPU, in KiB (32 MiB: at 100 MB/s
/// of events on one CPU, a third of a second without a drain).
pub const MAX_AUTO_KB_PER_CPU: u64 = 32 * 1024;
/// The most an automatic buffer grows to per CPU, in KiB.
pub const MAX_GROWN_KB_PER_CPU: u64 = 256 * 1024;
/// The smallest automatic size per CPU, in KiB.
pub const MIN_AUTO_KB_PER_CPU: u64 = 1408;

/// How the size was chosen.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Sizing {
    /// Given by the user (`--buffer-size`, `--trace-buffer-kb`).
    Given,
    /// From the available memory (see [`auto_kb`]).
    #[default]
    Auto,
    /// The kernel's, left as it was (flight-recorder mode).
    Kernel,
}

/// The ring buffers of a capture.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct RingBuffer {
    /// KiB per CPU at the start.
    pub kb_per_cpu: u64,
    /// CPUs with a buffer.
    pub cpus: usize,
    /// How the size was chosen.
    pub sizing: Sizing,
    /// The most one CPU's buffer may grow to, in KiB (equal to `kb_per_cpu`
    /// when it may not grow).
    pub max_kb_per_cpu: u64,
    /// KiB of all buffers at the end (after any growth).
    pub total_kb: u64,
    /// The figures above as one line, e.g. `64 MiB per CPU x 2 CPUs = 128 MiB
    /// (auto: ...)`.
    pub summary: String,
}

impl RingBuffer {
    /// Describes a choice (before any growth).
    pub fn new(
        kb_per_cpu: u64,
        cpus: usize,
        sizing: Sizing,
        max_kb_per_cpu: u64,
        mem_available_kb: u64,
    ) -> Self {
        let mut r = RingBuffer {
            kb_per_cpu,
            cpus,
            sizing,
            max_kb_per_cpu: max_kb_per_cpu.max(kb_per_cpu),
            total_kb: kb_per_cpu * cpus as u64,
            summary: String::new(),
        };
        r.summary = r.describe(mem_available_kb, &[]);
        r
    }

    /// Re-states the summary with the per-CPU sizes at the end (CPU, KiB).
    pub fn finish(&mut self, final_kb: &[(usize, u64)], mem_available_kb: u64) {
        if !final_kb.is_empty() {
            self.total_kb = final_kb.iter().map(|c| c.1).sum();
        }
        self.summary = self.describe(mem_available_kb, final_kb);
    }

    fn describe(&self, mem_available_kb: u64, final_kb: &[(usize, u64)]) -> String {
        let why = match self.sizing {
            Sizing::Given => "as given".to_string(),
            Sizing::Kernel => "the kernel's".to_string(),
            Sizing::Auto => format!(
                "auto: 1/{MEMORY_SHARE} of the {} available, doubled up to {} per CPU \
                 while a CPU's buffer fills; --buffer-size/--trace-buffer-kb set it",
                kib(mem_available_kb),
                kib(self.max_kb_per_cpu)
            ),
        };
        let grown: Vec<String> = final_kb
            .iter()
            .filter(|(_, kb)| *kb != self.kb_per_cpu)
            .map(|(cpu, kb)| format!("CPU {cpu} grew to {}", kib(*kb)))
            .collect();
        let grown = if grown.is_empty() {
            String::new()
        } else {
            format!(", {}", grown.join(", "))
        };
        format!(
            "{} per CPU x {} CPU{} = {}{grown} ({why})",
            kib(self.kb_per_cpu),
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
            kib(self.total_kb)
        )
    }
}

/// `1408 KiB`, `64 MiB`, `1.5 GiB`.
pub fn kib(kb: u64) -> String {
    if kb >= 1 << 20 {
        format!("{:.1} GiB", kb as f64 / f64::from(1 << 20))
    } else if kb >= 1 << 10 && kb % 1024 == 0 {
        format!("{} MiB", kb >> 10)
    } else if kb >= 1 << 10 {
        format!("{:.1} MiB", kb as f64 / 1024.0)
    } else {
        format!("{kb} KiB")
    }
}

/// The automatic size per CPU in KiB: all buffers together take at most
/// 1/[`MEMORY_SHARE`] of `mem_available_kb`, one CPU at most
/// [`MAX_AUTO_KB_PER_CPU`], and never less than the kernel's current size
/// or [`MIN_AUTO_KB_PER_CPU`]; a multiple of `page_kb`.
pub fn auto_kb(mem_available_kb: u64, cpus: usize, kernel_kb: u64, page_kb: u64) -> u64 {
    auto_bound(
        mem_available_kb,
        cpus,
        kernel_kb,
        page_kb,
        MAX_AUTO_KB_PER_CPU,
    )
}

/// The most an automatic buffer may grow to per CPU in KiB: the same memory
/// budget as [`auto_kb`], at most [`MAX_GROWN_KB_PER_CPU`].
pub fn auto_max_kb(mem_available_kb: u64, cpus: usize, kernel_kb: u64, page_kb: u64) -> u64 {
    auto_bound(
        mem_available_kb,
        cpus,
        kernel_kb,
        page_kb,
        MAX_GROWN_KB_PER_CPU,
    )
}

fn auto_bound(mem_available_kb: u64, cpus: usize, kernel_kb: u64, page_kb: u64, cap: u64) -> u64 {
    let cpus = cpus.max(1) as u64;
    let page_kb = page_kb.max(1);
    let budget = mem_available_kb / MEMORY_SHARE / cpus;
    let floor = kernel_kb.max(MIN_AUTO_KB_PER_CPU);
    let kb = budget.min(cap).max(floor);
    kb / page_kb * page_kb
}

/// The size to grow a CPU's buffer of `kb` KiB to after a drain moved
/// `moved_kb` KiB out of it: double when the drain found it more than half
/// full, within `max_kb`; `None` to leave it.
pub fn grow_kb(kb: u64, moved_kb: u64, max_kb: u64) -> Option<u64> {
    (moved_kb * 2 > kb && kb < max_kb).then(|| (kb * 2).min(max_kb))
}

/// `MemAvailable` from `/proc/meminfo`, in KiB.
pub fn mem_available_kb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    parse_mem_available(&text)
}

fn parse_mem_available(meminfo: &str) -> Option<u64> {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// The size `buffer_size_kb` reports: `1408`, or `7 (expanded: 1408)` before
/// the buffer was first used (then the expanded size is what it will be).
pub fn parse_buffer_size_kb(text: &str) -> Option<u64> {
    let first: u64 = text.split_whitespace().next()?.parse().ok()?;
    let expanded = text
        .split_once("expanded:")
        .and_then(|(_, r)| r.trim().trim_end_matches(')').trim().parse::<u64>().ok());
    Some(expanded.map_or(first, |e| e.max(first)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_size_follows_memory_within_bounds() {
        // 22 GiB available, 2 CPUs: capped at 32 MiB per CPU, may grow to 256 MiB.
        assert_eq!(auto_kb(22 << 20, 2, 1408, 4), 32 * 1024);
        assert_eq!(auto_max_kb(22 << 20, 2, 1408, 4), 256 * 1024);
        // 2 GiB, 4 CPUs: starts at 32 MiB, grows to the 32 MiB budget only.
        assert_eq!(auto_max_kb(2 << 20, 4, 1408, 4), 32 * 1024);
        // A 512 MiB board with 4 CPUs: 1/16 of 400 MiB over 4 CPUs = 6400 KiB.
        assert_eq!(auto_kb(400 << 10, 4, 1408, 4), 6400);
        // A tiny board: never below the kernel's size.
        assert_eq!(auto_kb(32 << 10, 4, 1408, 4), 1408);
        assert_eq!(auto_kb(32 << 10, 4, 4096, 4), 4096);
        // Rounded to whole pages (16 KiB pages).
        assert_eq!(auto_kb(1_000_000, 3, 1408, 16) % 16, 0);
        // No CPU count: treated as one.
        assert_eq!(auto_kb(1 << 20, 0, 1408, 4), 32 * 1024);
    }

    #[test]
    fn growth_doubles_a_buffer_found_half_full() {
        assert_eq!(grow_kb(1024, 600, 4096), Some(2048));
        assert_eq!(grow_kb(1024, 500, 4096), None);
        assert_eq!(grow_kb(3000, 2000, 4096), Some(4096));
        assert_eq!(grow_kb(4096, 4096, 4096), None);
    }

    #[test]
    fn meminfo_and_buffer_size_parse() {
        let m = "MemTotal:       24576000 kB\nMemFree:  100 kB\nMemAvailable:   23000000 kB\n";
        assert_eq!(parse_mem_available(m), Some(23_000_000));
        assert_eq!(parse_mem_available("MemTotal: 5 kB\n"), None);
        assert_eq!(parse_buffer_size_kb("1408\n"), Some(1408));
        assert_eq!(parse_buffer_size_kb("7 (expanded: 1408)\n"), Some(1408));
        assert_eq!(parse_buffer_size_kb("X"), None);
    }

    #[test]
    fn summary_states_size_total_and_growth() {
        let mut r = RingBuffer::new(65536, 2, Sizing::Auto, 262144, 22 << 20);
        assert!(
            r.summary
                .starts_with("64 MiB per CPU x 2 CPUs = 128 MiB (auto: 1/16 of the 22.0 GiB"),
            "{}",
            r.summary
        );
        r.finish(&[(0, 65536), (1, 131072)], 22 << 20);
        assert_eq!(r.total_kb, 196608);
        assert!(
            r.summary.contains("= 192 MiB, CPU 1 grew to 128 MiB"),
            "{}",
            r.summary
        );
        let g = RingBuffer::new(1408, 1, Sizing::Given, 1408, 0);
        assert_eq!(g.summary, "1.4 MiB per CPU x 1 CPU = 1.4 MiB (as given)");
        assert_eq!(kib(512), "512 KiB");
    }
}
