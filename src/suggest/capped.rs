//! A judge that refuses calls past a budget, so the cost cap of a rewrite run holds however
//! many retries the scorer makes: the call that would pass the cap is never sent.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use async_trait::async_trait;

use crate::judge::{CallFailure, Judge, JudgeInfo, Question, Reply};

/// The failure message of a call refused by the cap.
const CAP_REACHED: &str = "the cost cap of the rewrites was reached";

pub(crate) struct CappedJudge {
    inner: Arc<dyn Judge>,
    limit: u64,
    used: AtomicU64,
    /// Set when a call was refused: a scoring that then fails failed for the cap, whatever its
    /// error says.
    refused: AtomicBool,
}

impl CappedJudge {
    pub(crate) fn new(inner: Arc<dyn Judge>, limit: u64) -> CappedJudge {
        CappedJudge {
            inner,
            limit,
            used: AtomicU64::new(0),
            refused: AtomicBool::new(false),
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

impl CappedJudge {
    /// True once the cap has refused a call.
    pub(crate) fn refused_a_call(&self) -> bool {
        self.refused.load(Ordering::SeqCst)
    }
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
            self.refused.store(true, Ordering::SeqCst);
            return Err(CallFailure::fatal(CAP_REACHED));
        }
        self.inner.ask(question).await
    }
}
