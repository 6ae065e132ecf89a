//! What a judge is asked and what it answers: the questions, the raw replies and their
//! validation ([`answer`]). The judges themselves live in the engine; this is their shared
//! vocabulary.

pub mod answer;
pub mod answer_cache;
pub mod siblings;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;
pub use crate::judge::siblings::Siblings;
use crate::spec::signals::{ContextSignals, ShadowCandidate};

/// What kind of question is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuestionKind {
    Tool,
    Coherence,
    /// A tool-selection question of the eval (`tdqs_core::eval`): the answer is a
    /// [`crate::eval::answer::SelectionAnswer`], never a TDQS score.
    Selection,
    /// `eval --init`: draft a case suite for a tool set.
    EvalDraft,
    /// `eval --init`: how defensible one drafted case's expected answer is.
    EvalValidate,
    /// `suggest`: a revised definition of one tool (`tdqs_core::suggest::proposal`), never a
    /// TDQS score.
    Rewrite,
}

impl QuestionKind {
    /// True for the eval's questions (no TDQS answer; open JSON schemas).
    pub fn is_eval(self) -> bool {
        matches!(
            self,
            QuestionKind::Selection | QuestionKind::EvalDraft | QuestionKind::EvalValidate
        )
    }

    /// True when the answer's schema is open (a selection's arguments, a whole tool
    /// definition), which strict structured-output modes refuse.
    pub fn open_schema(self) -> bool {
        self.is_eval() || self == QuestionKind::Rewrite
    }
}

/// The structured subject of a question, for judges that read definitions rather than prompts
/// (the static judge) and for reports.
#[derive(Debug, Clone)]
pub enum Subject {
    Tool {
        /// The raw tool object as exported.
        tool: Value,
        /// The names of every other tool of the side, in listing order (one list shared by the
        /// side's questions).
        siblings: Siblings,
        signals: ContextSignals,
    },
    Coherence {
        server_name: String,
        /// Every raw tool object of the side, in listing order.
        tools: Vec<Value>,
        /// Signals of every tool, in the same order.
        signals: Vec<ContextSignals>,
        candidates: Vec<ShadowCandidate>,
    },
    /// A selection question of the eval: one request against the side's tools.
    Selection {
        request: String,
        /// Every raw tool object, in listing order, exactly as exported.
        tools: Vec<Value>,
    },
}

/// One question for the judge.
#[derive(Debug, Clone)]
pub struct Question {
    pub kind: QuestionKind,
    /// The rendered system prompt (empty for judges that need no prompts).
    pub system: String,
    /// The rendered user prompt (empty for judges that need no prompts, and for a tool question
    /// rendered on demand: see `user_template`).
    pub user: String,
    pub subject: Subject,
    /// The tool prompt's template when `user` is rendered only when the question is asked
    /// ([`Question::rendered`]): a tool prompt lists every sibling name, so rendering all of a
    /// side's prompts up front costs the square of the tool count.
    pub user_template: Option<std::sync::Arc<str>>,
}

impl Question {
    /// The question with its user prompt rendered (itself when it already is).
    pub fn rendered(&self) -> Result<std::borrow::Cow<'_, Question>, Error> {
        match (&self.user_template, &self.subject) {
            (
                Some(template),
                Subject::Tool {
                    tool,
                    siblings,
                    signals,
                },
            ) => {
                let user =
                    crate::spec::render_tool_user(template, tool, &siblings.to_vec(), signals)?;
                Ok(std::borrow::Cow::Owned(Question {
                    user,
                    user_template: None,
                    ..self.clone()
                }))
            }
            _ => Ok(std::borrow::Cow::Borrowed(self)),
        }
    }
}

/// Tokens a call consumed, when the judge reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
}

impl TokenUsage {
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
    }
}

/// The judge's raw reply; the scoring stage validates `text`.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// The answer text (JSON, possibly in a fenced block).
    pub text: String,
    /// The model that answered, as the transport proved it.
    pub model: Option<String>,
    pub usage: TokenUsage,
}

/// A failed call. `retryable` failures are asked again up to the pinned number of retries.
#[derive(Debug, Clone)]
pub struct CallFailure {
    pub message: String,
    pub retryable: bool,
    /// Supporting text (redacted before display), e.g. the CLI's stderr.
    pub detail: Option<String>,
}

impl CallFailure {
    pub fn retryable(message: impl Into<String>) -> Self {
        CallFailure {
            message: message.into(),
            retryable: true,
            detail: None,
        }
    }

    pub fn fatal(message: impl Into<String>) -> Self {
        CallFailure {
            message: message.into(),
            retryable: false,
            detail: None,
        }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }
}

/// What a judge is, for the report; two sides are comparable only under equal `JudgeInfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeInfo {
    /// `claude-code`, `anthropic`, `openai` or `static`.
    pub mode: String,
    /// The model asked for (`static` for the rule judge).
    pub model: String,
    /// True when the answers come from a language model.
    pub model_judged: bool,
    /// Transport details that affect answers (CLI version, endpoint without credentials, effort,
    /// sampling settings). Covered by the scoring digest.
    pub settings: Value,
}
