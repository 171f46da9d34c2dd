//! nginx configuration: the tokenizer/parser (with `include` expansion) and the subset of the
//! http core module the model serves with.

use kubesim_os::fs::{DirEntry, Errno, Fs};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One directive, with its block when it has one.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Directive {
    /// Name (`listen`).
    pub name: String,
    /// Arguments (quotes removed).
    pub args: Vec<String>,
    /// The `{ ... }` block.
    pub block: Option<Vec<Directive>>,
    /// File it came from.
    pub file: String,
    /// Line number.
    pub line: usize,
}

/// The built-in `mime.types` the model uses when the image has none.
pub const MIME_TYPES: &[(&str, &str)] = &[
    ("html", "text/html"),
    ("htm", "text/html"),
    ("shtml", "text/html"),
    ("css", "text/css"),
    ("xml", "text/xml"),
    ("gif", "image/gif"),
    ("jpeg", "image/jpeg"),
    ("jpg", "image/jpeg"),
    ("js", "application/javascript"),
    ("atom", "application/atom+xml"),
    ("rss", "application/rss+xml"),
    ("mml", "text/mathml"),
    ("txt", "text/plain"),
    ("jad", "text/vnd.sun.j2me.app-descriptor"),
    ("wml", "text/vnd.wap.wml"),
    ("htc", "text/x-component"),
    ("avif", "image/avif"),
    ("png", "image/png"),
    ("svg", "image/svg+xml"),
    ("svgz", "image/svg+xml"),
    ("tif", "image/tiff"),
    ("tiff", "image/tiff"),
    ("wbmp", "image/vnd.wap.wbmp"),
    ("webp", "image/webp"),
    ("ico", "image/x-icon"),
    ("jng", "image/x-jng"),
    ("bmp", "image/x-ms-bmp"),
    ("woff", "font/woff"),
    ("woff2", "font/woff2"),
    ("jar", "application/java-archive"),
    ("json", "application/json"),
    ("doc", "application/msword"),
    ("pdf", "application/pdf"),
    ("rtf", "application/rtf"),
    ("xls", "application/vnd.ms-excel"),
    ("wasm", "application/wasm"),
    ("7z", "application/x-7z-compressed"),
    ("tar", "application/x-tar"),
    ("xhtml", "application/xhtml+xml"),
    ("zip", "application/zip"),
    ("bin", "application/octet-stream"),
    ("exe", "application/octet-stream"),
    ("iso", "application/octet-stream"),
    ("mp3", "audio/mpeg"),
    ("ogg", "audio/ogg"),
    ("mp4", "video/mp4"),
    ("mpeg", "video/mpeg"),
    ("webm", "video/webm"),
];

/// Directives the model knows (unknown ones are `[emerg] unknown directive`).
const KNOWN: &[&str] = &[
    "user",
    "worker_processes",
    "error_log",
    "pid",
    "events",
    "worker_connections",
    "http",
    "include",
    "default_type",
    "log_format",
    "access_log",
    "sendfile",
    "tcp_nopush",
    "tcp_nodelay",
    "keepalive_timeout",
    "keepalive_requests",
    "gzip",
    "gzip_types",
    "gzip_vary",
    "gzip_proxied",
    "gzip_comp_level",
    "gzip_min_length",
    "gzip_disable",
    "gzip_http_version",
    "gzip_buffers",
    "server",
    "listen",
    "server_name",
    "location",
    "root",
    "alias",
    "index",
    "error_page",
    "return",
    "try_files",
    "autoindex",
    "autoindex_exact_size",
    "autoindex_localtime",
    "add_header",
    "expires",
    "proxy_pass",
    "proxy_set_header",
    "proxy_http_version",
    "proxy_read_timeout",
    "proxy_connect_timeout",
    "proxy_send_timeout",
    "proxy_buffering",
    "proxy_redirect",
    "proxy_buffer_size",
    "proxy_buffers",
    "proxy_cache",
    "proxy_cache_path",
    "proxy_next_upstream",
    "proxy_intercept_errors",
    "proxy_hide_header",
    "fastcgi_pass",
    "fastcgi_index",
    "fastcgi_param",
    "fastcgi_split_path_info",
    "fastcgi_read_timeout",
    "uwsgi_pass",
    "grpc_pass",
    "upstream",
    "types",
    "charset",
    "server_tokens",
    "client_max_body_size",
    "client_body_buffer_size",
    "client_header_buffer_size",
    "large_client_header_buffers",
    "client_body_timeout",
    "client_header_timeout",
    "send_timeout",
    "server_names_hash_bucket_size",
    "server_names_hash_max_size",
    "types_hash_max_size",
    "types_hash_bucket_size",
    "variables_hash_max_size",
    "map_hash_bucket_size",
    "map",
    "geo",
    "resolver",
    "resolver_timeout",
    "ssl_certificate",
    "ssl_certificate_key",
    "ssl_protocols",
    "ssl_ciphers",
    "ssl_prefer_server_ciphers",
    "ssl_session_cache",
    "ssl_session_timeout",
    "ssl_dhparam",
    "ssl",
    "http2",
    "allow",
    "deny",
    "auth_basic",
    "auth_basic_user_file",
    "set",
    "if",
    "rewrite",
    "break",
    "limit_req",
    "limit_req_zone",
    "limit_conn",
    "limit_conn_zone",
    "real_ip_header",
    "set_real_ip_from",
    "stub_status",
    "open_file_cache",
    "reset_timedout_connection",
    "multi_accept",
    "use",
    "worker_rlimit_nofile",
    "daemon",
    "master_process",
    "load_module",
    "env",
    "stream",
    "thread_pool",
    "aio",
    "directio",
    "output_buffers",
    "postpone_output",
    "etag",
    "if_modified_since",
    "absolute_redirect",
    "port_in_redirect",
    "server_name_in_redirect",
    "internal",
    "log_not_found",
    "log_subrequest",
    "open_log_file_cache",
    "merge_slashes",
    "underscores_in_headers",
    "ignore_invalid_headers",
    "recursive_error_pages",
    "chunked_transfer_encoding",
    "satisfy",
    "sub_filter",
    "sub_filter_once",
    "ssi",
    "lingering_close",
    "lingering_time",
    "lingering_timeout",
    "keepalive",
    "least_conn",
    "ip_hash",
    "hash",
    "zone",
    "health_check",
    "js_import",
    "js_content",
    "js_set",
    "njs",
    "worker_shutdown_timeout",
    "accept_mutex",
    "pcre_jit",
    "timer_resolution",
    "working_directory",
    "lua_package_path",
    "content_by_lua_block",
    "access_by_lua_block",
    "proxy_ssl_verify",
    "proxy_ssl_server_name",
    "proxy_pass_request_headers",
    "proxy_set_body",
    "proxy_request_buffering",
    "send_lowat",
    "max_ranges",
    "msie_padding",
    "default_server",
];

