//! Duplicate keys in a JSON object: `serde_json` keeps the last silently, while another reader
//! (a host) may keep the first, so the gate would start another server than the host does.
//! Files the gate reads as configuration are checked with [`first_duplicate_key`].

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

/// `Some(message)` naming the first key that appears twice in one object, with its line and
/// column; `None` when there is none (or the text is not JSON: that is reported elsewhere).
pub fn first_duplicate_key(text: &str) -> Option<String> {
    let mut de = serde_json::Deserializer::from_str(text);
    match NoDuplicates.deserialize(&mut de) {
        Ok(()) => None,
        Err(e) if e.to_string().contains("appears twice") => Some(e.to_string()),
        Err(_) => None,
    }
}

struct NoDuplicates;

impl<'de> DeserializeSeed<'de> for NoDuplicates {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoDuplicates {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NoDuplicates)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(A::Error::custom(format!(
                    "the key {} appears twice in one object",
                    serde_json::Value::String(key)
                )));
            }
            map.next_value_seed(NoDuplicates)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_is_named_with_its_place() {
        let found = first_duplicate_key("{\"a\": {\"x\": 1,\n \"x\": 2}, \"b\": [1]}").unwrap();
        assert!(found.contains("\"x\" appears twice"), "{found}");
        assert!(found.contains("line 2"), "{found}");
        assert!(first_duplicate_key("{\"a\": {\"x\": 1}, \"b\": {\"x\": 2}}").is_none());
    }
}
