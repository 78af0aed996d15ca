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
        assert!(a.str("x").is_err());
        assert!(a.int("b").is_err());
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
        assert!(a.bounded("skip", 0, 0, i64::MAX).is_err());
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
        assert!(a.string_list("bad").is_err());
        assert!(a.reject_unknown(&["tags", "t2"]).is_err());
    }
}
