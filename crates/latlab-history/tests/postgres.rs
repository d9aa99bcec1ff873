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

/// The listing's filters and deletion, alike on SQLite and PostgreSQL.
#[test]
fn filters_and_delete_work_alike_on_both_backends() {
    let pg = PgServer::start_or_skip("filters_and_delete_work_alike");
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("h.sqlite");
    let mut specs = vec![sqlite.to_str().unwrap().to_string()];
    specs.extend(pg.as_ref().map(|pg| pg.fresh_database()));
    for spec in &specs {
        let mut h = History::open_spec(spec).unwrap();
        let stored =
            |h: &mut History, schema: &str, day: u32, kernel: &str, host: &str, load: bool| {
                let mut d = doc(&format!("{schema}-{day}-{kernel}-{host}-{load}"), kernel);
                d["schema"] = schema.into();
                d["started_at"] = format!("2026-11-{day:02}T23:59:59Z").into();
                d["system"]["hostname"] = host.into();
                if load {
                    d["load"] = json!({"spec": "full"});
                }
                h.store(&d, (host == "rpi").then_some("board-1"))
                    .unwrap()
                    .id
            };
        let a = stored(&mut h, "latlab.run", 20, "6.6", "rpi", false);
        let b = stored(&mut h, "latlab.respond", 21, "6.6", "rpi", true);
        let c = stored(&mut h, "latlab.run", 22, "6.12", "apu", true);
        let d = stored(&mut h, "acme.hist", 23, "6.12", "apu", false);
        let ids_of = |h: &History, filter: Filter| -> Vec<i64> {
            h.query(&filter).unwrap().iter().map(|e| e.id).collect()
        };
        let ids = |filter: Filter| ids_of(&h, filter);
        let f = Filter::default;
        assert_eq!(ids(f()), [a, b, c, d], "{spec}");
        let kind = |k: &str| Filter {
            kind: Some(k.into()),
            ..f()
        };
        assert_eq!(ids(kind("run")), [a, c], "{spec}");
        assert_eq!(ids(kind("latlab.run")), [a, c], "{spec}");
        assert_eq!(ids(kind("acme.hist")), [d], "another tool's kind: {spec}");
        assert_eq!(ids(kind("watch")), Vec::<i64>::new(), "{spec}");
        assert_eq!(
            ids(Filter {
                host: Some("apu".into()),
                ..f()
            }),
            [c, d],
            "{spec}"
        );
        assert_eq!(
            ids(Filter {
                board: Some("board-1".into()),
                ..f()
            }),
            [a, b],
            "{spec}"
        );
        assert_eq!(
            ids(Filter {
                kernel: Some("6.12".into()),
                ..f()
            }),
            [c, d],
            "{spec}"
        );
        assert_eq!(
            ids(Filter {
                load: Some("".into()),
                ..f()
            }),
            [a, d],
            "{spec}"
        );
        assert_eq!(
            ids(Filter {
                load: Some("full".into()),
                ..f()
            }),
            [b, c],
            "{spec}"
        );
        // The bounds include the whole day (or minute) given.
        let between = |since: Option<&str>, until: Option<&str>| Filter {
            since: since.map(Into::into),
            until: until.map(Into::into),
            ..f()
        };
        assert_eq!(
            ids(between(Some("2026-11-21"), Some("2026-11-22"))),
            [b, c],
            "{spec}"
        );
        assert_eq!(ids(between(None, Some("2026-11-20T23:59"))), [a], "{spec}");
        assert_eq!(
            ids(between(Some("2026-11-22T00:00:00"), None)),
            [c, d],
            "{spec}"
        );
        assert_eq!(
            ids(Filter {
                kind: Some("run".into()),
                limit: Some(1),
                ..f()
            }),
            [c],
            "the newest: {spec}"
        );
        // Deleting: all or nothing.
        let err = h.delete(&[b, 999]).unwrap_err();
        assert!(
            matches!(&err, HistoryError::NotStored { ids, .. } if ids == &[999]),
            "{spec}: {err}"
        );
        assert!(err.to_string().contains("nothing was deleted"), "{err}");
        assert_eq!(h.count().unwrap(), 4, "nothing deleted: {spec}");
        assert_eq!(h.delete(&[b, d, b]).unwrap(), 2, "{spec}");
        h.reclaim().unwrap();
        assert_eq!(ids_of(&h, f()), [a, c], "{spec}");
        assert!(matches!(h.get(b), Err(HistoryError::NotFound { .. })));
        assert!(h.check().unwrap().is_empty());
    }
}

/// A PostgreSQL history from before variants (migration 1) gets each
/// stored result's variant when a newer latlab opens it.
#[test]
fn postgres_before_variants_is_migrated_with_them() {
    let Some(pg) = PgServer::start_or_skip("postgres_before_variants_is_migrated") else {
        return;
    };
    let url = pg.fresh_database();
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .batch_execute(
            "CREATE TABLE latlab_migrations (version BIGINT PRIMARY KEY,
                 applied_at TIMESTAMPTZ NOT NULL DEFAULT now());
             INSERT INTO latlab_migrations (version) VALUES (1);",
        )
        .unwrap();
    client.batch_execute(POSTGRES_MIGRATIONS[0].1).unwrap();
    let doc = json!({"schema": "latlab.respond", "settings": {"channel": "udp", "policy": "fifo", "priority": 90}});
    client
        .execute(
            "INSERT INTO results (uid, schema, started_at, json) VALUES ('r', 'latlab.respond', 'x', $1)",
            &[&doc.to_string()],
        )
        .unwrap();
    let history = History::open_spec(&url).unwrap();
    assert_eq!(
        history.list(None).unwrap()[0].variant.as_deref(),
        Some("udp, fifo 90")
    );
}
