//! The search over a space of knob settings: exhaustive when the space has no more
//! points than the budget, coordinate descent with restarts when it has more.
//!
//! **Coordinate descent** (a pattern search over the knobs' grids; Hooke and Jeeves'
//! exploratory move, one axis at a time): from a starting point, for each knob in
//! catalog order, every value of that knob's grid is tried with the others held (the
//! axis is one batch, run in parallel), and the point moves to the best of them if it
//! is strictly better than where it stands; after a pass over every knob that moves
//! nothing, the diagonal neighbours (one grid step on two knobs at once: a goal bounded
//! by a constraint often improves only along the constraint's edge, which no single
//! axis follows) are tried as one batch, and the point moves to the best of them if it
//! is better; when none is, the point is a local optimum. The first start is the host as given, each knob snapped to the
//! nearest value of its grid; each **restart** begins at a point drawn uniformly from
//! the grid by a generator seeded with `--seed` (stream `tune-restart`), so the same seed
//! gives the same starts. The search stops when `budget` distinct points have been run
//! (an axis that would pass the budget runs the values nearest the current one first),
//! or after [`MAX_DRAWS`] draws found no point not yet run. A point already run is never
//! run again (its score is remembered), and a restart that lands on one goes on from it.
//!
//! The order of points is a total order ([`Score`], then the grid indices), so the
//! answer does not depend on the order in which a batch's runs finish.

use crate::sim::rng::RunKey;
use rand::RngExt;
use std::cmp::Ordering;
use std::collections::HashMap;

/// Draws of a restart's starting point that may all land on points already run before
/// the search gives up (the space is then nearly all run).
pub const MAX_DRAWS: usize = 1000;

/// A point of the space: an index into each knob's grid.
pub type Point = Vec<usize>;

/// How good a point is: feasible before infeasible, then the lower violation of the
/// constraints, then the lower objective (a maximised figure enters negated).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    /// Whether every constraint holds.
    pub feasible: bool,
    /// How far the constraints are missed (0 when feasible; infinite when the setting
    /// could not be run).
    pub violation: f64,
    /// The goal's figure, lower better.
    pub objective: f64,
}

impl Score {
    /// The total order: better first.
    pub fn order(&self, o: &Score) -> Ordering {
        o.feasible
            .cmp(&self.feasible)
            .then(self.violation.total_cmp(&o.violation))
            .then(self.objective.total_cmp(&o.objective))
    }
}

/// Which method ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Every point of the space.
    Grid,
    /// Coordinate descent with seeded restarts.
    CoordinateDescent,
}

/// What a search did.
#[derive(Clone, Debug)]
pub struct Searched {
    /// The method.
    pub method: Method,
    /// Every point run, in the order run, with its score.
    pub points: Vec<(Point, Score)>,
    /// Starts used (1 for the grid).
    pub starts: usize,
    /// The best point's index in `points`.
    pub best: usize,
}

/// Runs a batch of points and returns their scores, in order.
pub type Eval<'a, E> = dyn FnMut(&[Point]) -> Result<Vec<Score>, E> + 'a;

