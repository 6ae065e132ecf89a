//! Scoring sides with a judge: hard gates, bounded concurrency, answer validation with retries,
//! one question asked once per pair, post-processing and rollups.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use crate::judge::{CallFailure, Judge, Question, QuestionKind, Subject, TokenUsage};
use crate::progress::{Progress, ProgressEvent};
use crate::score::answer_cache::AnswerCache;
use tdqs_core::arith::{Tenths, Weights};
use tdqs_core::error::{Error, Stage};
use tdqs_core::judge::answer::{parse_coherence_answer, parse_tool_answer};
use tdqs_core::redact::redact;
use tdqs_core::rubric::{CoherenceAnswer, CoherenceDimension, Judged, ToolAnswer, ToolDimension};
use tdqs_core::score::*;
use tdqs_core::spec::signals::{ContextSignals, ShadowCandidate};

/// A hard gate of the specification, decided before any model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HardGate {
    None,
    /// Null or whitespace-only description: every dimension 1, no call.
    NoDescription,
    /// The description restates the name or title: asked, then purpose clarity capped at 2.
    Tautological,
}

impl HardGate {
    /// Applies the specification's stage-2 checks to a raw tool object.
    pub fn of(tool: &Value) -> HardGate {
        let text = |key: &str| tool.get(key).and_then(Value::as_str).map(str::trim);
        let description = text("description").unwrap_or("");
        if description.is_empty() {
            return HardGate::NoDescription;
        }
        let lowered = description.to_lowercase();
        let same = |key: &str| {
            text(key)
                .map(|v| !v.is_empty() && v.to_lowercase() == lowered)
                .unwrap_or(false)
        };
        if same("name") || same("title") {
            HardGate::Tautological
        } else {
            HardGate::None
        }
    }
}

/// A tool ready to be scored: its question is rendered (unless a hard gate answers it).
#[derive(Debug, Clone)]
pub struct PreparedTool {
    pub name: String,
    pub definition_hash: String,
    pub signals: ContextSignals,
    pub gate: HardGate,
    /// `None` only for [`HardGate::NoDescription`].
    pub question: Option<Question>,
}

/// A side ready to be scored.
#[derive(Debug, Clone)]
pub struct PreparedSide {
    pub server_name: String,
    pub set_hash: String,
    pub tools: Vec<PreparedTool>,
    pub coherence: Question,
    pub candidates: Vec<ShadowCandidate>,
}

/// Asks questions and turns answers into scored sides.
pub(crate) struct Scorer {
    pub judge: Arc<dyn Judge>,
    pub weights: Weights,
    /// Extra attempts after the first for an unreadable answer or a failed call.
    pub retries: u32,
    pub concurrency: usize,
    /// Ask a question that is byte-identical on both sides of a pair once.
    pub share_identical: bool,
    pub progress: Arc<dyn Progress>,
    /// Answers of a deterministic judge, by question, kept across the pairs of a run.
    pub memo: AnswerMemo,
    /// Keep the answers of questions asked once for both sides (unchanged tools) and of the
    /// coherence questions for later pairs: a confirmation pair then re-asks only the tools
    /// whose question differs between the sides (the noise-aware rule).
    pub reuse_unchanged: bool,
    /// The persistent answer cache (the gate's, when on): consulted for a pair's first draw of
    /// each question, and filled with the answers asked then.
    pub answer_cache: Option<Arc<AnswerCache>>,
}

/// Answers kept across pairs when the judge is deterministic.
#[derive(Default)]
pub(crate) struct AnswerMemo(Mutex<HashMap<String, Answer>>);

#[derive(Clone)]
enum Answer {
    Tool(ToolAnswer),
    Coherence(CoherenceAnswer),
}

