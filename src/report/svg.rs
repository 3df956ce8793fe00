//! SVG plots for the HTML reports, drawn with plotters into strings: the
//! distribution of each side's values, values in run order, and intervals
//! against a band (a ratio's CI against the equivalence margin). Text is left to
//! the browser (SVG `<text>`), so no fonts are needed here. A series of more
//! than `MAX_POINTS` values is drawn as a seeded, evenly spread sample of them
//! (`drawn`), so a page's size is bounded whatever the number of runs.

use crate::run::metric::Unit;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Colours for series 0, 1, … (A, B, further builds), readable on white.
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

const WIDTH: u32 = 760;

/// The most points a plot draws of one series. Each is about 100 bytes of
/// SVG: 2,000 a series keeps a page of two sides in the hundreds of
/// kilobytes, where drawing every run of a million a side made 386 MB.
pub const MAX_POINTS: usize = 2_000;

/// The seed of the sample `drawn` takes: fixed, so a report renders the same
/// page every time.
const SAMPLE_SEED: u64 = 0x6768_6f73_7470_6c74;

/// The positions (ascending) of the points a plot draws of a series of `n`:
/// every one up to `MAX_POINTS`; past it, `MAX_POINTS` of them, one drawn at
/// random (a seeded ChaCha8) from each of `MAX_POINTS` equal stretches of
/// `0..n`, so the sample follows the run order evenly and aliases with no
/// period in the data.
pub fn drawn(n: usize) -> Vec<usize> {
    if n <= MAX_POINTS {
        return (0..n).collect();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(SAMPLE_SEED);
    let edge = |k: usize| (k as u128 * n as u128 / MAX_POINTS as u128) as usize;
    (0..MAX_POINTS)
        .map(|k| rng.random_range(edge(k)..edge(k + 1)))
        .collect()
}

/// How many of `n` points a plot draws.
pub fn drawn_count(n: usize) -> usize {
    n.min(MAX_POINTS)
}

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One labelled sample.
pub struct Series<'a> {
    pub label: &'a str,
    pub values: &'a [f64],
}

/// How values are shown on an axis: the unit scaled once for the whole plot.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    factor: f64,
    suffix: &'static str,
}

impl Scale {
    /// The scale that shows values up to `largest` (in `unit`) with few digits.
    pub fn for_values(unit: Unit, largest: f64) -> Scale {
        let scale = |factor, suffix| Scale { factor, suffix };
        match unit {
            Unit::Seconds | Unit::Nanoseconds => {
                let ns = if unit == Unit::Seconds { 1e9 } else { 1.0 };
                match largest * ns {
                    x if x >= 1e9 => scale(ns / 1e9, "s"),
                    x if x >= 1e6 => scale(ns / 1e6, "ms"),
                    x if x >= 1e3 => scale(ns / 1e3, "µs"),
                    _ => scale(ns, "ns"),
                }
            }
            Unit::Kibibytes => match largest {
                x if x >= 1024.0 * 1024.0 => scale(1.0 / (1024.0 * 1024.0), "GiB"),
                x if x >= 1024.0 => scale(1.0 / 1024.0, "MiB"),
                _ => scale(1.0, "KiB"),
            },
            Unit::None => scale(1.0, ""),
        }
    }

    pub fn apply(self, x: f64) -> f64 {
        x * self.factor
    }

    pub fn suffix(self) -> &'static str {
        self.suffix
    }
}

fn finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Pad a range by 5% each side (and open up a zero-width one).
fn padded((lo, hi): (f64, f64)) -> (f64, f64) {
    let span = if hi > lo {
        hi - lo
    } else {
        lo.abs().max(1e-12)
    };
    (lo - 0.05 * span, hi + 0.05 * span)
}

/// A deterministic vertical jitter in [-0.25, 0.25] for point `i`, so equal
/// values stay visible and the picture is the same on every render.
fn jitter(i: usize) -> f64 {
    let golden = (i as f64 * 0.618_033_988_75).fract();
    (golden - 0.5) * 0.5
}

fn quartiles(values: &[f64]) -> Option<(f64, f64, f64)> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let position = q * (sorted.len() - 1) as f64;
        let (below, frac) = (position.floor() as usize, position.fract());
        let above = (below + 1).min(sorted.len() - 1);
        sorted[below] + frac * (sorted[above] - sorted[below])
    };
    Some((at(0.25), at(0.5), at(0.75)))
}

