//! Secrets told by the words or the format around them: one-time codes in SMS-like messages
//! (English and Russian), session cookies, signed or token-bearing URL parameters (Azure SAS
//! `sig=`), WireGuard private and preshared keys. Each rule captures the secret as `v`.

use super::automata::Captures;

use super::passwords::placeholder;
use super::rule::{Gate, Rule};

pub const RULES: &[Rule] = &[
    // "Your code is 482913", "Verification code: 4829", "Security code 1234 for PayPal".
    Rule::new(
        r"(?i)\b(?:(?:verification|security|confirmation|login|sign-in|access|one-time|auth|authentication|sms|your|the)[ \t]+)?(?:code|passcode|otp|pin)\b(?:[ \t]+(?:is|for[ \t]+\S+))?[ \t]*[:-]?[ \t]*(?:G-)?(?P<v>\d{4,8})\b",
        "otp",
        2,
        otp,
        Gate::Words(&["code", "otp", "pin"]),
    )
    .with_digits(4),
    // "482913 is your verification code", "G-482913 is your Google code", "Use 48291 to log in".
    Rule::new(
        r"(?i)\b(?P<v>\d{4,8})[ \t]+is[ \t]+(?:your|the|my)\b[^\n]{0,40}?\b(?:code|otp|passcode|pin|password)\b|\buse[ \t]+(?:code[ \t]+)?(?P<u>\d{4,8})[ \t]+(?:to|for|as)[ \t]+(?:log|sign|verify|confirm|reset|access)",
        "otp",
        2,
        otp,
        Gate::Words(&["code", "otp", "pin", "password", "use"]),
    )
    .with_digits(4),
    // "Код: 4829", "Ваш код для входа: 4829", "Никому не говорите код 4829", "4829 — код для входа".
    Rule::new(
        r"(?:К|к|КО)(?:од|ОД)(?P<mid>(?:[ \t]+[^\s\d:-]{1,24}){0,3}?)[ \t]*(?::|—|–|-)?[ \t]*(?P<v>\d{4,8})\b|\b(?P<u>\d{4,8})[ \t]*(?:—|–|-)[ \t]*(?:(?:В|в)аш[ \t]+)?(?:код|Код|пароль)",
        "otp",
        2,
        otp,
        Gate::Words(&["Код", "код", "КОД", "пароль", "Пароль"]),
    )
    .with_digits(4),
    // Session cookies: Django `sessionid`, Rails `_app_session`, Express `connect.sid`, PHP, Java.
    Rule::new(
        r#"(?i)(?:^|[\s;,'"?&])(?:sessionid|session|[a-z0-9_]*_session|connect\.sid|phpsessid|jsessionid|asp\.net_sessionid|laravel_session|remember_user_token|remember_token|_gh_sess|user_session|session_token|auth_token|sid|__secure-[a-z0-9_.-]+|__host-[a-z0-9_.-]+)=(?P<v>[^;\s'"&]{16,})"#,
        "session-cookie",
        2,
        value,
        Gate::Words(&[
            "session",
            "sid",
            "__secure-",
            "__host-",
            "remember_",
            "_gh_sess",
            "auth_token",
        ]),
    ),
    // URL parameters that carry a credential: Azure SAS and S3/GCS signatures, tokens, keys.
    Rule::new(
        r#"(?i)[?&](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|access_token|id_token|refresh_token|client_secret|api_key|apikey|token|auth|password|passwd|secret)=(?P<v>[^&\s#"'<>]{8,})"#,
        "url-secret",
        2,
        value,
        Gate::Words(&[
            "sig",
            "signature",
            "token",
            "secret",
            "key",
            "auth",
            "passw",
        ]),
    ),
    // WireGuard `PrivateKey = ` / `PresharedKey = ` (base64 of 32 bytes).
    Rule::new(
        r"(?i)\b(?:PrivateKey|PresharedKey)[ \t]*=[ \t]*(?P<v>[A-Za-z0-9+/]{42,43}=)",
        "wireguard-key",
        2,
        value,
        Gate::Words(&["privatekey", "presharedkey"]),
    ),
];

fn value(caps: &Captures, _text: &str) -> Option<(usize, usize)> {
    let v = caps.name("v")?;
    (!placeholder(v.as_bytes())).then_some((v.start(), v.end()))
}

/// Codes that are not one-time codes: an error, status or postal code, and the like.
const NOT_OTP: &[&str] = &[
    "error",
    "status",
    "exit",
    "zip",
    "postal",
    "area",
    "country",
    "promo",
    "return",
    "http",
    "response",
    "reason",
    "discount",
    "source",
    "bar",
    "dial",
    "sort",
    "swift",
    "bank",
    "branch",
    "product",
    "item",
    "post",
    "ошибк",
    "регион",
    "стран",
    "товар",
    "город",
    "подразделен",
    "индекс",
];

/// A one-time code, unless the words just before it say what other code it is.
fn otp(caps: &Captures, text: &str) -> Option<(usize, usize)> {
    let whole = caps.get(0)?;
    let v = caps.name("v").or_else(|| caps.name("u"))?;
    let from = whole.start().saturating_sub(24);
    let mut lo = from;
    while !text.is_char_boundary(lo) {
        lo += 1;
    }
    let near = text[lo..v.start()].to_lowercase();
    let mid = caps
        .name("mid")
        .map(|m| String::from_utf8_lossy(m.as_bytes()).to_lowercase());
    let other = |s: &str| NOT_OTP.iter().any(|w| s.contains(w));
    if other(&near) || mid.as_deref().is_some_and(other) {
        return None;
    }
    Some((v.start(), v.end()))
}
