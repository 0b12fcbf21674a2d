//! [`ColdDrop`]: an optional value that the retry path fills and a first attempt that succeeds
//! never does, whose drop costs that attempt one test.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

/// An `Option<T>` whose drop tests for `None` in line and drops a `Some` out of line. A plain
/// `Option<T>` of a `T` with a large drop (a timer, a span) makes the drop of the future that
/// holds it too large to inline: the success path then pays a call for a value it never filled.
#[derive(Debug)]
pub(crate) struct ColdDrop<T>(ManuallyDrop<Option<T>>);

impl<T> ColdDrop<T> {
    /// Holds `value`.
    #[inline(always)]
    pub(crate) fn new(value: Option<T>) -> Self {
        Self(ManuallyDrop::new(value))
    }

    /// Empty.
    #[inline(always)]
    pub(crate) fn none() -> Self {
        Self::new(None)
    }
}

impl<T> Deref for ColdDrop<T> {
    type Target = Option<T>;

    #[inline(always)]
    fn deref(&self) -> &Option<T> {
        &self.0
    }
}

impl<T> DerefMut for ColdDrop<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Option<T> {
        &mut self.0
    }
}

impl<T> Drop for ColdDrop<T> {
    #[inline(always)]
    fn drop(&mut self) {
        if self.0.is_some() {
            // Taken out, `None` is left in the `ManuallyDrop`: nothing is left undropped.
            drop_out_of_line(self.0.take());
        }
    }
}

/// Drops `value` out of line.
#[cold]
#[inline(never)]
fn drop_out_of_line<T>(value: Option<T>) {
    drop(value);
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::ColdDrop;

    #[test]
    fn the_value_is_dropped_once_with_its_holder() {
        let value = Rc::new(());
        let held = ColdDrop::new(Some(Rc::clone(&value)));
        assert_eq!(Rc::strong_count(&value), 2);
        drop(held);
        assert_eq!(Rc::strong_count(&value), 1);
        let mut replaced = ColdDrop::none();
        *replaced = Some(Rc::clone(&value));
        *replaced = Some(Rc::clone(&value));
        assert_eq!(
            Rc::strong_count(&value),
            2,
            "the first replaced value dropped"
        );
        drop(replaced);
        assert_eq!(Rc::strong_count(&value), 1);
    }
}