/// Search the space whose knobs have `sizes` grid values, starting from `host` (the
/// host as given, snapped), running at most `budget` points; `eval` runs a batch and
/// returns their scores in order.
pub fn search<E>(
    sizes: &[usize],
    host: &[usize],
    budget: usize,
    seed: u64,
    eval: &mut Eval<'_, E>,
) -> Result<Searched, E> {
    let total = sizes
        .iter()
        .try_fold(1usize, |a, &s| a.checked_mul(s))
        .unwrap_or(usize::MAX);
    let mut run: Vec<(Point, Score)> = Vec::new();
    let mut seen: HashMap<Point, Score> = HashMap::new();
    let mut batch = |pts: Vec<Point>,
                     run: &mut Vec<(Point, Score)>,
                     seen: &mut HashMap<Point, Score>|
     -> Result<(), E> {
        if pts.is_empty() {
            return Ok(());
        }
        let scores = eval(&pts)?;
        for (p, s) in pts.into_iter().zip(scores) {
            seen.insert(p.clone(), s);
            run.push((p, s));
        }
        Ok(())
    };
    if total <= budget {
        let mut all: Vec<Point> = vec![vec![0; sizes.len()]];
        for (k, &s) in sizes.iter().enumerate() {
            all = all
                .into_iter()
                .flat_map(|p| {
                    (0..s).map(move |i| {
                        let mut q = p.clone();
                        q[k] = i;
                        q
                    })
                })
                .collect();
        }
        batch(all, &mut run, &mut seen)?;
        let best = best_of(&run);
        return Ok(Searched {
            method: Method::Grid,
            points: run,
            starts: 1,
            best,
        });
    }
    let mut rng = RunKey::single(seed).stream("tune-restart");
    let mut starts = 0;
    let mut next_start = Some(host.to_vec());
    'restarts: while run.len() < budget {
        let mut cur = match next_start.take() {
            Some(p) => p,
            None => {
                let mut found = None;
                for _ in 0..MAX_DRAWS {
                    let p: Point = sizes.iter().map(|&s| rng.random_range(0..s)).collect();
                    if !seen.contains_key(&p) {
                        found = Some(p);
                        break;
                    }
                }
                match found {
                    Some(p) => p,
                    None => break 'restarts,
                }
            }
        };
        starts += 1;
        if !seen.contains_key(&cur) {
            batch(vec![cur.clone()], &mut run, &mut seen)?;
        }
        loop {
            let mut moved = false;
            for k in 0..sizes.len() {
                let room = budget.saturating_sub(run.len());
                let mut axis: Vec<usize> = (0..sizes[k])
                    .filter(|&i| {
                        let mut q = cur.clone();
                        q[k] = i;
                        !seen.contains_key(&q)
                    })
                    .collect();
                // Nearest the current value first, then the lower index.
                axis.sort_by_key(|&i| (i.abs_diff(cur[k]), i));
                axis.truncate(room);
                axis.sort_unstable();
                let pts: Vec<Point> = axis
                    .iter()
                    .map(|&i| {
                        let mut q = cur.clone();
                        q[k] = i;
                        q
                    })
                    .collect();
                batch(pts, &mut run, &mut seen)?;
                let here = seen[&cur];
                let mut best: Option<(Point, Score)> = None;
                for i in 0..sizes[k] {
                    let mut q = cur.clone();
                    q[k] = i;
                    if let Some(s) = seen.get(&q)
                        && best
                            .as_ref()
                            .is_none_or(|(bp, bs)| order(s, &q, bs, bp) == Ordering::Less)
                    {
                        best = Some((q, *s));
                    }
                }
                if let Some((q, s)) = best
                    && order(&s, &q, &here, &cur) == Ordering::Less
                {
                    cur = q;
                    moved = true;
                }
                if run.len() >= budget {
                    break 'restarts;
                }
            }
            if !moved {
                // A local optimum along the axes: try its diagonal neighbours, one grid
                // step on two knobs at once, which the axes cannot reach along the edge
                // of a constraint.
                let mut diag: Vec<Point> = Vec::new();
                for a in 0..sizes.len() {
                    for b in a + 1..sizes.len() {
                        for (da, db) in [(-1i64, -1i64), (-1, 1), (1, -1), (1, 1)] {
                            let (ia, ib) = (cur[a] as i64 + da, cur[b] as i64 + db);
                            if ia < 0 || ib < 0 || ia >= sizes[a] as i64 || ib >= sizes[b] as i64 {
                                continue;
                            }
                            let mut q = cur.clone();
                            q[a] = ia as usize;
                            q[b] = ib as usize;
                            if !seen.contains_key(&q) && !diag.contains(&q) {
                                diag.push(q);
                            }
                        }
                    }
                }
                diag.truncate(budget.saturating_sub(run.len()));
                let tried = diag.clone();
                batch(diag, &mut run, &mut seen)?;
                let here = seen[&cur];
                let mut best: Option<(Point, Score)> = None;
                for q in tried {
                    let s = seen[&q];
                    if best
                        .as_ref()
                        .is_none_or(|(bp, bs)| order(&s, &q, bs, bp) == Ordering::Less)
                    {
                        best = Some((q, s));
                    }
                }
                match best {
                    Some((q, s)) if order(&s, &q, &here, &cur) == Ordering::Less => cur = q,
                    _ => break,
                }
                if run.len() >= budget {
                    break 'restarts;
                }
            }
        }
    }
    let best = best_of(&run);
    Ok(Searched {
        method: Method::CoordinateDescent,
        points: run,
        starts,
        best,
    })
}

