//! How a reader asks for a field the writer always writes.

use serde::{Deserialize, Deserializer};

/// A field the writer always writes, possibly as `null`: absent is an error
/// (serde would otherwise read a missing `Option` as `None`).
pub fn required<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}
