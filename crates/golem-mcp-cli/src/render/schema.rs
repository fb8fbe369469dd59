//! What `list --long` shows of a JSON Schema: one line per parameter, in
//! the order the schema declares them (its name, type, required or
//! optional, default, allowed values and the first line of its
//! description), the properties of nested objects indented below theirs
//! (each object variant of an `anyOf` or `oneOf` under a line of its own),
//! and past a bound, a line saying what was left out (the whole schema is
//! `list --json`'s). It knows nothing of tools: it is given a schema.

use std::fmt::Write as _;

use crate::render::ordered::Json;

/// How many lines one schema gets; the rest is counted, not shown.
pub const MAX_LINES: usize = 40;
/// How deep nested objects are shown; deeper ones are counted.
const MAX_DEPTH: usize = 3;
/// How many allowed values an `enum` shows.
const MAX_CHOICES: usize = 8;
/// How many characters of a description, a default or a type are shown.
const MAX_TEXT: usize = 100;

/// The lines of `schema`'s properties, each indented by `indent` spaces
/// (nested ones by two more), or `none` when it has none.
pub fn parameters(schema: &Json, indent: usize) -> String {
    let mut lines = Lines {
        root: schema,
        out: String::new(),
        shown: 0,
        left_out: 0,
    };
    let has_any = schema
        .get("properties")
        .and_then(Json::as_object)
        .is_some_and(|properties| !properties.is_empty());
    if !has_any {
        return format!("{:indent$}none\n", "");
    }
    lines.object(schema, indent, 0);
    if lines.left_out > 0 {
        let _ = writeln!(
            lines.out,
            "{:indent$}({} more not shown; `golem-mcp list --json` prints the whole schema)",
            "", lines.left_out,
        );
    }
    lines.out
}

/// `schema`'s type in a few words: `integer`, `string or null`, `array of
/// string`, `object`, `any`.
pub fn type_words(root: &Json, schema: &Json) -> String {
    let schema = resolve(root, schema);
    if let Some(constant) = schema.get("const") {
        return format!("the value {}", short(&constant.to_value().to_string()));
    }
    let mut words: Vec<String> = Vec::new();
    match schema.get("type") {
        Some(Json::String(one)) => words.push(one_type(root, schema, one)),
        Some(Json::Array(many)) => words.extend(
            many.iter()
                .filter_map(Json::as_str)
                .map(|one| one_type(root, schema, one)),
        ),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        for branch in schema
            .get(key)
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let branch = type_words(root, branch);
            if !words.contains(&branch) {
                words.push(branch);
            }
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Json::as_array)
        && words.is_empty()
        && let [only] = all
    {
        return type_words(root, only);
    }
    if words.is_empty() {
        return match schema.get("properties") {
            Some(_) => "object".to_owned(),
            None => "any".to_owned(),
        };
    }
    words.join(" or ")
}

/// One of the JSON types, with what the schema adds to it: the items of
/// an array, the format of a string.
fn one_type(root: &Json, schema: &Json, kind: &str) -> String {
    match kind {
        "array" => match schema.get("items") {
            Some(items @ Json::Object(_)) => {
                let inner = type_words(root, items);
                match inner.contains(" or ") {
                    true => format!("array of ({inner})"),
                    false => format!("array of {inner}"),
                }
            }
            _ => "array".to_owned(),
        },
        "string" => match schema.get("format").and_then(Json::as_str) {
            Some(format) => format!("string ({format})"),
            None => "string".to_owned(),
        },
        other => other.to_owned(),
    }
}

