//! The CPU figure: CPU time by level, stacked, against offered load; a panel per series.

use super::*;

pub(super) fn cpu<DB: DrawingBackend>(data: &Data, root: &Area<DB>) -> R
where
    DB::ErrorType: 'static,
{
    // A Linux host's results (every point of every series) show CPU time as mpstat
    // does (%usr %sys %irq %soft %idle); the others by the model's levels.
    let mpstat = data
        .series
        .iter()
        .flat_map(|s| &s.points)
        .all(|p| p.figures.mpstat.is_some());
    let (title, bands) = if mpstat {
        (
            "CPU time as mpstat shows it vs offered load",
            &style::CPU_MPSTAT,
        )
    } else {
        ("CPU time by level vs offered load", &style::CPU_LEVELS)
    };
    // Each band's share of a point's time [fraction], in the order of `bands`.
    let parts = |p: &PointResult| -> [f64; 5] {
        match &p.figures.mpstat {
            Some(m) if mpstat => {
                let a = &m.all;
                [a.irq, a.soft, a.sys, a.usr, a.idle].map(|x| x / 100.0)
            }
            _ => {
                let c = &p.figures.cpu;
                [c.interrupt, c.softirq, c.kernel, c.user, c.idle]
            }
        }
    };
    let head = header(root, data, title);
    // Levels that take no time at any point of any series (no kernel thread, no user
    // process) have nothing to show: no legend entry and no band.
    let used: Vec<bool> = (0..bands.len())
        .map(|k| {
            data.series
                .iter()
                .flat_map(|s| &s.points)
                .any(|p| parts(p)[k] > 0.0)
        })
        .collect();
    let legend: Vec<Entry> = bands
        .iter()
        .zip(&used)
        .rev()
        .filter(|(_, u)| **u)
        .map(|((name, c), _)| Entry::new(*name, Swatch::Fill(*c)))
        .collect();
    let area = frame::layout(root, &head, &legend)?;
    let n = data.series.len();
    let panels = area.split_evenly(grid(n));
    let xr = padded(data.x_span());
    let pad = (xr.end - xr.start) * 0.01;
    for (s, panel) in data.series.iter().zip(&panels) {
        let mut b = builder(panel, n > 1);
        if n > 1 {
            b.caption(&s.label, frame::font(style::PANEL_SIZE, s.colour));
        }
        let mut chart = b.build_cartesian_2d(xr.clone(), 0.0..100.0)?;
        if n > 1 {
            mesh!(chart, data.x_desc(), "CPU time (%)", &num, &num, 1, 5);
        } else {
            mesh!(
                chart,
                data.x_desc(),
                "CPU time (% of sending time)",
                &num,
                &num
            );
        }
        let ct = chart.as_coord_spec();
        let mut xs: Vec<f64> = s.points.iter().map(|p| data.x(p)).collect();
        let mut fracs: Vec<[f64; 5]> = s.points.iter().map(|p| parts(p)).collect();
        if xs.len() == 1 {
            // A single point: a narrow band so it still shows.
            xs = vec![xs[0] - pad, xs[0] + pad];
            fracs.push(fracs[0]);
        }
        let mut lower = vec![0.0; xs.len()];
        for (k, (_, c)) in bands.iter().enumerate() {
            if !used[k] {
                continue;
            }
            let upper: Vec<f64> = lower
                .iter()
                .zip(&fracs)
                .map(|(l, f)| (l + 100.0 * f[k]).min(100.0))
                .collect();
            let mut poly: Vec<(i32, i32)> = xs
                .iter()
                .zip(&upper)
                .map(|(x, y)| ct.translate(&(*x, *y)))
                .collect();
            poly.extend(
                xs.iter()
                    .zip(&lower)
                    .rev()
                    .map(|(x, y)| ct.translate(&(*x, *y))),
            );
            root.draw(&Polygon::new(poly, c.filled()))?;
            lower = upper;
        }
        // Boundaries between levels, and the data points along them.
        let mut cum = vec![0.0; xs.len()];
        for k in 0..bands.len() - 1 {
            for (c, f) in cum.iter_mut().zip(&fracs) {
                *c += 100.0 * f[k];
            }
            if !used[k] {
                continue;
            }
            let pts: Vec<(i32, i32)> = xs
                .iter()
                .zip(&cum)
                .map(|(x, y)| ct.translate(&(*x, *y)))
                .collect();
            polyline(root, &pts, WHITE, Dash::Solid, 1)?;
        }
    }
    Ok(())
}
