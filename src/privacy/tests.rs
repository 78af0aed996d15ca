//! The redactor against the corpus (tests/fixtures/secrets/corpus.txt: fake secrets and
//! look-alikes), with precision and recall printed and held to floors; and one test per kind.

use super::*;

const CORPUS: &str = include_str!("../../tests/fixtures/secrets/corpus.txt");

fn redactor() -> Redactor {
    Redactor::new(&[]).expect("the vendored rules load")
}

/// The kinds issue 13 lists, each of which must be found every time (the corpus line's kind may
/// still be reported under a more specific gitleaks id, e.g. `curl-auth-header`).
const LISTED: &[&str] = &[
    "aws-access-token",
    "github-pat",
    "github-oauth",
    "github-app-token",
    "github-fine-grained-pat",
    "gitlab-pat",
    "slack-bot-token",
    "slack-user-token",
    "stripe-access-token",
    "openai-api-key",
    "anthropic-api-key",
    "gcp-api-key",
    "jwt",
    "private-key",
    "authorization",
    "url-credentials",
    "card",
    "high-entropy",
];

/// `(expected kind or None, input, the secret)` for each corpus line.
fn corpus() -> Vec<(Option<&'static str>, String, String)> {
    CORPUS
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (kind, text) = l.split_once('\t').expect("KIND<TAB>TEXT");
            let text = text.replace("\\n", "\n");
            let secret = text
                .split_once("{{")
                .and_then(|(_, rest)| rest.split_once("}}"))
                .map(|(s, _)| s.to_owned())
                .unwrap_or_default();
            let input = text.replace("{{", "").replace("}}", "");
            ((kind != "-").then_some(kind), input, secret)
        })
        .collect()
}

#[test]
fn every_vendored_rule_compiles() {
    let set = gitleaks::Gitleaks::load().expect("loads");
    assert_eq!(set.failed(), 0, "gitleaks rules that Rust's regex refuses");
    // 222 rules, less `pkcs12-file`, which matches file names only.
    assert_eq!(set.len(), 221);
    assert_eq!(set.compiled(), 221);
}

/// A rule's regex is compiled when a text first holds one of its keywords, and only then: a
/// gateway whose owner copies no secrets holds 0.4 MiB of the 3.7 MiB the rules take compiled.
#[test]
fn a_rule_is_compiled_when_a_text_first_needs_it() {
    let set = gitleaks::Gitleaks::load().expect("loads");
    let mut caches = super::automata::Caches::default();
    let mut found = Vec::new();
    // Those whose keywords most texts hold are compiled at load (`generic-api-key`'s words,
    // `sk`, `ey`...).
    let common = set.compiled();
    assert_eq!(common, 13);
    let plain = "Meeting moved to 3pm, bring the slides\nhttps://example.com/agenda";
    set.find(plain, true, &mut caches, &mut found);
    assert_eq!(set.compiled(), common, "{found:?}");
    let token = "export GITHUB_TOKEN=ghp_R4nd0mT0k3nV4lu3Th4tL00ksR3al1234567";
    set.find(token, true, &mut caches, &mut found);
    let after = set.compiled();
    assert!((common + 1..=common + 8).contains(&after), "{after}");
    assert!(
        found.iter().any(|s| s.kind.starts_with("github")),
        "{found:?}"
    );
    // Found again with the rules already compiled; nothing more compiled.
    let mut again = Vec::new();
    set.find(token, true, &mut caches, &mut again);
    assert_eq!(set.compiled(), after);
    assert_eq!(again.len(), found.len());
}

