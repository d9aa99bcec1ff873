//! A lab of boards (issue 17), with real parts: a PostgreSQL server the
//! test starts (latlab-testkit), `latlab serve` as a process over real
//! HTTP, `latlab push` as a process with its spool, and headless Chromium
//! for the dashboard.
//!
//! Covered: every kind of bad input answered and nothing stored; a board
//! name of SQL and HTML metacharacters stored verbatim and shown escaped;
//! results spooled while the server is down and resent; the server killed
//! with SIGKILL during ingest and PostgreSQL restarted during a run, every
//! result stored exactly once after recovery; a full disk keeping the spool
//! intact; boards pushing at once (`LATLAB_FLEET_BOARDS` x
//! `LATLAB_FLEET_RESULTS`, 10 x 20 by default; bench/fleet-load.sh runs 50 x
//! 100); the JUnit file read by Python's junitparser and the LAVA lines;
//! the dashboard in headless Chromium with no console error and nothing
//! fetched from the network.

mod common;
use common::chromium::{self, headless};
use common::{latlab, require};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use latlab_history::History;
use latlab_testkit::PgServer;
use serde_json::Value;

fn fixture() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results/run-plain.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A distinct run result of `board`: number `n`, `days` after 2026-10-01,
/// on `kernel`, with worst latency `max_us`.
fn result(board: &str, n: usize, kernel: &str, days: u32, max_us: u64) -> Value {
    let mut doc = fixture();
    doc["id"] = format!("{board}-{n}").into();
    doc["system"]["hostname"] = board.into();
    doc["system"]["kernel_release"] = kernel.into();
    let (month, day) = if days < 31 {
        (10, days + 1)
    } else {
        (11, days - 30)
    };
    doc["started_at"] = format!("2026-{month:02}-{day:02}T{:02}:00:00Z", n % 24).into();
    doc["overall"]["latency"]["max"] = (max_us * 1000).into();
    doc["overall"]["latency"]["p99_9"] = (max_us * 700).into();
    doc
}

/// A free loopback port (bound, read, released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `latlab serve` as a child process; killed (SIGKILL) when dropped.
struct Serve {
    child: Child,
    url: String,
}

impl Serve {
    fn start(db: &str, port: u16, extra: &[&str]) -> Serve {
        let mut child = latlab()
            .args([
                "serve",
                "--db",
                db,
                "--listen",
                &format!("127.0.0.1:{port}"),
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("latlab serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("listening on"), "latlab serve said {line:?}");
        Serve {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Peak resident memory (VmHWM), KiB.
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn add_board(db: &str, name: &str) -> String {
    let out = latlab()
        .args(["serve", "--db", db, "--add-board", name])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert_eq!(token.len(), 64, "{token}");
    token
}

/// One raw HTTP/1.1 request; the status and the body. The body is sent
/// in chunks and a failed write is not an error (the server may answer
/// before reading it all).
fn http(url: &str, method: &str, path: &str, token: Option<&str>, body: &[u8]) -> (u16, String) {
    let addr = url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    for chunk in body.chunks(1 << 20) {
        if stream.write_all(chunk).is_err() {
            break;
        }
    }
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP answer: {text:?}"));
    let body = text.split_once("\r\n\r\n").map_or("", |b| b.1).to_string();
    (status, body)
}

fn count(db: &str) -> i64 {
    History::open_spec(db).unwrap().count().unwrap()
}

/// `latlab push` of `files` with its own spool; the outcome line and
/// whether it succeeded.
fn push(url: &str, token: &str, spool: &Path, files: &[PathBuf]) -> (bool, String) {
    let out = latlab()
        .args(["push", "--to", url, "--spool"])
        .arg(spool)
        .args(files)
        .env("LATLAB_TOKEN", token)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn write_result(dir: &Path, doc: &Value) -> PathBuf {
    let path = dir.join(format!("{}.json", doc["id"].as_str().unwrap()));
    std::fs::write(&path, serde_json::to_vec(doc).unwrap()).unwrap();
    path
}

fn spool_files(spool: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(spool)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn bad_input_is_refused_and_nothing_is_stored() {
    let Some(pg) = PgServer::start_or_skip("bad_input_is_refused") else {
        return;
    };
    let db = pg.fresh_database();
    let token = add_board(&db, "rpi4");
    let serve = Serve::start(&db, free_port(), &[]);
    let url = &serve.url;
    let good = serde_json::to_vec(&result("rpi4", 1, "6.6", 1, 40)).unwrap();

    // Wrong and missing token: 401, whatever the body.
    let (status, body) = http(url, "POST", "/api/v1/results", Some("not-a-token"), &good);
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("unknown token"), "{body}");
    let (status, body) = http(url, "POST", "/api/v1/results", None, &good);
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("Authorization: Bearer"), "{body}");
    // Malformed JSON: 400 naming where.
    let (status, body) = http(
        url,
        "POST",
        "/api/v1/results",
        Some(&token),
        b"{\"schema\": \"latlab.run\",",
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains("malformed JSON") && body.contains("line 1"),
        "{body}"
    );
    // A schema the server does not know, and a run that is not one: 422.
    let (status, body) = http(
        url,
        "POST",
        "/api/v1/results",
        Some(&token),
        br#"{"schema": "acme.report", "x": 1}"#,
    );
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("unknown schema \"acme.report\""), "{body}");
    let (status, body) = http(
        url,
        "POST",
        "/api/v1/results",
        Some(&token),
        br#"{"schema": "latlab.run", "id": "x"}"#,
    );
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("not a valid latlab.run"), "{body}");
    let (status, body) = http(url, "POST", "/api/v1/results", Some(&token), b"[1, 2]");
    assert_eq!(status, 422, "{body}");
    // 100 MB: 413, and the server's memory stays far below it.
    let huge = vec![b' '; 100 << 20];
    let (status, body) = http(url, "POST", "/api/v1/results", Some(&token), &huge);
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("at most 16 MiB"), "{body}");
    assert!(
        serve.peak_rss_kib() < 80 << 10,
        "server peak RSS {} KiB",
        serve.peak_rss_kib()
    );
    assert_eq!(count(&db), 0, "nothing stored");

    // The good one: 201, again 200, stored once.
    let (status, body) = http(url, "POST", "/api/v1/results", Some(&token), &good);
    assert_eq!(status, 201, "{body}");
    let (status, body) = http(url, "POST", "/api/v1/results", Some(&token), &good);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"new\":false"), "{body}");
    assert_eq!(count(&db), 1);
    let (status, body) = http(url, "GET", "/api/v1/results/1", None, b"");
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["id"],
        "rpi4-1"
    );
}

