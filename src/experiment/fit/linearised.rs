//! Linear algebra of the linearised intervals: the conditional directions along a profile and `s^2 (J^T J)^-1`.

use super::*;

/// For each parameter j, the direction in which the others follow it to their
/// least-squares optimum given j, linearised at the fit: `d_j = 1`,
/// `d_-j = -(J_-j^T J_-j)^-1 J_-j^T J_j` (zero where that cannot be solved).
pub(super) fn conditional_directions(jac: &[Vec<f64>], k: usize) -> Vec<Vec<f64>> {
    (0..k)
        .map(|j| {
            let mut d = vec![0.0; k];
            d[j] = 1.0;
            let others: Vec<usize> = (0..k).filter(|&i| i != j).collect();
            let m = others.len();
            if m == 0 {
                return d;
            }
            let mut a = vec![vec![0.0; m]; m];
            let mut b = vec![0.0; m];
            for row in jac {
                for (x, &i) in others.iter().enumerate() {
                    b[x] += row[i] * row[j];
                    for (y, &l) in others.iter().enumerate() {
                        a[x][y] += row[i] * row[l];
                    }
                }
            }
            if let Some(inv) = invert(&a) {
                for (x, &i) in others.iter().enumerate() {
                    d[i] = -(0..m).map(|y| inv[x][y] * b[y]).sum::<f64>();
                }
            }
            d
        })
        .collect()
}

pub(super) struct Uncertainty {
    pub(super) se: Vec<f64>,
    pub(super) corr: Vec<Vec<f64>>,
    pub(super) t95: f64,
}

/// Linearised standard errors and correlations, or none when `J^T J` is singular or no
/// degrees of freedom are left.
pub(super) fn uncertainty(
    jac: &[Vec<f64>],
    best: &Evaluation,
    w: Weights,
    k: usize,
) -> Option<Uncertainty> {
    let r = residuals(best, w);
    let n = counted(best, w);
    if n <= k {
        return None;
    }
    let ssr: f64 = r.iter().map(|x| x * x).sum();
    let s2 = ssr / (n - k) as f64;
    let mut jtj = vec![vec![0.0; k]; k];
    for row in jac {
        for a in 0..k {
            for b in 0..k {
                jtj[a][b] += row[a] * row[b];
            }
        }
    }
    let inv = invert(&jtj)?;
    let se: Vec<f64> = (0..k).map(|j| (s2 * inv[j][j]).max(0.0).sqrt()).collect();
    let corr = (0..k)
        .map(|a| {
            (0..k)
                .map(|b| inv[a][b] / (inv[a][a] * inv[b][b]).sqrt())
                .collect()
        })
        .collect();
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let t95 = StudentsT::new(0.0, 1.0, (n - k) as f64)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(1.96);
    Some(Uncertainty { se, corr, t95 })
}

/// Inverse of a small symmetric matrix by nalgebra's LU decomposition with partial
/// pivoting; none when it is (nearly) singular: a pivot at most 1e-12 of the largest
/// entry in magnitude (a confounded pair of parameters, or one no residual depends on).
pub(super) fn invert(m: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let k = m.len();
    let scale = m.iter().flatten().fold(0.0f64, |a, x| a.max(x.abs()));
    if k == 0 || scale == 0.0 {
        return None;
    }
    let lu = nalgebra::DMatrix::from_fn(k, k, |i, j| m[i][j]).lu();
    if lu.u().diagonal().iter().any(|d| d.abs() <= 1e-12 * scale) {
        return None;
    }
    let inv = lu.try_inverse()?;
    Some(
        (0..k)
            .map(|i| (0..k).map(|j| inv[(i, j)]).collect())
            .collect(),
    )
}
