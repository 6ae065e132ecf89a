//! What `check` recomputes of the definitions' cost: the token counts against fresh exports,
//! and the opt-in growth rule's part of the decision.

use super::differs;
use tdqs_core::error::Error;
use tdqs_core::exit::Verdict;
use tdqs_core::export::Export;
use tdqs_core::report::Report;

/// The growth rule's part of the decision, recomputed from the recorded listing tokens and the
/// means that decided; a recorded rule without the cost it needs is refused.
pub(super) fn with_growth_rule(
    report: &Report,
    medians: Option<&tdqs_core::decide::Medians>,
    mut verdict: Verdict,
    mut reason: String,
) -> Result<(Verdict, String), Error> {
    let Some(recorded) = &report.growth_rule else {
        return Ok((verdict, reason));
    };
    let Some(cost) = &report.cost else {
        return Err(differs(
            "the report records a growth rule but not the listings' tokens it was decided on",
        ));
    };
    let rule = tdqs_core::cost::growth_rule(
        recorded.max_growth_percent,
        cost.base.listing.tokens,
        cost.head.listing.tokens,
        tdqs_core::cost::tdqs_gain(
            unchanged(report),
            crate::gate::deciding_means(medians, &report.pairs),
        ),
    );
    if &rule != recorded {
        return Err(differs(
            "the growth rule's outcome does not follow from the recorded tokens and means",
        ));
    }
    if let Some(why) = tdqs_core::cost::growth_reason(&rule, cost) {
        reason = format!("{reason} {why}");
        if verdict == Verdict::Pass {
            verdict = Verdict::Block;
        }
    }
    Ok((verdict, reason))
}

/// Whether the report's exports have equal definitions.
fn unchanged(report: &Report) -> bool {
    match (&report.base, &report.head) {
        (Some(b), Some(h)) => b.set_hash == h.set_hash,
        _ => false,
    }
}

/// The limit the base's configuration and the command line require must be the one the report
/// was decided with (none, or the same percent).
pub(super) fn required_growth(
    report: &Report,
    required: Option<u32>,
    source: &str,
) -> Result<(), Error> {
    let recorded = report.growth_rule.as_ref().map(|g| g.max_growth_percent);
    if recorded == required {
        return Ok(());
    }
    let say = |limit: Option<u32>| match limit {
        Some(p) => format!("a growth rule of {p}%"),
        None => "no growth rule".to_string(),
    };
    Err(differs(format!(
        "the report was decided with {}, but {} is required (from {source} and the command \
         line): a report decided by another rule is not accepted",
        say(recorded),
        say(required)
    ))
    .with_advice(
        "run the gate again; if the limit was given on the gate's command line \
         (--max-listing-growth), give the same flag to check",
    ))
}

/// The recorded cost must be what the tokenizer counts on the fresh exports (which list every
/// tool): the listings' totals and each listed tool's entry, and for a report that lists every
/// tool, the whole record.
pub(super) fn cost_matches(report: &Report, base: &Export, head: &Export) -> Result<(), Error> {
    let Some(recorded) = &report.cost else {
        return Ok(());
    };
    let counter = crate::cost::Cl100k::new();
    let first = report.pairs.first().map(|p| (&p.base, &p.head));
    let fresh = crate::cost::compare(&counter, base, head, first)?;
    let listed_match = |r: &tdqs_core::cost::ListingCost, f: &tdqs_core::cost::ListingCost| {
        r.listing == f.listing
            && r.tools.iter().all(|(name, t)| {
                f.tools
                    .get(name)
                    .is_some_and(|ft| ft.tokens == t.tokens && ft.bytes == t.bytes)
            })
    };
    let same = if report.omitted.is_none() {
        &fresh == recorded
    } else {
        fresh.tokenizer == recorded.tokenizer
            && listed_match(&recorded.base, &fresh.base)
            && listed_match(&recorded.head, &fresh.head)
            && fresh.listing_tokens_change == recorded.listing_tokens_change
            && fresh.listing_growth_percent == recorded.listing_growth_percent
    };
    if !same {
        return Err(differs(format!(
            "the report's token counts are not what {} counts on the current exports",
            fresh.tokenizer
        )));
    }
    Ok(())
}
