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
    hex_or_dash
        || image
        || integrity
        || is_path(t)
        || public_material(t, before)
        || hash_or_tracker(before)
        || is_id(t)
        || is_bech32_public(t)
        || decodes_to_text(t)
}

/// SSH public keys (`ssh-ed25519 AAAA...`), the body of a PEM block that is not a private key
/// (certificates, public keys, PGP public keys and signatures), and values on a line that says
/// they are public (`PublicKey = ` in a WireGuard `[Peer]`).
fn public_material(t: &str, before: &str) -> bool {
    let ssh = [
        "AAAAB3NzaC1",
        "AAAAC3NzaC1",
        "AAAAE2VjZHNh",
        "AAAAGnNrLXNzaC1",
        "AAAAInNrLWVj",
    ]
    .iter()
    .any(|p| t.starts_with(p));
    let line = before
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let public_line = line.contains("public") || line.contains("pubkey");
    ssh || public_line || in_public_block(before)
}

/// Whether `before` ends inside a `-----BEGIN X-----` block whose X is not a private key.
fn in_public_block(before: &str) -> bool {
    let Some(at) = before.rfind("-----BEGIN ") else {
        return false;
    };
    let label = &before[at + 11..];
    let label = label.split("-----").next().unwrap_or_default();
    !label.contains("PRIVATE") && !before[at..].contains("-----END")
}

/// A token right after a hash's prefix (go.sum's `h1:`, `sha256:`, a crypt hash's `$...$`), or
/// a URL parameter that carries an ad click or analytics id.
fn hash_or_tracker(before: &str) -> bool {
    let word = before
        .rsplit(|c: char| c.is_whitespace() || c == '"' || c == '\'')
        .next()
        .unwrap_or_default();
    if ["h1:", "sha256:", "sha512:", "sha1:", "md5:"]
        .iter()
        .any(|p| word.ends_with(p))
    {
        return true;
    }
    if [
        "$argon2", "$2a$", "$2b$", "$2y$", "$5$", "$6$", "$y$", "$scrypt$", "$pbkdf2",
    ]
    .iter()
    .any(|p| word.starts_with(p))
    {
        return true;
    }
    let Some(q) = word.rfind(['?', '&']) else {
        return false;
    };
    let param = word[q + 1..].split('=').next().unwrap_or_default();
    TRACKERS.contains(&param) || param.starts_with("utm_")
}

/// Click and analytics ids in URLs: random-looking, and no credential.
const TRACKERS: &[&str] = &[
    "gclid",
    "fbclid",
    "msclkid",
    "yclid",
    "gbraid",
    "wbraid",
    "dclid",
    "_gl",
    "mc_eid",
    "igshid",
    "ttclid",
    "twclid",
    "li_fat_id",
    "srsltid",
    "_hsenc",
    "_openstat",
    "gad_source",
];

/// Time-ordered ids: a KSUID (27 base62 characters, a timestamp in the first 4 of 20 bytes) or a
/// ULID (26 Crockford base32 characters, milliseconds in the first 10), from 2015 to 2035; and
/// payment-processor object ids (`ch_`, `pi_`, `cus_`...), which are not credentials.
fn is_id(t: &str) -> bool {
    const OBJECTS: &[&str] = &[
        "ch_", "pi_", "cus_", "pm_", "in_", "sub_", "prod_", "price_", "evt_", "txn_", "re_",
        "seti_", "cs_live_", "cs_test_", "src_", "card_", "ba_", "po_", "acct_", "tr_", "py_",
        "ii_", "il_", "si_", "tok_", "pk_live_", "pk_test_", "plink_", "inv_", "prv_",
    ];
    if OBJECTS.iter().any(|p| t.starts_with(p)) {
        return true;
    }
    let b = t.as_bytes();
    if b.len() == 27 && b.iter().all(u8::is_ascii_alphanumeric) {
        // The value is 160 bits; its top 32 are the seconds since 2014-05-13. A float keeps
        // far more precision than the range check needs.
        let value = b.iter().fold(0f64, |acc, &c| {
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'A'..=b'Z' => c - b'A' + 10,
                _ => c - b'a' + 36,
            };
            acc * 62.0 + f64::from(d)
        });
        let seconds = value / 2f64.powi(128);
        return (5.0e7..7.0e8).contains(&seconds);
    }
    const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    if b.len() == 26 && b.iter().all(|c| CROCKFORD.contains(c)) {
        let ms = b[..10].iter().fold(0u64, |acc, c| {
            let d = CROCKFORD.iter().position(|x| x == c).unwrap_or(0) as u64;
            acc * 32 + d
        });
        return (1_420_000_000_000..2_050_000_000_000).contains(&ms);
    }
    false
}

/// A bech32 address or public key (`age1...`, `npub1...`, `bc1...`): a lowercase name, `1`, then
/// the bech32 alphabet. The secret ones (`nsec1`, `AGE-SECRET-KEY-1`) have rules of their own.
fn is_bech32_public(t: &str) -> bool {
    const ALPHABET: &[u8] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    let Some((hrp, data)) = t.split_once('1') else {
        return false;
    };
    !hrp.is_empty()
        && hrp.len() <= 10
        && hrp != "nsec"
        && hrp.bytes().all(|b| b.is_ascii_lowercase())
        && data.len() >= 38
        && data.bytes().all(|b| ALPHABET.contains(&b))
}

/// Base64 whose bytes are UTF-8 text (a sentence, JSON, HTML): an encoding, not a secret.
/// Random bytes of this length are valid UTF-8 without control characters far too rarely to
/// matter.
fn decodes_to_text(t: &str) -> bool {
    use base64::Engine;
    let engines = [
        base64::engine::general_purpose::STANDARD,
        base64::engine::general_purpose::URL_SAFE,
    ];
    let padded = format!("{}{}", t, "=".repeat((4 - t.len() % 4) % 4));
    engines.iter().any(|e| {
        e.decode(padded.as_bytes())
            .ok()
            .and_then(|raw| String::from_utf8(raw).ok())
            .is_some_and(|s| {
                s.len() >= 12 && !s.chars().any(|c| c.is_control() && !c.is_whitespace())
            })
    })
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
