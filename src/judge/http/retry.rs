//! The transport retry policy of the HTTP judges: which answers are retried, how long to wait
//! (the server's hints, capped exponential backoff), and the injectable sleeper.

use super::*;

/// A future that waits; boxed so a [`Sleeper`] can be any closure.
pub(crate) type SleepFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How the transport waits between attempts. Tests inject one that records the delays and returns
/// at once, so retry timing is asserted without sleeping.
#[derive(Clone)]
pub struct Sleeper(Arc<dyn Fn(Duration) -> SleepFuture + Send + Sync>);

impl Sleeper {
    /// Waits with `tokio::time::sleep`.
    pub fn tokio() -> Self {
        Sleeper(Arc::new(|d| Box::pin(tokio::time::sleep(d))))
    }

    pub fn new(f: impl Fn(Duration) -> SleepFuture + Send + Sync + 'static) -> Self {
        Sleeper(Arc::new(f))
    }

    pub fn sleep(&self, d: Duration) -> SleepFuture {
        (self.0)(d)
    }
}

impl Default for Sleeper {
    fn default() -> Self {
        Sleeper::tokio()
    }
}

impl fmt::Debug for Sleeper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Sleeper")
    }
}

/// The transport's retry rules (the official SDKs' rules, with more patience by default).
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt; 0 disables retrying.
    pub max_retries: u32,
    /// The first backoff step; step n waits `initial_delay · 2^n`.
    pub initial_delay: Duration,
    /// The cap on one backoff step.
    pub max_delay: Duration,
    /// Each step is shortened by a random fraction up to this (0.25 = up to 25 %), so concurrent
    /// callers do not retry in lockstep.
    pub jitter: f64,
    /// A server's `retry-after` / `retry-after-ms` is honoured up to this; a longer one is
    /// replaced by the computed backoff (as the SDKs do), so one header cannot stall a run.
    pub max_server_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 5,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            jitter: 0.25,
            max_server_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The backoff before retry number `retry` (0-based); `unit` is a random number in [0, 1).
    pub fn backoff(&self, retry: u32, unit: f64) -> Duration {
        let factor = 2f64.powi(retry.min(30) as i32);
        let step = (self.initial_delay.as_secs_f64() * factor).min(self.max_delay.as_secs_f64());
        let shortened = step * (1.0 - self.jitter.clamp(0.0, 1.0) * unit.clamp(0.0, 1.0));
        Duration::from_secs_f64(shortened.max(0.0))
    }

    /// The delay a response asks for, when it asks for one we honour.
    pub fn server_delay(&self, headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
        let delay = requested_delay(headers, now)?;
        (delay <= self.max_server_delay).then_some(delay)
    }
}

/// `retry-after-ms` (milliseconds), else `retry-after` (seconds or an HTTP date).
pub(crate) fn requested_delay(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if let Some(delay) = delay_of_seconds(ms / 1000.0) {
            return Some(delay);
        }
    }
    let value = text("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return delay_of_seconds(secs);
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A non-negative, finite number of seconds as a delay; one too large for a `Duration` (`1e300`)
/// saturates, so the caller's cap replaces it. Negative values and NaN ask for nothing.
pub(super) fn delay_of_seconds(secs: f64) -> Option<Duration> {
    if secs.is_nan() || secs < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 requires senders to
/// use for `retry-after`.
pub(crate) fn parse_http_date(text: &str) -> Option<SystemTime> {
    let rest = text.trim().split_once(", ")?.1;
    let parts: Vec<&str> = rest.split_whitespace().collect();
    let [day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    if *zone != "GMT" {
        return None;
    }
    let day: u32 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u32
        + 1;
    let year: i64 = year.parse().ok()?;
    let hms: Vec<u32> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    // Years outside 1..=9999 are no date a server means; they would also overflow the arithmetic.
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *s > 60 || !(1..=9999).contains(&year) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + i64::from(*h) * 3600 + i64::from(*m) * 60 + i64::from(*s);
    u64::try_from(secs)
        .ok()
        .map(|s| UNIX_EPOCH + Duration::from_secs(s))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(super) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// What to do with a non-success response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disposition {
    /// A transient condition: try again after a delay.
    Retry,
    /// Retrying cannot help: fail now.
    Fail,
    /// A 429 for an exhausted spend limit: no retry until someone raises the limit.
    SpendLimit,
}

/// Marker of an exhausted monthly spend limit in a 429 body (`error.details.error_code`).
pub(super) const SPEND_LIMIT_CODE: &str = "enforced_spend_limit_reached";

/// Classifies a non-success status with its headers and body.
///
/// The statuses that can never succeed on a retry (400, 401, 402, 403, 404, 413) and an exhausted
/// spend limit fail even when `x-should-retry: true` says otherwise: repeating them only burns
/// time. Otherwise `x-should-retry` decides when present; without it 408, 409, 429 and 5xx
/// (529 overloaded included) are retried.
pub(crate) fn classify(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Disposition {
    let code = status.as_u16();
    if code == 429 && contains(body, SPEND_LIMIT_CODE.as_bytes()) {
        return Disposition::SpendLimit;
    }
    if matches!(code, 400 | 401 | 402 | 403 | 404 | 413) {
        return Disposition::Fail;
    }
    match headers
        .get("x-should-retry")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
    {
        Some(v) if v.eq_ignore_ascii_case("true") => return Disposition::Retry,
        Some(v) if v.eq_ignore_ascii_case("false") => return Disposition::Fail,
        _ => {}
    }
    if matches!(code, 408 | 409 | 429) || status.is_server_error() {
        Disposition::Retry
    } else {
        Disposition::Fail
    }
}

pub(super) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