/// The identity of a question: what the judge sees. Prompt-reading judges see the rendered text;
/// rule judges see the subject.
fn question_key(judge_reads_prompts: bool, q: &Question) -> String {
    let mut h = Sha256::new();
    h.update(match q.kind {
        QuestionKind::Tool => b"tool\0".as_slice(),
        QuestionKind::Coherence => b"coherence\0".as_slice(),
        QuestionKind::Selection => b"selection\0".as_slice(),
        QuestionKind::EvalDraft => b"eval-draft\0".as_slice(),
        QuestionKind::EvalValidate => b"eval-validate\0".as_slice(),
        QuestionKind::Rewrite => b"rewrite\0".as_slice(),
    });
    if judge_reads_prompts {
        h.update(q.system.as_bytes());
        h.update(b"\0");
        match (&q.user_template, &q.subject) {
            // Not rendered yet: what the prompt is made of, which fixes its text.
            (
                Some(template),
                Subject::Tool {
                    tool,
                    siblings,
                    signals,
                },
            ) => {
                h.update(b"template\0");
                h.update(template.as_bytes());
                h.update(b"\0");
                h.update(serde_json::to_vec(tool).unwrap_or_default());
                h.update(b"\0");
                for name in siblings.iter() {
                    h.update(name.as_bytes());
                    h.update(b"\n");
                }
                h.update(b"\0");
                h.update(serde_json::to_vec(signals).unwrap_or_default());
            }
            _ => h.update(q.user.as_bytes()),
        }
    } else {
        match &q.subject {
            Subject::Tool { tool, siblings, .. } => {
                h.update(serde_json::to_vec(tool).unwrap_or_default());
                h.update(b"\0");
                h.update(siblings.digest());
            }
            Subject::Coherence {
                server_name,
                tools,
                candidates,
                ..
            } => {
                h.update(server_name.as_bytes());
                h.update(b"\0");
                h.update(serde_json::to_vec(tools).unwrap_or_default());
                h.update(serde_json::to_vec(candidates).unwrap_or_default());
            }
            Subject::Selection { request, tools } => {
                h.update(request.as_bytes());
                h.update(b"\0");
                h.update(serde_json::to_vec(tools).unwrap_or_default());
            }
        }
    }
    hex::encode(h.finalize())
}

fn describe(q: &Question) -> String {
    match &q.subject {
        Subject::Tool { tool, .. } => format!(
            "tool `{}`",
            tool.get("name").and_then(Value::as_str).unwrap_or("?")
        ),
        Subject::Coherence { .. } => "the coherence question".to_string(),
        Subject::Selection { .. } => "a selection question".to_string(),
    }
}

impl Scorer {
    /// Scores one side on its own (`tdqs-gate score`, calibration runs).
    pub async fn score_side(&self, side: &PreparedSide) -> Result<(SideScore, CallStats), Error> {
        let mut stats = CallStats::default();
        let mut scored = self.score_sides(&[side], false, false, &mut stats).await?;
        Ok((scored.remove(0), stats))
    }

    /// Scores one tool of a prepared side on its own, asking its question afresh (no memo, no
    /// sharing): `suggest` scores a reference and a proposal this way, pair after pair.
    pub async fn score_tool(
        &self,
        tool: &PreparedTool,
        stats: &mut CallStats,
    ) -> Result<ToolResult, Error> {
        let Some(question) = &tool.question else {
            stats.hard_gated += 1;
            return Ok(no_description_result(tool, &self.weights));
        };
        let attempts = AtomicU64::new(0);
        let tokens = Mutex::new(TokenUsage::default());
        let answer = ask_with_retries(
            self.judge.as_ref(),
            question,
            self.retries,
            self.progress.as_ref(),
            &attempts,
            &tokens,
        )
        .await;
        stats.attempts += attempts.load(Ordering::SeqCst);
        stats
            .tokens
            .add(&tokens.lock().unwrap_or_else(|e| e.into_inner()));
        match answer?.0 {
            Answer::Tool(answer) => {
                stats.questions += 1;
                Ok(judged_result(
                    tool,
                    &answer,
                    AnswerSource::Judged,
                    &self.weights,
                ))
            }
            Answer::Coherence(_) => Err(Error::internal(
                "a tool question was answered as a coherence question",
            )),
        }
    }

