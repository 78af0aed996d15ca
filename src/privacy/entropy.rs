//! Shannon entropy, and whether a long run of token characters is a random secret rather than
//! one of the long strings that are not: hex digests and git hashes, UUIDs, paths, base64 image
//! data, subresource-integrity hashes, identifiers and words.

/// Bits per byte of `s`'s byte distribution.
pub fn shannon(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in s {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Shortest token judged (after trailing `=` padding is dropped).
pub const MIN_TOKEN: usize = 24;
/// Entropy floor, bits per character: random base64 of 24 characters has about 4.3, English
/// identifiers about 3.5.
const MIN_BITS: f64 = 4.0;
/// Share of neighbouring letters and digits that change class (upper, lower, digit): about 0.6
/// for random base62, 0.4 for random base36, under 0.3 for camelCase and snake_case names.
const MIN_SWITCHES: f64 = 0.34;

#[derive(PartialEq, Clone, Copy)]
enum Class {
    Upper,
    Lower,
    Digit,
}

fn class(b: u8) -> Option<Class> {
    match b {
        b'A'..=b'Z' => Some(Class::Upper),
        b'a'..=b'z' => Some(Class::Lower),
        b'0'..=b'9' => Some(Class::Digit),
        _ => None,
    }
}

/// Whether `token` (a run of `[A-Za-z0-9+/=_-]`) that follows `before` in its text is a secret.
pub fn is_random_token(token: &str, before: &str) -> bool {
    let t = token.trim_end_matches('=');
    if t.len() < MIN_TOKEN || looks_harmless(t, before) {
        return false;
    }
    let classes: Vec<Class> = t.bytes().filter_map(class).collect();
    let has = |c: Class| classes.contains(&c);
    if !has(Class::Digit) || !(has(Class::Upper) || has(Class::Lower)) {
        return false;
    }
    let switches = classes.windows(2).filter(|w| w[0] != w[1]).count();
    let ratio = switches as f64 / classes.len().saturating_sub(1).max(1) as f64;
    ratio >= MIN_SWITCHES && shannon(t.as_bytes()) >= MIN_BITS
}

/// Long strings that are not secrets, told by their shape or what precedes them.
fn looks_harmless(t: &str, before: &str) -> bool {
    let hex_or_dash = t.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    // Image data (`data:image/png;base64,...`) and raw base64 of common images.
    let image = before.ends_with(";base64,")
        || ["iVBORw0KGg", "/9j/", "R0lGOD", "UklGR", "PHN2Zy"]
            .iter()
            .any(|m| t.starts_with(m));
    let integrity = ["sha1-", "sha256-", "sha384-", "sha512-"]
        .iter()
        .any(|p| t.starts_with(p));
    hex_or_dash || image || integrity || is_path(t)
}

/// `a/b/c` with short segments: a path, not base64 (where a `/` comes about once in 64).
fn is_path(t: &str) -> bool {
    let segments = t.split('/').filter(|s| !s.is_empty()).count();
    t.contains('/') && segments > 0 && t.len() / segments < 16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_of_simple_strings() {
        assert_eq!(shannon(b""), 0.0);
        assert_eq!(shannon(b"aaaa"), 0.0);
        assert!((shannon(b"abcd") - 2.0).abs() < 1e-9);
    }

    #[test]
    fn random_tokens_and_look_alikes() {
        assert!(is_random_token("q8ZfV2kL0pXw7RtY4mNb9sDc3HjE", ""));
        assert!(!is_random_token(
            "da39a3ee5e6b4b0d3255bfef95601890afd80709",
            ""
        ));
        assert!(!is_random_token("550e8400-e29b-41d4-a716-446655440000", ""));
        assert!(!is_random_token("getUserAccountSettingsForTenant2", ""));
        assert!(!is_random_token(
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
            ""
        ));
        assert!(!is_random_token("usr/lib/x86_64-linux-gnu/pkgconfig", ""));
        assert!(!is_random_token(
            "pneumonoultramicroscopicsilicovolcanoconiosis",
            ""
        ));
    }
}
