//! The shapes a text has that open the builtin rules' shape gates ([`Gate`]): a long run of token
//! characters, a long run of digits, an IBAN's start. Nearly every text has none, and says so
//! cheaply: one count of its digits and capitals (a loop the compiler vectorises), and a search
//! for a long token run that looks at one byte in `floor` where the text is prose. A run shorter
//! than the shortest any rule asks for ([`Floors`]) is not measured, so the exact byte loops run
//! only on the few texts that may open a gate.

use super::rule::{Gate, Rule};

/// The shortest runs any gate asks for: shorter ones open nothing and are not measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Floors {
    /// Token characters in a row ([`Gate::TokenRun`]).
    pub token: usize,
    /// Digits in a row ([`Gate::DigitRun`], [`Rule::digits`]).
    pub digits: usize,
}

impl Floors {
    /// The floors of `rules`: for texts that hold a gate word (`words`), word-gated rules' digits
    /// count too; for the others only the rules a shape opens do.
    pub fn of<'r>(rules: impl IntoIterator<Item = &'r Rule>, words: bool) -> Self {
        let mut f = Floors {
            token: usize::MAX,
            digits: usize::MAX,
        };
        for r in rules {
            let worded = matches!(r.gate, Gate::Words(_));
            match r.gate {
                Gate::TokenRun(n) => f.token = f.token.min(n),
                Gate::DigitRun(n) => f.digits = f.digits.min(n),
                Gate::Words(_) | Gate::IbanStart => {}
            }
            if r.digits > 0 && (words || !worded) {
                f.digits = f.digits.min(r.digits);
            }
        }
        f
    }
}

/// A text's shapes: each run's length when it is at least its floor, else 0.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Shapes {
    token_run: usize,
    digit_run: usize,
    iban_start: bool,
}

/// `[A-Za-z0-9+/_-]`, the characters of a token run.
const TOKEN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'_' | b'-');
        b += 1;
    }
    t
};

fn token(b: u8) -> bool {
    TOKEN[usize::from(b)]
}

impl Shapes {
    pub fn of(text: &[u8], floors: Floors) -> Self {
        let (digits, capitals) = count(text);
        let digit_run = if digits >= floors.digits {
            digit_run(text)
        } else {
            0
        };
        Shapes {
            token_run: if has_run(text, floors.token) {
                token_run(text)
            } else {
                0
            },
            digit_run: if digit_run >= floors.digits {
                digit_run
            } else {
                0
            },
            iban_start: digits >= 2 && capitals >= 2 && iban_start(text),
        }
    }

    /// Whether no shape gate opens and no digits a rule needs are there.
    pub fn none(&self) -> bool {
        *self == Shapes::default()
    }

    /// Whether the text has the digits `rule` needs beside its gate.
    pub fn digits_for(&self, rule: &Rule) -> bool {
        self.digit_run >= rule.digits
    }

    pub fn open(&self, gate: Gate) -> bool {
        match gate {
            Gate::Words(_) => false,
            Gate::TokenRun(n) => self.token_run >= n,
            Gate::DigitRun(n) => self.digit_run >= n,
            Gate::IbanStart => self.iban_start,
        }
    }
}

/// The digits and the capital letters in `text`, counted in blocks of 255 bytes so that the
/// counters are bytes (16 to a vector register).
fn count(text: &[u8]) -> (usize, usize) {
    let (mut digits, mut capitals) = (0, 0);
    for block in text.chunks(255) {
        let (mut d, mut c) = (0u8, 0u8);
        for &b in block {
            d += u8::from(b.wrapping_sub(b'0') < 10);
            c += u8::from(b.wrapping_sub(b'A') < 26);
        }
        digits += usize::from(d);
        capitals += usize::from(c);
    }
    (digits, capitals)
}

/// Whether `text` has a run of at least `n` token characters. Such a run holds the byte `n - 1`
/// past where it may start, so that byte is looked at first: prose has a space or a dot every
/// few bytes, and one that is not a token character rules out every run starting before it.
/// Each byte is looked at once at most.
fn has_run(text: &[u8], n: usize) -> bool {
    if n == 0 {
        return true;
    }
    // A run may start at `start` or later; the bytes from `start` to `known` are token ones.
    let (mut start, mut known) = (0usize, 0);
    while let Some(last) = start.checked_add(n - 1).filter(|&l| l < text.len()) {
        let from = known.max(start);
        match text[from..=last].iter().rposition(|&b| !token(b)) {
            None => return true,
            Some(k) => (start, known) = (from + k + 1, last + 1),
        }
    }
    false
}