#[test]
fn a_board_name_of_sql_and_html_is_stored_verbatim_and_shown_escaped() {
    let Some(pg) = PgServer::start_or_skip("a_board_name_of_sql_and_html") else {
        return;
    };
    let db = pg.fresh_database();
    let name = "rpi'); DROP TABLE results; -- <script>alert(1)</script> & \"x\"";
    let token = add_board(&db, name);
    let serve = Serve::start(&db, free_port(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let file = write_result(dir.path(), &result("b", 1, "6.6<b>", 1, 40));
    let (ok, said) = push(&serve.url, &token, &dir.path().join("spool"), &[file]);
    assert!(ok, "{said}");
    let history = History::open_spec(&db).unwrap();
    assert_eq!(history.boards().unwrap(), [name], "stored verbatim");
    assert_eq!(history.list(None).unwrap()[0].board.as_deref(), Some(name));
    let (status, fleet) = http(&serve.url, "GET", "/", None, b"");
    assert_eq!(status, 200);
    assert!(
        !fleet.contains("<script>alert") && !fleet.contains("6.6<b>"),
        "{fleet}"
    );
    assert!(fleet.contains("rpi&#39;); DROP TABLE results; -- &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"));
    let link = latlab_report::dashboard::url_encode(name);
    let (status, page) = http(&serve.url, "GET", &format!("/board/{link}"), None, b"");
    assert_eq!(status, 200, "{page}");
    assert!(!page.contains("<script>alert") && page.contains("6.6&lt;b&gt;"));
    let (status, _) = http(&serve.url, "GET", "/board/nobody", None, b"");
    assert_eq!(status, 404);
}

#[test]
fn reading_needs_the_read_token_when_one_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    add_board(db, "b");
    let serve = Serve::start(db, free_port(), &["--read-token", "sesame"]);
    assert_eq!(http(&serve.url, "GET", "/", None, b"").0, 401);
    assert_eq!(http(&serve.url, "GET", "/", Some("wrong"), b"").0, 401);
    assert_eq!(http(&serve.url, "GET", "/", Some("sesame"), b"").0, 200);
    assert_eq!(http(&serve.url, "GET", "/?token=sesame", None, b"").0, 200);
}

#[test]
fn results_wait_in_the_spool_while_the_server_is_down() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    let token = add_board(db, "b");
    let spool = dir.path().join("spool");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let files: Vec<PathBuf> = (0..3)
        .map(|n| write_result(dir.path(), &result("b", n, "6.6", n as u32, 40)))
        .collect();
    let (ok, said) = push(&url, &token, &spool, &files);
    assert!(!ok, "{said}");
    assert!(
        said.contains("3 waiting in the spool") && said.contains("cannot be reached"),
        "{said}"
    );
    assert_eq!(spool_files(&spool).len(), 3);
    let _serve = Serve::start(db, port, &[]);
    let (ok, said) = push(&url, &token, &spool, &[]);
    assert!(ok, "{said}");
    assert!(said.contains("3 stored"), "{said}");
    assert!(spool_files(&spool).is_empty());
    assert_eq!(count(db), 3);
    // A wrong token keeps the spool.
    let extra = write_result(dir.path(), &result("b", 9, "6.6", 9, 40));
    let (ok, said) = push(&url, "wrong", &spool, &[extra]);
    assert!(!ok && said.contains("401"), "{said}");
    assert_eq!(spool_files(&spool).len(), 1);
}

