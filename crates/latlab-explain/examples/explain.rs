//! `latlab explain` without the rest of latlab: explains one trace and
//! prints the ranked causes (or the whole JSON with `--json`; the terminal
//! report is latlab-report's). Handy to work on the analysis alone:
//! `cargo run --release -p latlab-explain --example explain -- trace.dat
//! [threshold] [--json]`.

use std::path::Path;

use latlab_explain::{explain_file, Options, Threshold};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let rest: Vec<&String> = args.iter().filter(|a| *a != "--json").collect();
    let Some(trace) = rest.first() else {
        return Err("usage: explain TRACE [THRESHOLD] [--json]".into());
    };
    let mut opts = Options::default();
    if let Some(t) = rest.get(1) {
        opts.threshold = Threshold::parse(t)?;
    }
    let report = explain_file(Path::new(trace.as_str()), &opts)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} late of {} periods (over {} ns)",
            report.late, report.periods, report.threshold_ns
        );
        for cause in &report.causes {
            println!("{:5.1} %  {}", cause.share * 100.0, cause.description);
        }
    }
    Ok(())
}