type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// Draw on a white canvas `height` pixels tall. Any plotting failure becomes a
/// short SVG that says so, never an error: a report must not be lost over a picture.
fn render(height: u32, draw: impl FnOnce(&Area) -> Drawn) -> String {
    let mut svg = String::new();
    let result = (|| -> Drawn {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present()?;
        Ok(())
    })();
    match result {
        Ok(()) => svg,
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"24\">\
             <text x=\"4\" y=\"16\">plot unavailable: {}</text></svg>",
            super::escape::html(&e.to_string())
        ),
    }
}

/// A chart with one labelled row per entry of `labels` (row i at y = i).
fn row_chart<'a, 'b>(
    root: &'a Area<'b>,
    (lo, hi): (f64, f64),
    labels: &[&str],
    x_desc: &str,
) -> Result<Chart<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(root)
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(110)
        .build_cartesian_2d(lo..hi, -0.5..labels.len() as f64 - 0.5)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .disable_y_mesh()
        .y_labels(labels.len())
        .y_label_formatter(&|y| {
            let i = y.round();
            let on_row = (y - i).abs() < 1e-6 && i >= 0.0;
            labels
                .get(i as usize)
                .filter(|_| on_row)
                .map_or(String::new(), |l| l.to_string())
        })
        .x_desc(x_desc)
        .draw()?;
    Ok(chart)
}

/// A plain x–y chart over the padded ranges of `x` and `y`, with headroom
/// above the data for a legend of `legend_rows` entries.
fn xy_chart<'a, 'b>(
    root: &'a Area<'b>,
    x: (f64, f64),
    y: (f64, f64),
    legend_rows: usize,
    (x_desc, y_desc): (&str, &str),
) -> Result<Chart<'a, 'b>, Box<dyn std::error::Error>> {
    let ((x_lo, x_hi), (y_lo, y_hi)) = (padded(x), padded(y));
    let y_hi = y_hi + (y_hi - y_lo) * 0.09 * legend_rows as f64;
    let mut chart = ChartBuilder::on(root)
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|x| tick(*x))
        .y_label_formatter(&|y| tick(*y))
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()?;
    Ok(chart)
}

/// Lines through points, one colour per series, with a legend at `corner`.
fn draw_lines<'a, 'b: 'a>(
    chart: &mut Chart<'a, 'b>,
    series: &[(&str, Vec<(f64, f64)>)],
    line_opacity: f64,
    point_radius: i32,
    corner: SeriesLabelPosition,
) -> Drawn {
    for (i, (label, points)) in series.iter().enumerate() {
        let c = color(i);
        chart
            .draw_series(LineSeries::new(
                points.clone(),
                c.mix(line_opacity).stroke_width(2),
            ))?
            .label(*label)
            .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
        chart.draw_series(
            points
                .iter()
                .map(|&p| Circle::new(p, point_radius, c.filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .position(corner)
        .draw()?;
    Ok(())
}

/// The x and y ranges of every point, or an error to show instead of a plot.
fn point_ranges(series: &[(&str, Vec<(f64, f64)>)]) -> Result<[(f64, f64); 2], &'static str> {
    let all = || series.iter().flat_map(|(_, points)| points.iter());
    let xs = finite_range(all().map(|p| p.0)).ok_or("no values")?;
    let ys = finite_range(all().map(|p| p.1)).ok_or("no values")?;
    Ok([xs, ys])
}

/// Each series as a row of jittered points (at most `MAX_POINTS`, see
/// `drawn`) with its interquartile box and median (of every value).
pub fn distribution(series: &[Series], unit: Unit, x_label: &str) -> String {
    let height = 70 + 60 * series.len().max(1) as u32;
    render(height, |root| {
        let range = finite_range(series.iter().flat_map(|s| s.values.iter().copied()))
            .ok_or("no values")?;
        let scale = Scale::for_values(unit, range.1.abs().max(range.0.abs()));
        let x = padded((scale.apply(range.0), scale.apply(range.1)));
        let labels: Vec<&str> = series.iter().map(|s| s.label).collect();
        let mut chart = row_chart(root, x, &labels, &axis_label(x_label, scale))?;
        for (row, s) in series.iter().enumerate() {
            let y = row as f64;
            let c = color(row);
            if let Some((q1, median, q3)) = quartiles(s.values) {
                let (q1, median, q3) = (scale.apply(q1), scale.apply(median), scale.apply(q3));
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(q1, y - 0.35), (q3, y + 0.35)],
                    c.mix(0.15).filled(),
                )))?;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(median, y - 0.4), (median, y + 0.4)],
                    c.stroke_width(3),
                )))?;
            }
            let points = drawn(s.values.len())
                .into_iter()
                .map(|i| (i, s.values[i]))
                .filter(|(_, v)| v.is_finite());
            chart.draw_series(points.map(|(i, v)| {
                Circle::new((scale.apply(v), y + jitter(i)), 3, c.mix(0.7).filled())
            }))?;
        }
        Ok(())
    })
}