/// A schema with a local `$ref` (`#/$defs/Name`) followed, a few times at
/// most (a reference to a reference).
fn resolve<'a>(root: &'a Json, mut schema: &'a Json) -> &'a Json {
    for _ in 0..4 {
        let Some(pointer) = schema.get("$ref").and_then(Json::as_str) else {
            break;
        };
        match pointer.strip_prefix('#').and_then(|p| root.pointer(p)) {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// The lines being written, and how many were left out.
struct Lines<'a> {
    root: &'a Json,
    out: String,
    shown: usize,
    left_out: usize,
}

impl<'a> Lines<'a> {
    /// One line per property of `schema`, with nested objects below.
    fn object(&mut self, schema: &'a Json, indent: usize, depth: usize) {
        let schema = resolve(self.root, schema);
        let Some(properties) = schema.get("properties").and_then(Json::as_object) else {
            return;
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Json::as_array)
            .map(|names| names.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        for (name, property) in properties {
            if self.shown >= MAX_LINES {
                self.left_out += 1 + count_nested(self.root, property, depth + 1);
                continue;
            }
            self.line(name, property, required.contains(&name.as_str()), indent);
            if depth + 1 < MAX_DEPTH {
                self.below(property, indent + 2, depth + 1);
            } else {
                self.left_out += count_nested(self.root, property, 0);
            }
        }
    }

    /// The objects below `property`'s line: one object's properties, or
    /// each variant's under a line naming it (`variant 1 of 2 (Circle):`).
    fn below(&mut self, property: &'a Json, indent: usize, depth: usize) {
        match nested(self.root, property).as_slice() {
            [] => {}
            [only] => self.object(only, indent, depth),
            variants => {
                for (index, variant) in variants.iter().enumerate() {
                    if self.shown < MAX_LINES {
                        self.variant_line(index + 1, variants.len(), variant, indent);
                    }
                    self.object(variant, indent + 2, depth);
                }
            }
        }
    }

    /// `variant 1 of 2 (Title):`, the title when the variant has one.
    fn variant_line(&mut self, number: usize, of: usize, variant: &Json, indent: usize) {
        self.shown += 1;
        let mut line = format!("{:indent$}variant {number} of {of}", "");
        if let Some(title) = variant.get("title").and_then(Json::as_str) {
            let _ = write!(line, " ({})", short(title));
        }
        line.push(':');
        self.out.push_str(&golem_terminal::one_line(&line));
        self.out.push('\n');
    }

    /// `name: type, required, default 3, one of 1, 2, 3 — First line.`
    fn line(&mut self, name: &str, property: &Json, required: bool, indent: usize) {
        self.shown += 1;
        let resolved = resolve(self.root, property);
        let mut line = format!(
            "{:indent$}{name}: {}, {}",
            "",
            short(&type_words(self.root, property)),
            if required { "required" } else { "optional" },
        );
        // A default or description may sit beside the `$ref` or on its
        // target.
        let field = |key: &str| property.get(key).or_else(|| resolved.get(key));
        if let Some(default) = field("default") {
            let _ = write!(line, ", default {}", short(&default.to_value().to_string()));
        }
        if let Some(choices) = field("enum").and_then(Json::as_array) {
            line.push_str(", one of ");
            line.push_str(&choices_text(choices));
        }
        if let Some(description) = field("description")
            .and_then(Json::as_str)
            .and_then(|text| text.lines().map(str::trim).find(|line| !line.is_empty()))
        {
            line.push_str(" — ");
            line.push_str(&short(description));
        }
        // A server's words, printed within one line: none may start another.
        self.out.push_str(&golem_terminal::one_line(&line));
        self.out.push('\n');
    }
}

/// The objects whose properties are shown below `property`'s line: its
/// own, or each object variant of its `anyOf` or `oneOf` (`Circle |
/// Square`; `Circle | None` has one), or the same of its array's items.
fn nested<'a>(root: &'a Json, property: &'a Json) -> Vec<&'a Json> {
    let property = resolve(root, property);
    let own = objects(root, property);
    if !own.is_empty() {
        return own;
    }
    match property.get("items") {
        Some(items) => objects(root, resolve(root, items)),
        None => Vec::new(),
    }
}

/// `schema` itself if it has properties, else its variants that do.
fn objects<'a>(root: &'a Json, schema: &'a Json) -> Vec<&'a Json> {
    if has_properties(schema) {
        return vec![schema];
    }
    ["anyOf", "oneOf"]
        .into_iter()
        .filter_map(|key| schema.get(key).and_then(Json::as_array))
        .flatten()
        .map(|variant| resolve(root, variant))
        .filter(|variant| has_properties(variant))
        .collect()
}

fn has_properties(schema: &Json) -> bool {
    schema
        .get("properties")
        .and_then(Json::as_object)
        .is_some_and(|properties| !properties.is_empty())
}

/// How many lines are below `schema`'s, all levels (a variant's own line
/// included), counted to a depth where a recursive schema stops.
fn count_nested(root: &Json, schema: &Json, depth: usize) -> usize {
    if depth > MAX_DEPTH * 4 {
        return 0;
    }
    let objects = nested(root, schema);
    let labels = match objects.len() {
        0 | 1 => 0,
        variants => variants,
    };
    let properties: usize = objects
        .iter()
        .filter_map(|object| object.get("properties").and_then(Json::as_object))
        .flat_map(|properties| properties.iter())
        .map(|(_, property)| 1 + count_nested(root, property, depth + 1))
        .sum();
    labels + properties
}

/// `"a", "b", "c"`, and past [`MAX_CHOICES`] how many more.
fn choices_text(choices: &[Json]) -> String {
    let mut shown: Vec<String> = choices
        .iter()
        .take(MAX_CHOICES)
        .map(|choice| short(&choice.to_value().to_string()))
        .collect();
    if choices.len() > MAX_CHOICES {
        shown.push(format!("and {} more", choices.len() - MAX_CHOICES));
    }
    shown.join(", ")
}

/// `text`, cut to [`MAX_TEXT`] characters with an ellipsis.
fn short(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(text: &str) -> Json {
        serde_json::from_str(text).expect("a schema")
    }

    #[test]
    fn each_parameter_is_a_line_with_its_type_requirement_default_enum_and_description() {
        let declared = schema(
            r#"{
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "Message to echo\nSecond line."},
                "count": {"type": "integer", "default": 3, "enum": [1, 2, 3]},
                "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null},
                "tags": {"type": "array", "items": {"type": "string"}},
                "when": {"type": "string", "format": "date-time"},
                "free": {}
            },
            "required": ["message"]
        }"#,
        );
        assert_eq!(
            parameters(&declared, 4),
            "    message: string, required — Message to echo\n\
             \x20   count: integer, optional, default 3, one of 1, 2, 3\n\
             \x20   limit: integer or null, optional, default null\n\
             \x20   tags: array of string, optional\n\
             \x20   when: string (date-time), optional\n\
             \x20   free: any, optional\n"
        );
        assert_eq!(parameters(&schema("{}"), 4), "    none\n");
        assert_eq!(parameters(&schema(r#"{"properties": {}}"#), 2), "  none\n");
    }

    #[test]
    fn nested_objects_and_references_are_indented_below_their_parameter() {
        let nested = schema(
            r##"{
            "type": "object",
            "properties": {
                "contact": {"$ref": "#/$defs/Contact", "description": "Who"},
                "rows": {"type": "array", "items": {"type": "object",
                    "properties": {"id": {"type": "integer"}}, "required": ["id"]}}
            },
            "$defs": {"Contact": {"type": "object", "title": "Contact",
                "properties": {"name": {"type": "string"}, "age": {"type": "integer", "default": 36}},
                "required": ["name"]}}
        }"##,
        );
        assert_eq!(
            parameters(&nested, 2),
            "  contact: object, optional — Who\n\
             \x20   name: string, required\n\
             \x20   age: integer, optional, default 36\n\
             \x20 rows: array of object, optional\n\
             \x20   id: integer, required\n"
        );
    }

    #[test]
    fn each_object_variant_of_a_union_shows_its_fields() {
        let union = schema(
            r##"{
            "type": "object",
            "properties": {
                "shape": {"anyOf": [{"$ref": "#/$defs/Circle"}, {"$ref": "#/$defs/Square"}]},
                "more": {"type": "array", "items": {"oneOf": [{"$ref": "#/$defs/Circle"},
                    {"type": "object", "properties": {"side": {"type": "number"}}}]}},
                "maybe": {"anyOf": [{"$ref": "#/$defs/Circle"}, {"type": "null"}]}
            },
            "required": ["shape"],
            "$defs": {
                "Circle": {"type": "object", "title": "Circle",
                    "properties": {"radius": {"type": "number"}}, "required": ["radius"]},
                "Square": {"type": "object", "title": "Square",
                    "properties": {"side": {"type": "number"}}}
            }
        }"##,
        );
        assert_eq!(
            parameters(&union, 2),
            "  shape: object, required\n\
             \x20   variant 1 of 2 (Circle):\n\
             \x20     radius: number, required\n\
             \x20   variant 2 of 2 (Square):\n\
             \x20     side: number, optional\n\
             \x20 more: array of object, optional\n\
             \x20   variant 1 of 2 (Circle):\n\
             \x20     radius: number, required\n\
             \x20   variant 2 of 2:\n\
             \x20     side: number, optional\n\
             \x20 maybe: object or null, optional\n\
             \x20   radius: number, required\n"
        );
    }

    #[test]
    fn a_very_long_schema_is_summarised_saying_what_was_left_out() {
        let properties: Vec<String> = (0..60)
            .map(|n| format!(r#""p{n:02}": {{"type": "string"}}"#))
            .collect();
        let long = schema(&format!(
            r#"{{"type": "object", "properties": {{{}}}}}"#,
            properties.join(", ")
        ));
        let text = parameters(&long, 2);
        assert_eq!(text.lines().count(), MAX_LINES + 1, "{text}");
        assert!(text.starts_with("  p00: string, optional\n"), "{text}");
        assert!(
            text.ends_with(
                "  (20 more not shown; `golem-mcp list --json` prints the whole schema)\n"
            ),
            "{text}"
        );
        // A recursive schema ends too.
        let recursive = schema(r##"{"type": "object", "properties": {"node": {"$ref": "#"}}}"##);
        let text = parameters(&recursive, 2);
        assert!(text.contains("more not shown"), "{text}");
        // Long enums and descriptions are cut.
        let choices: Vec<String> = (0..20).map(|n| n.to_string()).collect();
        let wide = schema(&format!(
            r#"{{"type": "object", "properties": {{"n": {{"enum": [{}], "description": "{}"}}}}}}"#,
            choices.join(", "),
            "x".repeat(300)
        ));
        let text = parameters(&wide, 0);
        assert!(
            text.contains("one of 0, 1, 2, 3, 4, 5, 6, 7, and 12 more"),
            "{text}"
        );
        assert!(text.trim_end().ends_with('…'), "{text}");
    }

    #[test]
    fn a_name_or_format_cannot_start_a_line_of_its_own() {
        let forged = schema(
            r#"{"properties": {"a\ngolem-mcp: forged": {"type": "string", "format": "x\ny"}}}"#,
        );
        let text = parameters(&forged, 2);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("a\\ngolem-mcp: forged"), "{text}");
    }
}
