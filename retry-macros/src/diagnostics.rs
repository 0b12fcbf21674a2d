//! Diagnostics shared by both macros: collecting errors, "did you mean" suggestions, and code
//! written back in messages as the user wrote it.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use quote::ToTokens;

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
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Whether nothing was recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.combined.is_none()
    }

    /// The message of each error recorded, in order.
    #[cfg(test)]
    pub(crate) fn messages(&self) -> Vec<String> {
        self.combined
            .iter()
            .flatten()
            .map(|error| error.to_string())
            .collect()
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

/// Code (a type, a path) as a programmer writes it, for messages: `&'a str`, `io::Result<u32>`,
/// `Vec<(u32, String)>`, `impl Fn(u8) -> u8 + Send`; not the spaced `to_string()` of its
/// tokens (`& 'a str`, `(u32 , String)`).
pub(crate) fn written(code: &impl ToTokens) -> String {
    let mut out = String::new();
    write_tokens(code.to_token_stream(), &mut out);
    out
}

/// Appends `tokens` to `out`: a space between two words (identifiers, literals), after `,` and
/// `;`, around `+`, `=` and `->`; none elsewhere.
fn write_tokens(tokens: TokenStream, out: &mut String) {
    // The previous token was a word; a space is due before the next token.
    let (mut after_word, mut space_due) = (false, false);
    for token in tokens {
        let word = matches!(token, TokenTree::Ident(_) | TokenTree::Literal(_));
        // `mut [u8]`, `mut (u8, u8)`, but `Fn(u8)`.
        let spaced_group = matches!(&token, TokenTree::Group(group)
            if group.delimiter() != Delimiter::Parenthesis || ends_with_word(out, "mut"));
        if space_due || (after_word && (word || spaced_group)) {
            out.push(' ');
        }
        (after_word, space_due) = (word, false);
        match token {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{ ", " }"),
                    Delimiter::None => ("", ""),
                };
                out.push_str(open);
                write_tokens(group.stream(), out);
                out.push_str(close);
                after_word = group.delimiter() == Delimiter::None;
            }
            TokenTree::Punct(punct) => {
                let arrow = punct.as_char() == '-' && punct.spacing() == Spacing::Joint;
                let arrow_end = punct.as_char() == '>' && out.ends_with('-');
                if matches!(punct.as_char(), '+' | '=') || arrow {
                    out.push(' ');
                }
                out.push(punct.as_char());
                space_due = matches!(punct.as_char(), ',' | ';' | '+' | '=') || arrow_end;
            }
            TokenTree::Ident(_) | TokenTree::Literal(_) => out.push_str(&token.to_string()),
        }
    }
}

/// Whether `out` ends with the whole word `word`.
fn ends_with_word(out: &str, word: &str) -> bool {
    out.strip_suffix(word)
        .is_some_and(|before| !before.ends_with(|c: char| c.is_alphanumeric() || c == '_'))
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
    use super::{closest, edit_distance, written};
    use syn::Type;

    #[track_caller]
    fn written_type(code: &str) -> String {
        let ty: Type = syn::parse_str(code).expect("a type");
        written(&ty)
    }

    #[test]
    fn code_is_written_back_as_a_programmer_writes_it() {
        for code in [
            "&str",
            "&'a mut [u8]",
            "io::Result<u32>",
            "Vec<(u32, String)>",
            "[u8; 4]",
            "&mut (u32, u8)",
            "Box<dyn FnMut(u8)>",
            "Option<Box<dyn Error + Send + 'static>>",
            "impl Fn(u8) -> u8 + Send",
            "<T as Trait>::Out",
            "fn(&str, usize) -> !",
            "()",
        ] {
            assert_eq!(written_type(code), code);
        }
    }

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
