//! Command-line handling: shell-style splitting and a small pflag-like flag parser.

/// Splits a command string shell-style ("kubectl scale deployment/web --replicas=5") into argv:
/// whitespace separates words; single quotes keep text literally; double quotes allow `\"`,
/// `\\`, `\$` and `` \` `` escapes; a backslash outside quotes escapes the next character.
/// Unquoted shell operators (`|`, `>`, `<`, `;`, `&`, `` ` ``) are refused: one command only.
/// `$(...)` is refused too; [`split_command_with`] runs it.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    split_command_with(line, &mut |_| Err("command substitution $(...) is not supported here".to_string()))
}

/// [`split_command`] with POSIX command substitution: `$(COMMAND)` is replaced by what
/// `substitute(COMMAND)` prints, trailing newlines removed; unquoted, the result is split into
/// words at whitespace, inside double quotes it stays one word (as a POSIX shell does).
pub fn split_command_with(line: &str, substitute: &mut dyn FnMut(&str) -> Result<String, String>) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    // The command inside `$(`, from after the parenthesis to its match (quotes respected).
    let inner = |start: usize| -> Result<(String, usize), String> {
        let mut depth = 1;
        let mut j = start;
        let mut quote: Option<char> = None;
        while j < chars.len() {
            let c = chars[j];
            match quote {
                Some(q) if c == q => quote = None,
                Some('"') if c == '\\' => j += 1,
                Some(_) => {}
                None => match c {
                    '\'' | '"' => quote = Some(c),
                    '\\' => j += 1,
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok((chars[start..j].iter().collect(), j + 1));
                        }
                    }
                    _ => {}
                },
            }
            j += 1;
        }
        Err("unterminated command substitution $(...)".into())
    };
    let strip = |mut s: String| {
        while s.ends_with('\n') {
            s.pop();
        }
        s
    };
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            '$' if chars.get(i) == Some(&'(') => {
                let (command, next) = inner(i + 1)?;
                i = next;
                let text = strip(substitute(&command)?);
                // Field splitting of an unquoted substitution.
                let mut parts = text.split_whitespace().peekable();
                if text.starts_with(char::is_whitespace) && in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
                while let Some(part) = parts.next() {
                    current.push_str(part);
                    in_word = true;
                    if parts.peek().is_some() {
                        words.push(std::mem::take(&mut current));
                    }
                }
                if text.ends_with(char::is_whitespace) && in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.get(i) {
                        Some('\'') => {
                            i += 1;
                            break;
                        }
                        Some(c) => {
                            current.push(*c);
                            i += 1;
                        }
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    let Some(&c) = chars.get(i) else { return Err("unterminated double quote".into()) };
                    i += 1;
                    match c {
                        '"' => break,
                        '\\' => match chars.get(i).copied() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => {
                                current.push(c);
                                i += 1;
                            }
                            Some('\n') => i += 1,
                            Some(c) => {
                                current.push('\\');
                                current.push(c);
                                i += 1;
                            }
                            None => return Err("unterminated double quote".into()),
                        },
                        '$' if chars.get(i) == Some(&'(') => {
                            let (command, next) = inner(i + 1)?;
                            i = next;
                            current.push_str(&strip(substitute(&command)?));
                        }
                        c => current.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.get(i) {
                    Some('\n') => i += 1,
                    Some(c) => {
                        current.push(*c);
                        i += 1;
                    }
                    None => return Err("trailing backslash".into()),
                }
            }
            '|' | '>' | '<' | ';' | '&' | '`' => {
                return Err(format!("shell operator '{c}' is not supported: kubesim runs a single kubectl command (quote the character to pass it literally)"));
            }
            c => {
                in_word = true;
                current.push(c);
            }
        }
    }
    if in_word {
        words.push(current);
    }
    Ok(words)
}

/// Parsed flags and positional arguments of one command.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// Positional arguments, in order (before `--`).
    pub positional: Vec<String>,
    /// Arguments after `--`.
    pub after_dash: Vec<String>,
    /// Flags in order: (long name, value). Boolean flags get "true" unless given `=value`.
    pub flags: Vec<(String, String)>,
    /// The objects `-f FILE` names (kind, namespace, name), for verbs that act on existing
    /// objects (get, describe, label, scale, ...); filled by the dispatcher.
    pub file_targets: Option<Vec<(&'static kubesim_api::object::KindInfo, String, String)>>,
}

/// Long names of flags that take no value (unless written `--flag=value`).
/// Whether `--NAME` is a boolean flag (takes no separate value word): for callers that scan an
/// argv for the files it names.
pub fn is_bool_flag(name: &str) -> bool {
    BOOL_FLAGS.contains(&name.trim_start_matches('-'))
}

