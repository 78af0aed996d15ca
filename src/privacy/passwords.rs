//! Passwords, told by where they stand rather than by their shape (people use `Barsik1987`, not
//! 20 random characters): a key naming a password in `.env`, YAML, JSON, TOML, INI or code; a
//! command's password flag; a `.netrc` entry; `password:` / `пароль:` in chat and notes.
//! Each rule captures the value as `q` (in double quotes), `s` (single quotes) or `v` (bare).

use super::automata::{Captures, Match};

use super::rule::{Gate, Rule};
use super::words::{NOT_A_PASSWORD, PROSE, WORDS_FOR_NONE};

const KIND: &str = "password";
/// Every key or flag naming a password holds one of these.
const PASS: &[&str] = &["pass", "pwd"];

pub const RULES: &[Rule] = &[
    // `DB_PASSWORD=x`, `password: x`, `"dbPassword": "x"`, `$cfg['db_pass'] = 'x'`, `-passout pass:x`.
    Rule::new(
        r#"(?i)(?P<key>[A-Za-z0-9_.$-]*(?:pass|pwd)[A-Za-z0-9_.-]*)['"\]]*[ \t]*(?P<sep>=>|:=|=|:)[ \t]*(?:"(?P<q>[^"\r\n]*)"|'(?P<s>[^'\r\n]*)'|(?P<v>[^\s"'`,;]+))"#,
        KIND,
        2,
        key_value,
        Gate::Words(PASS),
    ),
    // Kubernetes `- name: DB_PASSWORD` with `value: x` on the next line.
    Rule::new(
        r#"(?i)name:[ \t]*["']?[A-Za-z0-9_.-]*(?:pass|pwd|secret|token)[A-Za-z0-9_.-]*["']?[ \t]*\r?\n[ \t]*value:[ \t]*(?:"(?P<q>[^"\r\n]*)"|'(?P<s>[^'\r\n]*)'|(?P<v>[^\s"'#]+))"#,
        KIND,
        2,
        plain_value,
        Gate::Words(&["pass", "pwd", "secret", "token"]),
    ),
    // A password flag: `--password x`, `--password=x`, `--db-pass 'x'`.
    Rule::new(
        r#"(?im)(?:^|[ \t])--?(?:password|passwd|pass|pwd|passphrase|db-password|db-pass|admin-password)(?:=|[ \t]+)(?:"(?P<q>[^"\r\n]*)"|'(?P<s>[^'\r\n]*)'|(?P<v>[^\s"'-]\S*))"#,
        KIND,
        2,
        plain_value,
        Gate::Words(PASS),
    ),
    // `mysql -pSECRET` (attached: `-p` alone prompts).
    Rule::new(
        r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)\b[^\n|;&]*?[ \t]-p(?P<v>[^\s-]\S*)",
        KIND,
        2,
        plain_value,
        Gate::Words(&["mysql", "mariadb"]),
    ),
    // Commands whose `-p` (or `-a`, `-w`, `-P`) is the password.
    Rule::new(
        r#"\b(?:sshpass|(?:docker|podman|buildah|skopeo|oc|az|helm[ \t]+registry)[ \t]+login|mongo|mongosh|mongodump|mongorestore|redis-cli|ldap[a-z]*|sqlcmd|bcp)\b[^\n|;&]*?[ \t](?:-p|-a|-w|-P)[ \t]+(?:"(?P<q>[^"\r\n]*)"|'(?P<s>[^'\r\n]*)'|(?P<v>[^\s"'-]\S*))"#,
        KIND,
        2,
        plain_value,
        Gate::Words(&[
            "sshpass",
            "login",
            "mongo",
            "redis-cli",
            "ldap",
            "sqlcmd",
            "bcp",
        ]),
    ),
    // `curl -u user:pw`, `smbclient -U user%pw`.
    Rule::new(
        r#"(?m)(?:^|[ \t])(?:-u|--user|--proxy-user|-U)[ \t]+['"]?[^\s:%'"]*[:%](?P<v>[^\s'"]+)"#,
        KIND,
        2,
        plain_value,
        Gate::Words(&["-u", "--user", "--proxy-user", "-U"]),
    ),
    // `htpasswd -b file user pw`, `rabbitmqctl add_user user pw`, `-passin pass:pw`.
    Rule::new(
        r"\b(?:htpasswd[ \t]+-[A-Za-z]*b[A-Za-z]*(?:[ \t]+-[A-Za-z]+)*[ \t]+\S+|rabbitmqctl[ \t]+(?:add_user|change_password))[ \t]+\S+[ \t]+(?P<v>\S+)|[ \t]-pass(?:in|out)?[ \t]+pass:(?P<s>\S+)",
        KIND,
        2,
        plain_value,
        Gate::Words(&["htpasswd", "rabbitmqctl", "pass"]),
    ),
    // `.netrc`: `machine host login user password pw`.
    Rule::new(
        r"(?i)\b(?:machine[ \t]+\S+|default)(?:\s+(?:login|account|port)\s+\S+)*\s+password\s+(?P<v>\S+)",
        KIND,
        2,
        plain_value,
        Gate::Words(&["password"]),
    ),
    // Chat and notes: `password: x`, `the password is x`, `Пароль от wifi — x`, `пароль x`.
    Rule::new(
        r#"(?i)(?P<key>\b(?:password|passwd|pass|pwd|pw|passphrase)\b|(?:П|п)(?:АРОЛ|арол)(?:ь|я|е|ем|Ь)|(?:П|п)асс)(?P<mid>[ \t]+(?:for|of|to|from|от|для|на|к)[ \t]+[^\s:=]{1,30})?[ \t]*(?P<sep>:|=|-|—|–|is\b)?[ \t]*(?:"(?P<q>[^"\r\n]{1,80})"|'(?P<s>[^'\r\n]{1,80})'|«(?P<g>[^\r\n]{1,80}?)»|(?P<v>\S+))"#,
        KIND,
        2,
        chat,
        Gate::Words(&[
            "pass",
            "pwd",
            "pw",
            "парол",
            "Парол",
            "ПАРОЛ",
            "пасс",
            "Пасс",
        ]),
    ),
    // `логин/пароль: ivan / pw`, `creds for staging: ivan / pw`.
    Rule::new(
        r"(?i)(?:login|(?:Л|л)огин|user(?:name)?|creds|credentials|доступ)[^\n:]{0,30}:[ \t]*[^\s/]+[ \t]*/[ \t]*(?P<v>\S+)",
        KIND,
        2,
        plain_value,
        Gate::Words(&[
            "login",
            "логин",
            "Логин",
            "user",
            "creds",
            "credentials",
            "доступ",
        ]),
    ),
];

