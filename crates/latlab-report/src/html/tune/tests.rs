//! The HTML section of a tune result: its tables, and the forest plots
//! drawn where their numbers say.

use latlab_tune::result::Outcome;

use crate::formats::HtmlSection;
use crate::text::tune::tests::sample_tune;

/// The section of `r`, as `latlab report` would place it.
fn section(r: &latlab_tune::result::TuneResult) -> String {
    let mut h = String::new();
    r.html_section(&mut h, "tune1", "latlab tune on vm");
    h
}

/// Checks that every element opened is closed in order (void HTML
/// elements and `/>` aside), and returns the number of elements.
fn balanced(html: &str) -> usize {
    let mut open: Vec<String> = Vec::new();
    let mut count = 0;
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        let end = rest[start..].find('>').expect("unclosed tag") + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if tag.starts_with('!') || tag.ends_with('/') || ["br", "meta"].contains(&name.as_str()) {
            count += 1;
        } else if tag.starts_with('/') {
            assert_eq!(open.pop().as_deref(), Some(name.as_str()), "at <{tag}>");
        } else {
            count += 1;
            open.push(name);
        }
    }
    assert!(open.is_empty(), "left open: {open:?}");
    count
}

/// The x coordinates of the path drawn in `color`, and the x of the
/// `no change` line, in one SVG.
fn beam_and_zero(svg: &str, color: &str) -> (Vec<f64>, f64) {
    let path = svg
        .lines()
        .find(|l| l.starts_with("<path") && l.contains(&format!("stroke=\"{color}\"")))
        .unwrap_or_else(|| panic!("no {color} path in {svg}"));
    let d = path
        .split("d=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let xs = d
        .split(['M', 'L'])
        .filter_map(|p| p.split_whitespace().next()?.parse().ok())
        .collect();
    let zero = svg
        .lines()
        .find(|l| l.starts_with("<line class=\"marker\""))
        .and_then(|l| l.split("x1=\"").nth(1)?.split('"').next()?.parse().ok())
        .expect("a no-change line");
    (xs, zero)
}

#[test]
fn the_section_is_well_formed_and_names_each_verdict_with_its_interval() {
    let html = section(&sample_tune());
    assert!(balanced(&html) > 100);
    assert!(!html.contains("NaN") && !html.contains("inf"), "{html}");
    let mut lines = html.lines();
    let row = lines
        .find(|l| l.contains("/proc/irq/24") && l.contains("[-43.0, -33.0]"))
        .expect(&html);
    let why = lines.next().unwrap();
    assert!(
        why.contains("<i>p99 -38.5 us (-38 %) [-43.0, -33.0] vs noise 3.5 us: kept</i>"),
        "{why}"
    );
    assert!(
        row.contains("<span class=\"badge pass\">kept</span>"),
        "{row}"
    );
    assert!(
        row.contains("<td>-38.5 [-43.0, -33.0]</td><td>-77.0 [-86.0, -66.0]</td>"),
        "{row}"
    );
    assert!(row.contains("<td>97.1 %</td><td>4 + 4</td>"), "{row}");
    assert!(html.contains("<span class=\"badge fail\">dropped</span>"));
    assert!(html.contains("within noise 3.5 us: dropped"));
    assert!(html.contains("refused: a per-CPU kernel thread cannot move"));
    // Before/after: p99 142 → 98 µs, coloured better.
    assert!(html.contains("<td class=\"better\">-31.0 %</td>"), "{html}");
    // The boot line, escaped.
    assert!(html.contains("setenv bootargs &quot;${bootargs} nohz_full=1 preempt=full&quot;"));
    assert!(html.contains("<td class=\"l\"><code>preempt=full</code></td>"));
    assert!(html.contains("<p>1 fix kept, 1 dropped. Each dropped fix was undone after its rounds; 2 knobs restored at the end; nothing left changed.</p>"));
    assert!(html.contains("<ul class=\"warn\"><li>the load&#39;s io ran on tmpfs</li></ul>"));
}

#[test]
fn the_forest_plot_draws_the_kept_fix_left_of_no_change_and_the_dropped_across_it() {
    let r = sample_tune();
    let plots = r.html_plots("tune1");
    let ids: Vec<&str> = plots.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "tune1-before-after",
            "tune1-effect-p99",
            "tune1-effect-p999",
            "tune1-effect-max"
        ]
    );
    let svg = plots[1].to_svg();
    balanced(&svg);
    let (kept, zero) = beam_and_zero(&svg, "#2a9d4a");
    assert_eq!(kept.len(), 10, "an I-beam with a tick: {kept:?}");
    assert!(kept.iter().all(|&x| x < zero), "{kept:?} vs {zero}");
    let (dropped, _) = beam_and_zero(&svg, "#d3452c");
    let (lo, hi) = dropped
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    assert!(lo < zero && zero < hi, "{dropped:?} vs {zero}");
    // The noise band (±3.5 µs) is centred on no change.
    let band = svg
        .lines()
        .find(|l| l.starts_with("<rect class=\"band\""))
        .expect(&svg);
    let attr = |name: &str| -> f64 {
        band.split(&format!(" {name}=\""))
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(
        (attr("x") + attr("width") / 2.0 - zero).abs() < 0.2,
        "{band} vs {zero}"
    );
    assert!(svg.contains(">noise ±3.5 µs</text>"), "{svg}");
    assert!(svg.contains(">#1 kept</text>") && svg.contains(">#2 dropped</text>"));
    // Before and after: two series of four points each, and the deadline.
    let before_after = plots[0].to_svg();
    assert_eq!(before_after.matches("<circle").count(), 8, "{before_after}");
    assert!(before_after.contains(">deadline 100 us</text>"));
}

#[test]
fn a_plan_with_nothing_measured_has_no_effect_plots() {
    let mut r = sample_tune();
    for f in &mut r.fixes {
        f.outcome = Outcome::Proposed;
    }
    r.after = None;
    let plots = r.html_plots("tune1");
    assert_eq!(plots.len(), 1);
    assert_eq!(plots[0].to_svg().matches("<circle").count(), 4);
    let html = section(&r);
    balanced(&html);
    assert!(!html.contains("<td class=\"l\">after</td>"));
    assert!(!html.contains("badge pass"));
}
