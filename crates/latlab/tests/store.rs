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