/// Directives whose context is the main (top-level) configuration.
const MAIN_ONLY: &[&str] =
    &["user", "worker_processes", "pid", "events", "http", "daemon", "master_process", "load_module", "env", "worker_rlimit_nofile", "stream"];
/// Directives allowed only in `server` (not in `http` or `location`).
const SERVER_ONLY: &[&str] = &["listen", "server_name"];
/// Directives allowed only in `http`.
const HTTP_ONLY: &[&str] = &["server", "upstream", "log_format", "map", "limit_req_zone", "limit_conn_zone", "proxy_cache_path"];

/// Tokenizes and parses a configuration text. `file` names it in messages.
pub fn parse_text(text: &str, file: &str) -> Result<Vec<Directive>, String> {
    let toks = tokenize(text, file)?;
    let mut pos = 0;
    let out = parse_block(&toks, &mut pos, file, false)?;
    Ok(out)
}

#[derive(Clone, Debug)]
enum Tok {
    Word(String, usize),
    Semi(usize),
    Open(usize),
    Close(usize),
}

fn tokenize(text: &str, file: &str) -> Result<Vec<Tok>, String> {
    let mut toks = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut line = 1;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            ' ' | '\t' | '\r' => i += 1,
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            ';' => {
                toks.push(Tok::Semi(line));
                i += 1;
            }
            '{' => {
                toks.push(Tok::Open(line));
                i += 1;
            }
            '}' => {
                toks.push(Tok::Close(line));
                i += 1;
            }
            '"' | '\'' => {
                let q = c;
                let start_line = line;
                i += 1;
                let mut w = String::new();
                loop {
                    if i >= chars.len() {
                        return Err(format!("unexpected end of file, expecting \";\" or \"}}\" in {file}:{start_line}"));
                    }
                    let d = chars[i];
                    if d == '\\' && i + 1 < chars.len() {
                        let n = chars[i + 1];
                        match n {
                            '"' | '\'' | '\\' => w.push(n),
                            't' => w.push('\t'),
                            'r' => w.push('\r'),
                            'n' => w.push('\n'),
                            _ => {
                                w.push('\\');
                                w.push(n);
                            }
                        }
                        i += 2;
                        continue;
                    }
                    if d == q {
                        i += 1;
                        break;
                    }
                    if d == '\n' {
                        line += 1;
                    }
                    w.push(d);
                    i += 1;
                }
                toks.push(Tok::Word(w, start_line));
            }
            _ => {
                let mut w = String::new();
                while i < chars.len() {
                    let d = chars[i];
                    if d.is_whitespace() || d == ';' || d == '{' || d == '}' {
                        break;
                    }
                    if d == '\\' && i + 1 < chars.len() {
                        w.push(chars[i + 1]);
                        i += 2;
                        continue;
                    }
                    w.push(d);
                    i += 1;
                }
                toks.push(Tok::Word(w, line));
            }
        }
        if toks.len() > 200_000 {
            return Err(format!("too many tokens in {file}"));
        }
    }
    toks.push(Tok::Semi(usize::MAX));
    Ok(toks)
}

