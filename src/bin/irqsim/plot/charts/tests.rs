use super::*;

#[test]
fn runs_break_at_non_positive_values() {
    let r = positive_runs([(0.0, 1.0), (1.0, 2.0), (2.0, 0.0), (3.0, 4.0)].into_iter());
    assert_eq!(r, vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(3.0, 4.0)]]);
}

#[test]
fn lines_are_clipped_at_the_top() {
    let l = [(0.0, 0.0), (1.0, 10.0), (2.0, 20.0), (3.0, 30.0)];
    assert_eq!(
        clip_above(&l, 15.0),
        vec![(0.0, 0.0), (1.0, 10.0), (1.5, 15.0)]
    );
    assert_eq!(clip_above(&l, 40.0), l.to_vec());
}

#[test]
fn lines_coincide_within_the_tolerance_at_every_point() {
    let a = [(10.0, 0.0), (20.0, 50.0), (30.0, 99.0)];
    // 0.2 apart at one point: coincide at a tolerance of 0.2 (0.2 % of 100), not 0.1.
    let b = [(10.0, 0.0), (20.0, 50.2), (30.0, 99.0)];
    assert!(coincide(&a, &b, 0.2 + 1e-12));
    assert!(!coincide(&a, &b, 0.1));
    // Other x values, or another number of points: different lines.
    assert!(!coincide(
        &a,
        &[(10.0, 0.0), (25.0, 50.0), (30.0, 99.0)],
        1.0
    ));
    assert!(!coincide(&a, &a[..2], 1.0));
    assert!(!coincide(&[], &[], 1.0));
    // The line drawn later names the first earlier one it covers.
    let labels = ["a".to_string(), "b".to_string(), "c".to_string()];
    let lines = vec![a.to_vec(), b.to_vec(), a.to_vec()];
    assert_eq!(
        noting_coincidence(&labels, &lines, 0.1),
        vec!["a", "b", "c\n  (coincides with a)"]
    );
}

#[test]
fn panel_grid() {
    assert_eq!(grid(1), (1, 1));
    assert_eq!(grid(3), (1, 3));
    assert_eq!(grid(4), (2, 2));
    assert_eq!(grid(5), (2, 3));
}

#[test]
fn timeline_panels_keep_the_width_for_time() {
    // Up to three variants one above the other, each as wide as the figure.
    assert_eq!(timeline_grid(1), (1, 1));
    assert_eq!(timeline_grid(3), (3, 1));
    // The xl(4) scenario's four variants: two by two, as the other figures.
    assert_eq!(timeline_grid(4), (2, 2));
}

#[test]
fn timeline_rows_are_labelled_as_space_allows() {
    // xl(4): 15 rates in rows of 11 px, 14 px labels: every other row from the
    // lowest (200 frames/s) to the highest (3,000 frames/s).
    assert_eq!(
        labelled_rows(15, 11.0, 14.0),
        vec![0, 2, 4, 6, 8, 10, 12, 14]
    );
    // Rows tall enough: every one.
    assert_eq!(labelled_rows(2, 200.0, 14.0), vec![0, 1]);
    // The top row is labelled in place of the one below it when they would touch.
    assert_eq!(labelled_rows(6, 11.0, 14.0), vec![0, 2, 5]);
    assert_eq!(labelled_rows(1, 400.0, 14.0), vec![0]);
    assert!(labelled_rows(0, 10.0, 14.0).is_empty());
}

#[test]
fn equal_neighbours_make_one_run() {
    // One rectangle per run keeps the SVG small: a flat row is a single element.
    assert_eq!(
        runs(&[1, 1, 2, 1, 1, 1]),
        vec![(0, 2, 1), (2, 3, 2), (3, 6, 1)]
    );
    assert!(runs::<u8>(&[]).is_empty());
}
