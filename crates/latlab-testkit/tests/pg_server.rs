//! The private PostgreSQL server of the tests, in a process of its own
//! (the unit tests of `process` look at this process's children).

use latlab_testkit::PgServer;

/// The user a server started by root runs as.
const NOBODY_UID: u32 = 65534;

#[test]
fn a_private_server_starts_answers_restarts_and_is_removed() {
    let Some(mut pg) = PgServer::start_or_skip("a_private_server") else {
        return;
    };
    let dir = pg.socket_dir().to_path_buf();
    let mut client = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    let user: String = client.query_one("SELECT current_user", &[]).unwrap().get(0);
    assert_eq!(user, "latlab");
    client
        .batch_execute("CREATE TABLE t (x int); INSERT INTO t VALUES (7)")
        .unwrap();
    drop(client);
    pg.restart().unwrap();
    let mut client = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    let x: i32 = client.query_one("SELECT x FROM t", &[]).unwrap().get(0);
    assert_eq!(x, 7, "data survives a restart");
    let other = pg.fresh_database();
    assert!(postgres::Client::connect(&other, postgres::NoTls).is_ok());
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } == 0 {
        let owner =
            std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(dir.join("data")).unwrap());
        assert_eq!(owner, NOBODY_UID, "the server runs unprivileged");
    }
    drop(client);
    drop(pg);
    assert!(!dir.exists(), "the directory is removed");
}

#[test]
fn a_panicking_test_still_stops_its_server() {
    let Some(pg) = PgServer::start_or_skip("a_panicking_test") else {
        return;
    };
    let pid = pg.pid().unwrap();
    let dir = pg.socket_dir().to_path_buf();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _owned = pg;
        panic!("a test failing");
    }));
    assert!(result.is_err());
    assert!(!dir.exists());
    // The process is gone (reaped by the drop, so kill finds nothing).
    // SAFETY: signal 0 only checks for existence.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, 0) }, -1);
}