#[test]
fn corpus_precision_and_recall() {
    let r = redactor();
    let (mut tp, mut fn_, mut fp, mut tn, mut named) = (0, 0, 0, 0, 0);
    let mut misses = Vec::new();
    for (kind, input, secret) in corpus() {
        let out = r.redact(&input);
        match kind {
            Some(kind) if !out.contains(secret.as_str()) => {
                tp += 1;
                named += usize::from(out.contains(&format!("[redacted:{kind}]")));
            }
            Some(kind) => {
                fn_ += 1;
                println!("missed {kind}: {out}");
                if LISTED.contains(&kind) {
                    misses.push(format!("missed {kind}: {out}"));
                }
            }
            None if out != input => {
                fp += 1;
                misses.push(format!("look-alike redacted: {input}"));
            }
            None => tn += 1,
        }
    }
    let recall = f64::from(tp) / f64::from(tp + fn_);
    let precision = f64::from(tp) / f64::from(tp + fp);
    let clean = f64::from(tn) / f64::from(tn + fp);
    println!(
        "secrets {}: recall {recall:.3} (named as the corpus says: {named}); look-alikes {}: left \
         unchanged {clean:.3}; precision {precision:.3}",
        tp + fn_,
        tn + fp
    );
    assert!(misses.is_empty(), "{}", misses.join("\n"));
    assert!(recall >= 0.99 && precision >= 0.98, "{recall} {precision}");
}

/// `text` as the default redactor returns it.
fn masked(text: &str) -> String {
    redactor().redact(text).into_owned()
}

