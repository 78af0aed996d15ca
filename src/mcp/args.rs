//! Reading tool arguments from the JSON object a client sent, with the reference's errors. Clients
//! differ in how they send scalars (the Inspector CLI sends `"5"` for 5), so numbers and booleans
//! are also accepted as strings; anything else of the wrong type is `INVALID_PARAM`.

use serde_json::{Map, Value};

use super::error::ToolError;

pub struct Args<'a> {
    map: &'a Map<String, Value>,
    mode: String,
}

impl<'a> Args<'a> {
    pub fn new(map: &'a Map<String, Value>) -> Self {
        Self {
            map,
            mode: String::new(),
        }
    }

    /// The mode, for `MISSING_PARAM` messages.
    pub fn set_mode(&mut self, mode: &str) {
        self.mode = mode.to_owned();
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn missing(&self, param: &'static str) -> ToolError {
        ToolError::MissingParam {
            param,
            mode: self.mode.clone(),
        }
    }

    /// Any key not in `known` is `INVALID_PARAM`, so a typo is not silently ignored.
    pub fn reject_unknown(&self, known: &[&str]) -> Result<(), ToolError> {
        match self.map.keys().find(|k| !known.contains(&k.as_str())) {
            Some(k) => Err(ToolError::InvalidParam(format!(
                "Unknown parameter '{}' (known: {})",
                k.escape_debug(),
                known.join(", ")
            ))),
            None => Ok(()),
        }
    }

    pub fn str(&self, key: &str) -> Result<Option<&'a str>, ToolError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ToolError::InvalidParam(format!(
                "Parameter '{key}' must be a string"
            ))),
        }
    }

    pub fn required_str(&self, key: &'static str) -> Result<&'a str, ToolError> {
        self.str(key)?.ok_or_else(|| self.missing(key))
    }

    pub fn int(&self, key: &str) -> Result<Option<i64>, ToolError> {
        let bad = || ToolError::InvalidParam(format!("Parameter '{key}' must be an integer"));
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(bad),
            Some(Value::String(s)) => s.trim().parse().map(Some).map_err(|_| bad()),
            Some(_) => Err(bad()),
        }
    }

    pub fn required_int(&self, key: &'static str) -> Result<i64, ToolError> {
        self.int(key)?.ok_or_else(|| self.missing(key))
    }

    /// An integer in `min..=max`, `default` when absent.
    pub fn bounded(&self, key: &str, default: i64, min: i64, max: i64) -> Result<usize, ToolError> {
        let v = self.int(key)?.unwrap_or(default);
        if v < min || v > max {
            let range = if max == i64::MAX {
                format!(">= {min}")
            } else {
                format!("between {min} and {max}")
            };
            return Err(ToolError::InvalidParam(format!(
                "Parameter '{key}' must be {range} (got {v})"
            )));
        }
        usize::try_from(v)
            .map_err(|_| ToolError::InvalidParam(format!("Parameter '{key}' is out of range")))
    }

    pub fn bool(&self, key: &str, default: bool) -> Result<bool, ToolError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
            Some(_) => Err(ToolError::InvalidParam(format!(
                "Parameter '{key}' must be true or false"
            ))),
        }
    }

    /// A list of strings; a JSON string holding such a list is accepted too.
    pub fn string_list(&self, key: &str) -> Result<Option<Vec<String>>, ToolError> {
        let bad =
            || ToolError::InvalidParam(format!("Parameter '{key}' must be an array of strings"));
        let value = match self.get(key) {
            None => return Ok(None),
            Some(Value::String(s)) => serde_json::from_str::<Value>(s).map_err(|_| bad())?,
            Some(v) => v.clone(),
        };
        match value {
            Value::Array(items) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    _ => Err(bad()),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            _ => Err(bad()),
        }
    }

    /// One of `choices`, `default` when absent.
    pub fn choice(
        &self,
        key: &str,
        choices: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str, ToolError> {
        let Some(v) = self.str(key)? else {
            return Ok(default);
        };
        choices.iter().copied().find(|c| *c == v).ok_or_else(|| {
            ToolError::InvalidParam(format!(
                "Parameter '{key}' must be one of: {} (got '{}')",
                choices.join(", "),
                v.escape_debug()
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn scalars_accept_strings() {
        let m = obj(json!({"n": "5", "b": "TRUE", "x": 7, "nul": null}));
        let a = Args::new(&m);
        assert_eq!(a.int("n").unwrap(), Some(5));
        assert!(a.bool("b", false).unwrap());
        assert_eq!(a.int("nul").unwrap(), None);
        assert_eq!(
            a.str("x").unwrap_err().line(),
            "error|INVALID_PARAM|Parameter 'x' must be a string"
        );
        assert_eq!(
            a.int("b").unwrap_err().line(),
            "error|INVALID_PARAM|Parameter 'b' must be an integer"
        );
    }

    #[test]
    fn bounds_and_missing() {
        let m = obj(json!({"max_items": 101, "skip": -1}));
        let mut a = Args::new(&m);
        a.set_mode("list");
        assert_eq!(
            a.bounded("max_items", 20, 1, 100).unwrap_err().line(),
            "error|INVALID_PARAM|Parameter 'max_items' must be between 1 and 100 (got 101)"
        );
        assert_eq!(
            a.bounded("skip", 0, 0, i64::MAX).unwrap_err().line(),
            "error|INVALID_PARAM|Parameter 'skip' must be >= 0 (got -1)"
        );
        assert_eq!(a.bounded("max_depth", 2, 1, 10).unwrap(), 2);
        assert_eq!(
            a.required_str("tab").unwrap_err().line(),
            "error|MISSING_PARAM|Parameter 'tab' required for mode 'list'"
        );
    }

    #[test]
    fn lists_and_unknown_keys() {
        let m = obj(json!({"tags": ["a", "b"], "t2": "[\"c\"]", "bad": [1]}));
        let a = Args::new(&m);
        assert_eq!(
            a.string_list("tags").unwrap(),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(a.string_list("t2").unwrap(), Some(vec!["c".into()]));
        assert_eq!(
            a.string_list("bad").unwrap_err().line(),
            "error|INVALID_PARAM|Parameter 'bad' must be an array of strings"
        );
        assert_eq!(
            a.reject_unknown(&["tags", "t2"]).unwrap_err().line(),
            "error|INVALID_PARAM|Unknown parameter 'bad' (known: tags, t2)"
        );
    }

    // Property tests: arbitrary JSON never panics a getter, and what a getter accepts is what was sent.

    use proptest::prelude::*;

    const KEYS: &[&str] = &[
        "tab",
        "index",
        "max_items",
        "skip",
        "tags",
        "mode",
        "include_note",
    ];

    /// Strings that look like numbers, booleans or lists, and some that almost do.
    fn scalar_text() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(
                &[
                    "5",
                    " 5 ",
                    "+5",
                    "-1",
                    "0",
                    "-0",
                    "007",
                    "1.5",
                    "1e3",
                    "0x10",
                    "5\u{0}",
                    "9223372036854775807",
                    "9223372036854775808",
                    "-9223372036854775808",
                    "-9223372036854775809",
                    "\u{ff15}",
                    "\u{663}",
                    "",
                    " ",
                    "true",
                    "TRUE",
                    "tRuE",
                    "false",
                    "yes",
                    "1",
                    "null",
                    "[]",
                    "[\"a\",\"b\"]",
                    "[1]",
                    "{}",
                    "[\"a\"",
                    "[[[[[[[[",
                    "\"a\"",
                ][..]
            )
            .prop_map(str::to_owned),
            any::<i64>().prop_map(|n| n.to_string()),
            prop::collection::vec(any::<char>(), 0..12).prop_map(String::from_iter),
        ]
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            prop::sample::select(&[i64::MIN, i64::MAX, -1, 0, 1, 100, 101][..])
                .prop_map(Value::from),
            any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
                .map(Value::Number)),
            scalar_text().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((key(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(KEYS).prop_map(str::to_owned),
            prop::collection::vec(any::<char>(), 0..8).prop_map(String::from_iter),
        ]
    }

    fn arguments() -> impl Strategy<Value = Map<String, Value>> {
        prop::collection::vec((key(), json_value()), 0..8).prop_map(|kv| kv.into_iter().collect())
    }

    /// Every reply line stays one line, whatever the client sent.
    fn one_line(e: &ToolError) -> Result<(), TestCaseError> {
        let line = e.line();
        prop_assert!(!line.contains(['\n', '\r']), "{:?}", line);
        prop_assert!(
            line.starts_with("error|INVALID_PARAM|") || line.starts_with("error|MISSING_PARAM|"),
            "{}",
            line
        );
        Ok(())
    }

    fn int_was_sent(sent: Option<&Value>, n: i64) -> bool {
        match sent {
            Some(Value::Number(x)) => x.as_i64() == Some(n),
            Some(Value::String(s)) => s.trim().parse::<i64>() == Ok(n),
            _ => false,
        }
    }

    fn bool_was_sent(sent: Option<&Value>, b: bool, default: bool) -> bool {
        match sent {
            None => b == default,
            Some(Value::Bool(x)) => *x == b,
            Some(Value::String(s)) => s.eq_ignore_ascii_case(if b { "true" } else { "false" }),
            _ => false,
        }
    }

    fn list_was_sent(sent: Option<&Value>, list: &[String]) -> bool {
        let direct: Option<Vec<String>> = sent.and_then(|v| serde_json::from_value(v.clone()).ok());
        let nested: Option<Vec<String>> = sent
            .and_then(Value::as_str)
            .and_then(|s| serde_json::from_str(s).ok());
        direct.as_deref() == Some(list) || nested.as_deref() == Some(list)
    }

    /// Every getter on `key`: no panic, a one-line error, or exactly the value that was sent.
    fn check_getters(map: &Map<String, Value>, key: &'static str) -> Result<(), TestCaseError> {
        let mut a = Args::new(map);
        a.set_mode("list");
        let sent = map.get(key).filter(|v| !v.is_null());
        match a.str(key) {
            Ok(got) => prop_assert_eq!(got, sent.and_then(Value::as_str)),
            Err(e) => {
                prop_assert!(sent.is_some_and(|v| !v.is_string()));
                one_line(&e)?;
            }
        }
        match a.int(key) {
            Ok(Some(n)) => prop_assert!(int_was_sent(sent, n), "{:?} from {:?}", n, sent),
            Ok(None) => prop_assert!(sent.is_none()),
            Err(e) => one_line(&e)?,
        }
        match a.bool(key, false) {
            Ok(b) => prop_assert!(bool_was_sent(sent, b, false), "{:?} from {:?}", b, sent),
            Err(e) => one_line(&e)?,
        }
        match a.string_list(key) {
            Ok(Some(list)) => {
                prop_assert!(list_was_sent(sent, &list), "{:?} from {:?}", list, sent)
            }
            Ok(None) => prop_assert!(sent.is_none()),
            Err(e) => one_line(&e)?,
        }
        match a.choice(key, &["a", "5", "true"], "a") {
            Ok(c) => prop_assert!(sent.map_or(c == "a", |v| v.as_str() == Some(c))),
            Err(e) => one_line(&e)?,
        }
        for e in [a.required_str("tab").err(), a.required_int("index").err()]
            .into_iter()
            .flatten()
        {
            one_line(&e)?;
        }
        match a.reject_unknown(KEYS) {
            Ok(()) => prop_assert!(map.keys().all(|x| KEYS.contains(&x.as_str()))),
            Err(e) => one_line(&e)?,
        }
        Ok(())
    }

    /// `bounded` with any range: a value inside it (the one sent, or the default), or an error
    /// naming the parameter.
    fn check_bounded(
        map: &Map<String, Value>,
        key: &str,
        default: i64,
        (lo, hi): (i64, i64),
    ) -> Result<(), TestCaseError> {
        let a = Args::new(map);
        match a.bounded(key, default, lo, hi) {
            Ok(v) => {
                let v = i64::try_from(v).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(lo <= v && v <= hi, "{} not in {}..={}", v, lo, hi);
                prop_assert_eq!(v, a.int(key).ok().flatten().unwrap_or(default));
            }
            Err(e) => {
                one_line(&e)?;
                prop_assert!(
                    e.line().contains(&format!("Parameter '{key}'")),
                    "{}",
                    e.line()
                );
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn getters_never_panic_and_keep_what_was_sent(
            map in arguments(),
            key in prop::sample::select(KEYS),
        ) {
            check_getters(&map, key)?;
        }

        #[test]
        fn bounded_stays_in_range(
            map in arguments(),
            key in prop::sample::select(KEYS),
            default in prop_oneof![any::<i64>(), -2i64..200],
            lo in prop_oneof![any::<i64>(), -2i64..5, Just(i64::MIN)],
            span in prop_oneof![any::<u64>(), 0u64..200, Just(u64::MAX)],
        ) {
            check_bounded(&map, key, default, (lo, lo.saturating_add_unsigned(span)))?;
        }
    }

    #[test]
    fn deeply_nested_list_strings_are_refused() {
        let deep = "[".repeat(100_000);
        let m = obj(json!({ "tags": deep }));
        assert_eq!(
            Args::new(&m).string_list("tags").unwrap_err().line(),
            "error|INVALID_PARAM|Parameter 'tags' must be an array of strings"
        );
    }
}
