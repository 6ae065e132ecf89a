//! A judge that refuses calls past a budget, so the cost cap of a rewrite run holds however
//! many retries the scorer makes: the call that would pass the cap is never sent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;

use crate::judge::{CallFailure, Judge, JudgeInfo, Question, Reply};
use tdqs_core::error::Error;

/// The failure message of a call refused by the cap (recognised by [`is_cap_refusal`]).
const CAP_REACHED: &str = "the cost cap of the rewrites was reached";

pub(crate) struct CappedJudge {
    inner: Arc<dyn Judge>,
    limit: u64,
    used: AtomicU64,
}

impl CappedJudge {
    pub(crate) fn new(inner: Arc<dyn Judge>, limit: u64) -> CappedJudge {
        CappedJudge {
            inner,
            limit,
            used: AtomicU64::new(0),
        }
    }

    /// Calls sent so far.
    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::SeqCst)
    }

    /// Calls still allowed.
    pub(crate) fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.used())
    }
}

/// True when `error` is a scoring that failed because the cap refused a call.
pub(crate) fn is_cap_refusal(error: &Error) -> bool {
    error.render().contains(CAP_REACHED)
}

#[async_trait]
impl Judge for CappedJudge {
    fn info(&self) -> JudgeInfo {
        self.inner.info()
    }

    fn needs_prompts(&self) -> bool {
        self.inner.needs_prompts()
    }

    fn deterministic(&self) -> bool {
        self.inner.deterministic()
    }

    async fn ask(&self, question: &Question) -> Result<Reply, CallFailure> {
        let taken = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                (used < self.limit).then_some(used + 1)
            });
        if taken.is_err() {
            return Err(CallFailure::fatal(CAP_REACHED));
        }
        self.inner.ask(question).await
    }
}
