//! The judge checked before it is needed: once the launch plans are valid and before any setup
//! command, or alongside the exports when no setup command runs (a server alone starts in a
//! moment, and the check would otherwise add its second to every run). Outside CI a judge that
//! cannot run ends the run at once; in CI its failure is held until the definitions differ.

use tdqs_core::error::Error;

use super::sides;
use crate::platform::ci_env;
use crate::progress::{Progress, ProgressEvent};
use crate::score::session::JudgeSlot;

/// Checks the judge once the launch plans are known to be valid and before any setup command
/// runs ([`check_judge_first`]). Two export files run nothing, so their judge is checked when it
/// is first asked.
///
/// Returns whether the judge is still to be checked, alongside the exports
/// ([`exports_and_judge_check`]): a server alone starts in a moment, and the check would
/// otherwise add its second to every run.
pub(super) async fn check_judge_before_export(
    planned: &sides::CheckedSides,
    judge: &mut JudgeSlot,
    progress: &dyn Progress,
) -> Result<bool, Error> {
    match planned {
        sides::CheckedSides::Files => Ok(false),
        sides::CheckedSides::Trees(_) if planned.runs_setup() => {
            check_judge_first(judge, progress).await?;
            Ok(false)
        }
        sides::CheckedSides::Trees(_) => Ok(true),
    }
}

/// Runs `exports` and, when given, checks `judge` at the same time: the check (the CLI's
/// version and login, about a second) then costs no wall time on top of the exports. A judge
/// that cannot run ends the run at once: the exports are cancelled, which kills their process
/// groups and removes their trees (their drop guards); its error wins over any export's.
///
/// In CI a failed check is held until a judge is needed, so exports that finish first and need
/// none (`needs_judge` false: equal definitions, or a side that failed) do not wait for it: the
/// check is dropped (its CLI killed with its process group), and the judge is checked again
/// should a later step need it.
pub(super) async fn exports_and_judge_check<T>(
    exports: impl std::future::Future<Output = T>,
    judge: Option<&mut JudgeSlot>,
    progress: &dyn Progress,
    needs_judge: impl Fn(&T) -> bool,
) -> Result<T, Error> {
    let Some(judge) = judge else {
        return Ok(exports.await);
    };
    let check = check_judge_first(judge, progress);
    if !ci_env::in_ci(&ci_env::process_env) {
        let exports = async { Ok::<T, Error>(exports.await) };
        return tokio::try_join!(check, exports).map(|((), exported)| exported);
    }
    let mut check = std::pin::pin!(check);
    let mut exports = std::pin::pin!(exports);
    tokio::select! {
        checked = &mut check => {
            checked?;
            Ok(exports.await)
        }
        exported = &mut exports => {
            if needs_judge(&exported) {
                check.await?;
            }
            Ok(exported)
        }
    }
}

/// Checks the judge before any export. Outside CI a judge that cannot run ends the run at once,
/// naming the offline path. In CI its failure is held until the definitions are known to differ:
/// a pull request from a fork gets no secrets, and its unchanged definitions must still pass.
pub(crate) async fn check_judge_first(
    judge: &mut JudgeSlot,
    progress: &dyn Progress,
) -> Result<(), Error> {
    match judge.check_first().await {
        Ok(()) => Ok(()),
        Err(e) if ci_env::in_ci(&ci_env::process_env) => {
            progress.event(ProgressEvent::Note(format!(
                "{} (in CI this fails the run only if the definitions changed)",
                e.summary()
            )));
            Ok(())
        }
        Err(e) => Err(e),
    }
}