/// Boards pushing result after result (each through `latlab push` with its
/// own spool) while the server is killed with SIGKILL and restarted, and
/// PostgreSQL is restarted; then every board pushes once more: every result
/// is stored exactly once.
#[test]
fn server_killed_and_postgres_restarted_during_ingest_lose_nothing() {
    let Some(mut pg) = PgServer::start_or_skip("server_killed_and_postgres_restarted") else {
        return;
    };
    let db = pg.fresh_database();
    let boards = 4;
    let per_board = 25;
    let tokens: Vec<String> = (0..boards)
        .map(|b| add_board(&db, &format!("b{b}")))
        .collect();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let mut serve = Some(Serve::start(&db, port, &[]));
    let done = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (b, token) in tokens.iter().enumerate() {
            let (dir, url, done) = (dir.path(), &url, &done);
            s.spawn(move || {
                let spool = dir.join(format!("spool{b}"));
                for n in 0..per_board {
                    let file = write_result(dir, &result(&format!("b{b}"), n, "6.6", n as u32, 40));
                    let _ = push(url, token, &spool, &[file]);
                }
                done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
        // The faults, while the boards push.
        let wait_for = |n: i64| {
            let start = Instant::now();
            while History::open_spec(&db).map_or(0, |h| h.count().unwrap_or(0)) < n {
                assert!(start.elapsed() < Duration::from_secs(120), "no progress");
                std::thread::sleep(Duration::from_millis(20));
            }
        };
        wait_for(10);
        let killed = serve.take().unwrap();
        drop(killed); // SIGKILL
        std::thread::sleep(Duration::from_millis(300));
        serve = Some(Serve::start(&db, port, &[]));
        wait_for(30);
        pg.restart().unwrap();
        wait_for(50);
    });
    assert_eq!(done.load(std::sync::atomic::Ordering::SeqCst), boards);
    for (b, token) in tokens.iter().enumerate() {
        let spool = dir.path().join(format!("spool{b}"));
        let (ok, said) = push(&url, token, &spool, &[]);
        assert!(ok, "{said}");
        assert!(spool_files(&spool).is_empty(), "board {b}: {said}");
    }
    let history = History::open_spec(&db).unwrap();
    let entries = history.list(None).unwrap();
    assert_eq!(entries.len(), boards * per_board, "every result once");
    let mut uids: Vec<&str> = entries.iter().map(|e| e.uid.as_str()).collect();
    uids.sort();
    uids.dedup();
    assert_eq!(uids.len(), boards * per_board);
    for e in &entries {
        assert_eq!(
            e.board.as_deref(),
            Some(&e.uid[..e.uid.find('-').unwrap()]),
            "pushed by its own board"
        );
    }
}

/// A board whose disk is full: the new result cannot be spooled, the ones
/// waiting stay whole, and all go once the server is back. Needs root (a
/// small tmpfs).
#[test]
fn a_full_disk_keeps_the_spool_intact() {
    // SAFETY: geteuid has no preconditions.
    let is_root = unsafe { libc::geteuid() } == 0;
    if !require(
        "a_full_disk_keeps_the_spool_intact: root (mount a small tmpfs)",
        is_root,
        "run the tests as root",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("disk");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=512k",
            "latlab-test",
            mnt.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(mounted.success(), "mount tmpfs");
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    let token = add_board(db, "b");
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let spool = mnt.join("spool");
    let old: Vec<PathBuf> = (0..3)
        .map(|n| write_result(dir.path(), &result("b", n, "6.6", n as u32, 40)))
        .collect();
    let (ok, _) = push(&url, &token, &spool, &old);
    assert!(!ok);
    let before: Vec<(PathBuf, Vec<u8>)> = spool_files(&spool)
        .into_iter()
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    assert_eq!(before.len(), 3);
    // Fill the disk.
    let mut filler = std::fs::File::create(mnt.join("filler")).unwrap();
    while filler.write_all(&[0u8; 4096]).is_ok() {}
    drop(filler);
    let new = write_result(dir.path(), &result("b", 7, "6.6", 7, 40));
    let (ok, said) = push(&url, &token, &spool, std::slice::from_ref(&new));
    assert!(!ok);
    assert!(
        said.contains("is the disk full") || said.contains("No space"),
        "{said}"
    );
    let after: Vec<(PathBuf, Vec<u8>)> = spool_files(&spool)
        .into_iter()
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    assert_eq!(after, before, "the spool is intact, no partial file");
    // The server back: the waiting ones go, and the new one is sent
    // directly although the disk is still full.
    let _serve = Serve::start(db, port, &[]);
    let (ok, said) = push(&url, &token, &spool, &[new]);
    assert!(ok, "{said}");
    assert!(said.contains("4 stored"), "{said}");
    assert!(spool_files(&spool).is_empty());
    assert_eq!(count(db), 4);
}

/// Boards pushing at once over HTTP: every result (some sent twice) stored
/// exactly once; prints the time and the server's peak memory.
#[test]
fn boards_pushing_at_once_store_every_result_exactly_once() {
    let Some(pg) = PgServer::start_or_skip("boards_pushing_at_once") else {
        return;
    };
    let env = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let boards = env("LATLAB_FLEET_BOARDS", 10);
    let per_board = env("LATLAB_FLEET_RESULTS", 20);
    let db = pg.fresh_database();
    let tokens: Vec<String> = (0..boards)
        .map(|b| add_board(&db, &format!("board{b:02}")))
        .collect();
    let serve = Serve::start(&db, free_port(), &[]);
    let rss_idle = serve.peak_rss_kib();
    let bodies: Vec<Vec<Vec<u8>>> = (0..boards)
        .map(|b| {
            (0..per_board)
                .map(|n| {
                    let doc = result(
                        &format!("board{b:02}"),
                        n,
                        "6.6",
                        (n % 50) as u32,
                        40 + (n % 7) as u64,
                    );
                    serde_json::to_vec(&doc).unwrap()
                })
                .collect()
        })
        .collect();
    let start = Instant::now();
    let barrier = std::sync::Barrier::new(boards);
    let (created, repeated) = std::thread::scope(|s| {
        let handles: Vec<_> = tokens
            .iter()
            .zip(&bodies)
            .map(|(token, bodies)| {
                let (url, barrier) = (&serve.url, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let (mut created, mut repeated) = (0, 0);
                    for (n, body) in bodies.iter().enumerate() {
                        // Every tenth twice: a resend after a lost answer.
                        for _ in 0..if n % 10 == 0 { 2 } else { 1 } {
                            match http(url, "POST", "/api/v1/results", Some(token), body) {
                                (201, _) => created += 1,
                                (200, _) => repeated += 1,
                                (status, body) => panic!("{status}: {body}"),
                            }
                        }
                    }
                    (created, repeated)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    let elapsed = start.elapsed();
    let total = boards * per_board;
    assert_eq!(created, total);
    assert_eq!(repeated, boards * per_board.div_ceil(10));
    assert_eq!(count(&db), total as i64);
    let rss = serve.peak_rss_kib();
    println!(
        "fleet load: {boards} boards x {per_board} results ({} requests) in {:.2} s ({:.0} results/s); \
         server peak RSS {:.1} MiB ({:.1} MiB before the load)",
        created + repeated,
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64(),
        rss as f64 / 1024.0,
        rss_idle as f64 / 1024.0
    );
    // The peer: the same results written straight into PostgreSQL by as
    // many threads (no HTTP, no server), for the ratio.
    let direct_db = pg.fresh_database();
    let start = Instant::now();
    std::thread::scope(|s| {
        for bodies in &bodies {
            let direct_db = &direct_db;
            s.spawn(move || {
                let mut h = History::open_spec(direct_db).unwrap();
                for body in bodies {
                    let doc: Value = serde_json::from_slice(body).unwrap();
                    h.store(&doc, Some("direct")).unwrap();
                }
            });
        }
    });
    let direct = start.elapsed();
    assert_eq!(count(&direct_db), total as i64);
    println!(
        "peer: the same {total} results stored directly by {boards} PostgreSQL clients in {:.2} s \
         ({:.0} results/s); through latlab serve / direct time ratio {:.2}",
        direct.as_secs_f64(),
        total as f64 / direct.as_secs_f64(),
        elapsed.as_secs_f64() / direct.as_secs_f64()
    );
    // The fleet page lists them all.
    let (status, page) = http(&serve.url, "GET", "/", None, b"");
    assert_eq!(status, 200);
    assert!(
        page.contains(&format!("{boards} boards, {total} results")),
        "{}",
        &page[..page.len().min(3000)]
    );
}

fn python_has(module: &str) -> bool {
    Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether Python's junitparser is there; a skip (or failure) when not.
fn junitparser_or_skip() -> bool {
    require(
        "junit test: Python's junitparser",
        python_has("junitparser"),
        "python3 -m pip install junitparser",
    )
}

#[test]
fn junit_is_read_by_junitparser_and_lava_lines_name_each_requirement() {
    if !junitparser_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("latlab.xml");
    let out = latlab()
        .args([
            "run",
            "--quiet",
            "--no-save",
            "--allow-unprivileged",
            "--loops",
            "300",
            "--max-latency",
            "1s",
            "--percentile",
            "99.9:1ns",
            "--lava",
            "--junit",
        ])
        .arg(&junit)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "the 1 ns requirement fails: {out:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lava: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("lava-test-case "))
        .collect();
    assert_eq!(lava.len(), 2, "{stdout}");
    assert!(
        lava[0].starts_with("lava-test-case max-latency --result pass --measurement "),
        "{}",
        lava[0]
    );
    assert!(lava[0].ends_with(" --units us"));
    assert!(
        lava[1].starts_with("lava-test-case p99.9-latency --result fail --measurement "),
        "{}",
        lava[1]
    );
    let script = r#"
import sys
from junitparser import JUnitXml, Failure
xml = JUnitXml.fromfile(sys.argv[1])
for suite in xml:
    props = {p.name: p.value for p in suite.properties()}
    print("suite", suite.name, suite.tests, suite.failures, suite.errors, props["max-latency.measurement"], props["kernel"] != "")
    for case in suite:
        state = "fail" if any(isinstance(r, Failure) for r in case.result) else "pass"
        msg = case.result[0].message if case.result else ""
        print("case", case.name, state, msg)
"#;
    let parsed = Command::new("python3")
        .args(["-c", script])
        .arg(&junit)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&parsed.stdout);
    assert!(
        parsed.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("suite latlab.run 2 1 0 ") && lines[0].ends_with(" us True"),
        "{text}"
    );
    assert_eq!(lines[1], "case max-latency pass ");
    assert!(
        lines[2].starts_with("case p99.9-latency fail p99.9 latency <= 1 ns missed: measured "),
        "{text}"
    );
}

/// Every kind that takes `--junit` (run, respond, lockbench), from the
/// fixtures an earlier latlab wrote, read by junitparser; and their LAVA
/// lines are well-formed.
#[test]
fn junit_of_every_measuring_kind_is_read_by_junitparser() {
    use latlab_report::formats::{JunitXml, LavaTestCases};
    if !junitparser_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    for (file, cases) in [
        ("run-load.json", 1),
        ("respond-pty.json", 1),
        ("lockbench.json", 0),
    ] {
        let text = std::fs::read_to_string(fixtures.join(file)).unwrap();
        let document = latlab_document::Document::parse(&text).unwrap();
        let (xml, lava) = match &document {
            latlab_document::Document::Run(d) => (d.junit_xml(), d.lava_test_cases()),
            latlab_document::Document::Respond(d) => (d.junit_xml(), d.lava_test_cases()),
            latlab_document::Document::Lockbench(d) => (d.junit_xml(), d.lava_test_cases()),
            other => panic!("{file}: {}", other.schema()),
        };
        let path = dir.path().join(format!("{file}.xml"));
        std::fs::write(&path, &xml).unwrap();
        let parsed = Command::new("python3")
            .args([
                "-c",
                "import sys
from junitparser import JUnitXml
for s in JUnitXml.fromfile(sys.argv[1]):
    print(s.name, s.tests, len(list(s)), len(list(s.properties())))",
            ])
            .arg(&path)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&parsed.stdout);
        assert!(
            parsed.status.success(),
            "{file}: {out}{}",
            String::from_utf8_lossy(&parsed.stderr)
        );
        let words: Vec<&str> = out.split_whitespace().collect();
        assert_eq!(words[0], document.schema(), "{file}: {out}");
        assert_eq!(words[1], words[2], "{file}: the count matches the cases");
        let n: usize = words[1].parse().unwrap();
        assert!(n >= cases.max(1), "{file}: {out}");
        assert!(
            words[3].parse::<usize>().unwrap() >= 5,
            "{file}: properties"
        );
        assert_eq!(lava.lines().count(), n, "{file}: one LAVA line per case");
        for line in lava.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            assert_eq!(fields[0], "lava-test-case", "{line}");
            assert!(
                fields[1]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
                "{line}"
            );
            assert!(["pass", "fail"].contains(&fields[3]), "{line}");
        }
    }
}

/// POSTs `doc` to the server at `url` with `token`; asserts that it was new.
#[track_caller]
fn post_new(url: &str, token: &str, doc: &Value) {
    let (status, body) = http(
        url,
        "POST",
        "/api/v1/results",
        Some(token),
        &serde_json::to_vec(doc).unwrap(),
    );
    assert_eq!(status, 201, "{body}");
}

/// The fleet and a board page in headless Chromium: no console error, the
/// HTML references nothing outside the server, and screenshots (written to
/// docs/ when LATLAB_UPDATE_SCREENSHOTS=1).
#[test]
fn the_dashboard_renders_in_headless_chromium_offline() {
    let Some(browser) = chromium::or_skip("dashboard test: chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    let boards = [
        ("rpi4-lab1", "aarch64", "6.6.58-rt45", "rt", 38u64),
        ("imx8-hmi", "aarch64", "6.12.9", "full", 120),
        ("apu2-gw", "x86_64", "6.1.0-28-rt-amd64", "rt", 22),
        ("stm32mp1", "armv7l", "6.6.48-rt40", "rt", 75),
    ];
    let serve = Serve::start(db, free_port(), &[]);
    for (name, arch, kernel, preemption, base) in boards {
        let token = add_board(db, name);
        for n in 0..12usize {
            let mut doc = result(name, n, kernel, (n * 4) as u32, base + (n as u64 * 7) % 11);
            if name == "imx8-hmi" && n == 11 {
                doc["overall"]["latency"]["max"] = (base * 3000).into(); // a regression
                doc["verdict"] = "fail".into();
            }
            doc["system"]["machine"] = arch.into();
            doc["system"]["preemption_model"] = preemption.into();
            post_new(&serve.url, &token, &doc);
        }
        if name == "imx8-hmi" {
            // Other kinds on one board: rows of their own.
            for (n, file) in [
                (12, "respond-pty.json"),
                (13, "watch.json"),
                (14, "lockbench.json"),
            ] {
                let mut doc = other_kind(file, name, n, 60 * n as u32);
                doc["started_at"] = format!("2026-11-{:02}T10:00:00Z", n + 3).into();
                doc["system"]["kernel_release"] = kernel.into();
                doc["system"]["machine"] = arch.into();
                doc["system"]["preemption_model"] = preemption.into();
                post_new(&serve.url, &token, &doc);
            }
        }
    }
    let shots = if std::env::var("LATLAB_UPDATE_SCREENSHOTS").as_deref() == Ok("1") {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/images")
    } else {
        dir.path().to_path_buf()
    };
    std::fs::create_dir_all(&shots).unwrap();
    for (path, file, expect) in [
        ("/", "fleet.png", "imx8-hmi"),
        ("/board/imx8-hmi", "fleet-board.png", "Long-term"),
        ("/compare?a=1&b=2", "fleet-compare.png", "compared"),
    ] {
        let (status, page) = http(&serve.url, "GET", path, None, b"");
        assert_eq!(status, 200, "{path}");
        assert!(page.contains(expect), "{path}");
        // Nothing outside the server: no src/href to another host, no
        // @import, no url() but the SVG's own #fragments.
        for needle in [
            "src=\"http",
            "href=\"http",
            "src=\"//",
            "href=\"//",
            "@import",
            "<link",
            "<img",
        ] {
            assert!(!page.contains(needle), "{path} references {needle}");
        }
        for (at, _) in page.match_indices("url(") {
            assert!(
                page[at + 4..].starts_with('#'),
                "{path}: {}",
                &page[at..at + 40]
            );
        }
        let profile = dir.path().join("profile");
        let _ = std::fs::remove_dir_all(&profile);
        let dom = headless(
            &browser,
            &profile,
            &["--dump-dom".into(), format!("{}{path}", serve.url)],
        );
        let stderr = String::from_utf8_lossy(&dom.stderr);
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("CONSOLE") || l.contains("ERR_PROXY") || l.contains("net::ERR"))
            .collect();
        assert!(errors.is_empty(), "{path}: {errors:?}");
        let dom = String::from_utf8_lossy(&dom.stdout);
        assert!(
            dom.contains(expect) && dom.contains("<svg"),
            "{path} rendered"
        );
        let shot = shots.join(file);
        let _ = std::fs::remove_dir_all(&profile);
        headless(
            &browser,
            &profile,
            &[
                format!("--screenshot={}", shot.display()),
                "--window-size=1280,900".into(),
                "--hide-scrollbars".into(),
                format!("{}{path}", serve.url),
            ],
        );
        let bytes = std::fs::read(&shot).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    }
    let (_, fleet) = http(&serve.url, "GET", "/", None, b"");
    assert!(
        fleet.contains("<span class=\"worse\">1</span>"),
        "the regression is flagged"
    );
}

/// contrib/lava: the test definition's script runs latlab and its lines
/// reach a `lava-test-case` command (a stand-in on the PATH that records
/// its arguments, as LAVA's own does inside a test shell).
#[test]
fn the_lava_test_definition_reports_each_requirement() {
    let contrib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/lava");
    let definition = std::fs::read_to_string(contrib.join("latlab.yaml")).unwrap();
    assert!(definition.contains("format: Lava-Test Test Definition 1.0"));
    assert!(definition.contains("./run-latlab.sh") && definition.contains("./send-results.sh"));
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let recorded = dir.path().join("recorded.txt");
    let stand_in = bin.join("lava-test-case");
    std::fs::write(
        &stand_in,
        format!("#!/bin/sh\necho \"$@\" >> {}\n", recorded.display()),
    )
    .unwrap();
    Command::new("chmod")
        .arg("755")
        .arg(&stand_in)
        .status()
        .unwrap();
    let run = Command::new(contrib.join("run-latlab.sh"))
        .current_dir(dir.path())
        .args(["-b", env!("CARGO_BIN_EXE_latlab"), "-d", "1s"])
        .args([
            "-r",
            "--max-latency 1s --percentile 99.9:1ns",
            "-e",
            "--allow-unprivileged",
        ])
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let result = std::fs::read_to_string(dir.path().join("output/result.txt")).unwrap();
    assert_eq!(result.lines().count(), 2, "{result}");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sent = Command::new(contrib.join("send-results.sh"))
        .arg(dir.path().join("output/result.txt"))
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(sent.status.success(), "{sent:?}");
    let recorded = std::fs::read_to_string(&recorded).unwrap();
    let lines: Vec<&str> = recorded.lines().collect();
    assert_eq!(lines.len(), 2, "{recorded}");
    assert!(
        lines[0].starts_with("max-latency --result pass --measurement "),
        "{recorded}"
    );
    assert!(
        lines[1].starts_with("p99.9-latency --result fail --measurement "),
        "{recorded}"
    );
    assert!(lines[1].ends_with("--units us"));
    assert!(dir.path().join("output/latlab-junit.xml").exists());
}

/// A fixture result of another kind (`respond-pty.json`, `watch.json`,
/// `lockbench.json`) as board `board`'s number `n`, started `minute`
/// minutes after 2026-11-27 09:00 on kernel 6.6.58-rt45.
fn other_kind(file: &str, board: &str, n: usize, minute: u32) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(file);
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["id"] = format!("{board}-{n}").into();
    doc["started_at"] = format!("2026-11-27T{:02}:{:02}:00Z", 9 + minute / 60, minute % 60).into();
    doc["system"]["hostname"] = board.into();
    doc["system"]["kernel_release"] = "6.6.58-rt45".into();
    doc
}

/// One board's day: six runs a quarter of an hour apart (the run baseline,
/// 40-45 µs), two responses under load (580 µs), two watches (500 µs), a
/// lockbench last; pushed over HTTP. Returns the ids by kind.
fn push_a_mixed_day(serve: &Serve, token: &str, board: &str) -> Vec<(&'static str, i64)> {
    let mut docs: Vec<(&'static str, Value)> = Vec::new();
    for n in 0..6usize {
        let mut doc = result(board, n, "6.6.58-rt45", 0, 40 + n as u64);
        doc["started_at"] = format!("2026-11-27T{:02}:{:02}:00Z", 9 + n / 4, (n % 4) * 15).into();
        docs.push(("run", doc));
    }
    for n in 6..8 {
        let mut doc = other_kind("respond-pty.json", board, n, 100 + n as u32);
        doc["one_way"]["latency"]["max"] = 580_000.into();
        doc["load"] = other_kind("run-load.json", board, n, 0)["load"].clone();
        docs.push(("respond", doc));
    }
    for n in 8..10 {
        let mut doc = other_kind("watch.json", board, n, 120 + n as u32);
        doc["overall"]["latency"]["max"] = 500_000.into();
        docs.push(("watch", doc));
    }
    docs.push(("lockbench", other_kind("lockbench.json", board, 10, 180)));
    docs.into_iter()
        .map(|(kind, doc)| {
            let (status, body) = http(
                &serve.url,
                "POST",
                "/api/v1/results",
                Some(token),
                &serde_json::to_vec(&doc).unwrap(),
            );
            assert_eq!(status, 201, "{kind}: {body}");
            let id = serde_json::from_str::<Value>(&body).unwrap()["id"]
                .as_i64()
                .unwrap();
            (kind, id)
        })
        .collect()
}

/// The fleet row of `kind` on the fleet page (one row per series).
fn fleet_row<'a>(fleet: &'a str, kind: &str) -> &'a str {
    fleet
        .split("<tr>")
        .find(|row| row.contains(&format!("<td class=\"l\">{kind}<")))
        .unwrap_or_else(|| panic!("no {kind} row on the fleet page: {fleet}"))
}

/// Regression guard: the dashboard judged a respond result under load
/// (`14.5x baseline`) and watch results against a board's run baseline,
/// showed a lockbench as the board's "latest" run (worst and p99.9 `-`),
/// and put a day's runs into the first 1 % of a days-long axis. Now every
/// figure is per series (kind and setup, kernel, preemption, load), on
/// SQLite and on PostgreSQL.
#[test]
fn the_dashboard_never_judges_one_kind_against_another() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("h.sqlite");
    let pg = PgServer::start_or_skip("the_dashboard_never_judges_one_kind_against_another");
    let mut stores = vec![sqlite.to_str().unwrap().to_string()];
    stores.extend(pg.as_ref().map(|pg| pg.fresh_database()));
    for db in &stores {
        let token = add_board(db, "rpi4");
        let serve = Serve::start(db, free_port(), &[]);
        let ids = push_a_mixed_day(&serve, &token, "rpi4");
        let id_of = |kind: &str| -> Vec<i64> {
            ids.iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, id)| *id)
                .collect()
        };
        let (status, fleet) = http(&serve.url, "GET", "/", None, b"");
        assert_eq!(status, 200);
        assert!(fleet.contains("11 results, 0 regressions"), "{db}: {fleet}");
        // "Latest" per kind: the run row shows the last run, the lockbench its own row.
        let run = fleet_row(&fleet, "run");
        assert!(
            run.contains("<td>45.0</td>") && run.contains("2026-11-27 10:15"),
            "{db}: {run}"
        );
        assert!(
            fleet_row(&fleet, "respond").contains("<td>580.0</td>"),
            "{db}"
        );
        assert!(
            fleet_row(&fleet, "watch").contains("<td>500.0</td>"),
            "{db}"
        );
        assert!(
            fleet_row(&fleet, "lockbench").contains("2026-11-27 12:00"),
            "{db}"
        );
        let (status, board) = http(&serve.url, "GET", "/board/rpi4", None, b"");
        assert_eq!(status, 200);
        assert!(
            !board.contains("× baseline"),
            "{db}: a cross-kind regression: {board}"
        );
        assert!(
            board.contains("11 results in 4 series; 0 regressions"),
            "{db}: {board}"
        );
        // "vs previous" links stay within a series: the second response
        // is compared with the first, never with a run.
        let [first, second] = id_of("respond")[..] else {
            panic!("two responses")
        };
        assert!(
            board.contains(&format!("/compare?a={first}&amp;b={second}\"")),
            "{db}"
        );
        let first_watch = id_of("watch")[0];
        assert!(
            !board.contains(&format!("b={first_watch}\"")),
            "{db}: {board}"
        );
        // A day's results: the time axis is in hours and spans them.
        assert!(
            board.contains("hours since 2026-11-27 09:00 UTC"),
            "{db}: the long-term axis: {board}"
        );
        // The kind filter: only the runs, and their plot with the p99.9.
        let (_, runs) = http(&serve.url, "GET", "/board/rpi4?kind=run", None, b"");
        assert!(runs.contains("6 results in 1 series"), "{db}: {runs}");
        assert!(runs.contains("minutes since 2026-11-27 09:00 UTC"), "{db}");
        // A run that is a regression against the runs is still flagged.
        let mut worse = result("rpi4", 11, "6.6.58-rt45", 0, 100);
        worse["started_at"] = "2026-11-27T13:00:00Z".into();
        let (status, _) = http(
            &serve.url,
            "POST",
            "/api/v1/results",
            Some(&token),
            &serde_json::to_vec(&worse).unwrap(),
        );
        assert_eq!(status, 201);
        let (_, fleet) = http(&serve.url, "GET", "/", None, b"");
        assert!(fleet.contains("12 results, 1 regression "), "{db}: {fleet}");
        assert!(
            fleet_row(&fleet, "run").contains("<span class=\"worse\">1</span>"),
            "{db}"
        );
        let (_, board) = http(&serve.url, "GET", "/board/rpi4", None, b"");
        assert!(board.contains("2.4× baseline 42.0 µs"), "{db}: {board}");
    }
}