#[test]
fn each_kind_is_masked_in_place() {
    let cases = [
        (
            "id AKIAZ3MHQ7XWPLBV4KTN here",
            "id [redacted:aws-access-token] here",
        ),
        (
            "ghp_a8Hk2LmQ9zR4tV7xY1bN3cD5eF6gJ0pW2sUq",
            "[redacted:github-pat]",
        ),
        ("glpat-Xk2Lm9Qz4Rt7Vx1Yb3Nc", "[redacted:gitlab-pat]"),
        (
            "sk_live_4eC39HqLyjWDarjtT1zdp7dcQ2vLm8Nz",
            "[redacted:stripe-access-token]",
        ),
        (
            "AIzaSyD3k2Lm9Qz4Rt7Vx1Yb3Nc5Pq8Wr0Ts6Uv",
            "[redacted:gcp-api-key]",
        ),
        (
            "Authorization: Bearer abc.def-123_456~ghi",
            "Authorization: Bearer [redacted:authorization]",
        ),
        (
            "postgres://app:s3cr3tPa55w0rd@db:5432/x",
            "postgres://[redacted:url-credentials]@db:5432/x",
        ),
        (
            "pay with 4111 1111 1111 1111 today",
            "pay with [redacted:card] today",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
            "[redacted:private-key]",
        ),
        (
            "tok eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0 cut",
            "tok [redacted:jwt] cut",
        ),
        (
            "recovery q8ZfV2kL0pXw7RtY4mNb9sDc3HjE done",
            "recovery [redacted:high-entropy] done",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(masked(input), want, "{input}");
    }
}

#[test]
fn nothing_to_mask_comes_back_borrowed() {
    let r = redactor();
    let text = "v1.2.3 da39a3ee5e6b4b0d3255bfef95601890afd80709 https://example.com/a/b";
    assert!(matches!(r.redact(text), Cow::Borrowed(_)));
}

#[test]
fn custom_patterns_mask_as_custom_and_bad_ones_are_named() {
    let r = Redactor::new(&["internal-[a-z]{8}".into()]).expect("compiles");
    assert_eq!(r.redact("x internal-abcdefgh y"), "x [redacted:custom] y");
    let e = check_patterns(&["ok".into(), "(".into()]).unwrap_err();
    assert!(e.to_string().starts_with("privacy.patterns[1]: "), "{e}");
}

#[test]
fn overlapping_finds_become_one_mask() {
    // The JWT rule, gitleaks' `jwt` and the entropy rule all see this token.
    let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
    assert_eq!(masked(&format!("a {jwt} b")), "a [redacted:jwt] b");
}

#[test]
fn modes_cover_tabs() {
    assert!(!Redact::Off.covers(true));
    assert!(Redact::External.covers(true) && !Redact::External.covers(false));
    assert!(Redact::All.covers(false));
    let off = Privacy::new(Redact::Off, &[]).expect("off");
    assert!(off.redactor_for(true).is_none());
    let ext = Privacy::new(Redact::External, &[]).expect("external");
    assert!(ext.redactor_for(true).is_some() && ext.redactor_for(false).is_none());
}

#[test]
fn remembered_texts_are_masked_exactly_as_the_rules_mask_them() {
    let r = redactor();
    let texts: Vec<String> = corpus().into_iter().map(|(_, input, _)| input).collect();
    for round in 0..2 {
        for t in &texts {
            assert_eq!(r.redact_remembered(t), r.redact(t), "round {round}: {t}");
        }
    }
    // Texts that differ by one character are different texts, never one remembered answer.
    let secret = "key AKIAZ3MHQ7XWPLBV4KTN";
    let clean = "key AKIAZ3MHQ7XWPLBV4KT";
    assert_eq!(r.redact_remembered(clean), r.redact(clean));
    assert_eq!(
        r.redact_remembered(secret),
        "key [redacted:aws-access-token]"
    );
}

/// What a text must hold to gain a mask's kinds: the gate words of the rules reporting them, of
/// both sets, or their shapes; nothing where no kind is asked for; `None` (every text may gain
/// one) where the owner's patterns are.
#[test]
fn mask_gates_are_the_gates_of_the_kinds_asked() {
    let r = redactor();
    let password = r
        .mask_gates(|m| m == "[redacted:password]")
        .expect("password rules are gated by words");
    for text in [
        "mysql -u me -pX",
        "PGPASSWORD=x",
        "пароль: x",
        "sshpass -p x ssh h",
    ] {
        assert!(password.may_gain(text), "{text}");
    }
    for text in [
        "aws AKIAZ3MHQ7XWPLBV4KTN",
        "needle 7",
        "4111 1111 1111 1111",
    ] {
        assert!(!password.may_gain(text), "{text}");
    }
    // Kept: asked again, the same set's words are not built again.
    let again = r.mask_gates(|m| m == "[redacted:password]").expect("words");
    assert!(Arc::ptr_eq(&password, &again));
    // A gitleaks kind: its rule's keywords.
    let aws = r
        .mask_gates(|m| m == "[redacted:aws-access-token]")
        .expect("gitleaks rules are gated by keywords");
    assert!(aws.may_gain("aws AKIAZ3MHQ7XWPLBV4KTN"));
    assert!(!aws.may_gain("mysql -u me -pX"));
    let nothing = r.mask_gates(|_| false).expect("words");
    assert!(nothing.none() && !nothing.may_gain("password"));
    // Kinds found by a shape: a run of 13 digits for a card, of token characters for a random
    // token, not a word.
    let card = r
        .mask_gates(|m| m == "[redacted:card]")
        .expect("a shape gate");
    assert!(card.may_gain("pay 4111 1111 1111 1111 now") && !card.may_gain("call 555 1234"));
    assert!(!card.may_gain("password: hunter2"));
    let random = r
        .mask_gates(|m| m == "[redacted:high-entropy]")
        .expect("a shape gate");
    assert!(random.may_gain("id Zq8pX2vL9mK4nB7cR1tY6wE3sD5fG0hJ"));
    assert!(!random.may_gain("a short one: Zq8pX2vL9mK4"));
    assert!(r.mask_gates(|m| m == "[redacted:custom]").is_some());
    // Every kind: the redactor's own automaton of all the words, not a copy.
    let every = r.mask_gates(|_| true).expect("gates");
    assert!(
        every
            .words
            .as_ref()
            .is_some_and(|w| Arc::ptr_eq(w, &r.any_word))
    );
    assert!(every.may_gain("aws AKIAZ3MHQ7XWPLBV4KTN") && every.may_gain("4111 1111 1111 1111"));
    let own = Redactor::new(&["sk-own-[0-9]+".to_owned()]).expect("builds");
    assert!(own.mask_gates(|m| m == "[redacted:custom]").is_none());
    assert!(own.mask_gates(|m| m == "[redacted:password]").is_some());
}
