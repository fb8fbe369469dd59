//! JSON read with its objects' keys in the order the server wrote them
//! (`serde_json::Value` sorts them): what `list --long` needs to show a
//! tool's parameters in the order its schema declares them. It knows
//! nothing of schemas.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A JSON value whose objects keep their keys' order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, its members in the order written.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value),
            _ => None,
        }
    }

    /// The members of an object, in order.
    pub fn as_object(&self) -> Option<&[(String, Json)]> {
        match self {
            Json::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The items of an array.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(text) => Some(text),
            _ => None,
        }
    }

    /// The value a JSON pointer (RFC 6901, `/$defs/Name`) names.
    pub fn pointer(&self, pointer: &str) -> Option<&Json> {
        if pointer.is_empty() {
            return Some(self);
        }
        let mut here = self;
        for token in pointer.strip_prefix('/')?.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            here = match here {
                Json::Object(_) => here.get(&token)?,
                Json::Array(items) => items.get(token.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(here)
    }

    /// As a `serde_json::Value` (keys sorted), for printing compactly.
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(on) => Value::Bool(*on),
            Json::Number(number) => Value::Number(number.clone()),
            Json::String(text) => Value::String(text.clone()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(name, value)| (name.clone(), value.to_value()))
                    .collect(),
            ),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, on: bool) -> Result<Json, E> {
        Ok(Json::Bool(on))
    }

    fn visit_i64<E>(self, number: i64) -> Result<Json, E> {
        Ok(Json::Number(number.into()))
    }

    fn visit_u64<E>(self, number: u64) -> Result<Json, E> {
        Ok(Json::Number(number.into()))
    }

    fn visit_f64<E>(self, number: f64) -> Result<Json, E> {
        // JSON text has no NaN or infinity: this is always some.
        Ok(serde_json::Number::from_f64(number).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E>(self, text: &str) -> Result<Json, E> {
        Ok(Json::String(text.to_owned()))
    }

    fn visit_string<E>(self, text: String) -> Result<Json, E> {
        Ok(Json::String(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members: Vec<(String, Json)> = Vec::new();
        while let Some((name, value)) = map.next_entry::<String, Json>()? {
            // A repeated key: the last one wins, as serde_json has it.
            members.retain(|(seen, _)| *seen != name);
            members.push((name, value));
        }
        Ok(Json::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_pointers_find_members() {
        let json: Json = serde_json::from_str(r#"{"z": 1, "a": {"m/n": [true, null]}, "b": "x"}"#)
            .expect("JSON");
        let names: Vec<&str> = json
            .as_object()
            .expect("an object")
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        assert_eq!(names, ["z", "a", "b"]);
        assert_eq!(json.pointer("/a/m~1n/0"), Some(&Json::Bool(true)));
        assert_eq!(json.pointer(""), Some(&json));
        assert_eq!(json.pointer("/nope"), None);
        assert_eq!(json.get("b").and_then(Json::as_str), Some("x"));
        assert_eq!(
            json.to_value(),
            serde_json::json!({"a": {"m/n": [true, null]}, "b": "x", "z": 1})
        );
    }
}