/// Values by run number (x), one line of points per series: drift, warm-up
/// effects and load spikes show up here and nowhere else. At most
/// `MAX_POINTS` of a series are drawn (`drawn`); the axes span all of them.
pub fn run_order(series: &[(&str, Vec<(f64, f64)>)], unit: Unit, y_label: &str) -> String {
    render(300, |root| {
        let [xs, ys] = point_ranges(series)?;
        let scale = Scale::for_values(unit, ys.1.abs().max(ys.0.abs()));
        let scaled: Vec<(&str, Vec<(f64, f64)>)> = series
            .iter()
            .map(|(label, points)| {
                let points = drawn(points.len())
                    .into_iter()
                    .map(|i| (points[i].0, scale.apply(points[i].1)))
                    .collect();
                (*label, points)
            })
            .collect();
        let y = (scale.apply(ys.0), scale.apply(ys.1));
        let y_desc = axis_label(y_label, scale);
        let descriptions = ("run (in the order they ran)", y_desc.as_str());
        let mut chart = xy_chart(root, xs, y, series.len(), descriptions)?;
        draw_lines(
            &mut chart,
            &scaled,
            0.35,
            3,
            SeriesLabelPosition::UpperRight,
        )
    })
}

/// One interval to draw: a point estimate with its bounds, in the colour of
/// series `series` (the same colour as that command or build elsewhere).
pub struct Interval<'a> {
    pub label: &'a str,
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    pub series: usize,
}

/// Intervals as horizontal whiskers over a shaded band `[band.0, band.1]` and a
/// reference line at `reference`: a ratio's CI against the ±margin of 1.
pub fn intervals(rows: &[Interval], band: (f64, f64), reference: f64, x_label: &str) -> String {
    let height = 100 + 40 * rows.len().max(1) as u32;
    render(height, |root| {
        let ends = rows
            .iter()
            .flat_map(|r| [r.low, r.high, r.estimate])
            .chain([band.0, band.1, reference]);
        let x = padded(finite_range(ends).ok_or("no values")?);
        let labels: Vec<&str> = rows.iter().map(|r| r.label).collect();
        let mut chart = row_chart(root, x, &labels, x_label)?;
        let (bottom, top) = (-0.5, rows.len() as f64 - 0.5);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(band.0, bottom), (band.1, top)],
            RGBColor(120, 120, 120).mix(0.15).filled(),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(reference, bottom), (reference, top)],
            BLACK.mix(0.5),
        )))?;
        for (i, r) in rows.iter().enumerate() {
            let y = i as f64;
            let c = color(r.series);
            if r.low.is_finite() && r.high.is_finite() {
                let whisker = [
                    vec![(r.low, y), (r.high, y)],
                    vec![(r.low, y - 0.15), (r.low, y + 0.15)],
                    vec![(r.high, y - 0.15), (r.high, y + 0.15)],
                ];
                chart.draw_series(
                    whisker
                        .into_iter()
                        .map(|path| PathElement::new(path, c.stroke_width(3))),
                )?;
            }
            if r.estimate.is_finite() {
                chart.draw_series(std::iter::once(Circle::new((r.estimate, y), 5, c.filled())))?;
            }
        }
        Ok(())
    })
}

/// Several (x, y) lines, e.g. a probe's cost by offset.
pub fn lines(series: &[(&str, Vec<(f64, f64)>)], x_label: &str, y_label: &str) -> String {
    render(300, |root| {
        let [xs, ys] = point_ranges(series)?;
        let mut chart = xy_chart(root, xs, ys, series.len(), (x_label, y_label))?;
        draw_lines(&mut chart, series, 1.0, 2, SeriesLabelPosition::UpperLeft)
    })
}

/// An axis tick without needless decimals: 1400, 12.5, 0.042.
fn tick(y: f64) -> String {
    let magnitude = y.abs();
    if magnitude >= 100.0 || y == y.round() {
        format!("{y:.0}")
    } else if magnitude >= 1.0 {
        format!("{y:.1}")
    } else {
        format!("{y:.3}")
    }
}