    /// Scores both sides of one pair. With sharing on, a question identical on both sides is
    /// asked once and its answer used for both.
    pub async fn score_pair(
        &self,
        base: &PreparedSide,
        head: &PreparedSide,
    ) -> Result<(SideScore, SideScore, CallStats), Error> {
        self.score_pair_counted(base, head, false, &mut CallStats::default())
            .await
    }

    /// [`Self::score_pair`], also adding the calls made to `spent` when the pair fails: an
    /// INVALID report still says how many model calls were paid for. `first_draw` is true for
    /// the first pair of a run: only its answers may come from (and go to) the persistent
    /// answer cache, so a confirmation pair still draws afresh what it re-asks.
    pub async fn score_pair_counted(
        &self,
        base: &PreparedSide,
        head: &PreparedSide,
        first_draw: bool,
        spent: &mut CallStats,
    ) -> Result<(SideScore, SideScore, CallStats), Error> {
        let mut stats = CallStats::default();
        let scored = self
            .score_sides(&[base, head], self.share_identical, first_draw, &mut stats)
            .await;
        spent.add(&stats);
        let mut scored = scored?;
        let head_score = scored.remove(1);
        let base_score = scored.remove(0);
        Ok((base_score, head_score, stats))
    }

    async fn score_sides(
        &self,
        sides: &[&PreparedSide],
        share: bool,
        first_draw: bool,
        stats: &mut CallStats,
    ) -> Result<Vec<SideScore>, Error> {
        let reads_prompts = self.judge.needs_prompts();
        // Collect the distinct questions. Without sharing, each side's questions stay distinct
        // even when identical, by salting the key with the side index.
        let mut unique: Vec<(String, Question)> = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut keys: Vec<Vec<Option<String>>> = Vec::new();
        let mut coherence_keys = Vec::new();
        let mut uses: HashMap<String, usize> = HashMap::new();
        for (index, side) in sides.iter().enumerate() {
            let salt = if share {
                String::new()
            } else {
                format!("side{index}:")
            };
            let mut side_keys = Vec::new();
            for tool in &side.tools {
                match &tool.question {
                    Some(q) if tool.gate != HardGate::NoDescription => {
                        let key = format!("{salt}{}", question_key(reads_prompts, q));
                        *uses.entry(key.clone()).or_default() += 1;
                        if !seen.contains_key(&key) {
                            seen.insert(key.clone(), unique.len());
                            unique.push((key.clone(), q.clone()));
                        }
                        side_keys.push(Some(key));
                    }
                    _ => {
                        stats.hard_gated += 1;
                        side_keys.push(None);
                    }
                }
            }
            keys.push(side_keys);
            let key = format!("{salt}{}", question_key(reads_prompts, &side.coherence));
            *uses.entry(key.clone()).or_default() += 1;
            if !seen.contains_key(&key) {
                seen.insert(key.clone(), unique.len());
                unique.push((key.clone(), side.coherence.clone()));
            }
            coherence_keys.push(key);
        }
        stats.shared_answers = uses.values().map(|n| (*n as u64).saturating_sub(1)).sum();

        // A deterministic judge gives the same answer to the same question: reuse earlier pairs'.
        let mut answers = HashMap::new();
        if self.judge.deterministic() || self.reuse_unchanged {
            let memo = self.memo.0.lock().unwrap_or_else(|e| e.into_inner());
            unique.retain(|(key, q)| match memo.get(&question_key(reads_prompts, q)) {
                Some(answer) => {
                    answers.insert(key.clone(), answer.clone());
                    stats.reused_answers += 1;
                    false
                }
                None => true,
            });
        }
        // The persistent cache stands in for the first draw of a question a model judge was
        // asked by an earlier run; a deterministic judge gains nothing from it, and sides
        // scored independently must not read one stored answer for both.
        let persistent = self
            .answer_cache
            .as_ref()
            .filter(|_| first_draw && share && !self.judge.deterministic());
        let mut from_cache = Vec::new();
        if let Some(cache) = persistent {
            unique.retain(|(key, q)| {
                let digest = question_key(reads_prompts, q);
                let Some(text) = cache.get(q.kind, &digest) else {
                    return true;
                };
                match parse_answer(q.kind, &text) {
                    Ok(answer) => {
                        answers.insert(key.clone(), answer);
                        from_cache.push((key.clone(), digest));
                        stats.cached_answers += 1;
                        false
                    }
                    Err(why) => {
                        cache.reject(q.kind, &digest, &why);
                        true
                    }
                }
            });
        }
        let cache_writes: Vec<(String, QuestionKind, String)> = match persistent {
            Some(_) => unique
                .iter()
                .map(|(key, q)| (key.clone(), q.kind, question_key(reads_prompts, q)))
                .collect(),
            None => Vec::new(),
        };
        let memo_keys: Vec<(String, String)> = unique
            .iter()
            .map(|(key, q)| (key.clone(), question_key(reads_prompts, q)))
            .collect();
        let label = if sides.len() == 2 { "pair" } else { "side" };
        self.progress.event(ProgressEvent::Started {
            label: label.to_string(),
            total: unique.len(),
        });
        let asked = self.ask_all(unique, stats).await?;
        if let Some(cache) = persistent {
            for (key, kind, digest) in cache_writes {
                if let Some((_, text)) = asked.get(&key) {
                    cache.put(kind, &digest, text);
                }
            }
            cache.evict();
        }
        let asked: HashMap<String, Answer> = asked
            .into_iter()
            .map(|(key, (answer, _))| (key, answer))
            .collect();
        if self.judge.deterministic() || self.reuse_unchanged {
            let deterministic = self.judge.deterministic();
            let mut memo = self.memo.0.lock().unwrap_or_else(|e| e.into_inner());
            // A cached answer is this run's draw: later pairs reuse it as they would a fresh
            // one (unchanged tools and the coherence questions).
            for (key, memo_key) in &from_cache {
                let keep = uses.get(key).copied().unwrap_or(0) > 1 || coherence_keys.contains(key);
                if let (true, Some(answer)) = (keep, answers.get(key)) {
                    memo.insert(memo_key.clone(), answer.clone());
                }
            }
            for (key, memo_key) in memo_keys {
                let keep = deterministic
                    || uses.get(&key).copied().unwrap_or(0) > 1
                    || coherence_keys.contains(&key);
                if let (true, Some(answer)) = (keep, asked.get(&key)) {
                    memo.insert(memo_key, answer.clone());
                }
            }
        }
        answers.extend(asked);

        let mut scored = Vec::new();
        for (index, side) in sides.iter().enumerate() {
            let mut tools = BTreeMap::new();
            for (tool, key) in side.tools.iter().zip(&keys[index]) {
                let result = match key {
                    None => no_description_result(tool, &self.weights),
                    Some(key) => {
                        let Some(Answer::Tool(answer)) = answers.get(key) else {
                            return Err(Error::internal(format!(
                                "no answer recorded for tool `{}`",
                                tool.name
                            )));
                        };
                        let source = if uses.get(key).copied().unwrap_or(0) > 1 {
                            AnswerSource::Shared
                        } else {
                            AnswerSource::Judged
                        };
                        judged_result(tool, answer, source, &self.weights)
                    }
                };
                tools.insert(tool.name.clone(), result);
            }
            let key = &coherence_keys[index];
            let Some(Answer::Coherence(answer)) = answers.get(key) else {
                return Err(Error::internal(
                    "no answer recorded for the coherence question",
                ));
            };
            let source = if uses.get(key).copied().unwrap_or(0) > 1 {
                AnswerSource::Shared
            } else {
                AnswerSource::Judged
            };
            let coherence = coherence_result(side, answer, source, &self.weights);
            for risk in &coherence.shadowing_risks {
                if let Some(t) = tools.get_mut(&risk.tool) {
                    if !t.server_flags.iter().any(|f| f == FLAG_SHADOWING_RISK) {
                        t.server_flags.push(FLAG_SHADOWING_RISK.to_string());
                    }
                }
            }
            let rollups = rollups(&tools, &coherence, &self.weights);
            scored.push(SideScore {
                server_name: side.server_name.clone(),
                set_hash: side.set_hash.clone(),
                tools,
                coherence,
                rollups,
                omitted: None,
            });
        }
        Ok(scored)
    }

