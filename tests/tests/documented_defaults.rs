//! Every default a document states, checked against the configuration it describes: the
//! `#[retryable]` argument table (the macro's rustdoc; README shows none), the table of
//! `RetryConfig::default`'s rustdoc, and the constants of `retry-core/src/config/defaults.rs`
//! (private: each one's doc must state its value). The documents are read as text, so a doc that
//! drifts from the code fails here, naming the document, the row and both values.

use std::time::Duration;

use retry_core::backoff::Jitter;
use retry_core::config::parse_duration;
use retry_core::{Quota, RetryConfig, RetryMode, RetryPreset};

const MACRO_DOCS: &str = include_str!("../../retry-macros/src/lib.rs");
const CONFIG_DOCS: &str = include_str!("../../retry-core/src/config/retry_config.rs");
const DEFAULTS_DOCS: &str = include_str!("../../retry-core/src/config/defaults.rs");

/// Arguments of `#[retryable]` that are not settings of a `RetryConfig` (their defaults are
/// not configuration values).
const NOT_CONFIG: [&str; 8] = [
    "attempt_timeout",
    "scope",
    "strategy",
    "classifier",
    "retry_if",
    "on_retry",
    "shed",
    "crate",
];

/// The cells of a Markdown table row (`| a | b \| c |`), an escaped `\|` kept in its cell.
fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                cells.last_mut().expect("one cell").push('|');
            }
            '|' => cells.push(String::new()),
            _ => cells.last_mut().expect("one cell").push(c),
        }
    }
    cells
        .into_iter()
        .map(|cell| cell.trim().to_owned())
        .collect()
}

/// The rows of the table whose header row starts with `header` in `text` (doc comment markers
/// `///` and `//!` removed), each as its cells, the header and separator rows left out.
fn table(text: &str, header: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text
        .lines()
        .map(|line| {
            let line = line.trim_start();
            line.strip_prefix("///")
                .or_else(|| line.strip_prefix("//!"))
                .unwrap_or(line)
                .trim()
        })
        .collect();
    let start = lines
        .iter()
        .position(|line| line.starts_with(header))
        .unwrap_or_else(|| panic!("no table starting with `{header}`"));
    lines[start + 2..]
        .iter()
        .take_while(|line| line.starts_with('|'))
        .map(|line| cells(line))
        .collect()
}

/// The first `` `...` `` in `text`, its quotes removed (`"50ms"` -> `50ms`).
fn first_code(text: &str) -> Option<String> {
    let start = text.find('`')? + 1;
    let len = text[start..].find('`')?;
    Some(text[start..start + len].trim_matches('"').to_owned())
}

/// What a default cell states: `(preset, value)` pairs. The cell is read part by part
/// (`;`-separated): a part's first `` `value` `` is the default, of the preset named after it
/// (`` `"1s"` in `aws-classic` ``) or else of the table's own configuration; a part starting
/// with `none` states that the setting is unset. Parts stating no value ("the preset's") are skipped.
fn stated(cell: &str) -> Vec<(Option<RetryPreset>, String)> {
    cell.split(';')
        .filter_map(|part| {
            let (value_part, preset) = match part.split_once(" in `") {
                Some((value, preset)) => {
                    let name = preset.split('`').next().expect("a preset name");
                    (value, Some(name.parse::<RetryPreset>().expect("a preset")))
                }
                None => (part, None),
            };
            let value = if value_part.trim().starts_with("none") {
                "none".to_owned()
            } else {
                first_code(value_part)?
            };
            Some((preset, value))
        })
        .collect()
}

