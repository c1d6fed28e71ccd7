//! A value alone in its cache lines, so that threads writing neighbouring counters do not take
//! each other's line.

/// `T` aligned (and so padded) to 128 bytes: two 64-byte lines, since x86-64's adjacent-line
/// prefetcher fetches lines in pairs.
#[derive(Default)]
#[repr(align(128))]
pub struct Padded<T>(pub T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