    async fn ask_all(
        &self,
        questions: Vec<(String, Question)>,
        stats: &mut CallStats,
    ) -> Result<HashMap<String, (Answer, String)>, Error> {
        let total = questions.len();
        let semaphore = Arc::new(Semaphore::new(self.concurrency.max(1)));
        let done = Arc::new(AtomicU64::new(0));
        let attempts = Arc::new(AtomicU64::new(0));
        let tokens = Arc::new(Mutex::new(TokenUsage::default()));
        let mut set = tokio::task::JoinSet::new();
        for (key, question) in questions {
            let judge = Arc::clone(&self.judge);
            let semaphore = Arc::clone(&semaphore);
            let progress = Arc::clone(&self.progress);
            let done = Arc::clone(&done);
            let attempts = Arc::clone(&attempts);
            let tokens = Arc::clone(&tokens);
            let retries = self.retries;
            set.spawn(async move {
                let _permit = semaphore
                    .acquire_owned()
                    .await
                    .expect("semaphore is never closed");
                let answer = ask_with_retries(
                    judge.as_ref(),
                    &question,
                    retries,
                    progress.as_ref(),
                    &attempts,
                    &tokens,
                )
                .await;
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                if answer.is_ok() {
                    progress.event(ProgressEvent::Answered {
                        done: n as usize,
                        total,
                    });
                }
                (key, answer)
            });
        }
        let mut answers = HashMap::new();
        let mut first_error = None;
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok((key, Ok(answer))) => {
                    answers.insert(key, answer);
                }
                Ok((_, Err(e))) => {
                    if first_error.is_none() {
                        first_error = Some(e);
                        // A side that cannot be scored completely is INVALID: stop asking.
                        set.abort_all();
                    }
                }
                Err(join) if join.is_cancelled() => {}
                Err(join) => {
                    if first_error.is_none() {
                        first_error = Some(Error::internal(format!("a judge task failed: {join}")));
                    }
                }
            }
        }
        stats.questions += answers.len() as u64;
        stats.attempts += attempts.load(Ordering::SeqCst);
        stats
            .tokens
            .add(&tokens.lock().unwrap_or_else(|e| e.into_inner()));
        match first_error {
            Some(e) => Err(e),
            None => Ok(answers),
        }
    }
}

