//! A board build (`cargo build --no-default-features`, as `make dist`
//! builds the board binaries): the server and PostgreSQL are left out, and
//! asking for them says so instead of failing obscurely. Runs only in such
//! a build: `cargo test -p latlab --no-default-features --test board_build`.
#![cfg(not(feature = "serve"))]

use assert_cmd::Command;

fn latlab() -> Command {
    Command::cargo_bin("latlab").unwrap()
}

#[test]
fn serve_in_a_board_build_says_where_the_server_is() {
    let dir = tempfile::tempdir().unwrap();
    let out = latlab()
        .args(["serve", "--db"])
        .arg(dir.path().join("h.sqlite"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("built without the server") && err.contains("full build"),
        "{err}"
    );
    // Still listed, with its flags, for a user who reads the help.
    let help = latlab().arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("serve"));
}

#[cfg(not(feature = "postgres"))]
#[test]
fn a_postgres_url_in_a_board_build_is_refused_with_the_reason() {
    let out = latlab()
        .args(["history", "--db", "postgres://latlab:secret@db.lab/latlab"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("built without PostgreSQL"), "{err}");
    assert!(!err.contains("secret"), "the password is not shown: {err}");
}
