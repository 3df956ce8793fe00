//! JSON read before it is parsed into a value: how many values it holds
//! (bounded, so the value built next stays within memory) and whether it is
//! a ghostbench report (held to its own cap), each without building anything.

use crate::limits;
use anyhow::{bail, Result};

/// Whether JSON `text` is a ghostbench report (an object, or an array of
/// them, with a `schema` starting `ghostbench.`), read without building a
/// value: every other field is skipped. Invalid JSON is not one (the full
/// parse says why).
pub fn is_ghostbench(text: &str) -> bool {
    /// A document's `schema`; serde skips every other field unbuilt.
    #[derive(serde::Deserialize)]
    struct Schema {
        schema: Option<String>,
    }
    let first = if text.starts_with('[') {
        serde_json::from_str::<Vec<Schema>>(text)
            .ok()
            .and_then(|all| all.into_iter().next())
    } else {
        serde_json::from_str::<Schema>(text).ok()
    };
    first
        .and_then(|s| s.schema)
        .is_some_and(|s| s.starts_with("ghostbench."))
}

/// Whether JSON `text` holds at most [`limits::MAX_JSON_VALUES`] values,
/// counted without building any (one pass that stops at the bound), so the
/// value it is then parsed into stays bounded. Invalid JSON passes: the full
/// parse says where it is invalid.
pub fn json_values(file: &str, text: &str) -> Result<()> {
    use serde::de::{
        DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor,
    };
    use std::cell::Cell;
    const OVER: &str = "over the bound";
    #[derive(Clone, Copy)]
    struct Count<'a>(&'a Cell<usize>);
    impl Count<'_> {
        fn one<E: Error>(self) -> Result<(), E> {
            self.0.set(self.0.get() + 1);
            if self.0.get() > limits::MAX_JSON_VALUES {
                return Err(E::custom(OVER));
            }
            Ok(())
        }
    }
    impl<'de> DeserializeSeed<'de> for Count<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Count<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E: Error>(self, _: bool) -> Result<(), E> {
            self.one()
        }
        fn visit_i64<E: Error>(self, _: i64) -> Result<(), E> {
            self.one()
        }
        fn visit_u64<E: Error>(self, _: u64) -> Result<(), E> {
            self.one()
        }
        fn visit_f64<E: Error>(self, _: f64) -> Result<(), E> {
            self.one()
        }
        fn visit_str<E: Error>(self, _: &str) -> Result<(), E> {
            self.one()
        }
        fn visit_unit<E: Error>(self) -> Result<(), E> {
            self.one()
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            self.one()?;
            while seq.next_element_seed(self)?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            self.one()?;
            while map.next_key::<IgnoredAny>()?.is_some() {
                self.one()?;
                map.next_value_seed(self)?;
            }
            Ok(())
        }
    }
    let count = Cell::new(0);
    let mut de = serde_json::Deserializer::from_str(text);
    match Count(&count).deserialize(&mut de) {
        Err(e) if count.get() > limits::MAX_JSON_VALUES => bail!(
            "{file}: more than {} JSON values (at line {}), the most analyze and history import read",
            limits::MAX_JSON_VALUES,
            e.line()
        ),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_values_are_counted_before_parsing_and_bounded() {
        let most = limits::MAX_JSON_VALUES;
        // An array of n numbers is n + 1 values; an object entry counts its
        // key and its value.
        let array = |n: usize| format!("[{}]", vec!["1"; n].join(","));
        assert!(json_values("j", &array(most - 1)).is_ok());
        let error = format!("{:#}", json_values("j", &array(most)).unwrap_err());
        assert_eq!(
            error,
            format!("j: more than {most} JSON values (at line 1), the most analyze and history import read")
        );
        assert!(json_values("j", r#"{"a":[1,{"b":null}],"c":"x"}"#).is_ok());
        // Invalid JSON is left to the parser, which says where.
        assert!(json_values("j", "{\"a\":").is_ok());
    }

    #[test]
    fn a_ghostbench_report_is_recognised_without_parsing_it() {
        assert!(is_ghostbench(
            r#"{"runs":[1,2],"schema":"ghostbench.compare"}"#
        ));
        assert!(is_ghostbench(
            r#"[{"schema":"ghostbench.compare"},{"x":1}]"#
        ));
        assert!(!is_ghostbench(
            r#"{"results":[{"command":"a","times":[1]}]}"#
        ));
        assert!(!is_ghostbench(r#"{"schema":"other"}"#));
        assert!(!is_ghostbench(r#"[1,2,3]"#));
        assert!(!is_ghostbench("{\"schema\":"));
    }
}