/// Reads an answer text (fresh or cached) to a question of `kind`.
fn parse_answer(kind: QuestionKind, text: &str) -> Result<Answer, String> {
    match kind {
        QuestionKind::Tool => parse_tool_answer(text).map(Answer::Tool),
        QuestionKind::Coherence => parse_coherence_answer(text).map(Answer::Coherence),
        QuestionKind::Selection
        | QuestionKind::EvalDraft
        | QuestionKind::EvalValidate
        | QuestionKind::Rewrite => {
            Err("a selection question reached the TDQS scorer (a bug in tdqs-gate)".to_string())
        }
    }
}

async fn ask_with_retries(
    judge: &dyn Judge,
    question: &Question,
    retries: u32,
    progress: &dyn Progress,
    attempts: &AtomicU64,
    tokens: &Mutex<TokenUsage>,
) -> Result<(Answer, String), Error> {
    let what = describe(question);
    // A tool prompt is rendered only now, one question at a time per permit.
    let rendered = question.rendered()?;
    let mut last: Option<CallFailure> = None;
    let mut last_text = String::new();
    for attempt in 0..=retries {
        attempts.fetch_add(1, Ordering::SeqCst);
        let outcome = match judge.ask(&rendered).await {
            Ok(reply) => {
                tokens
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .add(&reply.usage);
                match parse_answer(question.kind, &reply.text) {
                    Ok(answer) => return Ok((answer, reply.text)),
                    Err(why) => {
                        last_text = reply.text;
                        CallFailure::retryable(format!(
                            "the answer is not the required JSON: {why}"
                        ))
                    }
                }
            }
            Err(failure) => failure,
        };
        let retryable = outcome.retryable;
        if attempt < retries && retryable {
            progress.event(ProgressEvent::Retrying {
                what: what.clone(),
                attempt: attempt + 1,
                reason: redact(&outcome.message),
            });
        }
        last = Some(outcome);
        if !retryable {
            break;
        }
    }
    let failure = last.expect("at least one attempt");
    let tries = if failure.retryable {
        format!(" after {} attempts", retries + 1)
    } else {
        String::new()
    };
    let mut err = Error::new(
        Stage::Judge,
        redact(&format!(
            "the judge could not score {what}{tries}: {}",
            failure.message
        )),
    )
    .with_advice(
        "the side cannot be scored completely, so the comparison is INVALID; check the judge \
         (credentials, model access, network) and run the gate again",
    );
    if let Some(detail) = failure.detail {
        err = err.with_detail("judge output", redact(&detail));
    }
    if !last_text.is_empty() {
        let excerpt: String = last_text.chars().take(2000).collect();
        err = err.with_detail("last answer", redact(&excerpt));
    }
    Err(err)
}