/// The page's width and each table's right edge (CSS px) in headless
/// Chromium with a `width`x900 window: the page as served, with one
/// measuring script added, opened from a file.
fn rendered_widths(browser: &Path, dir: &Path, page: &str, width: u32) -> (u32, Vec<u32>) {
    let script = "<script>document.body.setAttribute('data-widths', \
        [document.documentElement.scrollWidth].concat(Array.from(document.querySelectorAll('table'))\
        .map(function(t){return Math.ceil(t.getBoundingClientRect().right);})).join(' '));</script>";
    let file = dir.join("measured.html");
    std::fs::write(&file, page.replace("</body>", &format!("{script}</body>"))).unwrap();
    let profile = dir.join("measure-profile");
    let _ = std::fs::remove_dir_all(&profile);
    let out = headless(
        browser,
        &profile,
        &[
            format!("--window-size={width},900"),
            "--dump-dom".into(),
            format!("file://{}", file.display()),
        ],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let widths: Vec<u32> = dom
        .split_once("data-widths=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .unwrap_or_else(|| panic!("no measurement in {dom}"))
        .0
        .split(' ')
        .map(|w| w.parse().unwrap())
        .collect();
    (widths[0], widths[1..].to_vec())
}

/// Regression guard: the fleet table was 2,101 px wide in a 1280 px window
/// with four boards of long names. Measured in headless Chromium: the
/// fleet and a board page fit 1280 px.
#[test]
fn the_dashboard_tables_fit_1280_px() {
    let Some(browser) = chromium::or_skip("dashboard width test: chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    let serve = Serve::start(db, free_port(), &[]);
    let boards = [
        "imx8mp-hmi-controller-long-name-board-07",
        "stm32mp157-field-unit-with-a-long-hostname",
        "rpi4-lab1",
        "apu2-gateway-x86-64-lab-rack-3-slot-12",
    ];
    for board in boards {
        let token = add_board(db, board);
        push_a_mixed_day(&serve, &token, board);
    }
    for path in [
        "/".to_string(),
        format!("/board/{}", boards[0]),
        format!("/board/{}?kind=watch", boards[3]),
    ] {
        let (status, page) = http(&serve.url, "GET", &path, None, b"");
        assert_eq!(status, 200, "{path}");
        let (page_width, tables) = rendered_widths(&browser, dir.path(), &page, 1280);
        assert!(!tables.is_empty(), "{path}: no table measured");
        assert!(
            page_width <= 1280,
            "{path}: the page is {page_width} px wide"
        );
        for right in tables {
            assert!(right <= 1280, "{path}: a table ends at {right} px");
        }
    }
}
