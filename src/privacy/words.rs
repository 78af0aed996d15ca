//! Word lists the password rules judge by: values that stand for "no password", key words
//! that make a `*pass*` key something else, and words that follow `password:` in prose.

/// Values a config or a chat writes where a password would be, meaning none.
#[rustfmt::skip]
pub const WORDS_FOR_NONE: &[&str] = &[
    "null", "none", "nil", "true", "false", "yes", "off", "required", "optional", "string", "str",
    "password", "passwd", "secret", "changeme", "change_me", "replace_me", "replaceme", "todo",
    "tbd", "example", "your_password", "yourpassword", "your-password", "undefined", "empty",
    "redacted", "hidden", "prompt", "stdin", "env", "file", "ask", "input", "default",
];

/// Key words that make a `*pass*` key something other than a password.
#[rustfmt::skip]
pub const NOT_A_PASSWORD: &[&str] = &[
    "file", "url", "uri", "length", "len", "min", "max", "hash", "hashed", "policy", "reset",
    "hint", "required", "authentication", "expiry", "expires", "expiration", "field", "algorithm",
    "algo", "prompt", "enabled", "enable", "disabled", "login", "path", "type", "changed",
    "command", "cmd", "manager", "strength", "regex", "pattern", "rule", "rules", "salt", "name",
    "label", "at", "placeholder", "template", "history", "count", "attempts", "age", "days",
    "lifetime", "ttl", "timeout", "mode", "method", "grant", "flow", "complexity", "check",
    "validator", "form", "error", "message", "msg", "text", "title", "help", "show", "visible",
    "toggle", "icon", "version", "format", "digest", "env", "var", "less", "through", "thru",
    "port", "passport", "passage", "passenger", "passive", "bypass", "compass", "surpass",
    "trespass", "passed", "passing", "passes", "id",
];

/// Words that follow `password:` in prose, never as the password.
#[rustfmt::skip]
pub const PROSE: &[&str] = &[
    "is", "the", "a", "an", "in", "on", "at", "to", "for", "of", "and", "or", "not", "see", "ask",
    "same", "required", "incorrect", "wrong", "invalid", "expired", "changed", "reset", "stored",
    "saved", "set", "empty", "missing", "protected", "hidden", "below", "above", "here", "there",
    "attached", "sent", "please", "manager", "vault", "must", "should", "will", "was", "has",
    "have", "can", "cannot", "too", "now", "again", "later", "must", "never", "forgot", "reset",
    "в", "на", "у", "см", "см.", "спроси", "не", "нет", "тот", "же", "прежний", "старый", "там",
    "тут", "ниже", "выше", "от", "для", "с", "и", "или", "был", "будет", "надо", "нужно",
];
