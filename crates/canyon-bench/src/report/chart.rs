//! SVG charts (plotters, SVG backend only): throughput against threads, latency
//! against throughput, throughput against CPUs (with the ideal linear line),
//! throughput against open connections. One series per target; with several
//! rounds, each point is the mean of the rounds.

use crate::result::{RunReport, Status, StepResult};
use plotters::prelude::*;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// A solid line with points, in the colour of target `n` (0 = A).
    Solid(usize),
    /// A dashed line with points, in the colour of target `n` (p99 next to p95).
    Dashed(usize),
    /// A grey dashed line without points (ideal scaling).
    Reference,
}

/// A line of points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points (x, y) in data units.
    pub points: Vec<(f64, f64)>,
    /// How it is drawn.
    pub style: Style,
}

/// One chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// File name under `charts/`.
    pub file: &'static str,
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Logarithmic x axis (base 2 for threads and CPUs, 10 for connections).
    pub log_x: Option<f64>,
    /// The lines.
    pub series: Vec<Series>,
}

/// Means over rounds of `(x, y)` per step for one target.
fn points(
    report: &RunReport,
    label: &str,
    x: fn(&StepResult) -> Option<f64>,
    y: fn(&StepResult) -> f64,
) -> Vec<(f64, f64)> {
    let mut by_step: std::collections::BTreeMap<usize, (f64, f64, u32)> = Default::default();
    for s in report
        .steps
        .iter()
        .filter(|s| s.target == label && s.status == Status::Ok)
    {
        if let Some(xv) = x(s) {
            let e = by_step.entry(s.step).or_insert((0.0, 0.0, 0));
            e.0 += xv;
            e.1 += y(s);
            e.2 += 1;
        }
    }
    let mut v: Vec<(f64, f64)> = by_step
        .values()
        .map(|(x, y, n)| (x / f64::from(*n), y / f64::from(*n)))
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

fn target_series(
    report: &RunReport,
    x: fn(&StepResult) -> Option<f64>,
    lines: &[(fn(&StepResult) -> f64, &str)],
) -> Vec<Series> {
    let mut out = Vec::new();
    for (i, t) in report.targets.iter().enumerate() {
        for (j, (y, suffix)) in lines.iter().enumerate() {
            out.push(Series {
                name: format!("{}: {}{suffix}", t.label, t.name),
                points: points(report, &t.label, x, *y),
                style: if j == 0 {
                    Style::Solid(i)
                } else {
                    Style::Dashed(i)
                },
            });
        }
    }
    out.retain(|s| !s.points.is_empty());
    out
}

/// The charts that fit the report's load shape.
pub fn charts(report: &RunReport) -> Vec<Chart> {
    let wl = &report.plan.workload;
    let mut out = Vec::new();
    let tps = |s: &StepResult| s.txn_per_s;
    match report.plan.shape.as_str() {
        "threads" | "fixed" => out.push(Chart {
            file: "throughput-vs-threads.svg",
            title: format!("{wl}: throughput vs client threads"),
            x_label: "client threads".into(),
            y_label: "transactions / s".into(),
            log_x: Some(2.0),
            series: target_series(report, |s| Some(f64::from(s.threads)), &[(tps, "")]),
        }),
        "cpus" => {
            let mut series = target_series(report, |s| s.cpus.map(f64::from), &[(tps, "")]);
            // Ideal: linear from the first point of the first target.
            if let Some(&(x0, y0)) = series.first().and_then(|s| s.points.first()) {
                let xs: Vec<f64> = series[0].points.iter().map(|p| p.0).collect();
                series.push(Series {
                    name: "linear scaling".into(),
                    points: xs.iter().map(|x| (*x, y0 * x / x0)).collect(),
                    style: Style::Reference,
                });
            }
            out.push(Chart {
                file: "throughput-vs-cpus.svg",
                title: format!("{wl}: throughput vs CPUs"),
                x_label: "CPUs the server may use".into(),
                y_label: "transactions / s".into(),
                log_x: None,
                series,
            });
        }
        "connections" => out.push(Chart {
            file: "throughput-vs-connections.svg",
            title: format!("{wl}: throughput vs open connections"),
            x_label: "open connections".into(),
            y_label: "transactions / s".into(),
            log_x: Some(10.0),
            series: target_series(report, |s| Some(f64::from(s.connections)), &[(tps, "")]),
        }),
        _ => {}
    }
    let lat = target_series(
        report,
        |s| Some(s.txn_per_s),
        &[
            (|s| s.latency_ms.p95, " p95"),
            (|s| s.latency_ms.p99, " p99"),
        ],
    );
    out.push(Chart {
        file: "latency-vs-throughput.svg",
        title: format!("{wl}: response time vs throughput"),
        x_label: "transactions / s".into(),
        y_label: "latency, ms".into(),
        log_x: None,
        series: lat,
    });
    out.retain(|c| c.series.iter().any(|s| !s.points.is_empty()));
    out
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// A tick label: `1`, `2.5`, `10k`, `20k`.
fn tick(v: f64) -> String {
    if v.abs() >= 10_000.0 {
        format!("{:.0}k", v / 1000.0)
    } else if v.abs() >= 100.0 || (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Renders a chart as an SVG document.
pub fn render_svg(c: &Chart) -> Result<String, String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", c.file);
    let tx = |x: f64| match c.log_x {
        Some(b) => x.max(f64::MIN_POSITIVE).log(b),
        None => x,
    };
    let all: Vec<(f64, f64)> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|&(x, y)| (tx(x), y)))
        .collect();
    if all.is_empty() {
        return Err(format!("{}: no points", c.file));
    }
    let (mut x0, mut x1) = all
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    if (x1 - x0).abs() < 1e-9 {
        let pad = if c.log_x.is_some() {
            0.5
        } else {
            (x0.abs() * 0.1).max(1.0)
        };
        x0 -= pad;
        x1 += pad;
    } else {
        let pad = (x1 - x0) * 0.05;
        x0 -= pad;
        x1 += pad;
    }
    if c.log_x.is_none() && x0 < 0.0 && all.iter().all(|p| p.0 >= 0.0) {
        x0 = 0.0;
    }
    // Headroom above the data for the legend (upper left), a line per series.
    let headroom = 1.12 + 0.09 * c.series.len() as f64;
    let y1 = all.iter().map(|p| p.1).fold(0.0, f64::max) * headroom;
    let y1 = if y1 > 0.0 { y1 } else { 1.0 };

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 440)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&c.title, ("sans-serif", 20))
            .margin(14)
            .x_label_area_size(46)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, 0.0..y1)
            .map_err(|e| err(&e))?;
        let base = c.log_x;
        // On a log axis only whole powers are labelled (1, 2, 4, 8 threads;
        // 100, 1000, 10k connections): the mesh's other ticks would read 1.1,
        // 1.2 ...
        let xfmt = move |v: &f64| match base {
            Some(b) if (v - v.round()).abs() < 1e-6 => tick(b.powf(v.round())),
            Some(_) => String::new(),
            None => tick(*v),
        };
        chart
            .configure_mesh()
            .x_desc(c.x_label.as_str())
            .y_desc(c.y_label.as_str())
            .x_label_formatter(&xfmt)
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| err(&e))?;
        for s in &c.series {
            let pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (tx(x), y)).collect();
            let (color, dashed, dots) = match s.style {
                Style::Solid(i) => (COLORS[i % COLORS.len()], false, true),
                Style::Dashed(i) => (COLORS[i % COLORS.len()], true, true),
                Style::Reference => (RGBColor(150, 150, 150), true, false),
            };
            let style = color.stroke_width(2);
            if dashed {
                chart
                    .draw_series(DashedLineSeries::new(pts.clone(), 6, 4, style))
                    .map_err(|e| err(&e))?
                    .label(s.name.as_str())
                    .legend(move |p| {
                        // Composed elements take coordinates relative to `p`.
                        EmptyElement::at(p)
                            + PathElement::new(vec![(0, 0), (7, 0)], style)
                            + PathElement::new(vec![(11, 0), (18, 0)], style)
                    });
            } else {
                chart
                    .draw_series(LineSeries::new(pts.clone(), style))
                    .map_err(|e| err(&e))?
                    .label(s.name.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
            }
            if dots {
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
                    .map_err(|e| err(&e))?;
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_xml, sample_report};

    #[test]
    fn charts_are_well_formed_svg() {
        let mut r = sample_report();
        for shape in ["threads", "cpus", "connections", "paced", "fixed"] {
            r.plan.shape = shape.into();
            for (i, s) in r.steps.iter_mut().enumerate() {
                s.cpus = Some(i as u32 + 1);
                s.connections = 100 * 10u32.pow(i as u32);
            }
            let cs = charts(&r);
            assert!(!cs.is_empty(), "{shape}");
            for c in cs {
                let svg = render_svg(&c).expect("renders");
                check_xml(&svg)
                    .unwrap_or_else(|e| panic!("{} ({shape}) is not well-formed: {e}", c.file));
                assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
                assert!(svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
                assert!(
                    svg.contains("<polyline") || svg.contains("<circle"),
                    "{} has no data",
                    c.file
                );
                assert!(svg.contains(&c.title), "title text in {}", c.file);
            }
        }
    }

    #[test]
    fn cpu_chart_has_an_ideal_line() {
        let mut r = sample_report();
        r.plan.shape = "cpus".into();
        for (i, s) in r.steps.iter_mut().enumerate() {
            s.cpus = Some(i as u32 + 1);
        }
        let c = &charts(&r)[0];
        assert_eq!(c.file, "throughput-vs-cpus.svg");
        let ideal = c
            .series
            .iter()
            .find(|s| s.style == Style::Reference)
            .expect("ideal line");
        let first = c.series[0].points[0];
        assert_eq!(ideal.points[1].1, first.1 * ideal.points[1].0 / first.0);
    }

    #[test]
    fn one_point_charts_render() {
        let mut r = sample_report();
        r.steps.truncate(1);
        for c in charts(&r) {
            check_xml(&render_svg(&c).expect("renders")).expect("well-formed");
        }
    }

    #[test]
    fn ticks() {
        assert_eq!(tick(1.0), "1");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(20_000.0), "20k");
        assert_eq!(tick(316.2), "316");
    }
}