/// The value a rule captured, and whether it was quoted.
fn value<'t>(caps: &Captures<'t>) -> Option<(Match<'t>, bool)> {
    ["q", "s", "g"]
        .iter()
        .find_map(|n| caps.name(n).map(|m| (m, true)))
        .or_else(|| caps.name("v").map(|m| (m, false)))
}

/// Values that stand for a password without being one: empty, masked, a variable, a template,
/// a reference in code, a YAML tag or block, a word a config uses for "none".
pub fn placeholder(v: &[u8]) -> bool {
    let s = String::from_utf8_lossy(v).to_ascii_lowercase();
    let s = s.trim();
    let refs = [
        "os.environ",
        "os.getenv",
        "getenv(",
        "env(",
        "process.env",
        "env[",
        "settings.",
    ];
    s.len() < 3
        || s.bytes().all(|b| b == s.as_bytes()[0])
        || ['$', '<', '|', '>', '{', '[']
            .iter()
            .any(|c| s.starts_with(*c))
        || ["%(", "%{", "%s"].iter().any(|c| s.starts_with(*c))
        || yaml_tag(s)
        || refs.iter().any(|r| s.starts_with(r))
        || WORDS_FOR_NONE.contains(&s)
}

/// `!vault`, `!!binary`, `!Ref`: a YAML tag, whose value follows it.
fn yaml_tag(s: &str) -> bool {
    s.strip_prefix('!')
        .map(|t| t.trim_start_matches('!'))
        .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphabetic()))
}

/// The words of an identifier: split at non-letters and at lower-to-upper case changes.
fn key_words(key: &[u8]) -> Vec<String> {
    let mut words = vec![String::new()];
    let mut prev_lower = false;
    for &b in key {
        if !b.is_ascii_alphabetic() {
            words.push(String::new());
            prev_lower = false;
            continue;
        }
        if b.is_ascii_uppercase() && prev_lower {
            words.push(String::new());
        }
        prev_lower = b.is_ascii_lowercase();
        if let Some(w) = words.last_mut() {
            w.push(char::from(b.to_ascii_lowercase()));
        }
    }
    words.retain(|w| !w.is_empty());
    words
}

/// Whether a key holding `pass` or `pwd` names a password. `$PWD` and `OLDPWD` are the
/// shell's working directories.
fn password_key(key: &[u8]) -> bool {
    let bare = key.strip_prefix(b"$").unwrap_or(key);
    if bare == b"PWD" || bare == b"OLDPWD" || bare == b"{PWD}" {
        return false;
    }
    let words = key_words(key);
    !words.iter().any(|w| NOT_A_PASSWORD.contains(&w.as_str()))
}

