//! The Pareto front of two figures, both to be made small: the points no other point
//! beats on one figure without losing on the other.

/// Indices of the non-dominated points among `pts` (x, y), both minimised, sorted by x
/// (then y, then index). A point is dominated when another is at most as large on both
/// figures and smaller on one; of points equal on both, the first is kept. NaN points
/// are left out.
pub fn front(pts: &[(f64, f64)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..pts.len())
        .filter(|&i| !pts[i].0.is_nan() && !pts[i].1.is_nan())
        .collect();
    idx.sort_by(|&a, &b| {
        pts[a]
            .0
            .total_cmp(&pts[b].0)
            .then(pts[a].1.total_cmp(&pts[b].1))
            .then(a.cmp(&b))
    });
    let mut out = Vec::new();
    let mut best_y = f64::INFINITY;
    for i in idx {
        if pts[i].1 < best_y {
            best_y = pts[i].1;
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_staircase() {
        // (1, 5) (2, 3) (4, 1) form the front; (3, 4) is beaten by (2, 3), (2, 3.5) by
        // (2, 3), the duplicate (4, 1) at index 5 by the first.
        let pts = [
            (3.0, 4.0),
            (1.0, 5.0),
            (2.0, 3.0),
            (4.0, 1.0),
            (2.0, 3.5),
            (4.0, 1.0),
            (f64::NAN, 0.0),
        ];
        assert_eq!(front(&pts), vec![1, 2, 3]);
    }
}
