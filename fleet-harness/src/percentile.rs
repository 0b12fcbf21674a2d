//! Latency percentiles over the calls of several processes: the raw latencies merged, then
//! ranked (a percentile of percentiles would not be one).

/// The `p`-th percentile (0 < p <= 100) of `values` by nearest rank (the smallest value with
/// at least p % of the values at or below it); `None` for no values. Sorts `values`.
pub fn percentile(values: &mut [u64], p: f64) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    values.sort_unstable();
    // The rank is at least 1 and at most len: p is in (0, 100].
    let rank = (p / 100.0 * values.len() as f64).ceil() as usize;
    Some(values[rank.clamp(1, values.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut values: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(percentile(&mut values, 50.0), Some(50));
        assert_eq!(percentile(&mut values, 99.0), Some(99));
        assert_eq!(percentile(&mut values, 100.0), Some(100));
        assert_eq!(percentile(&mut [7], 99.0), Some(7));
        assert_eq!(percentile(&mut [], 50.0), None);
    }
}