const BOOL_FLAGS: &[&str] = &[
    "all",
    "edit",
    "share-processes",
    "same-node",
    "keep-labels",
    "keep-annotations",
    "keep-liveness",
    "keep-readiness",
    "keep-startup",
    "arguments-only",
    "keep-init-containers",
    "create-annotation",
    "minify",
    "flatten",
    "raw-config",
    "append-hash",
    "all-namespaces",
    "force",
    "show-labels",
    "overwrite",
    "ignore-daemonsets",
    "delete-emptydir-data",
    "delete-local-data",
    "previous",
    "watch",
    "no-headers",
    "stdin",
    "tty",
    "quiet",
    "record",
    "recursive",
    "follow",
    "wait",
    "disable-eviction",
    "local",
    "show-kind",
    "namespaced",
    "short",
    "client",
    "help",
    "ignore-not-found",
    "now",
    "show-events",
    "containers",
    "timestamps",
    "insecure-skip-tls-verify",
    "server-side",
    "force-conflicts",
    "save-config",
    "exit-code",
    "allow-missing-template-keys",
    "sort",
    "command",
    "all-containers",
    "prefix",
    "rm",
    "expose",
    "privileged",
    "attach",
    "leave-stdin-open",
    "list",
    "watch-only",
    "show-managed-fields",
    "use-openapi-print-columns",
    "openapi-patch",
    "output-watch-events",
    "ignore-errors",
    "prune",
    "include-uninitialized",
    "keep-annotations",
    "resolve",
];

fn short_name(c: char, command: &str) -> Option<&'static str> {
    Some(match c {
        'n' => "namespace",
        'l' => "selector",
        'o' => "output",
        'f' if command == "logs" => "follow",
        'f' => "filename",
        'A' => "all-namespaces",
        'c' => "container",
        'p' if command == "logs" => "previous",
        'p' => "patch",
        'i' => "stdin",
        't' => "tty",
        'w' => "watch",
        'R' => "recursive",
        'L' => "label-columns",
        'k' => "kustomize",
        'q' => "quiet",
        'h' => "help",
        'r' => "replicas",
        'v' => "v",
        's' => "server",
        _ => return None,
    })
}

impl Args {
    /// Parses argv for `command` (which decides the meaning of `-f` and `-p`).
    pub fn parse(argv: &[String], command: &str) -> Result<Args, String> {
        let mut args = Args::default();
        let mut i = 0;
        while i < argv.len() {
            let arg = &argv[i];
            i += 1;
            if arg == "--" {
                args.after_dash.extend(argv[i..].iter().cloned());
                break;
            }
            if let Some(long) = arg.strip_prefix("--") {
                let (name, value) = match long.split_once('=') {
                    Some((n, v)) => (n.to_string(), Some(v.to_string())),
                    None => (long.to_string(), None),
                };
                // `config view --raw` is a switch; `get --raw PATH` and `replace --raw PATH` take one.
                let is_bool = BOOL_FLAGS.contains(&name.as_str()) || (name == "dry-run" && value.is_none()) || (name == "raw" && command == "config");
                let value = match value {
                    Some(v) => v,
                    // pflag NoOptDefVal: a bare --cascade means background.
                    None if name == "cascade" => "background".to_string(),
                    None if is_bool => "true".to_string(),
                    None => {
                        let v = argv.get(i).cloned().ok_or_else(|| format!("flag needs an argument: --{name}"))?;
                        i += 1;
                        v
                    }
                };
                args.flags.push((name, value));
                continue;
            }
            if arg.len() > 1 && arg.starts_with('-') && !arg[1..].starts_with(|c: char| c.is_ascii_digit()) {
                let body: Vec<char> = arg[1..].chars().collect();
                let mut j = 0;
                while j < body.len() {
                    let c = body[j];
                    let name = short_name(c, command).ok_or_else(|| format!("unknown shorthand flag: '{c}' in {arg}"))?;
                    j += 1;
                    if BOOL_FLAGS.contains(&name) {
                        if j < body.len() && body[j] == '=' {
                            let v: String = body[j + 1..].iter().collect();
                            args.flags.push((name.to_string(), v));
                            break;
                        }
                        args.flags.push((name.to_string(), "true".to_string()));
                        continue;
                    }
                    let rest: String = body[j..].iter().collect();
                    let value = if !rest.is_empty() {
                        rest.strip_prefix('=').map(str::to_string).unwrap_or(rest)
                    } else {
                        let v = argv.get(i).cloned().ok_or_else(|| format!("flag needs an argument: '{c}' in -{c}"))?;
                        i += 1;
                        v
                    };
                    args.flags.push((name.to_string(), value));
                    break;
                }
                continue;
            }
            args.positional.push(arg.clone());
        }
        Ok(args)
    }

