//! The lazy `[\w.-]{0,50}?` half of gitleaks' rules open with, taken off their regexes and put
//! back by hand: same matches, a fraction of the lazy DFA's states.

/// Half of gitleaks' rules open with a lazy `[\w.-]{0,50}?` (a few with two), which only moves
/// where the match starts: the keyword after it is still the leftmost one that matches. In a lazy
/// DFA that lead multiplies the states (each byte may start a new count): the first search over
/// 100 items with secrets spent 27 ms building `generic-api-key`'s, 1 ms without the lead. So the
/// regex runs without it, and [`lead_start`] puts the match's start where the lead would have.
pub fn without_lead(pattern: &str) -> (String, usize) {
    const LEAD: &str = r"[\w.-]{0,50}?";
    let (mut head, mut rest, mut lead) = (String::new(), pattern, 0);
    loop {
        if let Some(r) = rest.strip_prefix(LEAD) {
            (rest, lead) = (r, lead + 50);
        } else if let Some(r) = rest.strip_prefix("(?i)").filter(|r| r.starts_with(LEAD)) {
            (head, rest) = (head + "(?i)", r);
        } else if let Some(r) = rest.strip_prefix("(?i:").filter(|r| r.starts_with(LEAD)) {
            (head, rest) = (head + "(?i:", r);
        } else {
            return (head + rest, lead);
        }
    }
}

/// Where a match found at `start` begins with a lead of up to `lead` bytes of `[\w.-]` before
/// it: as far back as they go, not into the previous match (ending at `after`).
pub fn lead_start(text: &[u8], start: usize, lead: usize, after: usize) -> usize {
    let floor = start.saturating_sub(lead).max(after);
    let run = text[floor..start]
        .iter()
        .rev()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        .count();
    start - run
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leads_are_taken_off() {
        let one = r"(?i)[\w.-]{0,50}?(?:key|token)\s*=\s*(\w{8,})";
        assert_eq!(
            without_lead(one),
            (r"(?i)(?:key|token)\s*=\s*(\w{8,})".to_owned(), 50)
        );
        let two = r"[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:okta)\s*=)";
        assert_eq!(without_lead(two), (r"(?i:(?:okta)\s*=)".to_owned(), 100));
        assert_eq!(without_lead(r"(?i)\bkey"), (r"(?i)\bkey".to_owned(), 0));
    }

    /// Whole matches, as gitleaks' regex with its lead finds them and as the regex without it
    /// and [`lead_start`] do.
    #[test]
    fn the_lead_is_put_back_where_the_regex_would_start() {
        let with = r"(?i)[\w.-]{0,50}?(?:key|api|token)[\w.-]{0,5}\s*[=:]\s*([\w.-]{4,})";
        let (without, lead) = without_lead(with);
        let theirs = regex::bytes::RegexBuilder::new(with)
            .unicode(false)
            .build()
            .expect("compiles");
        let ours = regex::bytes::RegexBuilder::new(&without)
            .unicode(false)
            .build()
            .expect("compiles");
        let long = "x".repeat(70);
        for text in [
            "primary_key = abcd1234",
            "my.api-key: s3cr3t, then token=zzzz9999 and key=a1b2",
            "a.b-c_d api_token=aaaa key=bbbb",
            &format!("{long}_key=abcdef {long}token: 12345678"),
            "key=aaaa;token=bbbb",
            "пароль_key=abcd1234",
        ] {
            let t = text.as_bytes();
            let want: Vec<(usize, usize)> =
                theirs.find_iter(t).map(|m| (m.start(), m.end())).collect();
            let mut after = 0;
            let got: Vec<(usize, usize)> = ours
                .find_iter(t)
                .map(|m| {
                    let start = lead_start(t, m.start(), lead, after);
                    after = m.end();
                    (start, m.end())
                })
                .collect();
            assert_eq!(got, want, "{text}");
            assert!(!want.is_empty(), "{text}");
        }
    }
}
