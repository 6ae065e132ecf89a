//! The prompts of a scoring run: fetched from the specification's pinned commit (or read from
//! the cache) and verified, when the judge reads prompts at all.

use crate::judge::build::JudgeOptions;
use crate::judge::Judge;
use crate::spec::{self, FetchOptions, PromptSource};
use tdqs_core::error::Error;
use tdqs_core::report::PromptOrigin;
use tdqs_core::spec::check_templates;
use tdqs_core::spec::pins::Pins;
use tdqs_core::spec::Prompts;

/// The prompts of a run (none for judges that read definitions) and where they came from.
pub struct PromptSet {
    pub prompts: Option<Prompts>,
    pub origin: PromptOrigin,
    pub warnings: Vec<String>,
}

/// Fetches (or reads from the cache) and verifies the prompts when the judge needs them.
pub async fn load_prompts(
    opts: &JudgeOptions,
    pins: &Pins,
    judge: &dyn Judge,
) -> Result<PromptSet, Error> {
    if !judge.needs_prompts() {
        return Ok(PromptSet {
            prompts: None,
            origin: PromptOrigin {
                spec_commit: pins.spec_commit().to_string(),
                source: "not-needed".to_string(),
            },
            warnings: Vec::new(),
        });
    }
    let loaded = spec::load_prompts(
        pins,
        &FetchOptions {
            cache_dir: opts.cache_dir.clone(),
            spec_url: opts.spec_url.clone(),
            timeout: None,
        },
    )
    .await?;
    check_templates(&loaded.prompts)?;
    let source = match loaded.provenance.source {
        PromptSource::Cache => "cache",
        PromptSource::Fetch => "fetch",
        PromptSource::Refetch => "refetch",
    };
    Ok(PromptSet {
        prompts: Some(loaded.prompts),
        origin: PromptOrigin {
            spec_commit: loaded.provenance.spec_commit.clone(),
            source: source.to_string(),
        },
        warnings: loaded.warnings,
    })
}