/// The dimensions scoring below 3 (the specification's smells).
pub fn smells(scores: &BTreeMap<ToolDimension, u8>) -> Vec<ToolDimension> {
    ToolDimension::ALL
        .into_iter()
        .filter(|d| scores.get(d).copied().unwrap_or(0) < 3)
        .collect()
}

fn no_description_result(tool: &PreparedTool, weights: &Weights) -> ToolResult {
    let one = Judged {
        score: 1,
        justification: "The tool has no description (hard gate: no model call).".to_string(),
    };
    let answer = ToolAnswer {
        scores: ToolDimension::ALL
            .into_iter()
            .map(|d| (d, one.clone()))
            .collect(),
        annotation_contradiction: false,
        summary: "No description: every dimension scores 1.".to_string(),
    };
    let mut result = judged_result(tool, &answer, AnswerSource::HardGate, weights);
    result.flags.insert(0, FLAG_NO_DESCRIPTION.to_string());
    result
}

fn judged_result(
    tool: &PreparedTool,
    answer: &ToolAnswer,
    source: AnswerSource,
    weights: &Weights,
) -> ToolResult {
    let mut scores: BTreeMap<ToolDimension, u8> =
        answer.scores.iter().map(|(d, j)| (*d, j.score)).collect();
    let mut flags = Vec::new();
    if tool.gate == HardGate::Tautological {
        let purpose = scores.entry(ToolDimension::PurposeClarity).or_insert(1);
        *purpose = (*purpose).min(2);
        flags.push(FLAG_TAUTOLOGICAL.to_string());
    }
    if answer.annotation_contradiction {
        flags.push(FLAG_ANNOTATION_CONTRADICTION.to_string());
    }
    let tdqs = weights.tdqs(&scores);
    ToolResult {
        name: tool.name.clone(),
        definition_hash: tool.definition_hash.clone(),
        context_signals: tool.signals.clone(),
        smells: smells(&scores),
        tier: weights.tiers.tier(tdqs),
        tdqs,
        justifications: answer.scores.clone(),
        scores,
        flags,
        summary: answer.summary.clone(),
        server_flags: Vec::new(),
        annotation_contradiction: answer.annotation_contradiction,
        answer: source,
    }
}

