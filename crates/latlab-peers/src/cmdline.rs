//! The settings an rt-tests command line states: a small getopt-like scan
//! of the options that matter for comparing runs (interval, priority,
//! policy, mlock, duration, histogram size, nanoseconds). Anything else on
//! the line is left alone; the whole line is kept in the document.

use crate::document::PeerSettings;

/// What a command line says, beyond [`PeerSettings`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandLine {
    /// The settings it states.
    pub settings: PeerSettings,
    /// cyclictest `-h N`/`-H N`: histogram rows (µs or, with `-N`, ns);
    /// oslat `-b N`: its buckets, the last holding the overflows.
    pub histogram_rows: Option<u64>,
    /// cyclictest `-N`: figures in nanoseconds.
    pub nanoseconds: bool,
}

/// One option of a tool: short letter, long name, whether it takes a value.
struct Opt {
    short: char,
    long: &'static str,
    value: Value,
}

#[derive(Clone, Copy, PartialEq)]
enum Value {
    None,
    Required,
    /// Only attached (`-t4`, `--threads=4`), as getopt's `::`.
    Optional,
}

const fn opt(short: char, long: &'static str, value: Value) -> Opt {
    Opt { short, long, value }
}

/// cyclictest's options that take a value (the others are flags).
const CYCLICTEST: &[Opt] = &[
    opt('a', "affinity", Value::Optional),
    opt('A', "aligned", Value::Required),
    opt('b', "breaktrace", Value::Required),
    opt('c', "clock", Value::Required),
    opt('d', "distance", Value::Required),
    opt('D', "duration", Value::Required),
    opt('F', "fifo", Value::Required),
    opt('h', "histogram", Value::Required),
    opt('H', "histofall", Value::Required),
    opt('i', "interval", Value::Required),
    opt('l', "loops", Value::Required),
    opt('m', "mlockall", Value::None),
    opt('N', "nsecs", Value::None),
    opt('o', "oscope", Value::Required),
    opt('p', "priority", Value::Required),
    opt('t', "threads", Value::Optional),
];

/// oslat's options that take a value.
const OSLAT: &[Opt] = &[
    opt('b', "bucket-size", Value::Required),
    opt('c', "cpu-list", Value::Required),
    opt('C', "cpu-main-thread", Value::Required),
    opt('D', "duration", Value::Required),
    opt('f', "rtprio", Value::Required),
    opt('m', "workload-mem", Value::Required),
    opt('T', "trace-threshold", Value::Required),
    opt('w', "workload", Value::Required),
];

/// cyclicdeadline's.
const CYCLICDEADLINE: &[Opt] = &[
    opt('a', "affinity", Value::Optional),
    opt('b', "breaktrace", Value::Required),
    opt('D', "duration", Value::Required),
    opt('i', "interval", Value::Required),
    opt('s', "step", Value::Required),
    opt('t', "threads", Value::Required),
];

/// signaltest's, and the IPC tests' (pmqtest, ptsematest, sigwaittest,
/// svsematest), which share these letters.
const OTHERS: &[Opt] = &[
    opt('a', "affinity", Value::Optional),
    opt('b', "breaktrace", Value::Required),
    opt('d', "distance", Value::Required),
    opt('D', "duration", Value::Required),
    opt('i', "interval", Value::Required),
    opt('l', "loops", Value::Required),
    opt('m', "mlockall", Value::None),
    opt('p', "prio", Value::Required),
    opt('t', "threads", Value::Optional),
];

/// The settings of `command_line`, as the tool `tool` reads it.
pub fn parse(tool: &str, command_line: &str) -> CommandLine {
    let table = match tool {
        "cyclictest" => CYCLICTEST,
        "oslat" => OSLAT,
        "cyclicdeadline" => CYCLICDEADLINE,
        "signaltest" | "pmqtest" | "ptsematest" | "sigwaittest" | "svsematest" => OTHERS,
        _ => return CommandLine::default(),
    };
    let options = scan(table, command_line);
    let get = |letter: char| {
        options
            .iter()
            .rev()
            .find(|(c, _)| *c == letter)
            .map(|(_, v)| v.as_deref())
    };
    let number = |letter: char| get(letter).flatten().and_then(|v| v.parse::<u64>().ok());
    let mut out = CommandLine::default();
    let s = &mut out.settings;
    match tool {
        "cyclictest" => {
            s.interval_ns = number('i').map(|us| us.saturating_mul(1000));
            s.priority = number('p').and_then(|p| i32::try_from(p).ok());
            s.policy = policy(command_line).or_else(|| s.priority.map(|_| "fifo".into()));
            s.mlocked = Some(get('m').is_some());
            out.histogram_rows = number('H').or(number('h'));
            out.nanoseconds = get('N').is_some();
        }
        "cyclicdeadline" => {
            s.interval_ns = number('i').map(|us| us.saturating_mul(1000));
            s.policy = Some("deadline".into());
        }
        "oslat" => {
            s.priority = number('f').and_then(|p| i32::try_from(p).ok());
            out.histogram_rows = number('b');
            s.policy = Some(
                if s.priority.is_some() {
                    "fifo"
                } else {
                    "other"
                }
                .into(),
            );
        }
        _ => {
            s.interval_ns = number('i').map(|us| us.saturating_mul(1000));
            s.priority = number('p').and_then(|p| i32::try_from(p).ok());
        }
    }
    s.duration_s = get('D').flatten().and_then(duration_s);
    if *s != PeerSettings::default() {
        s.from = Some("the command line".into());
    }
    out
}

