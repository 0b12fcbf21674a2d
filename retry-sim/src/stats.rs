//! Mean and 95 % confidence interval over seeds (Student's t).

use std::fmt;

/// Two-sided 97.5 % quantiles of Student's t for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The mean of some samples and the half-width of its 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// The mean (NaN without samples).
    pub mean: f64,
    /// Half-width of the 95 % CI (0 with one sample).
    pub half_width: f64,
    /// Samples that were numbers.
    pub n: usize,
}

impl Summary {
    /// Summarizes `samples`, ignoring NaNs.
    ///
    /// ```
    /// let s = retry_sim::stats::Summary::of(&[1.0, 2.0, 3.0, f64::NAN]);
    /// assert_eq!(s.mean, 2.0);
    /// assert_eq!(s.n, 3);
    /// assert!((s.half_width - 4.303 / 3f64.sqrt()).abs() < 1e-9);
    /// ```
    pub fn of(samples: &[f64]) -> Self {
        let values: Vec<f64> = samples.iter().copied().filter(|v| !v.is_nan()).collect();
        let n = values.len();
        if n == 0 {
            return Self {
                mean: f64::NAN,
                half_width: f64::NAN,
                n,
            };
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        if n == 1 {
            return Self {
                mean,
                half_width: 0.0,
                n,
            };
        }
        let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let t = T975.get(n - 2).copied().unwrap_or(1.960);
        Self {
            mean,
            half_width: t * (variance / n as f64).sqrt(),
            n,
        }
    }

    /// Upper end of the CI.
    ///
    /// ```
    /// let s = retry_sim::stats::Summary::of(&[1.0, 1.0]);
    /// assert_eq!(s.upper(), 1.0);
    /// ```
    pub fn upper(&self) -> f64 {
        self.mean + self.half_width
    }

    /// Lower end of the CI.
    ///
    /// ```
    /// let s = retry_sim::stats::Summary::of(&[1.0, 1.0]);
    /// assert_eq!(s.lower(), 1.0);
    /// ```
    pub fn lower(&self) -> f64 {
        self.mean - self.half_width
    }

    /// Formats with `decimals` decimals: `mean ± half-width`.
    ///
    /// ```
    /// let s = retry_sim::stats::Summary::of(&[1.0, 3.0]);
    /// assert_eq!(s.format(1), "2.0 ± 12.7");
    /// ```
    pub fn format(&self, decimals: usize) -> String {
        if self.mean.is_nan() {
            return "–".to_owned();
        }
        if self.n <= 1 || self.half_width == 0.0 {
            return format!("{:.*}", decimals, self.mean);
        }
        format!(
            "{:.*} ± {:.*}",
            decimals, self.mean, decimals, self.half_width
        )
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format(3))
    }
}
