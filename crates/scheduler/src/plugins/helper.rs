//! Shared plugin helpers: DefaultNormalizeScore (`plugins/helper/normalize_score.go`) and the
//! broken-linear shape function (`plugins/helper/shape_score.go`).

use crate::framework::MAX_NODE_SCORE;

/// Scales scores so the maximum becomes `max_priority`; `reverse` flips them.
pub fn default_normalize_score(max_priority: i64, reverse: bool, scores: &mut [i64]) {
    let max_count = scores.iter().copied().fold(0, i64::max);
    if max_count == 0 {
        if reverse {
            for s in scores.iter_mut() {
                *s = max_priority;
            }
        }
        return;
    }
    for s in scores.iter_mut() {
        let mut v = max_priority * *s / max_count;
        if reverse {
            v = max_priority - v;
        }
        *s = v;
    }
}

/// A point of a broken-linear function: (utilization, score).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapePoint {
    /// Utilization 0..100.
    pub utilization: i64,
    /// Score.
    pub score: i64,
}

/// Evaluates a broken-linear function at `p` (integer math as upstream).
pub fn broken_linear(shape: &[ShapePoint], p: i64) -> i64 {
    for i in 0..shape.len() {
        if p <= shape[i].utilization {
            if i == 0 {
                return shape[0].score;
            }
            let (a, b) = (shape[i - 1], shape[i]);
            return a.score + (b.score - a.score) * (p - a.utilization) / (b.utilization - a.utilization);
        }
    }
    shape.last().map(|s| s.score).unwrap_or(0)
}

/// Clamps a score into [0, MaxNodeScore].
pub fn clamp_score(s: i64) -> i64 {
    s.clamp(0, MAX_NODE_SCORE)
}