    /// The last value of a flag.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.flags.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Every value of a repeatable flag (`-f a -f b`, `-f a,b` is not split).
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.flags.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str()).collect()
    }

    /// Whether a boolean flag is set (and not `=false`).
    pub fn bool(&self, name: &str) -> bool {
        matches!(self.get(name), Some(v) if v != "false")
    }

    /// Whether a flag was given at all.
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn splits_like_a_posix_shell() {
        let cases: &[(&str, &[&str])] = &[
            ("kubectl get pods", &["kubectl", "get", "pods"]),
            ("  a   b  ", &["a", "b"]),
            ("a 'b c' \"d e\"", &["a", "b c", "d e"]),
            ("-o jsonpath='{.items[*].metadata.name}'", &["-o", "jsonpath={.items[*].metadata.name}"]),
            ("echo \"a\\\"b\"", &["echo", "a\"b"]),
            ("a\\ b", &["a b"]),
            ("''", &[""]),
            ("x=\"{\\\"a\\\":1}\"", &["x={\"a\":1}"]),
        ];
        for (line, want) in cases {
            assert_eq!(split_command(line).unwrap(), s(want), "{line}");
        }
        assert!(split_command("a 'b").is_err());
        assert!(split_command("kubectl get pods | grep web").unwrap_err().contains("shell operator '|'"));
        assert!(split_command("kubectl get pods > out.txt").is_err());
        assert_eq!(split_command("get pods -l 'a|b' --field-selector \"x!=y\"").unwrap(), s(&["get", "pods", "-l", "a|b", "--field-selector", "x!=y"]));
        assert!(split_command("a \"b").is_err());
        // POSIX: quotes concatenate within a word; a backslash-newline joins lines.
        assert_eq!(split_command("a'b'\"c\"d \\\nx").unwrap(), s(&["abcd", "x"]));
        assert_eq!(split_command("-p '{\"spec\":{\"replicas\":2}}'").unwrap(), s(&["-p", "{\"spec\":{\"replicas\":2}}"]));
        assert_eq!(
            split_command("-o jsonpath='{range .items[*]}{.metadata.name}{\"\\n\"}{end}'").unwrap(),
            s(&["-o", "jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}"])
        );
        assert!(split_command("drain $(kubectl get pod x)").is_err());
    }

    #[test]
    fn command_substitution_like_a_posix_shell() {
        let mut run = |cmd: &str| -> Result<String, String> {
            Ok(match cmd {
                "kubectl get pod zk-0 --template {{.spec.nodeName}}" => "node-1".to_string(),
                "echo two words" => "two words\n\n".to_string(),
                other => format!("<{other}>"),
            })
        };
        assert_eq!(
            split_command_with("kubectl drain $(kubectl get pod zk-0 --template {{.spec.nodeName}}) --force", &mut run).unwrap(),
            s(&["kubectl", "drain", "node-1", "--force"])
        );
        assert_eq!(split_command_with("a $(echo two words) b", &mut run).unwrap(), s(&["a", "two", "words", "b"]));
        assert_eq!(split_command_with("a \"$(echo two words)\" b", &mut run).unwrap(), s(&["a", "two words", "b"]));
        assert_eq!(split_command_with("x=\"$(echo 'a)b')\"", &mut run).unwrap(), s(&["x=<echo 'a)b'>"]));
        assert!(split_command_with("a $(b", &mut run).is_err());
    }

    #[test]
    fn parses_pflag_style_flags() {
        let a = Args::parse(&s(&["pods", "-n", "kube-system", "-owide", "--show-labels", "-l=app=web", "-A"]), "get").unwrap();
        assert_eq!(a.positional, s(&["pods"]));
        assert_eq!(a.get("namespace"), Some("kube-system"));
        assert_eq!(a.get("output"), Some("wide"));
        assert_eq!(a.get("selector"), Some("app=web"));
        assert!(a.bool("show-labels") && a.bool("all-namespaces"));
        let b = Args::parse(&s(&["web-1", "-c", "app", "--", "ls", "-l"]), "exec").unwrap();
        assert_eq!(b.after_dash, s(&["ls", "-l"]));
        let c = Args::parse(&s(&["web", "-f", "-p"]), "logs").unwrap();
        assert!(c.bool("follow") && c.bool("previous"));
        assert!(Args::parse(&s(&["-n"]), "get").is_err());
    }
}