/// What follows `end` on its line, trimmed.
fn rest_of_line(text: &str, end: usize) -> &str {
    let rest = text.get(end..).unwrap_or_default();
    rest.split('\n').next().unwrap_or_default().trim()
}

/// A value that looks typed as a password: a digit or a symbol among its characters.
fn shaped(v: &[u8]) -> bool {
    v.iter()
        .any(|b| b.is_ascii_digit() || (b.is_ascii_punctuation() && !b".,;:!?()".contains(b)))
}

fn plain_value(caps: &Captures, _text: &str) -> Option<(usize, usize)> {
    let (v, _) = value(caps)?;
    (!placeholder(v.as_bytes())).then_some((v.start(), v.end()))
}

/// `key = value` where the key names a password: a bare value after `:` that more words follow
/// is prose (`password: see the vault`) unless it looks typed as one.
fn key_value(caps: &Captures, text: &str) -> Option<(usize, usize)> {
    let key = caps.name("key")?.as_bytes();
    let (v, quoted) = value(caps)?;
    let bytes = v.as_bytes();
    if !password_key(key) || placeholder(bytes) || bytes.windows(3).any(|w| w == b"://") {
        return None;
    }
    let colon = caps.name("sep").is_some_and(|s| s.as_bytes() == b":");
    let rest = rest_of_line(text, v.end());
    if colon && !quoted && !rest.is_empty() && !rest.starts_with('#') && !shaped(bytes) {
        return None;
    }
    Some((v.start(), sentence_end(text, &v, quoted, rest)))
}

/// The end of a bare value that more words follow, without the sentence's `.`, `,`, `;`, `)`.
fn sentence_end(text: &str, v: &Match, quoted: bool, rest: &str) -> usize {
    let raw = &text[v.start()..v.end()];
    if quoted || rest.is_empty() {
        return v.end();
    }
    v.end() - (raw.len() - raw.trim_end_matches(['.', ',', ';', ')']).len())
}

/// `password: x` in chat or a note. With a separator, a value that ends the line (or looks typed
/// as a password) is one; without (`пароль Qwerty12`), only a value that looks typed, or one on a
/// line that names the login too.
fn chat(caps: &Captures, text: &str) -> Option<(usize, usize)> {
    let key = caps.name("key")?;
    let (v, quoted) = value(caps)?;
    let sep = caps.name("sep");
    if caps.name("mid").is_some() && sep.is_none() {
        return None;
    }
    // `пассажир`: the value must not run on from the key word.
    if v.start() == key.end() {
        return None;
    }
    // Inside a word or a URL (`auth#password-grant`, `reset_password=`), not a label.
    let glued = text[..key.start()].ends_with(['#', '/', '-', '_', '.', '=', '?', '&']);
    let hyphen = sep.is_some_and(|s| s.as_bytes() == b"-" && s.start() == key.end());
    if glued || hyphen {
        return None;
    }
    let rest = rest_of_line(text, v.end());
    let end = sentence_end(text, &v, quoted, rest);
    let word = &text[v.start()..end];
    let lower = word.to_lowercase();
    if word.is_empty() || placeholder(word.as_bytes()) || PROSE.contains(&lower.as_str()) {
        return None;
    }
    if word.contains("://") || word.starts_with('(') {
        return None;
    }
    let typed = shaped(word.as_bytes());
    let line_end = rest.is_empty() || rest.starts_with('(');
    let ok = if sep.is_some() {
        quoted || typed || line_end
    } else {
        let line_start = text[..key.start()].rfind('\n').map_or(0, |i| i + 1);
        let before = text[line_start..key.start()].to_lowercase();
        let login = ["login", "логин", "user", "почта", "email"]
            .iter()
            .any(|w| before.contains(w));
        let full_key = key.as_bytes().len() > 4;
        full_key && (typed || login)
    };
    ok.then_some((v.start(), end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_that_name_a_password() {
        assert!(password_key(b"DB_PASSWORD"));
        assert!(password_key(b"dbPassword"));
        assert!(password_key(b"RABBITMQ_DEFAULT_PASS"));
        assert!(!password_key(b"POSTGRES_PASSWORD_FILE"));
        assert!(!password_key(b"passwordRequired"));
        assert!(!password_key(b"password_min_length"));
        assert!(!password_key(b"passport_number"));
        assert!(!password_key(b"$PWD"));
    }

    #[test]
    fn placeholders_are_not_passwords() {
        for p in [
            "${DB_PASSWORD}",
            "********",
            "<your-password>",
            "null",
            "$PASS",
            "!vault",
        ] {
            assert!(placeholder(p.as_bytes()), "{p}");
        }
        assert!(!placeholder(b"hunter2"));
    }
}
