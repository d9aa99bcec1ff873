//! A private PostgreSQL server for one test, from Debian's `postgresql`
//! package: `initdb` into a temporary directory, the server listening only
//! on a Unix socket in that directory, run as `nobody` when the test runs
//! as root (PostgreSQL refuses root) and as the test's own user otherwise.
//! It is stopped and its directory removed when dropped, also when the test
//! panics.
//!
//! ```no_run
//! let Some(pg) = latlab_testkit::PgServer::start_or_skip("my_test") else { return };
//! let url = pg.url();
//! assert!(url.starts_with("postgres://"));
//! ```

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The user a server started by root runs as.
const UNPRIVILEGED_USER: (&str, u32, u32) = ("nobody", 65534, 65534);

/// A private PostgreSQL server for one test.
pub struct PgServer {
    bin: PathBuf,
    dir: tempfile::TempDir,
    child: Option<Child>,
    as_user: Option<(u32, u32)>,
    databases: std::sync::atomic::AtomicUsize,
}

/// Where the PostgreSQL programs are: `$LATLAB_PG_BIN`, else the newest
/// `/usr/lib/postgresql/*/bin` with `initdb`, else `pg_config --bindir`.
pub fn postgres_bin() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("LATLAB_PG_BIN") {
        return Some(PathBuf::from(dir)).filter(|d| d.join("initdb").exists());
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    dir.join("initdb").exists().then_some(dir)
}

impl PgServer {
    /// Starts a server, or skips `test` with the reason (see
    /// [`crate::skip::require`]) and returns `None` (no PostgreSQL
    /// installed). Under `LATLAB_REQUIRE_PRIVILEGE=1` a server that cannot
    /// be started fails the test instead.
    pub fn start_or_skip(test: &str) -> Option<PgServer> {
        match PgServer::start() {
            Ok(server) => Some(server),
            Err(reason) => {
                crate::skip::require(&format!("{test}: a PostgreSQL server"), false, &reason);
                None
            }
        }
    }

    /// Starts a server in a new temporary directory.
    pub fn start() -> Result<PgServer, String> {
        let bin = postgres_bin().ok_or(
            "no PostgreSQL server programs (install Debian's `postgresql` package, \
             or set LATLAB_PG_BIN to the directory holding initdb)",
        )?;
        let dir = tempfile::Builder::new()
            .prefix("latlab-pg")
            .tempdir()
            .map_err(|e| format!("temporary directory: {e}"))?;
        // SAFETY: getuid has no preconditions.
        let as_user =
            (unsafe { libc::getuid() } == 0).then_some((UNPRIVILEGED_USER.1, UNPRIVILEGED_USER.2));
        if let Some((uid, gid)) = as_user {
            chown(dir.path(), uid, gid)?;
        }
        let mut server = PgServer {
            bin,
            dir,
            child: None,
            as_user,
            databases: Default::default(),
        };
        let data = server.data_dir();
        let out = server
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "latlab", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        server.start_again()?;
        Ok(server)
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(self.bin.join(program));
        if let Some((uid, gid)) = self.as_user {
            cmd.uid(uid).gid(gid).env("HOME", self.dir.path());
        }
        cmd.env("LC_ALL", "C");
        cmd
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The directory of the server's Unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The connection URL of database `postgres` as user `latlab`.
    pub fn url(&self) -> String {
        self.url_of("postgres")
    }

    /// The connection URL of database `name`.
    pub fn url_of(&self, name: &str) -> String {
        format!(
            "postgres://latlab@localhost/{name}?host={}",
            self.socket_dir().display()
        )
    }

    /// A new empty database; its URL.
    pub fn fresh_database(&self) -> String {
        let n = self
            .databases
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("test{n}");
        let mut client = postgres::Client::connect(&self.url(), postgres::NoTls)
            .expect("connecting to the test server");
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("creating a database");
        self.url_of(&name)
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Starts the server (after [`PgServer::stop`]); returns once it
    /// accepts connections.
    pub fn start_again(&mut self) -> Result<(), String> {
        if self.child.is_some() {
            return Ok(());
        }
        let log = std::fs::File::create(self.dir.path().join("server.log"))
            .map_err(|e| format!("server log: {e}"))?;
        if let Some((uid, gid)) = self.as_user {
            chown(&self.dir.path().join("server.log"), uid, gid)?;
        }
        let child = self
            .command("postgres")
            .arg("-D")
            .arg(self.data_dir())
            .arg("-k")
            .arg(self.socket_dir())
            .args([
                "-c",
                "listen_addresses=",
                "-c",
                "max_connections=300",
                "-c",
                "shared_buffers=32MB",
                "-c",
                "fsync=off",
                "-c",
                "full_page_writes=off",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting postgres: {e}"))?;
        self.child = Some(child);
        let start = Instant::now();
        loop {
            if postgres::Client::connect(&self.url(), postgres::NoTls).is_ok() {
                return Ok(());
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                return Err(format!("postgres exited ({status}): {}", self.log()));
            }
            if start.elapsed() > Duration::from_secs(60) {
                return Err(format!("postgres did not start in 60 s: {}", self.log()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// Stops the server (fast shutdown: open connections are dropped).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: signalling our own child, which has not been reaped.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            let start = Instant::now();
            while matches!(child.try_wait(), Ok(None)) {
                if start.elapsed() > Duration::from_secs(20) {
                    let _ = child.kill();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.wait();
        }
    }

    /// Stops and starts the server again.
    pub fn restart(&mut self) -> Result<(), String> {
        self.stop();
        self.start_again()
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn chown(path: &Path, uid: u32, gid: u32) -> Result<(), String> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
        .map_err(|e| format!("chown {} to uid {uid}: {e}", path.display()))
}
