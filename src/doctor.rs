//! `copyq-mcp doctor`: one command that says, a line per check, what this setup would do and
//! what is wrong with it (ok / warn / problem, and how to fix each). It reads and probes; it never
//! creates or changes state. The checks live in [`copyq`] (which CopyQ, does it answer),
//! [`state`] (config, data dir, passphrase, tokens, apps) and [`net`] (public URL and its
//! neighbours, TLS, reaching client-ID metadata documents).

use serde::Serialize;

use crate::config::Settings;

mod copyq;
mod net;
mod state;

/// How a check came out. Only a problem makes `doctor` exit non-zero: a warning is something
/// that works but may not be what the owner meant (or cannot be known to work from here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Problem,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What was checked: `config`, `copyq`, `tokens`, `public-url`, ...
    pub check: &'static str,
    pub status: Status,
    /// What was found, with the paths and names it concerns.
    pub detail: String,
    /// What to do about a warning or a problem.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub fn ok(check: &'static str, detail: impl Into<String>) -> Self {
        Self {
            check,
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    pub fn warn(check: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            check,
            status: Status::Warn,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    pub fn problem(check: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            check,
            status: Status::Problem,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    /// The report's line: `status  check  detail; fix: ...`, on one line whatever the values hold.
    fn line(&self) -> String {
        let status = match self.status {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Problem => "problem",
        };
        let mut line = format!("{status:<8} {:<13} {}", self.check, self.detail);
        if let Some(fix) = &self.fix {
            line.push_str("; fix: ");
            line.push_str(fix);
        }
        crate::clipboard::flatten(&line)
    }
}

/// What `doctor` is asked to look at besides the settings.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Print JSON (for scripts) instead of lines.
    pub json: bool,
    /// Client-ID metadata documents to try fetching, instead of Claude's and ChatGPT's (tests).
    pub metadata_urls: Vec<String>,
}

/// Every check, in the order the report shows them.
pub async fn checks(settings: &Settings, options: &Options) -> Vec<Check> {
    let mut out = state::config(settings);
    out.extend(copyq::checks(settings).await);
    out.extend(state::stored(settings));
    out.extend(net::public_url(settings));
    out.push(net::tls(settings));
    out.extend(net::metadata_documents(settings, &options.metadata_urls).await);
    out
}

/// Run `doctor`: print the report; `Err` (the exit status) when a check found a problem.
pub async fn run(settings: &Settings, options: &Options) -> Result<(), String> {
    let checks = checks(settings, options).await;
    let count = |s| checks.iter().filter(|c| c.status == s).count();
    let (problems, warnings) = (count(Status::Problem), count(Status::Warn));
    if options.json {
        let report = serde_json::json!({
            "ok": problems == 0,
            "problems": problems,
            "warnings": warnings,
            "checks": checks,
        });
        println!("{report:#}");
    } else {
        for check in &checks {
            println!("{}", check.line());
        }
        println!("{problems} problem(s), {warnings} warning(s)");
    }
    if problems == 0 {
        Ok(())
    } else {
        Err(format!("doctor found {problems} problem(s)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_one_line_with_its_fix() {
        let c = Check::problem("copyq", "no answer at\nsocket /x", "start CopyQ");
        assert_eq!(
            c.line(),
            "problem  copyq         no answer at socket /x; fix: start CopyQ"
        );
        assert_eq!(
            Check::ok("tls", "not configured").line(),
            "ok       tls           not configured"
        );
    }
}