fn parse_block(toks: &[Tok], pos: &mut usize, file: &str, nested: bool) -> Result<Vec<Directive>, String> {
    let mut out = Vec::new();
    while let Some(t) = toks.get(*pos) {
        match t {
            Tok::Semi(usize::MAX) => {
                if nested {
                    let last = toks.iter().rev().find_map(|t| match t {
                        Tok::Word(_, l) | Tok::Open(l) | Tok::Close(l) => Some(*l),
                        Tok::Semi(l) if *l != usize::MAX => Some(*l),
                        _ => None,
                    });
                    return Err(format!("unexpected end of file, expecting \"}}\" in {file}:{}", last.unwrap_or(1)));
                }
                break;
            }
            Tok::Close(l) => {
                if nested {
                    *pos += 1;
                    return Ok(out);
                }
                return Err(format!("unexpected \"}}\" in {file}:{l}"));
            }
            Tok::Semi(l) => return Err(format!("unexpected \";\" in {file}:{l}")),
            Tok::Open(l) => return Err(format!("unexpected \"{{\" in {file}:{l}")),
            Tok::Word(name, line) => {
                let name = name.clone();
                let line = *line;
                *pos += 1;
                let mut args = Vec::new();
                loop {
                    match toks.get(*pos) {
                        Some(Tok::Word(w, _)) => {
                            args.push(w.clone());
                            *pos += 1;
                        }
                        Some(Tok::Semi(usize::MAX)) | None => {
                            let _ = nested;
                            return Err(format!("unexpected end of file, expecting \";\" or \"}}\" in {file}:{line}"));
                        }
                        Some(Tok::Semi(_)) => {
                            *pos += 1;
                            out.push(Directive { name, args, block: None, file: file.into(), line });
                            break;
                        }
                        Some(Tok::Open(_)) => {
                            *pos += 1;
                            let block = parse_block(toks, pos, file, true)?;
                            out.push(Directive { name, args, block: Some(block), file: file.into(), line });
                            break;
                        }
                        Some(Tok::Close(_)) => return Err(format!("unexpected \"}}\" in {file}:{line}")),
                    }
                }
            }
        }
    }
    Ok(out)
}

/// One answer of the filesystem that a configuration load depended on.
#[derive(Clone, Debug, PartialEq)]
enum Seen {
    IsDir(String, Result<bool, Errno>),
    /// (The file's bytes as the filesystem shares them: a file no one wrote since, in a
    /// container cloned from the same image, is the same allocation.)
    Read(String, Result<Arc<Vec<u8>>, Errno>),
    ReadDir(String, Result<Vec<DirEntry>, Errno>),
}

impl Seen {
    /// Whether `fs` gives the same answer now.
    fn holds(&self, fs: &dyn Fs) -> bool {
        match self {
            Seen::IsDir(p, r) => fs.stat(p).map(|m| m.is_dir()) == *r,
            Seen::Read(p, r) => match (fs.read_shared(p), r) {
                (Ok(now), Ok(then)) => Arc::ptr_eq(&now, then) || now == *then,
                (now, then) => now == *then,
            },
            Seen::ReadDir(p, r) => fs.read_dir(p) == *r,
        }
    }
}

/// The filesystem as a configuration load reads it, remembering every answer (so a
/// remembered load can be reused while the files it read are unchanged: [`Loads`]).
pub struct Reader<'a> {
    fs: &'a dyn Fs,
    seen: std::cell::RefCell<Vec<Seen>>,
}