/// The total order of points: score, then grid indices.
fn order(a: &Score, ap: &Point, b: &Score, bp: &Point) -> Ordering {
    a.order(b).then_with(|| ap.cmp(bp))
}

fn best_of(run: &[(Point, Score)]) -> usize {
    (0..run.len())
        .min_by(|&i, &j| order(&run[i].1, &run[i].0, &run[j].1, &run[j].0))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(f: f64) -> Score {
        Score {
            feasible: true,
            violation: 0.0,
            objective: f,
        }
    }

    /// A bowl over a 3-knob grid with its minimum at (7, 2, 11): the descent finds it
    /// from the corner with a budget of a tenth of the space's 20 x 10 x 20 points.
    #[test]
    fn descent_finds_a_bowls_minimum() {
        let sizes = [20, 10, 20];
        let f = |p: &Point| {
            let d = |a: usize, b: usize| (a as f64 - b as f64).powi(2);
            d(p[0], 7) + 3.0 * d(p[1], 2) + d(p[2], 11)
        };
        let mut eval = |pts: &[Point]| -> Result<Vec<Score>, ()> {
            Ok(pts.iter().map(|p| score(f(p))).collect())
        };
        let s = search(&sizes, &[0, 0, 0], 400, 1, &mut eval).expect("search");
        assert_eq!(s.method, Method::CoordinateDescent);
        assert_eq!(s.points[s.best].0, vec![7, 2, 11]);
        assert!(s.points.len() <= 400);
    }

    /// A small space is run whole, and the best is the grid's minimum.
    #[test]
    fn a_small_space_is_a_grid() {
        let sizes = [3, 4];
        let mut eval = |pts: &[Point]| -> Result<Vec<Score>, ()> {
            Ok(pts
                .iter()
                .map(|p| score(((p[0] as f64) - 1.0).abs() + ((p[1] as f64) - 3.0).abs()))
                .collect())
        };
        let s = search(&sizes, &[0, 0], 12, 1, &mut eval).expect("search");
        assert_eq!(s.method, Method::Grid);
        assert_eq!(s.points.len(), 12);
        assert_eq!(s.points[s.best].0, vec![1, 3]);
    }

    /// Feasible beats infeasible whatever the objective; the same seed gives the same
    /// points in the same order, another seed other restarts.
    #[test]
    fn feasibility_first_and_seeded_restarts() {
        let sizes = [30, 30];
        let f = |p: &Point| Score {
            feasible: p[0] >= 20,
            violation: if p[0] >= 20 { 0.0 } else { (20 - p[0]) as f64 },
            objective: -(p[1] as f64) - ((p[0] * 7 + p[1] * 13) % 5) as f64,
        };
        let run = |seed| {
            let mut eval =
                |pts: &[Point]| -> Result<Vec<Score>, ()> { Ok(pts.iter().map(f).collect()) };
            // Budget 600: the first descent (with its diagonal steps) takes about 150
            // settings here, so restarts, where the seed acts, follow.
            search(&sizes, &[0, 0], 600, seed, &mut eval).expect("search")
        };
        let (a, b, c) = (run(3), run(3), run(4));
        assert!(a.points[a.best].1.feasible);
        assert_eq!(
            a.points.iter().map(|p| p.0.clone()).collect::<Vec<_>>(),
            b.points.iter().map(|p| p.0.clone()).collect::<Vec<_>>()
        );
        assert_ne!(
            a.points.iter().map(|p| p.0.clone()).collect::<Vec<_>>(),
            c.points.iter().map(|p| p.0.clone()).collect::<Vec<_>>()
        );
        assert!(a.starts > 1);
    }
}
