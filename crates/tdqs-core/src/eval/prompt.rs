//! What the selecting model is shown, and the key its answer is cached under.
//!
//! The tool definitions go in exactly as the server listed them (every key, in the server's
//! order, unedited), as a JSON array, followed by one request. The model answers with the object
//! of [`super::answer`].

use serde_json::Value;
use sha2::{Digest, Sha256};

/// Version of the prompt texts below; part of every cache key, so a change re-asks.
pub const PROMPT_VERSION: u32 = 1;

/// The system prompt of a selection question.
pub fn selection_system() -> String {
    "You are the tool-selection step of an assistant connected to one MCP server. You are given \
     the server's tool definitions exactly as the server lists them, and one user request. \
     Decide which single tool the assistant should call first to serve the request, or answer \
     NO_TOOL when none of the tools can serve it. Do not call anything.\n\n\
     Answer with one JSON object and nothing else:\n\
     {\"tool\": \"<a tool name from the list, or NO_TOOL>\", \"arguments\": {<the arguments \
     you would send, following the tool's inputSchema; {} for NO_TOOL>}, \"confidence\": \
     <a number from 0 to 1>, \"reason\": \"<one sentence>\"}"
        .to_string()
}

/// The user prompt: the tool list, then the request.
pub fn selection_user(tools: &[Value], request: &str) -> String {
    let listing = serde_json::to_string_pretty(&Value::Array(tools.to_vec()))
        .unwrap_or_else(|_| "[]".to_string());
    format!("Tools (JSON, as listed by the server):\n{listing}\n\nUser request:\n{request}\n")
}

/// SHA-256 of the tool list as compact JSON in listing order: any change to a definition (or to
/// the order the model sees) changes it.
pub fn tool_set_digest(tools: &[Value]) -> String {
    let bytes = serde_json::to_vec(&Value::Array(tools.to_vec())).unwrap_or_default();
    hex::encode(Sha256::digest(&bytes))
}

/// The cache key of one answer: hash(model and settings, prompt, tool-set digest).
pub fn cache_key(model_settings: &str, system: &str, user: &str, tool_set_digest: &str) -> String {
    let mut h = Sha256::new();
    for part in [
        format!("tdqs-eval-prompt-v{PROMPT_VERSION}").as_str(),
        model_settings,
        system,
        user,
        tool_set_digest,
    ] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cache_key_changes_with_each_part() {
        let tools = vec![json!({"name": "a", "description": "A."})];
        let d = tool_set_digest(&tools);
        let base = cache_key("m", "s", "u", &d);
        assert_eq!(base, cache_key("m", "s", "u", &d));
        assert_ne!(base, cache_key("m2", "s", "u", &d));
        assert_ne!(base, cache_key("m", "s", "u2", &d));
        let other = tool_set_digest(&[json!({"name": "a", "description": "B."})]);
        assert_ne!(base, cache_key("m", "s", "u", &other));
        // Lengths are part of the key: moving text between parts changes it.
        assert_ne!(cache_key("ab", "c", "u", &d), cache_key("a", "bc", "u", &d));
    }

    #[test]
    fn prompt_shows_definitions_unedited() {
        let tools = vec![
            json!({"name": "z", "inputSchema": {"type": "object"}, "description": "Zed  tool."}),
        ];
        let user = selection_user(&tools, "do z");
        assert!(user.contains("\"description\": \"Zed  tool.\""));
        // Server key order kept (name before inputSchema before description).
        let n = user.find("\"name\"").unwrap();
        let s = user.find("\"inputSchema\"").unwrap();
        let dsc = user.find("\"description\"").unwrap();
        assert!(n < s && s < dsc);
        assert!(user.ends_with("User request:\ndo z\n"));
    }
}
