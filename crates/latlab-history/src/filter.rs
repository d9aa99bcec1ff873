//! Which stored results a listing, the dashboard or a deletion selects:
//! one [`Filter`], turned into one SQL condition for both backends.

use crate::HistoryError;

/// Which rows [`crate::History::query`] returns (every field narrows).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Only the row with this id.
    pub id: Option<i64>,
    /// Only this kind: `run`, `respond`, `watch`, ... ([`crate::kind_of`]),
    /// or a whole schema (`latlab.run`, another tool's).
    pub kind: Option<String>,
    /// Only this board's.
    pub board: Option<String>,
    /// Only results measured on this host.
    pub host: Option<String>,
    /// Only results from this kernel release.
    pub kernel: Option<String>,
    /// Only results under this load (`Some("")`: without load).
    pub load: Option<String>,
    /// Only results started at or after this UTC time: `YYYY-MM-DD`,
    /// `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS` ([`check_time`]).
    pub since: Option<String>,
    /// Only results started at or before this UTC time, given as for
    /// `since`; a day or minute given includes the whole of it.
    pub until: Option<String>,
    /// Only the newest N.
    pub limit: Option<usize>,
}

/// A value bound to a placeholder of the condition.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    Int(i64),
    Text(String),
}

impl Filter {
    /// Whether anything but the limit narrows the selection.
    pub fn narrows(&self) -> bool {
        *self
            != Filter {
                limit: self.limit,
                ..Filter::default()
            }
    }

    /// The `WHERE` condition (always true when nothing narrows) and its
    /// values; `placeholder(n, value)` writes the n-th (1-based)
    /// placeholder of the backend (`?1`, `$1::TEXT`). The time bounds compare the start time's
    /// prefix of the bound's length, so `--until 2026-11-27` includes that
    /// whole day.
    pub(crate) fn condition(
        &self,
        placeholder: impl Fn(usize, &Arg) -> String,
    ) -> (String, Vec<Arg>) {
        let mut sql = String::from("1=1");
        let mut args = Vec::new();
        let bind = |arg: Arg, args: &mut Vec<Arg>| {
            let p = placeholder(args.len() + 1, &arg);
            args.push(arg);
            p
        };
        if let Some(id) = self.id {
            let p = bind(Arg::Int(id), &mut args);
            sql.push_str(&format!(" AND id = {p}"));
        }
        if let Some(kind) = &self.kind {
            let p = bind(Arg::Text(kind.clone()), &mut args);
            sql.push_str(&format!(" AND (schema = {p} OR schema = 'latlab.' || {p})"));
        }
        for (column, value) in [
            ("board", &self.board),
            ("host", &self.host),
            ("kernel", &self.kernel),
        ] {
            if let Some(value) = value {
                let p = bind(Arg::Text(value.clone()), &mut args);
                sql.push_str(&format!(" AND {column} = {p}"));
            }
        }
        match self.load.as_deref() {
            Some("") => sql.push_str(" AND load IS NULL"),
            Some(load) => {
                let p = bind(Arg::Text(load.to_string()), &mut args);
                sql.push_str(&format!(" AND load = {p}"));
            }
            None => {}
        }
        if let Some(since) = &self.since {
            let p = bind(Arg::Text(since.clone()), &mut args);
            sql.push_str(&format!(" AND started_at >= {p}"));
        }
        if let Some(until) = &self.until {
            let p = bind(Arg::Text(until.clone()), &mut args);
            sql.push_str(&format!(" AND substr(started_at, 1, length({p})) <= {p}"));
        }
        (sql, args)
    }
}

/// Checks a time bound of [`Filter::since`] or [`Filter::until`]: a UTC
/// `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM` or `YYYY-MM-DDTHH:MM:SS` (a space may
/// stand for the `T`); returns it with the `T`.
pub fn check_time(text: &str) -> Result<String, HistoryError> {
    let normal = text.trim().replacen(' ', "T", 1);
    let pattern: &[u8] = match normal.len() {
        10 => b"dddd-dd-dd",
        16 => b"dddd-dd-ddTdd:dd",
        19 => b"dddd-dd-ddTdd:dd:dd",
        _ => b"",
    };
    let fits = !pattern.is_empty()
        && normal.bytes().zip(pattern).all(|(c, &p)| match p {
            b'd' => c.is_ascii_digit(),
            other => c == other,
        });
    if fits {
        Ok(normal)
    } else {
        Err(HistoryError::Time(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_dates_minutes_or_seconds() {
        assert_eq!(check_time("2026-11-27").unwrap(), "2026-11-27");
        assert_eq!(check_time("2026-11-27 10:05").unwrap(), "2026-11-27T10:05");
        assert_eq!(
            check_time("2026-11-27T10:05:09").unwrap(),
            "2026-11-27T10:05:09"
        );
        for bad in ["27.11.2026", "2026-11", "yesterday", "2026-11-27T10", ""] {
            let err = check_time(bad).unwrap_err().to_string();
            assert!(err.contains("YYYY-MM-DD"), "{bad}: {err}");
        }
    }

    #[test]
    fn narrowing_ignores_the_limit() {
        assert!(!Filter::default().narrows());
        assert!(!Filter {
            limit: Some(3),
            ..Filter::default()
        }
        .narrows());
        assert!(Filter {
            kind: Some("run".into()),
            ..Filter::default()
        }
        .narrows());
    }
}
