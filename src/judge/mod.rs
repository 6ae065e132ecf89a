//! The judges: whatever answers the TDQS questions.
//!
//! Every judge implements [`Judge`]. The scoring stage renders the questions, asks them through
//! this trait, and validates and retries the answers itself, so every judge gets the same answer
//! checks. Judges: the pinned model through Claude Code (`claude_code`), the Anthropic Messages
//! API (`anthropic`), OpenAI-compatible servers (`openai`), and a deterministic rule-based judge
//! (`static_judge`). `http` is what the two HTTP judges share (keys, the client, transport
//! retries, answer schemas), and `build` makes the judge a run asks for. The questions and
//! answers they exchange are [`tdqs_core::judge`].

pub mod anthropic;
pub mod build;
pub mod claude_code;
pub mod http;
pub mod openai;
pub mod static_judge;

use async_trait::async_trait;

use tdqs_core::error::Error;
pub use tdqs_core::judge::{
    CallFailure, JudgeInfo, Question, QuestionKind, Reply, Siblings, Subject, TokenUsage,
};

#[async_trait]
pub trait Judge: Send + Sync {
    fn info(&self) -> JudgeInfo;

    /// False for judges that read definitions, not prompts: then no prompt is fetched.
    fn needs_prompts(&self) -> bool {
        true
    }

    /// True when the same question always gets the same answer (the static rules): the
    /// scorer then asks it once per run, so confirmation pairs cost nothing.
    fn deterministic(&self) -> bool {
        false
    }

    /// Checks, before any export work, that the judge can be reached at all (credentials, CLI
    /// present). Returns warnings for the report.
    async fn preflight(&self) -> Result<Vec<String>, Error> {
        Ok(Vec::new())
    }

    /// Asks one question once. Retrying is the caller's business.
    async fn ask(&self, question: &Question) -> Result<Reply, CallFailure>;
}
