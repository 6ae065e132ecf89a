//! Parsing and validating a judge's answer text.
//! (Temporary minimal version; replaced by the full validator.)

use crate::score::model::{CoherenceAnswer, ToolAnswer};

pub fn parse_tool_answer(text: &str) -> Result<ToolAnswer, String> {
    serde_json::from_str(text.trim()).map_err(|e| e.to_string())
}

pub fn parse_coherence_answer(text: &str) -> Result<CoherenceAnswer, String> {
    serde_json::from_str(text.trim()).map_err(|e| e.to_string())
}