/// The longest run of token characters.
fn token_run(text: &[u8]) -> usize {
    let (mut run, mut best) = (0, 0);
    for &b in text {
        run = if token(b) { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// The most digits in a row, single spaces or dashes between them allowed.
fn digit_run(text: &[u8]) -> usize {
    let (mut best, mut digits, mut sep) = (0, 0, false);
    for &b in text {
        if b.is_ascii_digit() {
            digits += 1;
            sep = false;
        } else if matches!(b, b' ' | b'-') && !sep && digits > 0 {
            sep = true;
        } else {
            digits = 0;
            sep = false;
        }
        best = best.max(digits);
    }
    best
}

/// Two capitals and two digits in a row, as an IBAN starts.
fn iban_start(text: &[u8]) -> bool {
    text.windows(4).any(|w| {
        w[0].is_ascii_uppercase()
            && w[1].is_ascii_uppercase()
            && w[2].is_ascii_digit()
            && w[3].is_ascii_digit()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes as the one byte loop before the floors found them, every run measured.
    fn reference(text: &[u8]) -> (usize, usize, bool) {
        let (mut run, mut digit_run, mut iban) = (0, 0, false);
        let (mut token, mut digits, mut sep) = (0usize, 0usize, false);
        for (i, &b) in text.iter().enumerate() {
            let is_token = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-');
            token = if is_token { token + 1 } else { 0 };
            run = run.max(token);
            if b.is_ascii_digit() {
                digits += 1;
                sep = false;
            } else if (b == b' ' || b == b'-') && !sep && digits > 0 {
                sep = true;
            } else {
                digits = 0;
                sep = false;
            }
            digit_run = digit_run.max(digits);
            if b.is_ascii_digit() && i >= 3 {
                let w = &text[i - 3..=i];
                iban |=
                    w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase() && w[2].is_ascii_digit();
            }
        }
        (run, digit_run, iban)
    }

    /// Every gate opens as the byte loop that measured every run opened it, for every floor
    /// from 0 to past the longest run: on the corpus, odd texts, runs that end at a text's end
    /// or one byte short of a floor, and all 256 bytes.
    #[test]
    fn the_gates_open_as_when_every_run_was_measured() {
        let corpus = include_str!("../../tests/fixtures/secrets/clipboard.jsonl");
        let long = format!("{} {}", "a".repeat(23), "b".repeat(24));
        let odd = [
            "DE89 3704",
            "AB1",
            "XY12",
            "1 2 3--4 -5",
            "a-b+c/d_e",
            "Z\u{ff}9",
            "QQ9 9",
            "",
            "x",
            &long,
            "aaaa.bbbbbbb.cc",
            "12345 6789012 3",
        ];
        let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let texts = corpus.lines().chain(odd).map(str::as_bytes);
        for text in texts.chain([bytes.as_slice()]) {
            let (run, digits, iban) = reference(text);
            let runs = [
                0,
                1,
                2,
                23,
                24,
                25,
                run.saturating_sub(1),
                run,
                run + 1,
                usize::MAX,
            ];
            for token in runs {
                for d in [0, 1, 2, 4, 13, digits, digits + 1, usize::MAX] {
                    let got = Shapes::of(text, Floors { token, digits: d });
                    let want = Shapes {
                        token_run: if run >= token { run } else { 0 },
                        digit_run: if digits >= d { digits } else { 0 },
                        iban_start: iban,
                    };
                    let shown = String::from_utf8_lossy(text);
                    assert_eq!(got, want, "{shown} with floors {token}, {d}");
                }
            }
        }
    }

    #[test]
    fn shapes_of_texts() {
        let all = Floors {
            token: 0,
            digits: 0,
        };
        let s = Shapes::of(b"card 4111 1111-1111 1111 and DE89 3704", all);
        assert!(s.open(Gate::DigitRun(16)) && !s.open(Gate::DigitRun(17)));
        assert!(s.open(Gate::IbanStart));
        assert!(s.open(Gate::TokenRun(9)) && !s.open(Gate::TokenRun(10)));
        let s = Shapes::of(b"lorem ipsum 12  34 q8ZfV2kL0pXw7RtY4mNb9sDc3HjE", all);
        assert!(s.open(Gate::TokenRun(24)) && !s.open(Gate::DigitRun(3)));
        assert!(!s.open(Gate::IbanStart));
        let floors = Floors {
            token: 24,
            digits: 13,
        };
        let s = Shapes::of(b"Item 9999: lorem ipsum dolor sit amet", floors);
        assert!(s.none());
    }
}