/// cyclictest's `--policy=NAME`.
fn policy(command_line: &str) -> Option<String> {
    let mut words = command_line.split_whitespace();
    while let Some(word) = words.next() {
        if let Some(name) = word.strip_prefix("--policy=") {
            return Some(name.to_ascii_lowercase());
        }
        if word == "--policy" {
            return words.next().map(str::to_ascii_lowercase);
        }
    }
    None
}

/// The options of `table` found on the line, with their values, in order.
fn scan(table: &[Opt], command_line: &str) -> Vec<(char, Option<String>)> {
    let words: Vec<&str> = command_line.split_whitespace().skip(1).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        i += 1;
        if word == "--" {
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let Some(o) = table.iter().find(|o| o.long == name) else {
                continue;
            };
            let value = match (o.value, attached) {
                (Value::None, _) => None,
                (_, Some(v)) => Some(v),
                (Value::Required, None) => {
                    i += 1;
                    words.get(i - 1).map(|v| v.to_string())
                }
                (Value::Optional, None) => None,
            };
            out.push((o.short, value));
            continue;
        }
        let Some(cluster) = word.strip_prefix('-') else {
            continue;
        };
        for (at, letter) in cluster.char_indices() {
            let rest = &cluster[at + letter.len_utf8()..];
            match table.iter().find(|o| o.short == letter).map(|o| o.value) {
                Some(Value::Required) => {
                    let value = if rest.is_empty() {
                        i += 1;
                        words.get(i - 1).map(|v| v.to_string())
                    } else {
                        Some(rest.to_string())
                    };
                    out.push((letter, value));
                    break;
                }
                Some(Value::Optional) => {
                    out.push((letter, (!rest.is_empty()).then(|| rest.to_string())));
                    break;
                }
                _ => out.push((letter, None)),
            }
        }
    }
    out
}

/// rt-tests' durations: seconds, or a number with `s`, `m`, `h` or `d`
/// (oslat also takes them in capitals).
fn duration_s(text: &str) -> Option<f64> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().last()? {
        (i, c) if c.is_ascii_alphabetic() => (&text[..i], c.to_ascii_lowercase()),
        _ => (text, 's'),
    };
    let value: f64 = number.parse().ok()?;
    let factor = match unit {
        's' => 1.0,
        'm' => 60.0,
        'h' => 3600.0,
        'd' => 86_400.0,
        _ => return None,
    };
    Some(value * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cyclictest_options_in_every_spelling() {
        let c = parse(
            "cyclictest",
            "cyclictest -m -p95 -i1000 -t -a -h400 -D5 -q --json=ct.json",
        );
        assert_eq!(c.settings.interval_ns, Some(1_000_000));
        assert_eq!(c.settings.priority, Some(95));
        assert_eq!(c.settings.policy.as_deref(), Some("fifo"));
        assert_eq!(c.settings.mlocked, Some(true));
        assert_eq!(c.settings.duration_s, Some(5.0));
        assert_eq!(c.histogram_rows, Some(400));
        assert!(!c.nanoseconds);
        let c = parse(
            "cyclictest",
            "cyclictest --priority 80 --interval=200 --policy=rr -D 2m -N --histofall 1000",
        );
        assert_eq!(c.settings.interval_ns, Some(200_000));
        assert_eq!(c.settings.priority, Some(80));
        assert_eq!(c.settings.policy.as_deref(), Some("rr"));
        assert_eq!(c.settings.mlocked, Some(false));
        assert_eq!(c.settings.duration_s, Some(120.0));
        assert_eq!(c.histogram_rows, Some(1000));
        assert!(c.nanoseconds);
        // Clustered flags, an option's value that looks like a flag.
        let c = parse("cyclictest", "cyclictest -mNq -p 90 -i 500");
        assert!(c.nanoseconds && c.settings.mlocked == Some(true));
        assert_eq!(c.settings.interval_ns, Some(500_000));
    }

    #[test]
    fn other_tools_and_unknown_ones() {
        let c = parse("oslat", "oslat --cpu-list 1 -D 5 --json=oslat.json");
        assert_eq!(c.settings.duration_s, Some(5.0));
        assert_eq!(c.settings.policy.as_deref(), Some("other"));
        assert_eq!(c.settings.priority, None);
        let c = parse("oslat", "oslat -c 1-3 -f 95 -D 1H");
        assert_eq!(
            (c.settings.priority, c.settings.duration_s),
            (Some(95), Some(3600.0))
        );
        let c = parse("ptsematest", "ptsematest -l 2000 -p 90 -q --json=p.json");
        assert_eq!(c.settings.priority, Some(90));
        assert_eq!(c.settings.from.as_deref(), Some("the command line"));
        assert_eq!(
            parse("pi_stress", "pi_stress --json=x"),
            CommandLine::default()
        );
    }
}
