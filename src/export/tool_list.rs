//! Tool lists written by other tools, read for `lint --export`: a `{"tools": [...]}` object
//! (the body of a `tools/list` result, which inspectors and other linters save), the same
//! inside a JSON-RPC response (`{"result": {"tools": [...]}}`), or a bare `[...]` array of tool
//! objects. Lint reads them besides our own export format; the gate does not, because its
//! exports carry the probe profile and hashes that make two sides comparable.

use std::path::Path;

use serde_json::Value;

use tdqs_core::digest::{assemble_export, json_kind};
use tdqs_core::error::{Error, Result, Stage};
use tdqs_core::export::{Export, ExportSource, ProbeProfile, RawListing};

use super::file::{export_of_value, read_untrusted};

/// What a file for `lint --export` turned out to hold.
enum Contents {
    /// Our own export format (has `schemaVersion`).
    Export(Value),
    /// A plain tool list, with the server's name and version when the file gives them.
    Tools {
        tools: Vec<Value>,
        name: Option<String>,
        version: Option<String>,
    },
}

/// Reads `path` as a tdqs-gate export or as a plain tool list and returns an export of it. A
/// plain list gets its hashes computed here (nothing to verify); an export is verified as
/// [`super::file::read_export_within`] does. Anything else is refused with the forms that are
/// read. At most `limit` bytes are read ([`super::file::export_file_limit`] of the listing limit
/// in force), as for an export file.
pub fn read_export_or_tool_list(path: &Path, limit: u64) -> Result<Export> {
    let shown = path.display();
    let text = read_untrusted(path, limit)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|err| unreadable(path, format!("it is not valid JSON ({err})")))?;
    match classify(value).map_err(|what| unreadable(path, what))? {
        Contents::Export(value) => export_of_value(path, value),
        Contents::Tools {
            tools,
            name,
            version,
        } => {
            if let Some(i) = tools.iter().position(|t| !t.is_object()) {
                return Err(unreadable(
                    path,
                    format!(
                        "tool {} of its list is {}, not a tool object",
                        i + 1,
                        json_kind(&tools[i])
                    ),
                ));
            }
            let listing = RawListing {
                server_name: name,
                server_version: version,
                tools,
                ..RawListing::default()
            };
            let source = ExportSource {
                origin: Some(format!("tool list {shown}")),
                ..ExportSource::default()
            };
            assemble_export(listing, ProbeProfile::default(), source)
                .map_err(|err| err.context(format_args!("tool list {shown}")))
        }
    }
}

fn unreadable(path: &Path, what: String) -> Error {
    Error::new(
        Stage::Export,
        format!(
            "{} is neither a tdqs-gate export nor a tool list: {what}",
            path.display()
        ),
    )
    .with_advice(
        "pass a file holding {\"tools\": [...]} (a tools/list result), a bare [...] array of \
         tool objects, or an export written by `tdqs-gate export -o FILE`",
    )
}

fn text_at(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Which form the parsed file is, or what it is instead.
fn classify(value: Value) -> std::result::Result<Contents, String> {
    match value {
        Value::Array(tools) => Ok(Contents::Tools {
            tools,
            name: None,
            version: None,
        }),
        Value::Object(ref map) if map.contains_key("schemaVersion") => Ok(Contents::Export(value)),
        Value::Object(ref map) => {
            // A JSON-RPC response carries the list in `result`.
            let body = match map.get("result") {
                Some(result) if result.get("tools").is_some() => result,
                _ => &value,
            };
            match body.get("tools") {
                Some(Value::Array(tools)) => Ok(Contents::Tools {
                    tools: tools.clone(),
                    name: text_at(&value, "/serverInfo/name")
                        .or_else(|| text_at(&value, "/server/name")),
                    version: text_at(&value, "/serverInfo/version")
                        .or_else(|| text_at(&value, "/server/version")),
                }),
                Some(other) => Err(format!(
                    "its `tools` is {}, not an array of tool objects",
                    json_kind(other)
                )),
                None => {
                    let keys: Vec<&str> = map.keys().map(String::as_str).take(6).collect();
                    Err(format!(
                        "it is an object without `tools` or `schemaVersion` (keys: {})",
                        if keys.is_empty() {
                            "none".to_string()
                        } else {
                            keys.join(", ")
                        }
                    ))
                }
            }
        }
        other => Err(format!(
            "it is {}, not an object or an array",
            json_kind(&other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool_count(value: Value) -> std::result::Result<usize, String> {
        match classify(value)? {
            Contents::Tools { tools, .. } => Ok(tools.len()),
            Contents::Export(_) => Err("export".to_string()),
        }
    }

    #[test]
    fn reads_the_forms_other_tools_write() {
        let tool = json!({"name": "a", "inputSchema": {"type": "object"}});
        assert_eq!(tool_count(json!({"tools": [tool.clone()]})), Ok(1));
        assert_eq!(tool_count(json!([tool.clone(), tool.clone()])), Ok(2));
        assert_eq!(
            tool_count(json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}})),
            Ok(1)
        );
        assert!(matches!(
            classify(json!({"schemaVersion": 9})),
            Ok(Contents::Export(_))
        ));
    }

    #[test]
    fn names_what_anything_else_is() {
        assert_eq!(
            tool_count(json!({"tools": {"a": 1}})),
            Err("its `tools` is an object, not an array of tool objects".to_string())
        );
        assert_eq!(
            tool_count(json!({"servers": []})),
            Err("it is an object without `tools` or `schemaVersion` (keys: servers)".to_string())
        );
        assert_eq!(
            tool_count(json!("tools")),
            Err("it is a string, not an object or an array".to_string())
        );
    }
}
