//! Refused requests in the log: one info line each, saying why (token expired, revoked, bad
//! signature, wrong audience, another data dir's token, a Host or Origin not allowed, naming the
//! host or origin escaped), never the token. The client still gets a bare 401 or 403; the owner
//! reading the log learns which. Lines are rate-limited across the process, so that a flood of bad
//! requests cannot fill the disk: past the burst, refusals are counted, and the next line that is
//! written says how many were left out.

use std::sync::Mutex;
use std::time::Instant;

/// Refusal lines written at once, and per minute after that.
const BURST: f64 = 30.0;
const PER_MINUTE: f64 = 60.0;

/// Why a request was refused. `as_str` is what the log line's `reason` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    NoToken,
    Malformed,
    Expired,
    BadSignature,
    WrongAudience,
    WrongIssuer,
    OtherEpoch,
    Revoked,
    Host,
    Origin,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoToken => "no bearer token",
            Self::Malformed => "malformed token",
            Self::Expired => "token expired",
            Self::BadSignature => "bad signature (another signing key)",
            Self::WrongAudience => "wrong audience",
            Self::WrongIssuer => "wrong issuer",
            Self::OtherEpoch => "token of another data dir or state database",
            Self::Revoked => "token revoked",
            Self::Host => "Host not allowed",
            Self::Origin => "Origin not allowed",
        }
    }
}

/// The bucket the lines are taken from, and how many were left out since the last line.
struct Budget {
    tokens: f64,
    at: Option<Instant>,
    left_out: u64,
}

static BUDGET: Mutex<Budget> = Mutex::new(Budget {
    tokens: BURST,
    at: None,
    left_out: 0,
});

/// `Some(left out before this one)` if a line may be written now.
fn take(now: Instant) -> Option<u64> {
    let mut b = BUDGET.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(at) = b.at {
        let refill = now.saturating_duration_since(at).as_secs_f64() * PER_MINUTE / 60.0;
        b.tokens = (b.tokens + refill).min(BURST);
    }
    b.at = Some(now);
    if b.tokens >= 1.0 {
        b.tokens -= 1.0;
        Some(std::mem::take(&mut b.left_out))
    } else {
        b.left_out += 1;
        None
    }
}

/// Log one refusal. `named` is what was refused (a host, an origin, a token's subject), escaped
/// and bounded here; the request's span adds the method, path and client address.
pub fn refused(reason: Reason, named: Option<&str>) {
    let Some(left_out) = take(Instant::now()) else {
        return;
    };
    let named = named.map(super::field).unwrap_or_default();
    if left_out > 0 {
        tracing::info!(reason = reason.as_str(), named = %named, left_out, "request refused (and {left_out} more refusals not logged)");
    } else {
        tracing::info!(reason = reason.as_str(), named = %named, "request refused");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_cut_to_the_budget_and_counted() {
        let start = Instant::now();
        let mut written = 0;
        for _ in 0..1000 {
            if take(start).is_some() {
                written += 1;
            }
        }
        assert!(written <= BURST as usize, "{written}");
        // A minute later the budget is back, and the first line says how many were left out.
        let later = start + std::time::Duration::from_secs(60);
        let left_out = take(later).expect("budget refilled");
        assert!(left_out >= 1000 - BURST as u64, "{left_out}");
    }
}