impl<'a> Reader<'a> {
    /// A reader of `fs` that has seen nothing yet.
    pub fn new(fs: &'a dyn Fs) -> Reader<'a> {
        Reader { fs, seen: std::cell::RefCell::new(Vec::new()) }
    }
    /// Whether `path` is a directory (`stat`).
    pub fn is_dir(&self, path: &str) -> Result<bool, Errno> {
        let r = self.fs.stat(path).map(|m| m.is_dir());
        self.seen.borrow_mut().push(Seen::IsDir(path.to_string(), r));
        r
    }
    /// A file's bytes.
    pub fn read(&self, path: &str) -> Result<Vec<u8>, Errno> {
        let r = self.fs.read_shared(path);
        let bytes = r.as_ref().map(|d| d.to_vec()).map_err(|e| *e);
        self.seen.borrow_mut().push(Seen::Read(path.to_string(), r));
        bytes
    }
    /// A directory's entries.
    pub fn read_dir(&self, path: &str) -> Result<Vec<DirEntry>, Errno> {
        let r = self.fs.read_dir(path);
        self.seen.borrow_mut().push(Seen::ReadDir(path.to_string(), r.clone()));
        r
    }
}

/// Remembered configuration loads: a load is a pure function of its arguments (`key`) and of
/// the filesystem's answers to what it read, so a remembered load whose every read answers
/// the same again yields the same configuration. Every replica of an image reads the same
/// files, so a Deployment's pods parse and build their configuration once (the parse of
/// `mime.types` and the includes was most of an nginx start).
#[derive(Default)]
pub struct Loads {
    entries: std::collections::VecDeque<(String, Vec<Seen>, Result<Arc<Config>, String>)>,
}

/// How many loads [`Loads`] remembers per thread.
pub const REMEMBERED_LOADS: usize = 32;

impl Loads {
    /// The configuration `load` builds from `fs` for `key` (everything else it depends on),
    /// reused from a remembered load when that one's reads all answer the same.
    pub fn get(&mut self, fs: &dyn Fs, key: &str, load: impl FnOnce(&Reader) -> Result<Arc<Config>, String>) -> Result<Arc<Config>, String> {
        if let Some(i) = self.entries.iter().position(|(k, seen, _)| k == key && seen.iter().all(|s| s.holds(fs))) {
            let entry = self.entries.remove(i).expect("found");
            let result = entry.2.clone();
            self.entries.push_front(entry);
            return result;
        }
        let reader = Reader::new(fs);
        let result = load(&reader);
        self.entries.push_front((key.to_string(), reader.seen.into_inner(), result.clone()));
        self.entries.truncate(REMEMBERED_LOADS);
        result
    }
}

/// Loads `path` and expands `include`s (globs, relative to `prefix`). Missing
/// `/etc/nginx/mime.types` is replaced by the built-in table.
pub fn load(fs: &Reader, path: &str, prefix: &str, extra: &[Directive]) -> Result<Vec<Directive>, String> {
    let text = match fs.read(path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => return Err(format!("open() \"{path}\" failed ({}: {})", e.code(), e.strerror())),
    };
    let mut ds = parse_text(&text, path)?;
    ds.extend(extra.iter().cloned());
    expand(fs, ds, prefix, 0)
}

/// Expands the `include`s of already parsed directives.
pub fn load_directives(fs: &Reader, ds: Vec<Directive>, prefix: &str) -> Result<Vec<Directive>, String> {
    expand(fs, ds, prefix, 0)
}

fn expand(fs: &Reader, ds: Vec<Directive>, prefix: &str, depth: u32) -> Result<Vec<Directive>, String> {
    if depth > 16 {
        return Err("include nesting too deep".into());
    }
    let mut out = Vec::new();
    for mut d in ds {
        if d.name == "include" {
            if d.args.len() != 1 {
                return Err(format!("invalid number of arguments in \"include\" directive in {}:{}", d.file, d.line));
            }
            let pat = if d.args[0].starts_with('/') { d.args[0].clone() } else { format!("{}/{}", prefix.trim_end_matches('/'), d.args[0]) };
            let files: Vec<String> = if kubesim_os::pattern::has_glob(&pat) {
                let dir = kubesim_os::fs::dirname(&pat);
                let base = kubesim_os::fs::basename(&pat);
                let mut v: Vec<String> = fs
                    .read_dir(&dir)
                    .map(|es| {
                        es.into_iter()
                            .filter(|e| kubesim_os::pattern::matches(&base, &e.name) && !e.name.starts_with('.'))
                            .map(|e| format!("{dir}/{}", e.name))
                            .collect()
                    })
                    .unwrap_or_default();
                v.sort();
                v.retain(|p| fs.is_dir(p) == Ok(false));
                v
            } else {
                vec![pat.clone()]
            };
            for f in files {
                let text = match fs.read(&f) {
                    Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                    Err(_) if f.ends_with("/mime.types") => builtin_mime_types(),
                    Err(e) => return Err(format!("open() \"{f}\" failed ({}: {}) in {}:{}", e.code(), e.strerror(), d.file, d.line)),
                };
                let inner = parse_text(&text, &f)?;
                out.extend(expand(fs, inner, prefix, depth + 1)?);
            }
            continue;
        }
        if let Some(b) = d.block.take() {
            d.block = Some(expand(fs, b, prefix, depth + 1)?);
        }
        out.push(d);
    }
    Ok(out)
}

fn builtin_mime_types() -> String {
    let mut s = String::from("types {\n");
    for (e, t) in MIME_TYPES {
        s.push_str(&format!("    {t} {e};\n"));
    }
    s.push_str("}\n");
    s
}

/// Severity levels of `error_log`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// debug
    Debug,
    /// info
    Info,
    /// notice
    Notice,
    /// warn
    Warn,
    /// error
    Error,
    /// crit
    Crit,
    /// alert
    Alert,
    /// emerg
    Emerg,
}

impl Level {
    /// Parses a level name.
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "debug" => Level::Debug,
            "info" => Level::Info,
            "notice" => Level::Notice,
            "warn" => Level::Warn,
            "error" => Level::Error,
            "crit" => Level::Crit,
            "alert" => Level::Alert,
            "emerg" => Level::Emerg,
            _ => return None,
        })
    }
    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Notice => "notice",
            Level::Warn => "warn",
            Level::Error => "error",
            Level::Crit => "crit",
            Level::Alert => "alert",
            Level::Emerg => "emerg",
        }
    }
}

