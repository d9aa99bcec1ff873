//! The causes of late wake-ups as the short summaries list them (`latlab run
//! --explain`, `latlab scenario characterize`): the top few, each fix once.

use std::fmt::Write as _;

use latlab_explain::CauseRow;

/// One cause as the short summaries list it (`latlab run --explain`,
/// `latlab scenario characterize`).
#[derive(Debug, Clone, Copy)]
pub struct CauseSummary<'a> {
    /// What happened.
    pub description: &'a str,
    /// Its share of all late-window latency (0-1).
    pub share: f64,
    /// Late windows it took part in.
    pub late_windows: u64,
    /// What to do about it: fixes separated by `; `.
    pub recommendation: &'a str,
    /// The command name of the task the cause names (`ld-io0` of
    /// `ld-io0:812`, `rustc` of `rustc (10 pids)`), which its fix names too:
    /// two causes differing only by it have the same fix.
    pub task: Option<&'a str>,
}

impl<'a> CauseSummary<'a> {
    /// The summary of a ranked cause of an explanation.
    pub fn of(row: &'a CauseRow) -> CauseSummary<'a> {
        CauseSummary {
            description: &row.description,
            share: row.share,
            late_windows: row.late_windows,
            recommendation: &row.recommendation,
            task: row.cause.task(),
        }
    }
}

/// `text` with each mention of the task `comm` (as a cause names it: `comm`,
/// `comm:PID` or `comm (N pids)`) replaced by one placeholder: the words of
/// a fix apart from the task it is about.
fn without_task(text: &str, comm: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-');
    let digits = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(comm) {
        let after = &rest[at + comm.len()..];
        // Only the whole name: not `dd` in `add`.
        if word(rest[..at].chars().next_back()) || word(after.chars().next()) {
            out.push_str(&rest[..at + comm.len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..at]);
        out.push('\u{0}');
        rest = after;
        if let Some(tail) = rest.strip_prefix(':') {
            let n = digits(tail);
            if n > 0 {
                rest = &tail[n..];
            }
        } else if let Some(tail) = rest.strip_prefix(" (") {
            let n = digits(tail);
            if let Some(tail) = tail[n..].strip_prefix(" pids)").filter(|_| n > 0) {
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The line under the causes that names the next step: `latlab tune` for
/// the measured CPUs and load applies the fixes the causes call for, each
/// measured against the same load, and undoes what does not help. Without
/// `--cpus` (tune's default, the last CPU) when the CPUs include CPU 0,
/// which tune keeps for housekeeping.
pub fn tune_hint(cpus: &[usize], load: &str) -> String {
    let cpus = if cpus.is_empty() || cpus.contains(&0) {
        String::new()
    } else {
        format!(" --cpus {}", super::record::cpu_list(cpus))
    };
    let load = if load.trim().is_empty() {
        "none"
    } else {
        load.trim()
    };
    format!(
        "  To apply these fixes, each measured against the same load and undone unless it \
         helps: sudo latlab tune{cpus} --load {load} (--plan: the plan, nothing changed)\n"
    )
}

/// The line under `latlab explain`'s causes that names the next step: the
/// trace may come from another machine and says nothing of its load, so
/// the command is for the machine that recorded it, the load its to say.
/// `cpus`: where the analysed task's periods ran (no `--cpus` with CPU 0,
/// as [`tune_hint`]).
pub fn tune_hint_for_trace(cpus: &[usize]) -> String {
    let cpus = if cpus.is_empty() || cpus.contains(&0) {
        String::new()
    } else {
        format!(" --cpus {}", super::record::cpu_list(cpus))
    };
    format!(
        "\nNext, on the machine that recorded this trace: sudo latlab tune{cpus} --load SPEC \
         (SPEC: the load it ran under, as `latlab run --load`; --plan: the plan, nothing \
         changed) applies the fixes of the causes above, each measured against that load, and \
         undoes what does not help.\n"
    )
}

/// The causes, ranked, with their fixes, each fix given once: a fix is the
/// recommendation's `; `-separated parts, and a part an earlier cause
/// already gave (the same words but for the task it names) is not
/// repeated: the cause says `as for #1` instead. Two lines per cause.
pub fn top_causes(causes: &[CauseSummary<'_>]) -> String {
    let mut o = String::new();
    // Each fix part given so far (the task replaced by a placeholder) and
    // the number of the cause that gave it.
    let mut given: Vec<(String, usize)> = Vec::new();
    for (i, cause) in causes.iter().enumerate() {
        let number = i + 1;
        let mut new_parts: Vec<&str> = Vec::new();
        let mut as_for: Vec<usize> = Vec::new();
        for part in cause
            .recommendation
            .split("; ")
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let key = match cause.task {
                Some(task) if !task.is_empty() => without_task(part, task),
                _ => part.to_string(),
            };
            match given.iter().find(|(k, _)| *k == key) {
                Some(&(_, earlier)) => {
                    if !as_for.contains(&earlier) {
                        as_for.push(earlier);
                    }
                }
                None => {
                    given.push((key, number));
                    new_parts.push(part);
                }
            }
        }
        as_for.sort_unstable();
        let earlier = as_for
            .iter()
            .map(|n| format!("#{n}"))
            .collect::<Vec<_>>()
            .join(" and ");
        let fix = match (new_parts.is_empty(), as_for.is_empty()) {
            (true, true) => "(no fix known)".to_string(),
            (true, false) => format!("as for {earlier}"),
            (false, true) => new_parts.join("; "),
            (false, false) => format!("{}; and as for {earlier}", new_parts.join("; ")),
        };
        let _ = writeln!(
            o,
            "  {number}. {} ({:.0} % of the late latency, {} late window{})\n     -> {fix}",
            cause.description,
            cause.share * 100.0,
            cause.late_windows,
            if cause.late_windows == 1 { "" } else { "s" }
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tune_line_names_the_measured_cpus_unless_cpu_0_is_among_them() {
        assert!(tune_hint(&[1, 3], "full").contains("sudo latlab tune --cpus 1,3 --load full"));
        // tune keeps CPU 0 for housekeeping: its default CPU instead.
        assert!(tune_hint(&[0, 1], "cpu:2").contains("sudo latlab tune --load cpu:2 "));
        assert!(tune_hint(&[2], "").contains("sudo latlab tune --cpus 2 --load none "));
        assert!(tune_hint_for_trace(&[1]).contains("sudo latlab tune --cpus 1 --load SPEC "));
        assert!(tune_hint_for_trace(&[0, 1]).contains("sudo latlab tune --load SPEC "));
    }

    #[test]
    fn a_task_is_named_whole_with_its_pid_or_count() {
        assert_eq!(
            without_task("dd:812 ran; add dd (3 pids) and dd", "dd"),
            "\u{0} ran; add \u{0} and \u{0}"
        );
        assert_eq!(without_task("ld-io0:7 ran", "ld-io"), "ld-io0:7 ran");
    }

    #[test]
    fn top_causes_give_each_fix_once() {
        let cause = |description, recommendation, task| CauseSummary {
            description,
            share: 0.2,
            late_windows: 3,
            recommendation,
            task,
        };
        let causes = [
            cause(
                "a:1 held the CPU",
                "a:1 ran long: boot with preempt=full; it allocated pages: mlock",
                Some("a"),
            ),
            cause(
                "b (12 pids) held the CPU",
                "b (12 pids) ran long: boot with preempt=full; it allocated pages: mlock",
                Some("b"),
            ),
            cause(
                "softirq NET_RX",
                "threaded NAPI; it allocated pages: mlock",
                None,
            ),
            cause("hrtimer interrupt", "", None),
        ];
        let text = top_causes(&causes);
        assert_eq!(
            text,
            "  1. a:1 held the CPU (20 % of the late latency, 3 late windows)\n     \
             -> a:1 ran long: boot with preempt=full; it allocated pages: mlock\n  \
             2. b (12 pids) held the CPU (20 % of the late latency, 3 late windows)\n     \
             -> as for #1\n  \
             3. softirq NET_RX (20 % of the late latency, 3 late windows)\n     \
             -> threaded NAPI; and as for #1\n  \
             4. hrtimer interrupt (20 % of the late latency, 3 late windows)\n     \
             -> (no fix known)\n"
        );
    }
}