fn axis_label(label: &str, scale: Scale) -> String {
    if scale.suffix().is_empty() {
        label.to_string()
    } else {
        format!("{label} ({})", scale.suffix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_pick_a_readable_unit() {
        let s = Scale::for_values(Unit::Seconds, 0.0123);
        assert_eq!(s.suffix(), "ms");
        assert!((s.apply(0.0123) - 12.3).abs() < 1e-9);
        assert_eq!(Scale::for_values(Unit::Nanoseconds, 2500.0).suffix(), "µs");
        assert_eq!(Scale::for_values(Unit::Kibibytes, 4096.0).suffix(), "MiB");
        assert_eq!(Scale::for_values(Unit::None, 7.0).suffix(), "");
    }

    #[test]
    fn ticks_drop_needless_decimals() {
        assert_eq!(tick(1400.0), "1400");
        assert_eq!(tick(12.5), "12.5");
        assert_eq!(tick(20.0), "20");
        assert_eq!(tick(0.0425), "0.043");
    }

    #[test]
    fn quartiles_interpolate_like_numpy() {
        // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) = [1.75, 2.5, 3.25]
        assert_eq!(quartiles(&[4.0, 1.0, 3.0, 2.0]), Some((1.75, 2.5, 3.25)));
        assert_eq!(quartiles(&[]), None);
    }

    #[test]
    fn plots_are_svg_and_say_so_when_there_is_nothing_to_draw() {
        let a = [1.0e-3, 1.1e-3, 0.9e-3];
        let b = [2.0e-3, 2.1e-3];
        let svg = distribution(
            &[
                Series {
                    label: "A",
                    values: &a,
                },
                Series {
                    label: "B",
                    values: &b,
                },
            ],
            Unit::Seconds,
            "wall",
        );
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("wall (ms)"), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 5);
        let empty = distribution(
            &[Series {
                label: "A",
                values: &[],
            }],
            Unit::Seconds,
            "wall",
        );
        assert!(empty.contains("plot unavailable: no values"), "{empty}");
        let ci = intervals(
            &[Interval {
                label: "B/A",
                estimate: 1.5,
                low: 1.4,
                high: 1.6,
                series: 1,
            }],
            (0.99, 1.01),
            1.0,
            "ratio",
        );
        assert!(ci.starts_with("<svg") && ci.contains("<circle"), "{ci}");
    }

    #[test]
    fn small_series_are_drawn_whole_and_large_ones_as_an_even_seeded_sample() {
        assert_eq!(drawn(5), vec![0, 1, 2, 3, 4]);
        assert_eq!(drawn(MAX_POINTS), (0..MAX_POINTS).collect::<Vec<_>>());
        let n = 1_000_003;
        let picked = drawn(n);
        assert_eq!(picked.len(), MAX_POINTS);
        assert_eq!(drawn_count(n), MAX_POINTS);
        // One in each of MAX_POINTS equal stretches of 0..n, in order.
        for (k, &i) in picked.iter().enumerate() {
            let (start, end) = (k * n / MAX_POINTS, (k + 1) * n / MAX_POINTS);
            assert!((start..end).contains(&i), "{k}: {i} not in {start}..{end}");
        }
        // Not a fixed stride: the positions within their stretches (of 500)
        // vary; 2,000 uniform draws of 500 leave about 9 unseen.
        let offsets: std::collections::BTreeSet<usize> = picked
            .iter()
            .enumerate()
            .map(|(k, &i)| i - k * n / MAX_POINTS)
            .collect();
        assert!(offsets.len() > 450, "{} offsets", offsets.len());
        assert_eq!(drawn(n), picked, "the sample is not the same every time");
    }

    #[test]
    fn a_large_series_draws_at_most_max_points_but_its_box_is_of_every_value() {
        // 100,000 values: the first 90% at 1.0, the rest at 2.0, so the
        // upper quartile is exactly 1.0 only if every value is counted.
        let values: Vec<f64> = (0..100_000)
            .map(|i| if i < 90_000 { 1.0 } else { 2.0 })
            .collect();
        let svg = distribution(
            &[Series {
                label: "A",
                values: &values,
            }],
            Unit::None,
            "value",
        );
        assert_eq!(svg.matches("<circle").count(), MAX_POINTS);
        assert!(svg.len() < 400_000, "{} bytes", svg.len());
        let points: Vec<(f64, f64)> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| (i as f64, v))
            .collect();
        let order = run_order(&[("A", points)], Unit::None, "value");
        // The points and the legend's marker.
        assert_eq!(order.matches("<circle").count(), MAX_POINTS + 1);
        assert!(order.len() < 400_000, "{} bytes", order.len());
    }
}
