//! The cores figure: each core's busy time against offered load, a line per core.

use super::*;

/// Top of the cores figure's busy axis [%]: a little above 100 so a saturated core's
/// line shows above the frame.
pub(super) const CORES_TOP: f64 = 105.0;

pub(super) fn cores<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    let head = header(root, data, "Each core's busy time vs offered load");
    let n_cores = max_cores(data);
    let busy = |s: &Series, c: usize| -> Vec<(f64, f64)> {
        s.points
            .iter()
            .filter_map(|p| {
                let k = p.figures.cores.get(c)?;
                Some((data.x(p), 100.0 * (1.0 - k.idle)))
            })
            .collect()
    };
    // A core drawn over an earlier one it coincides with says so: in the legend when it
    // does in every panel that has it, else in the caption of each panel where it does.
    let tol = COINCIDE_FRACTION * CORES_TOP;
    let hidden = |s: &Series, c: usize| (0..c).find(|&o| coincide(&busy(s, c), &busy(s, o), tol));
    let names: Vec<String> = (0..n_cores).map(|c| format!("core {c}")).collect();
    let mut labels = names.clone();
    let mut in_legend = vec![false; n_cores];
    for c in 0..n_cores {
        let with: Vec<&Series> = data
            .series
            .iter()
            .filter(|s| !busy(s, c).is_empty())
            .collect();
        let first = with.first().and_then(|s| hidden(s, c));
        if let Some(o) = first
            && with.iter().all(|s| hidden(s, c) == Some(o))
        {
            labels[c] = format!("{}\n  (coincides with {})", names[c], names[o]);
            in_legend[c] = true;
        }
    }
    let legend: Vec<Entry> = labels
        .into_iter()
        .enumerate()
        .map(|(c, l)| {
            Entry::new(
                l,
                Swatch::Line(style::series_colour(c), Dash::Solid, Some(Marker::Dot)),
            )
        })
        .collect();
    let area = frame::layout(root, &head, &legend)?;
    let n = data.series.len();
    let panels = area.split_evenly(grid(n));
    let xr = padded(data.x_span());
    for (s, panel) in data.series.iter().zip(&panels) {
        let mut b = builder(panel, n > 1);
        if n > 1 {
            let same: Vec<String> = (0..n_cores)
                .filter(|c| !in_legend[*c])
                .filter_map(|c| Some(format!("core {c} = core {}", hidden(s, c)?)))
                .collect();
            let caption = if same.is_empty() {
                s.label.clone()
            } else {
                format!("{} ({})", s.label, same.join(", "))
            };
            b.caption(caption, frame::font(style::PANEL_SIZE, s.colour));
        }
        let mut chart = b.build_cartesian_2d(xr.clone(), 0.0..CORES_TOP)?;
        if n > 1 {
            mesh!(chart, data.x_desc(), "busy (%)", &num, &num, 1, 5);
        } else {
            mesh!(
                chart,
                data.x_desc(),
                "core busy (% of its time)",
                &num,
                &num
            );
        }
        let ct = chart.as_coord_spec();
        for c in 0..n_cores {
            let pts = busy(s, c);
            line(
                root,
                ct,
                &pts,
                style::series_colour(c),
                Dash::Solid,
                Some(Marker::Dot),
            )?;
        }
    }
    Ok(())
}
