//! `--db postgres://...` on the commands that take `--db`, against a real
//! PostgreSQL server the test starts (latlab-testkit): results stored once
//! however often they are added, listed and compared as from SQLite.

mod common;
use common::latlab;

use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(name)
}

#[test]
fn history_and_compare_work_on_postgres() {
    let Some(pg) = latlab_testkit::PgServer::start_or_skip("history_and_compare_work_on_postgres")
    else {
        return;
    };
    let url = pg.fresh_database();
    for _ in 0..2 {
        let out = latlab()
            .args(["history", "--db", &url, "--add"])
            .arg(fixture("run-plain.json"))
            .arg("--add")
            .arg(fixture("run-load.json"))
            .arg("--add")
            .arg(fixture("respond-pty.json"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let listed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            listed.lines().filter(|l| l.contains(" run ")).count(),
            2,
            "added twice, listed once: {listed}"
        );
        assert!(listed.contains(" respond "), "{listed}");
    }
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("c.html");
    let out = latlab()
        .args(["compare", "1", "2", "--db", &url, "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(std::fs::read_to_string(&html).unwrap().contains("<svg"));
    // A wrong URL: an error naming the database and the fix.
    let out = latlab()
        .args(["history", "--db", "postgres://nobody@127.0.0.1:1/none"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("127.0.0.1:1") && err.contains("--db"), "{err}");
}

/// A SQLite file in `dir`, and a fresh PostgreSQL database when a server
/// can be started: the stores the same test runs on.
fn stores(dir: &Path, pg: Option<&latlab_testkit::PgServer>) -> Vec<String> {
    let mut specs = vec![dir.join("h.sqlite").to_str().unwrap().to_string()];
    specs.extend(pg.map(|pg| pg.fresh_database()));
    specs
}

/// `latlab history` with `args` on `db`: exit code, stdout, stderr.
fn history(db: &str, args: &[&str]) -> (i32, String, String) {
    let out = latlab()
        .args(["history", "--db", db])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The ids a listing shows, in order.
fn listed_ids(listing: &str) -> Vec<i64> {
    listing
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

/// Stores the five fixtures (two runs, a response, a watch, a lockbench)
/// in `db`; ids 1 to 5 in that order.
fn add_fixtures(db: &str) {
    let mut args = Vec::new();
    for name in [
        "run-plain.json",
        "run-load.json",
        "respond-pty.json",
        "watch.json",
        "lockbench.json",
    ] {
        args.push("--add".to_string());
        args.push(fixture(name).to_str().unwrap().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = history(db, &args);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(listed_ids(&out), [1, 2, 3, 4, 5], "{out}");
}

/// `latlab history` filters by kind, host, kernel, load and time and
/// deletes by id (all or nothing) or what the filters select, on SQLite
/// and on PostgreSQL; bad input is exit 1 and deletes nothing.
#[test]
fn history_filters_and_deletes_on_both_stores() {
    let pg = latlab_testkit::PgServer::start_or_skip("history_filters_and_deletes_on_both_stores");
    let dir = tempfile::tempdir().unwrap();
    for db in stores(dir.path(), pg.as_ref()) {
        add_fixtures(&db);
        let ids = |args: &[&str]| {
            let (code, out, err) = history(&db, args);
            assert_eq!(code, 0, "{args:?}: {out}{err}");
            listed_ids(&out)
        };
        assert_eq!(ids(&["--kind", "run"]), [1, 2], "{db}");
        assert_eq!(ids(&["--kind", "latlab.watch"]), [4], "{db}");
        assert_eq!(ids(&["--load", "cpu:1"]), [2], "{db}");
        assert_eq!(ids(&["--load", "none", "--kind", "run"]), [1], "{db}");
        assert_eq!(
            ids(&["--host", "vm", "--kernel", "6.18.44-fc-v669"]).len(),
            5
        );
        assert_eq!(
            ids(&[
                "--since",
                "2026-11-24T10:31:50",
                "--until",
                "2026-11-24T10:31"
            ]),
            [3, 5]
        );
        assert_eq!(ids(&["--since", "2026-11-24 11:00"]), [4], "{db}");
        assert_eq!(ids(&["--until", "2026-11-23"]), Vec::<i64>::new(), "{db}");
        assert_eq!(ids(&["--kind", "run", "--limit", "1"]), [2], "{db}");
        // The setup of each kind is listed.
        let (_, all, _) = history(&db, &[]);
        assert!(all.contains("clock-nanosleep every"), "{all}");
        // Nothing matches: said, exit 0.
        let (code, out, err) = history(&db, &["--kind", "watch-snapshot"]);
        assert_eq!((code, out.as_str()), (0, ""), "{db}");
        assert!(
            err.contains("no result in") && err.contains("--kind watch-snapshot"),
            "{err}"
        );
        // A time that is not one: exit 1, naming the forms.
        let (code, _, err) = history(&db, &["--since", "last week"]);
        assert_eq!(code, 1, "{db}");
        assert!(err.contains("YYYY-MM-DD"), "{err}");
        // Deleting an id that is not there deletes nothing.
        let (code, _, err) = history(&db, &["--delete", "3", "999"]);
        assert_eq!(code, 1, "{db}");
        assert!(
            err.contains("999") && err.contains("nothing was deleted"),
            "{err}"
        );
        assert_eq!(ids(&[]), [1, 2, 3, 4, 5], "{db}");
        let (code, _, err) = history(&db, &["--delete", "3"]);
        assert_eq!(code, 0, "{db}: {err}");
        assert!(err.contains("deleted 1 result (id 3)"), "{err}");
        assert_eq!(ids(&[]), [1, 2, 4, 5], "{db}");
        // --delete-listed needs a filter, and lists what it deletes.
        let (code, _, err) = history(&db, &["--delete-listed"]);
        assert_eq!(code, 1, "{db}");
        assert!(err.contains("give --kind"), "{err}");
        let (code, out, err) = history(&db, &["--kind", "run", "--delete-listed"]);
        assert_eq!(code, 0, "{db}: {err}");
        assert_eq!(listed_ids(&out), [1, 2], "{db}");
        assert!(err.contains("deleted 2 results (ids 1, 2)"), "{err}");
        assert_eq!(ids(&[]), [4, 5], "{db}");
        // --delete with filters is a usage error (1, as rtla's).
        let (code, _, _) = history(&db, &["--delete", "4", "--kind", "run"]);
        assert_eq!(code, 1, "{db}");
        assert_eq!(ids(&[]), [4, 5], "{db}");
    }
}

/// Regression guard: `compare` of a run and a watch drew no comparison and
/// said nothing (the guide says a run and a watch of the same thread
/// compare: the same buckets). Now it compares what the results have in
/// common and names the rest; nothing in common is exit 1, the report
/// still written.
#[test]
fn compare_of_two_kinds_says_what_it_compares() {
    let pg = latlab_testkit::PgServer::start_or_skip("compare_of_two_kinds_says_what_it_compares");
    let dir = tempfile::tempdir().unwrap();
    for db in stores(dir.path(), pg.as_ref()) {
        add_fixtures(&db);
        let compare = |ids: &[&str]| {
            let html = dir.path().join("compare.html");
            let _ = std::fs::remove_file(&html);
            let out = latlab()
                .arg("compare")
                .args(ids)
                .args(["--db", &db, "-o"])
                .arg(&html)
                .output()
                .unwrap();
            (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr).into_owned(),
                std::fs::read_to_string(&html).unwrap_or_default(),
            )
        };
        // A run and a watch: their timer wake-up latencies, side by side.
        let (code, err, page) = compare(&["1", "4"]);
        assert_eq!(code, 0, "{db}: {err}");
        assert!(err.contains("compared, timer wake-up latency"), "{err}");
        assert!(
            err.contains("id 1 (") && err.contains("id 4 (watch"),
            "{err}"
        );
        assert!(page.contains("<h2>Comparison</h2>"), "{db}");
        assert!(
            page.contains(": thread "),
            "a watched thread in the comparison"
        );
        // Two runs and a response: the runs compared, the response named.
        let (code, err, page) = compare(&["1", "2", "3"]);
        assert_eq!(code, 0, "{db}: {err}");
        assert!(
            err.contains(
                "not compared: id 3 (respond pty): no other result holds its response latency"
            ),
            "{err}"
        );
        assert!(page.contains("Not compared: <b>respond pty</b>"), "{db}");
        // A run and a lockbench: nothing in common, exit 1, the report still there.
        let (code, err, page) = compare(&["1", "5"]);
        assert_eq!(code, 1, "{db}: {err}");
        assert!(
            err.contains("not compared: id 5 (lockbench): it holds per-variant lock"),
            "{err}"
        );
        assert!(
            err.contains("nothing compared") && err.contains("latlab history --kind"),
            "{err}"
        );
        assert!(
            page.contains("Lock benchmark") && page.contains("nothing is compared"),
            "{db}"
        );
    }
}