/// How a location matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Modifier {
    /// `location /x`
    Prefix,
    /// `location = /x`
    Exact,
    /// `location ^~ /x`
    PrefixNoRegex,
    /// `location ~ re` / `~* re`
    Regex {
        /// Case-insensitive.
        icase: bool,
    },
    /// `location @name`
    Named,
}

/// Per-context settings that inherit http → server → location.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Common {
    /// `root`.
    pub root: Option<String>,
    /// `alias` (locations only).
    pub alias: Option<String>,
    /// `index`.
    pub index: Option<Vec<String>>,
    /// `error_page codes... [=code] uri`.
    pub error_pages: Option<Vec<(Vec<u16>, Option<u16>, String)>>,
    /// `default_type`.
    pub default_type: Option<String>,
    /// `add_header name value [always]`.
    pub add_headers: Option<Vec<(String, String, bool)>>,
    /// `autoindex on`.
    pub autoindex: Option<bool>,
    /// `access_log` (empty = off).
    pub access_log: Option<Vec<(String, String)>>,
    /// `server_tokens`.
    pub server_tokens: Option<bool>,
    /// `charset`.
    pub charset: Option<String>,
    /// `return code [text]` / `return url`.
    pub ret: Option<(u16, Option<String>)>,
    /// `try_files`.
    pub try_files: Option<Vec<String>>,
    /// `proxy_pass` (the model answers 502).
    pub proxy_pass: Option<String>,
    /// `fastcgi_pass`/`uwsgi_pass`/`grpc_pass`.
    pub other_pass: bool,
    /// `stub_status`.
    pub stub_status: bool,
    /// `deny all`.
    pub deny_all: bool,
}

/// A `location` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// Match kind.
    pub modifier: Modifier,
    /// Pattern.
    pub pattern: String,
    /// Settings (already merged with the enclosing contexts).
    pub common: Common,
    /// `internal`.
    pub internal: bool,
}

/// A `listen` socket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listen {
    /// Port.
    pub port: u16,
    /// `default_server`.
    pub default_server: bool,
    /// Address part as written (`[::]`, `127.0.0.1`, `*`).
    pub addr: String,
}

/// A `server` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// Sockets.
    pub listens: Vec<Listen>,
    /// `server_name`s.
    pub names: Vec<String>,
    /// Server-level settings (merged with http).
    pub common: Common,
    /// Locations in file order.
    pub locations: Vec<Location>,
}

/// The configuration the model runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `worker_processes` (0 = auto).
    pub workers: u32,
    /// `user`: the workers' user (nginx's default is `nobody`).
    pub user: String,
    /// `error_log` path and level.
    pub error_log: (String, Level),
    /// `pid` file.
    pub pid: String,
    /// `daemon` (on unless `daemon off;`).
    pub daemon: bool,
    /// `log_format`s (`combined` built in).
    pub log_formats: BTreeMap<String, String>,
    /// MIME types by extension.
    pub types: BTreeMap<String, String>,
    /// Servers.
    pub servers: Vec<Server>,
    /// Whether an `http` block exists.
    pub has_http: bool,
}

/// The `combined` log format.
pub const COMBINED: &str = "$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\"";

fn nargs(d: &Directive, ok: impl Fn(usize) -> bool) -> Result<(), String> {
    if ok(d.args.len()) {
        Ok(())
    } else {
        Err(format!("invalid number of arguments in \"{}\" directive in {}:{}", d.name, d.file, d.line))
    }
}

fn not_allowed(d: &Directive) -> String {
    format!("\"{}\" directive is not allowed here in {}:{}", d.name, d.file, d.line)
}

fn on_off(d: &Directive) -> Result<bool, String> {
    nargs(d, |n| n == 1)?;
    match d.args[0].as_str() {
        "on" => Ok(true),
        "off" => Ok(false),
        v => Err(format!("invalid value \"{v}\" in \"{}\" directive, it must be \"on\" or \"off\" in {}:{}", d.name, d.file, d.line)),
    }
}

/// Which context a directive list is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Main,
    Http,
    Server,
    Location,
}

fn check_known(d: &Directive, ctx: Ctx) -> Result<(), String> {
    let n = d.name.as_str();
    if !KNOWN.contains(&n) {
        return Err(format!("unknown directive \"{n}\" in {}:{}", d.file, d.line));
    }
    let bad = match ctx {
        Ctx::Main => {
            !MAIN_ONLY.contains(&n)
                && n != "error_log"
                && n != "thread_pool"
                && n != "pcre_jit"
                && n != "timer_resolution"
                && n != "working_directory"
                && n != "worker_shutdown_timeout"
        }
        Ctx::Http => MAIN_ONLY.contains(&n) || n == "http" || SERVER_ONLY.contains(&n) || n == "worker_connections",
        Ctx::Server => MAIN_ONLY.contains(&n) || HTTP_ONLY.contains(&n) || n == "server" || n == "worker_connections",
        Ctx::Location => MAIN_ONLY.contains(&n) || HTTP_ONLY.contains(&n) || SERVER_ONLY.contains(&n) || n == "worker_connections",
    };
    if bad && !(ctx == Ctx::Main && n == "events") {
        return Err(not_allowed(d));
    }
    Ok(())
}