/// `config`'s value of `setting` equals `value` as written in a document, or why not.
fn matches(setting: &str, value: &str, config: &RetryConfig) -> Result<(), String> {
    fn duration(value: &str) -> Option<Duration> {
        (value != "none").then(|| parse_duration(value).expect("a duration"))
    }
    fn number(value: &str) -> u32 {
        value.replace(['_', ','], "").parse().expect("a number")
    }
    let (documented, actual) = match setting {
        "preset" => {
            let preset: RetryPreset = value.parse().expect("a preset");
            let built = RetryConfig::from_preset(preset).build().expect("valid");
            return (built == *config)
                .then_some(())
                .ok_or_else(|| format!("preset `{value}` is not the configuration: {built:?}"));
        }
        "max_attempts" => (number(value).to_string(), config.max_attempts().to_string()),
        "mode" => (
            format!("{:?}", value.parse::<RetryMode>().expect("a mode")),
            format!("{:?}", config.mode()),
        ),
        "initial_backoff" => (
            format!("{:?}", duration(value)),
            format!("{:?}", Some(config.initial_backoff())),
        ),
        "throttling_backoff" => (
            format!("{:?}", duration(value)),
            format!("{:?}", Some(config.throttling_backoff())),
        ),
        "max_backoff" => (
            format!("{:?}", duration(value)),
            format!("{:?}", Some(config.max_backoff())),
        ),
        "jitter" => (
            format!("{:?}", value.parse::<Jitter>().expect("a jitter")),
            format!("{:?}", config.jitter()),
        ),
        "timeout" => (
            format!("{:?}", duration(value)),
            format!("{:?}", config.timeout()),
        ),
        "quota" => (
            format!("{:?}", value.parse::<Quota>().expect("a quota")),
            format!("{:?}", config.quota()),
        ),
        "long_polling" => (
            value.parse::<bool>().expect("a bool").to_string(),
            config.long_polling().to_string(),
        ),
        "retry_cost" => (number(value).to_string(), config.retry_cost().to_string()),
        "timeout_retry_cost" => (
            number(value).to_string(),
            config.timeout_retry_cost().to_string(),
        ),
        "throttling_retry_cost" => (
            number(value).to_string(),
            config.throttling_retry_cost().to_string(),
        ),
        "success_reward" => (
            number(value).to_string(),
            config.success_reward().to_string(),
        ),
        "quota_capacity" => (
            number(value).to_string(),
            config.quota_capacity().to_string(),
        ),
        "quota_window" => (
            format!("{:?}", duration(value)),
            format!("{:?}", config.quota_window()),
        ),
        "retry_after_slack" => (
            format!("{:?}", duration(value)),
            format!("{:?}", config.retry_after_slack()),
        ),
        "max_wait" => (
            format!("{:?}", duration(value)),
            format!("{:?}", config.max_wait()),
        ),
        other => return Err(format!("`{other}` is not a setting this test knows")),
    };
    (documented == actual)
        .then_some(())
        .ok_or_else(|| format!("documented {documented}, actual {actual}"))
}

/// Checks every stated default of an argument table (name in column 0, default in column
/// `column`), against `RetryConfig::default()` or the preset a value names. Returns the
/// mismatches, each naming `document` and the row.
fn check_table(document: &str, rows: &[Vec<String>], column: usize) -> Vec<String> {
    let mut problems = Vec::new();
    for row in rows {
        let name = first_code(&row[0]).expect("a backticked name");
        if NOT_CONFIG.contains(&name.as_str()) {
            continue;
        }
        for (preset, value) in stated(&row[column]) {
            let config = RetryConfig::from_preset(preset.unwrap_or(RetryPreset::Default))
                .build()
                .expect("valid");
            if let Err(problem) = matches(&name, &value, &config) {
                let of = preset.map_or("the default".to_owned(), |p| format!("`{}`", p.as_str()));
                problems.push(format!("{document}, `{name}` ({of}): {problem}"));
            }
        }
    }
    problems
}

fn assert_none(problems: Vec<String>) {
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_macro_rustdoc_argument_table() {
    let rows = table(MACRO_DOCS, "| argument | value | default |");
    assert!(rows.len() >= 15, "the table has {} rows", rows.len());
    assert_none(check_table("retry-macros/src/lib.rs", &rows, 2));
}

#[test]
fn the_default_configurations_rustdoc_table() {
    let rows = table(CONFIG_DOCS, "| setting | default |");
    assert!(rows.len() >= 16, "the table has {} rows", rows.len());
    assert_none(check_table(
        "retry-core/src/config/retry_config.rs",
        &rows,
        1,
    ));
}

/// The parser reads what the tables say: a wrong default is found, the preset of a
/// qualified value is used, and "the preset's" states nothing.
#[test]
fn a_drifted_row_is_found() {
    let rows = vec![
        cells(
            "| `initial_backoff` | duration | the preset's (`\"1s\"`; `\"50ms\"` in `aws-2026`) |",
        ),
        cells("| `max_backoff` | duration | the preset's |"),
        cells("| `timeout` | duration \\| none | none |"),
    ];
    let problems = check_table("a test table", &rows, 2);
    assert_eq!(
        problems,
        ["a test table, `initial_backoff` (the default): documented Some(1s), actual Some(50ms)"]
    );
}

/// A constant's value as its source writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    Number(u64),
    Duration(Duration),
}

impl Value {
    /// How documents write it: `50 ms`, `1 s`, `5000` (or `5_000`, `5,000`).
    fn written(self) -> Vec<String> {
        match self {
            Value::Number(n) => {
                let plain = n.to_string();
                let grouped = |sep: &str| {
                    let digits: Vec<char> = plain.chars().collect();
                    let mut out = String::new();
                    for (i, c) in digits.iter().enumerate() {
                        if i > 0 && (digits.len() - i).is_multiple_of(3) {
                            out.push_str(sep);
                        }
                        out.push(*c);
                    }
                    out
                };
                vec![plain.clone(), grouped("_"), grouped(",")]
            }
            Value::Duration(d) if d.subsec_nanos() == 0 => vec![format!("{} s", d.as_secs())],
            Value::Duration(d) => vec![format!("{} ms", d.as_millis())],
        }
    }

    /// The value as a configuration document writes it (`3`, `50ms`).
    fn setting(self) -> String {
        match self {
            Value::Number(n) => n.to_string(),
            Value::Duration(d) => format!("{}ms", d.as_millis()),
        }
    }
}

