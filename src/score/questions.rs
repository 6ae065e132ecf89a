//! Turning an export into questions: context signals, the shadow-candidate prefilter, hard gates
//! and the rendered prompts (the prompts themselves are loaded by [`super::prompts`]).

use std::sync::Arc;

use crate::judge::{Question, QuestionKind, Subject};
use crate::score::side::{HardGate, PreparedSide, PreparedTool};
use tdqs_core::error::Error;
use tdqs_core::export::Export;
use tdqs_core::judge::siblings::{Siblings, SideNames};
use tdqs_core::spec::signals::{context_signals, shadow_candidates};
use tdqs_core::spec::{render_coherence_user, render_tool_user, Prompts};

/// Every question of one side. Without prompts (a rule judge) the questions carry only their
/// subject.
pub fn prepare_side(export: &Export, prompts: Option<&Prompts>) -> Result<PreparedSide, Error> {
    let names: Vec<String> = export
        .tools
        .iter()
        .map(|t| tdqs_core::digest::tool_name(t).to_string())
        .collect();
    let signals: Vec<_> = export.tools.iter().map(context_signals).collect();
    let costs: Vec<(String, u64)> = names
        .iter()
        .cloned()
        .zip(signals.iter().map(|s| s.invocation_cost))
        .collect();
    let candidates = shadow_candidates(&costs);
    let server_name = export
        .server_name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "unnamed server".to_string());
    // One list of names for the whole side; each question holds it shared, with its position.
    let side = Arc::new(SideNames::new(names.clone()));
    let tool_template: Option<Arc<str>> = match prompts {
        Some(p) => {
            // Render one prompt now so a template error surfaces here, as before.
            if let (Some(tool), Some(signals)) = (export.tools.first(), signals.first()) {
                render_tool_user(&p.tool_user, tool, &[], signals)?;
            }
            Some(Arc::from(p.tool_user.as_str()))
        }
        None => None,
    };
    let mut tools = Vec::with_capacity(export.tools.len());
    for (index, tool) in export.tools.iter().enumerate() {
        let name = names[index].clone();
        let siblings = Siblings::of(Arc::clone(&side), index);
        let gate = HardGate::of(tool);
        let question = if gate == HardGate::NoDescription {
            None
        } else {
            // The prompt is rendered when the question is asked (`Question::rendered`); the
            // template was checked once, so rendering cannot fail for one tool and not another.
            let system = prompts.map_or_else(String::new, |p| p.tool_system.clone());
            Some(Question {
                kind: QuestionKind::Tool,
                system,
                user: String::new(),
                subject: Subject::Tool {
                    tool: tool.clone(),
                    siblings,
                    signals: signals[index].clone(),
                },
                user_template: tool_template.clone(),
            })
        };
        tools.push(PreparedTool {
            definition_hash: export.hashes.get(&name).cloned().unwrap_or_default(),
            name,
            signals: signals[index].clone(),
            gate,
            question,
        });
    }
    let (system, user) = match prompts {
        Some(p) => (
            p.coherence_system.clone(),
            render_coherence_user(
                &p.coherence_user,
                &server_name,
                &export.tools,
                &signals,
                &candidates,
            )?,
        ),
        None => (String::new(), String::new()),
    };
    Ok(PreparedSide {
        server_name: server_name.clone(),
        set_hash: export.set_hash.clone(),
        tools,
        coherence: Question {
            kind: QuestionKind::Coherence,
            system,
            user,
            subject: Subject::Coherence {
                server_name,
                tools: export.tools.clone(),
                signals,
                candidates: candidates.clone(),
            },
            user_template: None,
        },
        candidates,
    })
}
