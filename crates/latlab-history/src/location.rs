//! Where a history lives: a SQLite file or a PostgreSQL URL, and how it is
//! named in messages (a URL without its password).

use std::path::PathBuf;

/// Where a history lives: a SQLite file or a PostgreSQL URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection string (`postgres://...` or `postgresql://...`).
    Postgres(String),
}

impl Location {
    /// `postgres://` and `postgresql://` URLs name a PostgreSQL database,
    /// anything else a SQLite file.
    pub fn parse(spec: &str) -> Location {
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            Location::Postgres(spec.to_string())
        } else {
            Location::Sqlite(PathBuf::from(spec))
        }
    }

    /// The file, or the URL without its password, for messages.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(path) => path.display().to_string(),
            Location::Postgres(url) => redact(url),
        }
    }
}

/// The URL without its password.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{scheme}://{name}:***@{host}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}