/// One constant of `config/defaults.rs` as written: its module (`""` for the top level), name,
/// doc and value expression.
struct Constant {
    module: String,
    name: String,
    doc: String,
    expr: String,
}

/// The constants of `config/defaults.rs`, in source order.
fn constants(source: &str) -> Vec<Constant> {
    let mut found = Vec::new();
    let mut module = String::new();
    let mut doc = String::new();
    for line in source.lines().map(str::trim) {
        if let Some(text) = line.strip_prefix("///") {
            doc.push_str(text.trim());
            doc.push(' ');
            continue;
        }
        if let Some(name) = line
            .strip_prefix("pub mod ")
            .and_then(|l| l.strip_suffix(" {"))
        {
            module = name.to_owned();
        } else if line == "}" {
            module.clear();
        } else if let Some(rest) = line.strip_prefix("pub const ") {
            let (name, rest) = rest.split_once(':').expect("pub const NAME: T = value;");
            let expr = rest.split_once('=').expect("a value").1;
            found.push(Constant {
                module: module.clone(),
                name: name.to_owned(),
                doc: doc.clone(),
                expr: expr.trim().trim_end_matches(';').to_owned(),
            });
        }
        doc.clear();
    }
    found
}

/// The value of `constant`: a literal, `Duration::from_secs` / `from_millis`, or another
/// constant of the file (`aws_2026::INITIAL_BACKOFF`, `aws_classic::MAX_BACKOFF`).
fn evaluate(constant: &Constant, all: &[Constant]) -> Value {
    let expr = constant.expr.as_str();
    let call = |prefix: &str| {
        let digits = expr
            .strip_prefix(prefix)?
            .strip_suffix(')')?
            .replace('_', "");
        Some(digits.parse::<u64>().expect("a whole number"))
    };
    if let Some(secs) = call("Duration::from_secs(") {
        return Value::Duration(Duration::from_secs(secs));
    }
    if let Some(millis) = call("Duration::from_millis(") {
        return Value::Duration(Duration::from_millis(millis));
    }
    if let Ok(n) = expr.replace('_', "").parse::<u64>() {
        return Value::Number(n);
    }
    let (module, name) = match expr.rsplit_once("::") {
        Some((path, name)) => (path.rsplit("::").next().unwrap_or(path), name),
        None => (constant.module.as_str(), expr),
    };
    let target = all
        .iter()
        .find(|other| other.module == module && other.name == name)
        .unwrap_or_else(|| panic!("cannot evaluate `{expr}`"));
    evaluate(target, all)
}

/// Whether `doc` writes `word` as a whole (not as part of a longer number or name).
fn states(doc: &str, word: &str) -> bool {
    doc.match_indices(word).any(|(at, _)| {
        let before = doc[..at].chars().next_back();
        let mut rest = doc[at + word.len()..].chars();
        let after = rest.next();
        let joins = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
        // A point joins a number (`1.5`), not a sentence's end (`1 s.`).
        let decimal = after == Some('.') && joins(rest.next());
        !joins(before) && before != Some('.') && !joins(after) && !decimal
    })
}

/// The configuration setting a constant of `defaults` holds.
fn setting_of(name: &str) -> String {
    match name {
        "THROTTLING_INITIAL_BACKOFF" => "throttling_backoff".to_owned(),
        other => other.to_ascii_lowercase(),
    }
}

#[test]
fn the_defaults_module_states_every_value() {
    let constants = constants(DEFAULTS_DOCS);
    assert!(constants.len() >= 20, "found {} constants", constants.len());
    let mut problems = Vec::new();
    for constant in &constants {
        let Constant {
            module, name, doc, ..
        } = constant;
        let value = evaluate(constant, &constants);
        let path = if module.is_empty() {
            name.clone()
        } else {
            format!("{module}::{name}")
        };
        if !value.written().iter().any(|word| states(doc, word)) {
            problems.push(format!(
                "config/defaults.rs, `{path}`: its doc does not state its value {}",
                value.written()[0]
            ));
        }
        let preset = match module.as_str() {
            "" => RetryPreset::Default,
            "aws_classic" => RetryPreset::AwsClassic,
            "aws_2026" => RetryPreset::Aws2026,
            other => panic!("unknown module `{other}` in config/defaults.rs"),
        };
        let config = RetryConfig::from_preset(preset).build().expect("valid");
        let setting = setting_of(name);
        match matches(&setting, &value.setting(), &config) {
            Ok(()) => {}
            // A constant that is not a setting of its own (none today) is checked for its doc
            // only.
            Err(problem) if problem.contains("not a setting") => {}
            Err(problem) => problems.push(format!("config/defaults.rs, `{path}`: {problem}")),
        }
    }
    assert_none(problems);
}

/// A value is stated only as a whole: `1 s.` states 1 s, `1.5 s` does not state 5 s, nor
/// `140` 14.
#[test]
fn a_value_is_stated_as_a_whole() {
    assert!(states("a base of 1 s.", "1 s"));
    assert!(!states("a base of 1.5 s", "5 s"));
    assert!(!states("costs 140", "14"));
    assert!(states("costs 14, then", "14"));
}
