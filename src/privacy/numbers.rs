//! Numbers that are secrets by their checksum: payment cards (a network's prefix and length, the
//! Luhn check, card-like grouping) and IBANs (the country's length, the ISO 7064 mod-97 check).
//! A phone number, an order number or a timestamp of as many digits fails one of these.

/// Digits with one kind of separator in card-like groups, of a card network's prefix and
/// length, Luhn-valid. `before` is the text before it: a leading `+` makes it a phone number.
pub fn is_card(s: &str, before: &str) -> bool {
    if before.ends_with('+') || before.ends_with("+ ") {
        return false;
    }
    let seps: Vec<char> = s.chars().filter(|c| !c.is_ascii_digit()).collect();
    if seps.windows(2).any(|w| w[0] != w[1]) || !card_groups(s) {
        return false;
    }
    let d: Vec<u32> = s.chars().filter_map(|c| c.to_digit(10)).collect();
    let n = d.len();
    if !(13..=19).contains(&n) {
        return false;
    }
    let p2 = d[0] * 10 + d[1];
    let p4 = p2 * 100 + d[2] * 10 + d[3];
    let network = match d[0] {
        // Visa's 13-digit numbers are decades out of issue; 13 digits from 4 are tickets and ids.
        4 => matches!(n, 16 | 19),
        // Mastercard 51-55; Maestro 50, 56-58 (12 to 19 digits).
        5 => ((51..=55).contains(&p2) && n == 16) || matches!(p2, 50 | 56..=58),
        // Mir 2200-2204; Mastercard 2221-2720.
        2 => ((2200..=2204).contains(&p4) || (2221..=2720).contains(&p4)) && n == 16,
        3 => match p2 {
            34 | 37 => n == 15,
            35 => n >= 16,
            30 | 36 | 38 | 39 => n >= 14,
            _ => false,
        },
        6 => n >= 16,
        _ => false,
    };
    network && luhn(&d)
}

/// Unseparated, or groups as cards print them: fours (the last may be shorter), or Amex's and
/// Diners' 4-6-5 / 4-6-4.
fn card_groups(s: &str) -> bool {
    let groups: Vec<usize> = s
        .split([' ', '-'])
        .filter(|g| !g.is_empty())
        .map(str::len)
        .collect();
    match groups.as_slice() {
        [_] | [4, 6, 5] | [4, 6, 4] => true,
        [first @ .., last] => first.iter().all(|&g| g == 4) && (1..=5).contains(last),
        [] => false,
    }
}

fn luhn(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 { x - 9 } else { x }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// IBAN lengths by country (the SWIFT registry).
#[rustfmt::skip]
const IBAN_LENGTHS: &[(&str, usize)] = &[
    ("AD", 24), ("AE", 23), ("AL", 28), ("AT", 20), ("AZ", 28), ("BA", 20), ("BE", 16), ("BG", 22),
    ("BH", 22), ("BR", 29), ("BY", 28), ("CH", 21), ("CR", 22), ("CY", 28), ("CZ", 24), ("DE", 22),
    ("DK", 18), ("DO", 28), ("EE", 20), ("EG", 29), ("ES", 24), ("FI", 18), ("FO", 18), ("FR", 27),
    ("GB", 22), ("GE", 22), ("GI", 23), ("GL", 18), ("GR", 27), ("GT", 28), ("HR", 21), ("HU", 28),
    ("IE", 22), ("IL", 23), ("IQ", 23), ("IS", 26), ("IT", 27), ("JO", 30), ("KW", 30), ("KZ", 20),
    ("LB", 28), ("LC", 32), ("LI", 21), ("LT", 20), ("LU", 20), ("LV", 21), ("MC", 27), ("MD", 24),
    ("ME", 22), ("MK", 19), ("MR", 27), ("MT", 31), ("MU", 30), ("NL", 18), ("NO", 15), ("PK", 24),
    ("PL", 28), ("PS", 29), ("PT", 25), ("QA", 29), ("RO", 24), ("RS", 22), ("RU", 33), ("SA", 24),
    ("SC", 31), ("SE", 24), ("SI", 19), ("SK", 24), ("SM", 27), ("ST", 25), ("SV", 28), ("TL", 23),
    ("TN", 24), ("TR", 26), ("UA", 29), ("VA", 22), ("VG", 24), ("XK", 20),
];

/// The length of the IBAN at the start of `s` (spaces between its groups allowed), if it is one:
/// its country's length and a valid mod-97 check.
pub fn iban_len(s: &str) -> Option<usize> {
    let want = IBAN_LENGTHS.iter().find(|(c, _)| s.starts_with(c))?.1;
    let mut chars = 0;
    let mut rem: u32 = 0;
    let mut end = None;
    // The check runs over the BBAN, then the country and check digits.
    let b = s.as_bytes();
    let rotated = b.iter().enumerate().filter(|(_, c)| **c != b' ');
    let mut alnum = Vec::with_capacity(want);
    for (i, &c) in rotated {
        alnum.push(c);
        chars += 1;
        if chars == want {
            end = Some(i + 1);
            break;
        }
    }
    let end = end?;
    // A longer run of the same alphabet is some other code, not an IBAN and a word after it.
    if b.get(end).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    for &c in alnum[4..].iter().chain(&alnum[..4]) {
        let v = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'A'..=b'Z' => u32::from(c - b'A') + 10,
            _ => return None,
        };
        rem = if v >= 10 {
            (rem * 100 + v) % 97
        } else {
            (rem * 10 + v) % 97
        };
    }
    (rem == 1).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_need_luhn_a_network_and_card_grouping() {
        assert!(is_card("4111111111111111", ""));
        assert!(is_card("4111 1111 1111 1111", ""));
        assert!(is_card("3782-822463-10005", ""));
        assert!(is_card("5555555555554444", ""));
        // Mir.
        let mir = (0..10)
            .map(|d| format!("220412345678901{d}"))
            .find(|s| luhn(&digits(s)))
            .expect("one last digit passes");
        assert!(is_card(&mir, ""));
        assert!(is_card(
            &format!(
                "{} {} {} {}",
                &mir[..4],
                &mir[4..8],
                &mir[8..12],
                &mir[12..]
            ),
            ""
        ));
        assert!(!is_card("4111111111111112", ""));
        assert!(!is_card("4111 1111-1111 1111", ""));
        assert!(!is_card("41 1111111 1111111", ""));
        assert!(!is_card("4111111111111111", "+"));
        // An epoch in milliseconds, Luhn-valid or not, is no card's prefix.
        assert!(!is_card("1700000000006", ""));
    }

    fn digits(s: &str) -> Vec<u32> {
        s.chars().filter_map(|c| c.to_digit(10)).collect()
    }

    #[test]
    fn ibans_need_their_country_length_and_checksum() {
        assert_eq!(iban_len("DE89370400440532013000"), Some(22));
        assert_eq!(iban_len("DE89 3704 0044 0532 0130 00 (BIC)"), Some(27));
        assert_eq!(iban_len("GB29NWBK60161331926819"), Some(22));
        assert_eq!(iban_len("DE88370400440532013000"), None);
        assert_eq!(iban_len("DE8937040044053201300"), None);
        assert_eq!(iban_len("RA123456789RU"), None);
    }
}
