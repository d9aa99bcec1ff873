//! The PostgreSQL backend against a real server the test starts itself
//! (latlab-testkit): the same behaviour as SQLite, migrations applied once
//! by concurrent first users, many writers losing nothing and storing
//! nothing twice.

use latlab_history::{Filter, History, HistoryError, POSTGRES_MIGRATIONS};
use latlab_testkit::PgServer;
use serde_json::json;

fn doc(id: &str, board_kernel: &str) -> serde_json::Value {
    json!({
        "schema": "latlab.run", "id": id, "started_at": "2026-11-24T10:00:00Z", "verdict": "pass",
        "system": {"hostname": "rpi", "machine": "aarch64", "kernel_release": board_kernel, "preemption_model": "rt"},
        "overall": {"latency": {"max": 41_000u64, "p99_9": 30_000u64}}
    })
}

#[test]
fn postgres_keeps_results_like_sqlite() {
    let Some(pg) = PgServer::start_or_skip("postgres_keeps_results_like_sqlite") else {
        return;
    };
    let url = pg.fresh_database();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("h.sqlite");
    for spec in [url.as_str(), sqlite.to_str().unwrap()] {
        let mut h = History::open_spec(spec).unwrap();
        let a = h.store(&doc("a", "6.6"), Some("b1")).unwrap();
        assert!(a.new);
        let again = h.store(&doc("a", "6.6"), Some("b1")).unwrap();
        assert!(!again.new && again.id == a.id, "{spec}");
        let legacy = json!({"schema": "latlab.respond", "started_at": "x", "one_way": {"latency": {"max": 5u64, "p99_9": 4u64}}});
        let l = h.insert_document(&legacy).unwrap();
        assert_eq!(h.insert_document(&legacy).unwrap(), l);
        assert_eq!(h.count().unwrap(), 2);
        assert_eq!(h.get(a.id).unwrap(), doc("a", "6.6"));
        assert_eq!(h.get(l).unwrap(), legacy);
        let list = h.list(None).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].uid, "a");
        assert_eq!(list[0].arch.as_deref(), Some("aarch64"));
        assert_eq!(list[0].p999_ns, Some(30_000));
        assert_eq!(list[1].uid, latlab_document::content_id(&legacy));
        assert_eq!(list[1].max_ns, Some(5));
        let only = h
            .query(&Filter {
                board: Some("b1".into()),
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(only.len(), 1);
        assert!(matches!(
            h.get(999),
            Err(HistoryError::NotFound { id: 999, .. })
        ));
        h.add_board("name'); DROP TABLE results; --<b>", "h1")
            .unwrap();
        assert!(h
            .add_board("name'); DROP TABLE results; --<b>", "h2")
            .is_err());
        assert_eq!(
            h.board_for_token("h1").unwrap().as_deref(),
            Some("name'); DROP TABLE results; --<b>")
        );
        assert_eq!(h.count().unwrap(), 2);
    }
}

#[test]
fn migrations_run_once_when_many_open_a_new_database() {
    let Some(pg) = PgServer::start_or_skip("migrations_run_once") else {
        return;
    };
    let url = pg.fresh_database();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| History::open_spec(&url).unwrap());
        }
    });
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let versions: Vec<i64> = client
        .query(
            "SELECT version FROM latlab_migrations ORDER BY version",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let expected: Vec<i64> = POSTGRES_MIGRATIONS.iter().map(|m| m.0).collect();
    assert_eq!(versions, expected);
    // A database a newer latlab migrated is refused with a clear message.
    client
        .execute("INSERT INTO latlab_migrations (version) VALUES (999)", &[])
        .unwrap();
    let err = History::open_spec(&url).err().expect("refused").to_string();
    assert!(
        err.contains("999") && err.contains("update latlab"),
        "{err}"
    );
}

#[test]
fn many_writers_at_once_lose_nothing_and_store_nothing_twice() {
    let Some(pg) = PgServer::start_or_skip("many_writers") else {
        return;
    };
    let url = pg.fresh_database();
    let writers = 16;
    let per_writer = 40;
    std::thread::scope(|s| {
        for w in 0..writers {
            let url = &url;
            s.spawn(move || {
                let mut h = History::open_spec(url).unwrap();
                for i in 0..per_writer {
                    // Every result twice, and every other writer's first
                    // result too: duplicates race with their originals.
                    h.insert_document(&doc(&format!("w{w}-{i}"), "6.6"))
                        .unwrap();
                    h.insert_document(&doc(&format!("w{w}-{i}"), "6.6"))
                        .unwrap();
                    h.insert_document(&doc(&format!("w{}-{i}", (w + 1) % writers), "6.6"))
                        .unwrap();
                }
            });
        }
    });
    let h = History::open_spec(&url).unwrap();
    assert_eq!(h.count().unwrap(), (writers * per_writer) as i64);
    let mut uids: Vec<String> = h.list(None).unwrap().into_iter().map(|e| e.uid).collect();
    uids.sort();
    uids.dedup();
    assert_eq!(uids.len(), writers * per_writer);
}

#[test]
fn a_server_that_is_down_is_a_clear_error() {
    let Some(mut pg) = PgServer::start_or_skip("a_server_that_is_down") else {
        return;
    };
    let url = pg.url();
    pg.stop();
    let err = History::open_spec(&url).err().expect("refused").to_string();
    assert!(err.contains("connecting") && err.contains("--db"), "{err}");
    pg.start_again().unwrap();
    assert!(History::open_spec(&url).is_ok());
}