fn apply_common(c: &mut Common, d: &Directive) -> Result<bool, String> {
    match d.name.as_str() {
        "root" => {
            nargs(d, |n| n == 1)?;
            c.root = Some(d.args[0].clone());
        }
        "alias" => {
            nargs(d, |n| n == 1)?;
            c.alias = Some(d.args[0].clone());
        }
        "index" => {
            nargs(d, |n| n >= 1)?;
            c.index = Some(d.args.clone());
        }
        "error_page" => {
            nargs(d, |n| n >= 2)?;
            let uri = d.args[d.args.len() - 1].clone();
            let mut codes = Vec::new();
            let mut over = None;
            for a in &d.args[..d.args.len() - 1] {
                if let Some(r) = a.strip_prefix('=') {
                    over = Some(r.parse().unwrap_or(200));
                } else {
                    match a.parse::<u16>() {
                        Ok(v) if (300..=599).contains(&v) => codes.push(v),
                        _ => return Err(format!("invalid value \"{a}\" in {}:{}", d.file, d.line)),
                    }
                }
            }
            c.error_pages.get_or_insert_with(Vec::new).push((codes, over, uri));
        }
        "default_type" => {
            nargs(d, |n| n == 1)?;
            c.default_type = Some(d.args[0].clone());
        }
        "add_header" => {
            nargs(d, |n| n == 2 || n == 3)?;
            c.add_headers.get_or_insert_with(Vec::new).push((d.args[0].clone(), d.args[1].clone(), d.args.get(2).is_some_and(|a| a == "always")));
        }
        "autoindex" => c.autoindex = Some(on_off(d)?),
        "server_tokens" => {
            nargs(d, |n| n == 1)?;
            c.server_tokens = Some(d.args[0] != "off");
        }
        "charset" => {
            nargs(d, |n| n == 1)?;
            c.charset = if d.args[0] == "off" { None } else { Some(d.args[0].clone()) };
        }
        "access_log" => {
            nargs(d, |n| n >= 1)?;
            let list = c.access_log.get_or_insert_with(Vec::new);
            if d.args[0] == "off" {
                list.clear();
                list.push(("off".into(), String::new()));
            } else {
                list.retain(|(p, _)| p != "off");
                list.push((d.args[0].clone(), d.args.get(1).cloned().unwrap_or_else(|| "combined".into())));
            }
        }
        "return" => {
            nargs(d, |n| n == 1 || n == 2)?;
            let a0 = &d.args[0];
            c.ret = Some(match a0.parse::<u16>() {
                Ok(code) if code <= 999 => (code, d.args.get(1).cloned()),
                _ if d.args.len() == 1 && (a0.starts_with("http://") || a0.starts_with("https://") || a0.starts_with('$')) => (302, Some(a0.clone())),
                _ => return Err(format!("invalid return code \"{a0}\" in {}:{}", d.file, d.line)),
            });
        }
        "try_files" => {
            nargs(d, |n| n >= 2)?;
            c.try_files = Some(d.args.clone());
        }
        "proxy_pass" => {
            nargs(d, |n| n == 1)?;
            let u = &d.args[0];
            if !(u.starts_with("http://") || u.starts_with("https://") || u.starts_with('$')) {
                return Err(format!("invalid URL prefix in {}:{}", d.file, d.line));
            }
            c.proxy_pass = Some(u.clone());
        }
        "fastcgi_pass" | "uwsgi_pass" | "grpc_pass" => c.other_pass = true,
        "stub_status" => c.stub_status = true,
        "deny" => {
            if d.args.first().is_some_and(|a| a == "all") {
                c.deny_all = true;
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn merge(parent: &Common, child: &Common) -> Common {
    Common {
        root: child.root.clone().or_else(|| if child.alias.is_some() { None } else { parent.root.clone() }),
        alias: child.alias.clone(),
        index: child.index.clone().or_else(|| parent.index.clone()),
        error_pages: child.error_pages.clone().or_else(|| parent.error_pages.clone()),
        default_type: child.default_type.clone().or_else(|| parent.default_type.clone()),
        add_headers: child.add_headers.clone().or_else(|| parent.add_headers.clone()),
        autoindex: child.autoindex.or(parent.autoindex),
        access_log: child.access_log.clone().or_else(|| parent.access_log.clone()),
        server_tokens: child.server_tokens.or(parent.server_tokens),
        charset: child.charset.clone().or_else(|| parent.charset.clone()),
        ret: child.ret.clone(),
        try_files: child.try_files.clone(),
        proxy_pass: child.proxy_pass.clone(),
        other_pass: child.other_pass,
        stub_status: child.stub_status,
        deny_all: child.deny_all || parent.deny_all,
    }
}

fn parse_listen(d: &Directive) -> Result<Listen, String> {
    nargs(d, |n| n >= 1)?;
    let a = &d.args[0];
    let (addr, port) = if let Some(rest) = a.strip_prefix('[') {
        let (h, p) = rest.split_once(']').unwrap_or((rest, ""));
        (format!("[{h}]"), p.strip_prefix(':').unwrap_or("80").to_string())
    } else if let Some((h, p)) = a.rsplit_once(':') {
        (h.to_string(), p.to_string())
    } else if a.chars().all(|c| c.is_ascii_digit()) {
        ("*".to_string(), a.clone())
    } else {
        (a.clone(), "80".to_string())
    };
    let port: u16 = match port.parse() {
        Ok(p) if p > 0 => p,
        _ => return Err(format!("invalid port in \"{a}\" of the \"listen\" directive in {}:{}", d.file, d.line)),
    };
    Ok(Listen { port, default_server: d.args.iter().skip(1).any(|x| x == "default_server" || x == "default"), addr })
}

fn build_location(d: &Directive, parent: &Common, out: &mut Vec<Location>) -> Result<(), String> {
    let (modifier, pattern) = match d.args.as_slice() {
        [p] if p.starts_with('@') => (Modifier::Named, p.clone()),
        [p] if p.starts_with('=') && p.len() > 1 => (Modifier::Exact, p[1..].to_string()),
        [p] => (Modifier::Prefix, p.clone()),
        [m, p] => (
            match m.as_str() {
                "=" => Modifier::Exact,
                "^~" => Modifier::PrefixNoRegex,
                "~" => Modifier::Regex { icase: false },
                "~*" => Modifier::Regex { icase: true },
                _ => return Err(format!("invalid location modifier \"{m}\" in {}:{}", d.file, d.line)),
            },
            p.clone(),
        ),
        _ => return Err(format!("invalid number of arguments in \"location\" directive in {}:{}", d.file, d.line)),
    };
    if let Modifier::Regex { icase } = modifier {
        if kubesim_os::regex::Regex::new(&pattern, true, icase).is_err() {
            return Err(format!("pcre2_compile() failed: invalid pattern in \"{pattern}\" in {}:{}", d.file, d.line));
        }
    }
    let mut c = Common::default();
    let mut internal = false;
    let mut nested = Vec::new();
    for x in d.block.as_deref().unwrap_or(&[]) {
        check_known(x, Ctx::Location)?;
        if x.name == "location" {
            nested.push(x.clone());
            continue;
        }
        if x.name == "internal" {
            internal = true;
            continue;
        }
        if x.name == "if" || x.name == "limit_except" {
            continue;
        }
        apply_common(&mut c, x)?;
    }
    let merged = merge(parent, &c);
    out.push(Location { modifier, pattern, common: merged.clone(), internal });
    for n in nested {
        build_location(&n, &merged, out)?;
    }
    Ok(())
}

/// [`build`], shared: every nginx started from the same directives (every replica of a
/// Deployment) gets the same immutable configuration. Building is a pure function of the
/// directives, so each thread remembers the last [`SHARED_CONFIGS`] it built.
pub fn build_shared(ds: Vec<Directive>) -> Result<Arc<Config>, String> {
    type Built = BTreeMap<Vec<Directive>, Result<Arc<Config>, String>>;
    thread_local! {
        static BUILT: std::cell::RefCell<Built> = const { std::cell::RefCell::new(BTreeMap::new()) };
    }
    if let Some(built) = BUILT.with(|b| b.borrow().get(&ds).cloned()) {
        return built;
    }
    let built = build(&ds).map(Arc::new);
    BUILT.with(|b| {
        let mut b = b.borrow_mut();
        if b.len() >= SHARED_CONFIGS {
            b.clear();
        }
        b.insert(ds, built.clone());
    });
    built
}

/// How many distinct configurations [`build_shared`] remembers per thread.
pub const SHARED_CONFIGS: usize = 64;

/// Builds the model's configuration from parsed directives; errors are nginx's `[emerg]`
/// texts (without the `nginx: [emerg] ` prefix).
pub fn build(ds: &[Directive]) -> Result<Config, String> {
    let mut cfg = Config {
        workers: 1,
        user: "nobody".into(),
        error_log: ("/var/log/nginx/error.log".into(), Level::Error),
        pid: "/run/nginx.pid".into(),
        daemon: true,
        log_formats: BTreeMap::new(),
        types: BTreeMap::new(),
        servers: Vec::new(),
        has_http: false,
    };
    cfg.log_formats.insert("combined".into(), COMBINED.into());
    let mut seen_http = false;
    for d in ds {
        check_known(d, Ctx::Main)?;
        match d.name.as_str() {
            "user" => {
                nargs(d, |n| n == 1 || n == 2)?;
                cfg.user = d.args[0].clone();
            }
            "worker_processes" => {
                nargs(d, |n| n == 1)?;
                cfg.workers = if d.args[0] == "auto" {
                    0
                } else {
                    d.args[0].parse().map_err(|_| format!("invalid value \"{}\" in \"worker_processes\" directive in {}:{}", d.args[0], d.file, d.line))?
                };
            }
            "error_log" => {
                nargs(d, |n| n == 1 || n == 2)?;
                let lvl = match d.args.get(1) {
                    Some(l) => Level::parse(l).ok_or_else(|| format!("invalid log level \"{l}\" in {}:{}", d.file, d.line))?,
                    None => Level::Error,
                };
                cfg.error_log = (d.args[0].clone(), lvl);
            }
            "pid" => {
                nargs(d, |n| n == 1)?;
                cfg.pid = d.args[0].clone();
            }
            "daemon" => cfg.daemon = on_off(d)?,
            "events" if d.block.is_none() => {
                return Err(format!("directive \"events\" has no opening \"{{\" in {}:{}", d.file, d.line));
            }
            "http" => {
                if seen_http {
                    return Err(format!("\"http\" directive is duplicate in {}:{}", d.file, d.line));
                }
                seen_http = true;
                cfg.has_http = true;
                build_http(&mut cfg, d)?;
            }
            _ => {}
        }
    }
    if !ds.iter().any(|d| d.name == "events") {
        return Err("no \"events\" section in configuration".into());
    }
    Ok(cfg)
}

fn build_http(cfg: &mut Config, http: &Directive) -> Result<(), String> {
    let mut c = Common::default();
    let mut servers = Vec::new();
    for d in http.block.as_deref().unwrap_or(&[]) {
        check_known(d, Ctx::Http)?;
        match d.name.as_str() {
            "server" => servers.push(d.clone()),
            "log_format" => {
                nargs(d, |n| n >= 2)?;
                let mut fmt_args = &d.args[1..];
                if fmt_args.first().is_some_and(|a| a.starts_with("escape=")) {
                    fmt_args = &fmt_args[1..];
                }
                cfg.log_formats.insert(d.args[0].clone(), fmt_args.concat());
            }
            "types" => {
                for t in d.block.as_deref().unwrap_or(&[]) {
                    for ext in &t.args {
                        cfg.types.insert(ext.to_ascii_lowercase(), t.name.clone());
                    }
                }
            }
            _ => {
                apply_common(&mut c, d)?;
            }
        }
    }
    for d in &c.access_log.clone().unwrap_or_default() {
        if d.0 != "off" && !cfg.log_formats.contains_key(&d.1) {
            return Err(format!("unknown log format \"{}\" in {}:{}", d.1, http.file, http.line));
        }
    }
    for s in servers {
        let mut sc = Common::default();
        let mut listens = Vec::new();
        let mut names = Vec::new();
        let mut locs = Vec::new();
        for d in s.block.as_deref().unwrap_or(&[]) {
            check_known(d, Ctx::Server)?;
            match d.name.as_str() {
                "listen" => listens.push(parse_listen(d)?),
                "server_name" => names.extend(d.args.iter().cloned()),
                "location" => locs.push(d.clone()),
                "if" => {}
                _ => {
                    apply_common(&mut sc, d)?;
                }
            }
        }
        if listens.is_empty() {
            listens.push(Listen { port: 80, default_server: false, addr: "*".into() });
        }
        let merged = merge(&c, &sc);
        let merged = Common { ret: sc.ret.clone(), try_files: sc.try_files.clone(), ..merged };
        let mut locations = Vec::new();
        for l in &locs {
            build_location(l, &merged, &mut locations)?;
        }
        for i in 0..locations.len() {
            for j in 0..i {
                if locations[i].pattern == locations[j].pattern && locations[i].modifier == locations[j].modifier {
                    return Err(format!("duplicate location \"{}\" in {}:{}", locations[i].pattern, s.file, s.line));
                }
            }
        }
        servers_push(cfg, Server { listens, names, common: merged, locations }, &s)?;
    }
    if cfg.types.is_empty() {
        for (e, t) in MIME_TYPES {
            cfg.types.insert((*e).into(), (*t).into());
        }
    }
    Ok(())
}

fn servers_push(cfg: &mut Config, s: Server, d: &Directive) -> Result<(), String> {
    for l in &s.listens {
        if l.default_server {
            for o in &cfg.servers {
                if o.listens.iter().any(|x| x.port == l.port && x.addr == l.addr && x.default_server) {
                    return Err(format!(
                        "a duplicate default server for {}:{} in {}:{}",
                        if l.addr == "*" { "0.0.0.0" } else { &l.addr },
                        l.port,
                        d.file,
                        d.line
                    ));
                }
            }
        }
    }
    for (i, a) in s.listens.iter().enumerate() {
        if s.listens[..i].iter().any(|b| b.port == a.port && b.addr == a.addr) {
            return Err(format!("a duplicate listen {}:{} in {}:{}", if a.addr == "*" { "0.0.0.0" } else { &a.addr }, a.port, d.file, d.line));
        }
    }
    cfg.servers.push(s);
    Ok(())
}
