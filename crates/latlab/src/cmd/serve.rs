//! `latlab serve`: the arguments, resolved into the fleet's server
//! ([`latlab_fleet::server`]). A board build (without the `serve` feature)
//! keeps the command and its flags, and says where the server is.

use std::net::SocketAddr;
use std::process::ExitCode;

use crate::cmd::history::DbArgs;

/// Arguments of `latlab serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Address and port to listen on (loopback by default: put a TLS proxy
    /// in front to serve a network).
    #[arg(long, default_value = "127.0.0.1:8086", value_name = "ADDR:PORT")]
    pub listen: SocketAddr,
    /// Register a board in the store, print its token (once: only its hash
    /// is kept) and exit.
    #[arg(long, value_name = "NAME")]
    pub add_board: Option<String>,
    /// Require this token (as `Authorization: Bearer TOKEN` or `?token=`)
    /// for reading too; by default the dashboard is open to read.
    #[arg(long, value_name = "TOKEN")]
    pub read_token: Option<String>,
    /// Largest result accepted, MiB.
    #[arg(long, default_value_t = 16, value_name = "MIB")]
    pub max_body_mib: usize,
    /// A result is a regression when its worst latency is this many
    /// percent above the baseline of its series (the same board, kind and
    /// setup, kernel, preemption model and load).
    #[arg(long, default_value_t = 50.0, value_name = "PERCENT")]
    pub regression_threshold: f64,
    /// Database connections at most (requests beyond wait for one).
    #[arg(long, default_value_t = 16, value_name = "N")]
    pub db_connections: usize,
}

/// Runs `latlab serve`.
#[cfg(feature = "serve")]
pub fn execute(args: ServeArgs) -> anyhow::Result<ExitCode> {
    use latlab_fleet::server::{self, ServerConfig};
    let mut history = latlab_history::History::open_location(&args.db.location()?)?;
    if let Some(name) = &args.add_board {
        let token = server::add_board(&mut history, name)?;
        println!("{token}");
        eprintln!(
            "board {name:?} added to {}; its token is above, shown this once (the store keeps only its hash).\n\
             On the board: put it in a file readable only by root, then\n  \
             latlab run ... --push http://SERVER:PORT --token-file FILE",
            history.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let config = ServerConfig {
        listen: args.listen,
        read_token: args.read_token,
        max_body: args.max_body_mib << 20,
        regression_threshold: args.regression_threshold / 100.0,
        db_connections: args.db_connections,
    };
    server::serve(config, history, |local, store| {
        println!("latlab serve: listening on http://{local}/ (store: {store})")
    })?;
    Ok(ExitCode::SUCCESS)
}

/// A board build has no server: says so, and where to find one.
#[cfg(not(feature = "serve"))]
pub fn execute(_args: ServeArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "this latlab was built without the server (a board build, `make dist`): \
         run `latlab serve` from a full build (cargo build, or cargo install latlab), \
         and push to it from here with `latlab push --to URL` or `--push URL`"
    )
}