/// Keeps only the risks that pass the specification's referential checks: both names exist, the
/// pair was supplied as a candidate, the tool is the dearer side, and no tool appears twice.
fn checked_risks(side: &PreparedSide, answer: &CoherenceAnswer) -> Vec<ShadowingRisk> {
    let names: std::collections::HashSet<&str> =
        side.tools.iter().map(|t| t.name.as_str()).collect();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for risk in &answer.shadowing_risks {
        if !names.contains(risk.tool.as_str()) || !names.contains(risk.cheaper_sibling.as_str()) {
            continue;
        }
        let Some(candidate) = side
            .candidates
            .iter()
            .find(|c| c.tool == risk.tool && c.cheaper_sibling == risk.cheaper_sibling)
        else {
            continue;
        };
        if candidate.invocation_cost <= candidate.cheaper_sibling_invocation_cost {
            continue;
        }
        if !seen.insert(risk.tool.clone()) {
            continue;
        }
        out.push(ShadowingRisk {
            tool: candidate.tool.clone(),
            invocation_cost: candidate.invocation_cost,
            cheaper_sibling: candidate.cheaper_sibling.clone(),
            cheaper_sibling_invocation_cost: candidate.cheaper_sibling_invocation_cost,
            justification: risk.justification.clone(),
        });
    }
    out
}

fn coherence_result(
    side: &PreparedSide,
    answer: &CoherenceAnswer,
    source: AnswerSource,
    weights: &Weights,
) -> CoherenceResult {
    let scores: BTreeMap<CoherenceDimension, u8> =
        answer.scores.iter().map(|(d, j)| (*d, j.score)).collect();
    let sum: i64 = scores.values().map(|s| i64::from(*s)).sum();
    let coherence_score = tdqs_core::arith::round1(sum, 4);
    CoherenceResult {
        coherence_tier: weights.tiers.tier(coherence_score),
        coherence_score,
        scores,
        shadow_candidates: side.candidates.clone(),
        shadowing_risks: checked_risks(side, answer),
        coherence_summary: answer.summary.clone(),
        coherence_justifications: answer.scores.clone(),
        answer: source,
    }
}

/// Computes every rollup of a scored side.
pub fn rollups(
    tools: &BTreeMap<String, ToolResult>,
    coherence: &CoherenceResult,
    weights: &Weights,
) -> Rollups {
    rollups_with(tools, None, coherence, weights)
}

/// [`rollups`] of a side a summarised report lists in part: the left-out tools count through
/// their summary, and the result is what the full list gives.
pub fn rollups_with(
    tools: &BTreeMap<String, ToolResult>,
    omitted: Option<&tdqs_core::score::OmittedScores>,
    coherence: &CoherenceResult,
    weights: &Weights,
) -> Rollups {
    let tdqs: Vec<(String, Tenths)> = tools.values().map(|t| (t.name.clone(), t.tdqs)).collect();
    let rest = omitted.map(|o| tdqs_core::arith::RestOfSide {
        count: o.count,
        tenths_sum: o.tdqs_tenths_sum,
        min_tool: o.min_tool.clone(),
        min_tdqs: o.min_tdqs,
    });
    let values = weights.rollups_with(&tdqs, rest.as_ref(), &coherence.scores);
    let count = tools.len() as u64 + omitted.map_or(0, |o| o.count);
    Rollups {
        tool_count: count,
        scored_tool_count: count,
        exact_mean_tdqs: values
            .exact_mean
            .map(|m| format!("{}/{}", m.numer(), m.denom())),
        mean_tdqs: values.mean_tdqs,
        min_tdqs: values.min_tdqs,
        min_tool: values.min_tool,
        description_quality_tier: values.description_quality.map(|t| weights.tiers.tier(t)),
        description_quality_score: values.description_quality,
        coherence_tier: weights.tiers.tier(values.coherence),
        coherence_score: values.coherence,
        overall_tier: values.overall.map(|t| weights.tiers.tier(t)),
        overall_score: values.overall,
    }
}
