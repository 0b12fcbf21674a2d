//! Diagnostics shared by both macros: collecting errors, and "did you mean" suggestions.

use proc_macro2::TokenStream;

/// Collects every error found in the input, so the user sees them all at once.
#[derive(Default)]
pub(crate) struct Errors {
    /// All errors so far, combined into one (`syn::Error` holds a list).
    combined: Option<syn::Error>,
}

impl Errors {
    /// Records one error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.combined {
            Some(combined) => combined.combine(error),
            None => self.combined = Some(error),
        }
    }

    /// Records every error of `other`.
    pub(crate) fn extend(&mut self, other: Errors) {
        if let Some(error) = other.combined {
            self.push(error);
        }
    }

    /// Records an error spanning `tokens` (first to last token).
    pub(crate) fn spanned(
        &mut self,
        tokens: impl quote::ToTokens,
        message: impl std::fmt::Display,
    ) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Whether nothing was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.combined.is_none()
    }

    /// The `compile_error!` invocations for everything recorded.
    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.combined
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}

/// The candidate closest to a misspelled `word`, if one is close: at most one edit per three
/// letters away, case ignored.
pub(crate) fn closest(
    word: &str,
    candidates: impl IntoIterator<Item = &'static str>,
) -> Option<&'static str> {
    let word = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(&word, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= candidate.len().max(3) / 3)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance between two short ASCII words.
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{closest, edit_distance};

    #[test]
    fn suggestions_are_close_in_spelling() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        let keys = ["max_attempts", "mode", "throttling", "after"];
        assert_eq!(closest("max_atempts", keys), Some("max_attempts"));
        assert_eq!(closest("Throtling", keys), Some("throttling"));
        assert_eq!(closest("mod", keys), Some("mode"));
        assert_eq!(closest("bogus", keys), None);
    }
}
