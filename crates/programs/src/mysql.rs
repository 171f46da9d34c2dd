//! MySQL: the official image's entrypoint (initialisation with a temporary
//! `skip-networking` server, the password variables), `mysqld` (5.6 / 5.7 / 8.0 log formats,
//! port 3306, data under `/var/lib/mysql` so a PersistentVolume keeps it), a small SQL engine,
//! the `mysql` client (batch and table output) and `mysqladmin`.
//!
//! Client and server speak a kubesim text protocol over TCP (see the README); a connection
//! that does not speak it gets MySQL's greeting packet.

use crate::common::{self, CpuQueue, TcpClient, TcpStep};
use kubesim_os::fs::WriteMode;
use kubesim_os::program::{Incoming, NetError, Os, Outgoing, Program, Signal, Spawn, Step, Wake};

const MAGIC: &str = "KUBESIM-MYSQL/1";
const DATADIR: &str = "/var/lib/mysql";

/// `5.7.44` from `MYSQL_VERSION` (`5.7.44-1.el7`), else from `MYSQL_MAJOR`.
pub fn version_of(spawn: &Spawn) -> String {
    if let Some(v) = spawn.env.get("MYSQL_VERSION") {
        let v: String = v.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        if !v.is_empty() {
            return v;
        }
    }
    match spawn.env.get("MYSQL_MAJOR").map(String::as_str) {
        Some("5.6") => "5.6.51".into(),
        Some("5.7") => "5.7.44".into(),
        _ => "8.0.36".into(),
    }
}

fn vnum(v: &str) -> (u32, u32, u32) {
    crate::nginx::vnum(v)
}

// ---------------------------------------------------------------------------------------------
// Storage: databases are directories, tables are `<name>.ibd` files in a text format.

#[derive(Clone, Debug, PartialEq)]
enum Val {
    Null,
    Int(i64),
    Float(f64),
    Str(String),
}

impl Val {
    fn text(&self) -> Option<String> {
        match self {
            Val::Null => None,
            Val::Int(i) => Some(i.to_string()),
            Val::Float(f) => Some(if *f == f.trunc() && f.abs() < 1e15 { format!("{}", *f as i64) } else { format!("{f}") }),
            Val::Str(s) => Some(s.clone()),
        }
    }
    fn num(&self) -> Option<f64> {
        match self {
            Val::Int(i) => Some(*i as f64),
            Val::Float(f) => Some(*f),
            Val::Str(s) => s.trim().parse().ok(),
            Val::Null => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Table {
    cols: Vec<(String, String)>,
    rows: Vec<Vec<Val>>,
    auto: i64,
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\t', "\\t").replace('\n', "\\n")
}

fn unesc(s: &str) -> String {
    let mut o = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('t') => o.push('\t'),
                Some('n') => o.push('\n'),
                Some(x) => o.push(x),
                None => {}
            }
        } else {
            o.push(c);
        }
    }
    o
}

fn encode_val(v: &Val) -> String {
    match v {
        Val::Null => "\\N".into(),
        Val::Int(i) => format!("i{i}"),
        Val::Float(f) => format!("f{f}"),
        Val::Str(s) => format!("s{}", esc(s)),
    }
}

fn decode_val(s: &str) -> Val {
    if s == "\\N" {
        return Val::Null;
    }
    match s.split_at(s.len().min(1)) {
        ("i", r) => Val::Int(r.parse().unwrap_or(0)),
        ("f", r) => Val::Float(r.parse().unwrap_or(0.0)),
        (_, r) => Val::Str(unesc(r)),
    }
}

impl Table {
    fn to_text(&self) -> String {
        let mut s = String::from("KUBESIM-TABLE 1\n");
        s.push_str(&format!("auto {}\n", self.auto));
        for (n, t) in &self.cols {
            s.push_str(&format!("col {}\t{}\n", esc(n), esc(t)));
        }
        for r in &self.rows {
            s.push_str(&format!("row {}\n", r.iter().map(encode_val).collect::<Vec<_>>().join("\t")));
        }
        s
    }
    fn from_text(t: &str) -> Table {
        let mut tb = Table { cols: Vec::new(), rows: Vec::new(), auto: 0 };
        for l in t.lines() {
            if let Some(c) = l.strip_prefix("col ") {
                let (n, ty) = c.split_once('\t').unwrap_or((c, "text"));
                tb.cols.push((unesc(n), unesc(ty)));
            } else if let Some(r) = l.strip_prefix("row ") {
                tb.rows.push(r.split('\t').map(decode_val).collect());
            } else if let Some(a) = l.strip_prefix("auto ") {
                tb.auto = a.parse().unwrap_or(0);
            }
        }
        tb
    }
}

/// A result of one statement.
#[derive(Clone, Debug, PartialEq)]
enum Res {
    Ok(u64),
    Rows(Vec<(String, bool)>, Vec<Vec<Val>>),
    Err(u32, String, String),
    Use(String),
}

fn syntax_err(near: &str) -> Res {
    Res::Err(1064, "42000".into(), format!("You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{near}' at line 1"))
}

// ---------------------------------------------------------------------------------------------
// SQL

#[derive(Clone, Debug, PartialEq)]
enum T {
    Word(String),
    Quoted(String),
    Str(String),
    Num(String),
    Var(String),
    Sym(String),
}

fn lex(sql: &str) -> Result<Vec<(T, usize)>, usize> {
    let c: Vec<char> = sql.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
            continue;
        }
        if ch == '-' && c.get(i + 1) == Some(&'-') || ch == '#' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let st = i;
        if ch == '\'' || ch == '"' {
            i += 1;
            let mut s = String::new();
            loop {
                if i >= c.len() {
                    return Err(st);
                }
                if c[i] == '\\' && i + 1 < c.len() {
                    s.push(match c[i + 1] {
                        'n' => '\n',
                        't' => '\t',
                        '0' => '\0',
                        x => x,
                    });
                    i += 2;
                    continue;
                }
                if c[i] == ch {
                    if c.get(i + 1) == Some(&ch) {
                        s.push(ch);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                s.push(c[i]);
                i += 1;
            }
            out.push((T::Str(s), st));
            continue;
        }
        if ch == '`' {
            i += 1;
            let s: String = c[i..].iter().take_while(|&&x| x != '`').collect();
            i += s.chars().count() + 1;
            out.push((T::Quoted(s), st));
            continue;
        }
        if ch.is_ascii_digit() || (ch == '.' && c.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            while i < c.len() && (c[i].is_ascii_digit() || c[i] == '.') {
                i += 1;
            }
            out.push((T::Num(c[st..i].iter().collect()), st));
            continue;
        }
        if ch == '@' {
            i += 1;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '@' || c[i] == '.') {
                i += 1;
            }
            out.push((T::Var(c[st..i].iter().collect()), st));
            continue;
        }
        if ch.is_alphanumeric() || ch == '_' || ch == '$' {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '$') {
                i += 1;
            }
            out.push((T::Word(c[st..i].iter().collect()), st));
            continue;
        }
        let two: String = c[i..(i + 2).min(c.len())].iter().collect();
        if ["<=", ">=", "<>", "!="].contains(&two.as_str()) {
            out.push((T::Sym(two), st));
            i += 2;
            continue;
        }
        out.push((T::Sym(ch.to_string()), st));
        i += 1;
    }
    Ok(out)
}

/// Splits a script on `;` outside quotes (and the `\G`/`\g` terminators).
fn split_statements(sql: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut cur = String::new();
    let mut q: Option<char> = None;
    let mut it = sql.chars().peekable();
    while let Some(c) = it.next() {
        match q {
            Some(x) => {
                cur.push(c);
                if c == '\\' {
                    if let Some(n) = it.next() {
                        cur.push(n);
                    }
                } else if c == x {
                    q = None;
                }
            }
            None => {
                if c == '\'' || c == '"' || c == '`' {
                    q = Some(c);
                    cur.push(c);
                } else if c == ';' || (c == '\\' && matches!(it.peek(), Some('G') | Some('g'))) {
                    if c == '\\' {
                        it.next();
                    }
                    if !cur.trim().is_empty() {
                        v.push(cur.trim().to_string());
                    }
                    cur.clear();
                } else {
                    cur.push(c);
                }
            }
        }
    }
    if !cur.trim().is_empty() {
        v.push(cur.trim().to_string());
    }
    v
}

struct Session<'a> {
    os: &'a mut dyn Os,
    db: Option<String>,
    user: String,
    host: String,
    version: String,
    server_id: u64,
    read_only: bool,
}

fn is_int_type(t: &str) -> bool {
    let t = t.to_ascii_lowercase();
    ["int", "tinyint", "smallint", "mediumint", "bigint", "integer", "decimal", "float", "double", "numeric", "bit", "year", "serial"]
        .iter()
        .any(|p| t.starts_with(p))
}

impl Session<'_> {
    fn dbs(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .os
            .fs_ref()
            .read_dir(DATADIR)
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e.meta.is_dir() && !e.name.starts_with('#') && !e.name.starts_with('.') && e.name != "lost+found")
            .map(|e| e.name)
            .collect();
        v.push("information_schema".into());
        v.sort();
        v
    }

    fn table_path(&self, db: &str, t: &str) -> String {
        format!("{DATADIR}/{db}/{t}.ibd")
    }

    fn load(&self, db: &str, t: &str) -> Option<Table> {
        let b = self.os.fs_ref().read(&self.table_path(db, t)).ok()?;
        Some(Table::from_text(&String::from_utf8_lossy(&b)))
    }

    fn store(&mut self, db: &str, t: &str, tb: &Table) {
        let p = self.table_path(db, t);
        let _ = self.os.fs().write(&p, tb.to_text().as_bytes(), WriteMode::Truncate);
    }

    fn now(&self) -> String {
        kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S", self.os.unix_time() as i64, 0)
    }

    fn table_ref(&self, toks: &[(T, usize)], i: &mut usize) -> Option<(String, String)> {
        let name = word(toks, *i)?;
        *i += 1;
        if matches!(toks.get(*i), Some((T::Sym(s), _)) if s == ".") {
            let t = word(toks, *i + 1)?;
            *i += 2;
            return Some((name, t));
        }
        Some((self.db.clone().unwrap_or_default(), name))
    }

    fn exec(&mut self, sql: &str) -> Res {
        let toks = match lex(sql) {
            Ok(t) => t,
            Err(p) => return syntax_err(&sql[p.min(sql.len())..]),
        };
        let near = |i: usize| -> String { toks.get(i).map(|(_, p)| sql[*p..].chars().take(80).collect()).unwrap_or_default() };
        let kw = |i: usize| kwd(&toks, i);
        let Some(first) = kw(0) else { return Res::Ok(0) };
        let rw = matches!(first.as_str(), "INSERT" | "UPDATE" | "DELETE" | "CREATE" | "DROP" | "ALTER" | "TRUNCATE");
        if rw && self.read_only {
            return Res::Err(1290, "HY000".into(), "The MySQL server is running with the --super-read-only option so it cannot execute this statement".into());
        }
        match first.as_str() {
            "SELECT" => self.select(sql, &toks),
            "SHOW" => match kw(1).as_deref() {
                Some("DATABASES") | Some("SCHEMAS") => Res::Rows(vec![("Database".into(), false)], self.dbs().into_iter().map(|d| vec![Val::Str(d)]).collect()),
                Some("TABLES") => {
                    let db = if kw(2).as_deref() == Some("FROM") || kw(2).as_deref() == Some("IN") { word(&toks, 3) } else { self.db.clone() };
                    let Some(db) = db else { return Res::Err(1046, "3D000".into(), "No database selected".into()) };
                    let mut ts: Vec<String> = self
                        .os
                        .fs_ref()
                        .read_dir(&format!("{DATADIR}/{db}"))
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|e| e.name.strip_suffix(".ibd").map(str::to_string))
                        .collect();
                    ts.sort();
                    Res::Rows(vec![(format!("Tables_in_{db}"), false)], ts.into_iter().map(|t| vec![Val::Str(t)]).collect())
                }
                Some("SLAVE") | Some("REPLICA") => Res::Rows(Vec::new(), Vec::new()),
                Some("MASTER") => Res::Rows(
                    vec![
                        ("File".into(), false),
                        ("Position".into(), true),
                        ("Binlog_Do_DB".into(), false),
                        ("Binlog_Ignore_DB".into(), false),
                        ("Executed_Gtid_Set".into(), false),
                    ],
                    vec![vec![Val::Str("mysql-bin.000003".into()), Val::Int(154), Val::Str(String::new()), Val::Str(String::new()), Val::Str(String::new())]],
                ),
                Some("VARIABLES") | Some("STATUS") | Some("PROCESSLIST") | Some("GRANTS") | Some("WARNINGS") => {
                    Res::Rows(vec![("Variable_name".into(), false), ("Value".into(), false)], Vec::new())
                }
                _ => syntax_err(&near(1)),
            },
            "USE" => {
                let Some(db) = word(&toks, 1) else { return syntax_err("") };
                if !self.dbs().contains(&db) {
                    return Res::Err(1049, "42000".into(), format!("Unknown database '{db}'"));
                }
                self.db = Some(db.clone());
                Res::Use(db)
            }
            "CREATE" => match kw(1).as_deref() {
                Some("DATABASE") | Some("SCHEMA") => {
                    let (ine, at) = if kw(2).as_deref() == Some("IF") { (true, 5) } else { (false, 2) };
                    let Some(db) = word(&toks, at) else { return syntax_err(&near(at)) };
                    if self.dbs().contains(&db) {
                        if ine {
                            return Res::Ok(1);
                        }
                        return Res::Err(1007, "HY000".into(), format!("Can't create database '{db}'; database exists"));
                    }
                    let _ = self.os.fs().mkdir(&format!("{DATADIR}/{db}"), 0o750, true);
                    if vnum(&self.version) < (8, 0, 0) {
                        let _ = self.os.fs().write(
                            &format!("{DATADIR}/{db}/db.opt"),
                            b"default-character-set=latin1\ndefault-collation=latin1_swedish_ci\n",
                            WriteMode::Truncate,
                        );
                    }
                    Res::Ok(1)
                }
                Some("TABLE") => {
                    let (ine, mut i) = if kw(2).as_deref() == Some("IF") { (true, 5) } else { (false, 2) };
                    let Some((db, t)) = self.table_ref(&toks, &mut i) else { return syntax_err(&near(i)) };
                    if db.is_empty() {
                        return Res::Err(1046, "3D000".into(), "No database selected".into());
                    }
                    if !self.dbs().contains(&db) {
                        return Res::Err(1049, "42000".into(), format!("Unknown database '{db}'"));
                    }
                    if self.load(&db, &t).is_some() {
                        if ine {
                            return Res::Ok(0);
                        }
                        return Res::Err(1050, "42S01".into(), format!("Table '{t}' already exists"));
                    }
                    if !matches!(toks.get(i), Some((T::Sym(s), _)) if s == "(") {
                        return syntax_err(&near(i));
                    }
                    i += 1;
                    let mut cols = Vec::new();
                    let mut depth = 0;
                    let mut at_start = true;
                    while i < toks.len() {
                        match &toks[i].0 {
                            T::Sym(s) if s == "(" => depth += 1,
                            T::Sym(s) if s == ")" => {
                                if depth == 0 {
                                    break;
                                }
                                depth -= 1;
                            }
                            T::Sym(s) if s == "," && depth == 0 => at_start = true,
                            T::Word(w) | T::Quoted(w) if at_start => {
                                at_start = false;
                                let up = w.to_ascii_uppercase();
                                if matches!(&toks[i].0, T::Word(_))
                                    && ["PRIMARY", "KEY", "INDEX", "UNIQUE", "CONSTRAINT", "FOREIGN", "CHECK"].contains(&up.as_str())
                                {
                                    i += 1;
                                    continue;
                                }
                                let ty = word(&toks, i + 1).unwrap_or_else(|| "text".into()).to_ascii_lowercase();
                                cols.push((w.clone(), ty));
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    if cols.is_empty() {
                        return Res::Err(1113, "42000".into(), "A table must have at least 1 column".into());
                    }
                    self.store(&db, &t, &Table { cols, rows: Vec::new(), auto: 0 });
                    Res::Ok(0)
                }
                Some("USER") | Some("ROLE") | Some("INDEX") | Some("VIEW") => Res::Ok(0),
                _ => syntax_err(&near(1)),
            },
            "DROP" => match kw(1).as_deref() {
                Some("DATABASE") | Some("SCHEMA") => {
                    let (ie, at) = if kw(2).as_deref() == Some("IF") { (true, 4) } else { (false, 2) };
                    let Some(db) = word(&toks, at) else { return syntax_err(&near(at)) };
                    if !self.dbs().contains(&db) || db == "information_schema" {
                        if ie {
                            return Res::Ok(0);
                        }
                        return Res::Err(1008, "HY000".into(), format!("Can't drop database '{db}'; database doesn't exist"));
                    }
                    let n = self.os.fs_ref().read_dir(&format!("{DATADIR}/{db}")).map(|v| v.iter().filter(|e| e.name.ends_with(".ibd")).count()).unwrap_or(0);
                    let _ = self.os.fs().remove_all(&format!("{DATADIR}/{db}"));
                    if self.db.as_deref() == Some(&db) {
                        self.db = None;
                    }
                    Res::Ok(n as u64)
                }
                Some("TABLE") => {
                    let (ie, mut i) = if kw(2).as_deref() == Some("IF") { (true, 4) } else { (false, 2) };
                    let Some((db, t)) = self.table_ref(&toks, &mut i) else { return syntax_err(&near(i)) };
                    if self.load(&db, &t).is_none() {
                        if ie {
                            return Res::Ok(0);
                        }
                        return Res::Err(1051, "42S02".into(), format!("Unknown table '{db}.{t}'"));
                    }
                    let p = self.table_path(&db, &t);
                    let _ = self.os.fs().remove_file(&p);
                    Res::Ok(0)
                }
                Some("USER") => Res::Ok(0),
                _ => syntax_err(&near(1)),
            },
            "INSERT" | "REPLACE" => {
                let mut i = 1;
                if kw(i).as_deref() == Some("IGNORE") {
                    i += 1;
                }
                if kw(i).as_deref() == Some("INTO") {
                    i += 1;
                }
                let Some((db, t)) = self.table_ref(&toks, &mut i) else { return syntax_err(&near(i)) };
                if db.is_empty() {
                    return Res::Err(1046, "3D000".into(), "No database selected".into());
                }
                let Some(mut tb) = self.load(&db, &t) else { return Res::Err(1146, "42S02".into(), format!("Table '{db}.{t}' doesn't exist")) };
                let mut cols: Vec<usize> = (0..tb.cols.len()).collect();
                if matches!(toks.get(i), Some((T::Sym(s), _)) if s == "(") {
                    cols.clear();
                    i += 1;
                    while i < toks.len() && !matches!(&toks[i].0, T::Sym(s) if s == ")") {
                        if let Some(w) = word(&toks, i) {
                            match tb.cols.iter().position(|(n, _)| n.eq_ignore_ascii_case(&w)) {
                                Some(p) => cols.push(p),
                                None => return Res::Err(1054, "42S22".into(), format!("Unknown column '{w}' in 'field list'")),
                            }
                        }
                        i += 1;
                    }
                    i += 1;
                }
                if !matches!(kw(i).as_deref(), Some("VALUES") | Some("VALUE")) {
                    return syntax_err(&near(i));
                }
                i += 1;
                let mut n = 0;
                while matches!(toks.get(i), Some((T::Sym(s), _)) if s == "(") {
                    i += 1;
                    let mut vals = Vec::new();
                    while i < toks.len() && !matches!(&toks[i].0, T::Sym(s) if s == ")") {
                        if !matches!(&toks[i].0, T::Sym(s) if s == ",") {
                            let neg = matches!(&toks[i].0, T::Sym(s) if s == "-");
                            if neg {
                                i += 1;
                            }
                            let v = literal(self, &toks, i);
                            vals.push(match (neg, v) {
                                (true, Val::Int(x)) => Val::Int(-x),
                                (true, Val::Float(x)) => Val::Float(-x),
                                (_, v) => v,
                            });
                        }
                        i += 1;
                    }
                    i += 1;
                    if vals.len() != cols.len() {
                        return Res::Err(1136, "21S01".into(), format!("Column count doesn't match value count at row {}", n + 1));
                    }
                    let mut row = vec![Val::Null; tb.cols.len()];
                    for (c, v) in cols.iter().zip(vals) {
                        row[*c] = v;
                    }
                    // AUTO_INCREMENT-ish: an integer first column left NULL gets the next id.
                    if row.first() == Some(&Val::Null) && tb.cols.first().is_some_and(|(_, t)| is_int_type(t)) {
                        tb.auto += 1;
                        row[0] = Val::Int(tb.auto);
                    } else if let Some(Val::Int(x)) = row.first() {
                        tb.auto = tb.auto.max(*x);
                    }
                    tb.rows.push(row);
                    n += 1;
                    if matches!(toks.get(i), Some((T::Sym(s), _)) if s == ",") {
                        i += 1;
                    }
                    if tb.rows.len() > 1_000_000 {
                        return Res::Err(1114, "HY000".into(), format!("The table '{t}' is full"));
                    }
                }
                self.store(&db, &t, &tb);
                Res::Ok(n)
            }
            "DELETE" | "UPDATE" => {
                let mut i = if first == "DELETE" { 2 } else { 1 };
                let Some((db, t)) = self.table_ref(&toks, &mut i) else { return syntax_err(&near(i)) };
                let Some(mut tb) = self.load(&db, &t) else { return Res::Err(1146, "42S02".into(), format!("Table '{db}.{t}' doesn't exist")) };
                let mut sets = Vec::new();
                if first == "UPDATE" {
                    if kw(i).as_deref() != Some("SET") {
                        return syntax_err(&near(i));
                    }
                    i += 1;
                    while let Some(c) = word(&toks, i) {
                        let Some(p) = tb.cols.iter().position(|(n, _)| n.eq_ignore_ascii_case(&c)) else {
                            return Res::Err(1054, "42S22".into(), format!("Unknown column '{c}' in 'field list'"));
                        };
                        let v = literal(self, &toks, i + 2);
                        sets.push((p, v));
                        i += 3;
                        if matches!(toks.get(i), Some((T::Sym(s), _)) if s == ",") {
                            i += 1;
                        } else {
                            break;
                        }
                    }
                }
                let cond = if kw(i).as_deref() == Some("WHERE") { parse_where(self, &toks, i + 1, &tb) } else { Ok(Vec::new()) };
                let cond = match cond {
                    Ok(c) => c,
                    Err(e) => return e,
                };
                let mut n = 0;
                if first == "DELETE" {
                    let before = tb.rows.len();
                    tb.rows.retain(|r| !matches_where(r, &cond));
                    n = (before - tb.rows.len()) as u64;
                } else {
                    for r in tb.rows.iter_mut() {
                        if matches_where(r, &cond) {
                            for (p, v) in &sets {
                                r[*p] = v.clone();
                            }
                            n += 1;
                        }
                    }
                }
                self.store(&db, &t, &tb);
                Res::Ok(n)
            }
            "SET" | "GRANT" | "REVOKE" | "FLUSH" | "CHANGE" | "START" | "STOP" | "RESET" | "BEGIN" | "COMMIT" | "ROLLBACK" | "ALTER" | "LOCK" | "UNLOCK"
            | "ANALYZE" | "OPTIMIZE" => Res::Ok(0),
            "TRUNCATE" => {
                let mut i = if kw(1).as_deref() == Some("TABLE") { 2 } else { 1 };
                let Some((db, t)) = self.table_ref(&toks, &mut i) else { return syntax_err(&near(i)) };
                match self.load(&db, &t) {
                    Some(mut tb) => {
                        tb.rows.clear();
                        self.store(&db, &t, &tb);
                        Res::Ok(0)
                    }
                    None => Res::Err(1146, "42S02".into(), format!("Table '{db}.{t}' doesn't exist")),
                }
            }
            "DESCRIBE" | "DESC" | "EXPLAIN" => {
                let mut i = 1;
                let Some((db, t)) = self.table_ref(&toks, &mut i) else { return syntax_err(&near(i)) };
                match self.load(&db, &t) {
                    Some(tb) => Res::Rows(
                        ["Field", "Type", "Null", "Key", "Default", "Extra"].iter().map(|c| (c.to_string(), false)).collect(),
                        tb.cols
                            .iter()
                            .map(|(n, ty)| {
                                vec![
                                    Val::Str(n.clone()),
                                    Val::Str(ty.clone()),
                                    Val::Str("YES".into()),
                                    Val::Str(String::new()),
                                    Val::Null,
                                    Val::Str(String::new()),
                                ]
                            })
                            .collect(),
                    ),
                    None => Res::Err(1146, "42S02".into(), format!("Table '{db}.{t}' doesn't exist")),
                }
            }
            _ => syntax_err(&near(0)),
        }
    }

    fn select(&mut self, sql: &str, toks: &[(T, usize)]) -> Res {
        // Split the select list at top-level commas up to FROM.
        let mut items: Vec<(usize, usize)> = Vec::new();
        let mut i = 1;
        let mut depth = 0;
        let mut st = 1;
        let mut from = None;
        while i < toks.len() {
            match &toks[i].0 {
                T::Sym(s) if s == "(" => depth += 1,
                T::Sym(s) if s == ")" => depth -= 1,
                T::Sym(s) if s == "," && depth == 0 => {
                    items.push((st, i));
                    st = i + 1;
                }
                T::Word(w) if depth == 0 && matches!(w.to_ascii_uppercase().as_str(), "FROM" | "WHERE" | "ORDER" | "LIMIT") => {
                    from = Some(i);
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        items.push((st, i));
        let end_of = |k: usize| toks.get(k).map(|(_, p)| *p).unwrap_or(sql.len());
        let mut table: Option<(String, String, Table)> = None;
        let mut cond = Vec::new();
        let mut order: Option<(usize, bool)> = None;
        let mut limit: Option<usize> = None;
        if let Some(f) = from {
            let mut j = f;
            if kwd(toks, j).as_deref() == Some("FROM") {
                j += 1;
                let Some((db, t)) = self.table_ref(toks, &mut j) else { return syntax_err(&sql[end_of(j).min(sql.len())..]) };
                if db.is_empty() {
                    return Res::Err(1046, "3D000".into(), "No database selected".into());
                }
                let Some(tb) = self.load(&db, &t) else { return Res::Err(1146, "42S02".into(), format!("Table '{db}.{t}' doesn't exist")) };
                table = Some((db, t, tb));
            }
            while j < toks.len() {
                match kwd(toks, j).as_deref() {
                    Some("WHERE") => {
                        let tb = table.as_ref().map(|x| &x.2);
                        let Some(tb) = tb else { return syntax_err("WHERE") };
                        match parse_where(self, toks, j + 1, tb) {
                            Ok(c) => cond = c,
                            Err(e) => return e,
                        }
                        j += 1;
                        while j < toks.len() && !matches!(kwd(toks, j).as_deref(), Some("ORDER") | Some("LIMIT")) {
                            j += 1;
                        }
                    }
                    Some("ORDER") => {
                        let c = word(toks, j + 2).unwrap_or_default();
                        let desc = kwd(toks, j + 3).as_deref() == Some("DESC");
                        if let Some((_, _, tb)) = &table {
                            order = tb.cols.iter().position(|(n, _)| n.eq_ignore_ascii_case(&c)).map(|p| (p, desc));
                        }
                        j += if matches!(kwd(toks, j + 3).as_deref(), Some("DESC") | Some("ASC")) { 4 } else { 3 };
                    }
                    Some("LIMIT") => {
                        limit = match toks.get(j + 1) {
                            Some((T::Num(n), _)) => n.parse().ok(),
                            _ => None,
                        };
                        j += 2;
                    }
                    _ => j += 1,
                }
            }
        }
        let mut cols: Vec<(String, bool)> = Vec::new();
        enum Item {
            Star,
            Col(usize),
            Count,
            Expr(Val),
        }
        let mut sel = Vec::new();
        for (a, b) in &items {
            if *a >= *b {
                return syntax_err(&sql[end_of(*a).min(sql.len())..]);
            }
            let text = sql[end_of(*a)..end_of(*b).min(sql.len())].trim().to_string();
            let (expr_end, alias) = if *b >= *a + 2 && kwd(toks, *b - 2).as_deref() == Some("AS") { (*b - 2, word(toks, *b - 1)) } else { (*b, None) };
            let head = alias.clone().unwrap_or_else(|| if expr_end < *b { sql[end_of(*a)..end_of(expr_end)].trim().to_string() } else { text.clone() });
            let t0 = &toks[*a].0;
            if matches!(t0, T::Sym(s) if s == "*") {
                let Some((_, _, tb)) = &table else { return Res::Err(1096, "HY000".into(), "No tables used".into()) };
                for (n, ty) in &tb.cols {
                    cols.push((n.clone(), is_int_type(ty)));
                }
                sel.push(Item::Star);
                continue;
            }
            if kwd(toks, *a).as_deref() == Some("COUNT") {
                cols.push((head, true));
                sel.push(Item::Count);
                continue;
            }
            if let (Some((_, _, tb)), Some(w)) = (&table, word(toks, *a)) {
                if expr_end == *a + 1 {
                    if let Some(p) = tb.cols.iter().position(|(n, _)| n.eq_ignore_ascii_case(&w)) {
                        cols.push((alias.clone().unwrap_or_else(|| tb.cols[p].0.clone()), is_int_type(&tb.cols[p].1)));
                        sel.push(Item::Col(p));
                        continue;
                    }
                }
            }
            match self.expr(toks, *a, expr_end) {
                Ok(v) => {
                    cols.push((head, matches!(v, Val::Int(_) | Val::Float(_))));
                    sel.push(Item::Expr(v));
                }
                Err(e) => return e,
            }
        }
        let rows: Vec<Vec<Val>> = match &table {
            None => vec![sel.iter().map(|s| if let Item::Expr(v) = s { v.clone() } else { Val::Null }).collect()],
            Some((_, _, tb)) => {
                let mut rs: Vec<&Vec<Val>> = tb.rows.iter().filter(|r| matches_where(r, &cond)).collect();
                if let Some((p, desc)) = order {
                    rs.sort_by(|a, b| {
                        let o = match (a[p].num(), b[p].num()) {
                            (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal),
                            _ => a[p].text().cmp(&b[p].text()),
                        };
                        if desc {
                            o.reverse()
                        } else {
                            o
                        }
                    });
                }
                if sel.iter().any(|s| matches!(s, Item::Count)) {
                    vec![sel.iter().map(|s| if let Item::Expr(v) = s { v.clone() } else { Val::Int(rs.len() as i64) }).collect()]
                } else {
                    rs.into_iter()
                        .take(limit.unwrap_or(usize::MAX))
                        .map(|r| {
                            let mut out = Vec::new();
                            for s in &sel {
                                match s {
                                    Item::Star => out.extend(r.iter().cloned()),
                                    Item::Col(p) => out.push(r.get(*p).cloned().unwrap_or(Val::Null)),
                                    Item::Expr(v) => out.push(v.clone()),
                                    Item::Count => {}
                                }
                            }
                            out
                        })
                        .collect()
                }
            }
        };
        Res::Rows(cols, rows)
    }

    fn expr(&mut self, toks: &[(T, usize)], a: usize, b: usize) -> Result<Val, Res> {
        // term (op term)*
        let mut i = a;
        let mut acc = self.term(toks, &mut i, b)?;
        while i < b {
            let op = match &toks[i].0 {
                T::Sym(s) if ["+", "-", "*", "/"].contains(&s.as_str()) => s.clone(),
                _ => return Err(syntax_err(&tok_text(&toks[i].0))),
            };
            i += 1;
            let r = self.term(toks, &mut i, b)?;
            let (x, y) = (acc.num().unwrap_or(0.0), r.num().unwrap_or(0.0));
            acc = match op.as_str() {
                "+" | "-" | "*" if matches!((&acc, &r), (Val::Int(_), Val::Int(_))) => {
                    let (x, y) = (x as i64, y as i64);
                    Val::Int(match op.as_str() {
                        "+" => x.wrapping_add(y),
                        "-" => x.wrapping_sub(y),
                        _ => x.wrapping_mul(y),
                    })
                }
                "+" => Val::Float(x + y),
                "-" => Val::Float(x - y),
                "*" => Val::Float(x * y),
                _ => {
                    if y == 0.0 {
                        Val::Null
                    } else {
                        Val::Str(format!("{:.4}", x / y))
                    }
                }
            };
        }
        Ok(acc)
    }

    fn term(&mut self, toks: &[(T, usize)], i: &mut usize, b: usize) -> Result<Val, Res> {
        let Some((t, _)) = toks.get(*i) else { return Err(syntax_err("")) };
        *i += 1;
        Ok(match t {
            T::Num(n) => {
                if n.contains('.') {
                    Val::Str(n.clone())
                } else {
                    Val::Int(n.parse().unwrap_or(i64::MAX))
                }
            }
            T::Str(s) => Val::Str(s.clone()),
            T::Sym(s) if s == "-" => match self.term(toks, i, b)? {
                Val::Int(x) => Val::Int(-x),
                v => Val::Float(-v.num().unwrap_or(0.0)),
            },
            T::Sym(s) if s == "(" => {
                let st = *i;
                let mut d = 0;
                while *i < b {
                    match &toks[*i].0 {
                        T::Sym(s) if s == "(" => d += 1,
                        T::Sym(s) if s == ")" => {
                            if d == 0 {
                                break;
                            }
                            d -= 1;
                        }
                        _ => {}
                    }
                    *i += 1;
                }
                let v = self.expr(toks, st, *i)?;
                *i += 1;
                v
            }
            T::Var(v) => {
                let name = v.trim_start_matches('@').trim_start_matches("global.").trim_start_matches("session.").to_ascii_lowercase();
                match name.as_str() {
                    "server_id" => Val::Int(self.server_id as i64),
                    "hostname" => Val::Str(self.os.hostname()),
                    "version" => Val::Str(self.version.clone()),
                    "port" => Val::Int(3306),
                    "read_only" | "super_read_only" => Val::Int(self.read_only as i64),
                    "datadir" => Val::Str(format!("{DATADIR}/")),
                    "version_comment" => {
                        Val::Str(if vnum(&self.version) >= (8, 0, 0) { "MySQL Community Server - GPL".into() } else { "MySQL Community Server (GPL)".into() })
                    }
                    "autocommit" => Val::Int(1),
                    "max_connections" => Val::Int(151),
                    _ => return Err(Res::Err(1193, "HY000".into(), format!("Unknown system variable '{name}'"))),
                }
            }
            T::Word(w) => {
                let up = w.to_ascii_uppercase();
                let call = matches!(toks.get(*i), Some((T::Sym(s), _)) if s == "(");
                if call {
                    // Skip the argument list.
                    let mut d = 0;
                    while *i < b {
                        match &toks[*i].0 {
                            T::Sym(s) if s == "(" => d += 1,
                            T::Sym(s) if s == ")" => {
                                d -= 1;
                                if d == 0 {
                                    *i += 1;
                                    break;
                                }
                            }
                            _ => {}
                        }
                        *i += 1;
                    }
                }
                match up.as_str() {
                    "NOW" | "SYSDATE" | "CURRENT_TIMESTAMP" | "LOCALTIME" => Val::Str(self.now()),
                    "CURDATE" | "CURRENT_DATE" => Val::Str(self.now()[..10].to_string()),
                    "CURTIME" | "CURRENT_TIME" => Val::Str(self.now()[11..].to_string()),
                    "UNIX_TIMESTAMP" => Val::Int(self.os.unix_time() as i64),
                    "VERSION" => Val::Str(self.version.clone()),
                    "DATABASE" | "SCHEMA" => self.db.clone().map(Val::Str).unwrap_or(Val::Null),
                    "USER" | "CURRENT_USER" | "SESSION_USER" | "SYSTEM_USER" => {
                        Val::Str(format!("{}@{}", self.user, if up == "CURRENT_USER" { "%".to_string() } else { self.host.clone() }))
                    }
                    "CONNECTION_ID" => Val::Int(2),
                    "NULL" => Val::Null,
                    "TRUE" => Val::Int(1),
                    "FALSE" => Val::Int(0),
                    "UUID" => Val::Str("b0c3a4a8-2f1e-11f1-9c1a-0242ac110002".into()),
                    "RAND" => Val::Str(format!("{}", (self.os.random_u64() >> 11) as f64 / (1u64 << 53) as f64)),
                    _ if call => return Err(Res::Err(1305, "42000".into(), format!("FUNCTION {}.{w} does not exist", self.db.clone().unwrap_or_default()))),
                    _ => return Err(Res::Err(1054, "42S22".into(), format!("Unknown column '{w}' in 'field list'"))),
                }
            }
            other => return Err(syntax_err(&tok_text(other))),
        })
    }
}

fn tok_text(t: &T) -> String {
    match t {
        T::Word(w) | T::Num(w) | T::Var(w) | T::Sym(w) => w.clone(),
        T::Quoted(w) => format!("`{w}`"),
        T::Str(s) => format!("'{s}'"),
    }
}

fn kwd(toks: &[(T, usize)], i: usize) -> Option<String> {
    match toks.get(i) {
        Some((T::Word(w), _)) => Some(w.to_ascii_uppercase()),
        _ => None,
    }
}

fn word(toks: &[(T, usize)], i: usize) -> Option<String> {
    match toks.get(i) {
        Some((T::Word(w), _)) | Some((T::Quoted(w), _)) => Some(w.clone()),
        Some((T::Str(w), _)) => Some(w.clone()),
        _ => None,
    }
}

fn literal(s: &mut Session, toks: &[(T, usize)], i: usize) -> Val {
    match toks.get(i) {
        Some((T::Num(n), _)) => {
            if n.contains('.') {
                Val::Float(n.parse().unwrap_or(0.0))
            } else {
                Val::Int(n.parse().unwrap_or(0))
            }
        }
        Some((T::Str(x), _)) => Val::Str(x.clone()),
        Some((T::Word(w), _)) if w.eq_ignore_ascii_case("NULL") || w.eq_ignore_ascii_case("DEFAULT") => Val::Null,
        Some((T::Word(w), _)) if w.eq_ignore_ascii_case("NOW") => Val::Str(s.now()),
        Some((T::Word(w), _)) => Val::Str(w.clone()),
        _ => Val::Null,
    }
}

type Cond = Vec<(bool, usize, String, Val)>;

fn parse_where(s: &mut Session, toks: &[(T, usize)], mut i: usize, tb: &Table) -> Result<Cond, Res> {
    let mut out = Vec::new();
    let mut or = false;
    while let Some(c) = word(toks, i) {
        let Some(p) = tb.cols.iter().position(|(n, _)| n.eq_ignore_ascii_case(&c)) else {
            return Err(Res::Err(1054, "42S22".into(), format!("Unknown column '{c}' in 'where clause'")));
        };
        let op = match toks.get(i + 1) {
            Some((T::Sym(o), _)) => o.clone(),
            Some((T::Word(w), _)) => w.to_ascii_uppercase(),
            _ => return Err(syntax_err("")),
        };
        let v = literal(s, toks, i + 2);
        out.push((or, p, op, v));
        i += 3;
        match kwd(toks, i).as_deref() {
            Some("AND") => or = false,
            Some("OR") => or = true,
            _ => break,
        }
        i += 1;
    }
    Ok(out)
}

fn matches_where(r: &[Val], cond: &Cond) -> bool {
    let mut acc: Option<bool> = None;
    for (or, p, op, v) in cond {
        let x = r.get(*p).cloned().unwrap_or(Val::Null);
        let ord = match (x.num(), v.num()) {
            (Some(a), Some(b)) if !matches!(x, Val::Str(_)) || !matches!(v, Val::Str(_)) => a.partial_cmp(&b),
            _ => x.text().map(|a| a.to_lowercase()).partial_cmp(&v.text().map(|b| b.to_lowercase())),
        };
        let m = match op.as_str() {
            "=" => ord == Some(std::cmp::Ordering::Equal),
            "!=" | "<>" => ord != Some(std::cmp::Ordering::Equal),
            "<" => ord == Some(std::cmp::Ordering::Less),
            ">" => ord == Some(std::cmp::Ordering::Greater),
            "<=" => ord != Some(std::cmp::Ordering::Greater),
            ">=" => ord != Some(std::cmp::Ordering::Less),
            "LIKE" => kubesim_os::pattern::matches(
                &v.text().unwrap_or_default().replace('%', "*").replace('_', "?").to_lowercase(),
                &x.text().unwrap_or_default().to_lowercase(),
            ),
            "IS" => x == Val::Null,
            _ => false,
        };
        acc = Some(match acc {
            None => m,
            Some(a) if *or => a || m,
            Some(a) => a && m,
        });
    }
    acc.unwrap_or(true)
}

// ---------------------------------------------------------------------------------------------
// Server configuration from my.cnf files.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Cnf {
    server_id: Option<u64>,
    skip_networking: bool,
    port: u16,
    read_only: bool,
    log_bin: bool,
}

fn read_cnf(os: &mut dyn Os) -> Cnf {
    let mut c = Cnf { port: 3306, ..Cnf::default() };
    let mut files = vec!["/etc/my.cnf".to_string(), "/etc/mysql/my.cnf".to_string()];
    for d in ["/etc/mysql/conf.d", "/etc/mysql/mysql.conf.d", "/etc/my.cnf.d"] {
        let mut v: Vec<String> =
            os.fs_ref().read_dir(d).unwrap_or_default().into_iter().filter(|e| e.name.ends_with(".cnf")).map(|e| format!("{d}/{}", e.name)).collect();
        v.sort();
        files.extend(v);
    }
    for f in files {
        let Some(b) = common::read_file(os, &f, 1 << 20) else { continue };
        let mut section = String::new();
        for l in String::from_utf8_lossy(&b).lines() {
            let l = l.trim();
            if l.starts_with('#') || l.starts_with(';') || l.is_empty() {
                continue;
            }
            if l.starts_with('[') {
                section = l.trim_matches(|c| c == '[' || c == ']').to_string();
                continue;
            }
            if section != "mysqld" && section != "server" {
                continue;
            }
            let (k, v) = l.split_once('=').map(|(a, b)| (a.trim(), b.trim())).unwrap_or((l, ""));
            match k.replace('_', "-").as_str() {
                "server-id" => c.server_id = v.parse().ok(),
                "skip-networking" => c.skip_networking = v.is_empty() || v == "1" || v == "ON",
                "port" => c.port = v.parse().unwrap_or(3306),
                "super-read-only" | "read-only" => c.read_only = v.is_empty() || v == "1" || v.eq_ignore_ascii_case("ON"),
                "log-bin" => c.log_bin = true,
                _ => {}
            }
        }
    }
    c
}

// ---------------------------------------------------------------------------------------------
// mysqld

#[derive(Clone, Debug, PartialEq, Eq)]
enum SPhase {
    Start,
    Booting(u64),
    Serving,
    Done,
}

/// `mysqld`.
#[derive(Clone, Debug)]
pub struct Mysqld {
    spawn: Spawn,
    version: String,
    phase: SPhase,
    cnf: Cnf,
    skip_networking: bool,
    cpu: CpuQueue,
    conns: u64,
    init_only: bool,
    quiet: bool,
}

fn ts(os: &dyn Os, v: &str) -> String {
    let ms = os.unix_time_ms();
    if vnum(v) < (5, 7, 0) {
        kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S", (ms / 1000) as i64, 0)
    } else {
        format!("{}.{:03}{:03}Z", kubesim_os::time::strftime("%Y-%m-%dT%H:%M:%S", (ms / 1000) as i64, 0), ms % 1000, (ms * 7) % 1000)
    }
}

impl Mysqld {
    /// From a spawn (`mysqld [--skip-networking] [--initialize-insecure]`).
    pub fn new(spawn: &Spawn) -> Mysqld {
        let skip = spawn.argv.iter().any(|a| a == "--skip-networking");
        let init_only = spawn.argv.iter().any(|a| a == "--initialize-insecure" || a == "--initialize");
        Mysqld {
            spawn: spawn.clone(),
            version: version_of(spawn),
            phase: SPhase::Start,
            cnf: Cnf::default(),
            skip_networking: skip,
            cpu: CpuQueue::default(),
            conns: 0,
            init_only,
            quiet: false,
        }
    }

    fn log(&self, os: &mut dyn Os, level: &str, code: &str, sub: &str, msg: &str) {
        let t = ts(os, &self.version);
        let v = vnum(&self.version);
        let line = if v >= (8, 0, 0) {
            format!("{t} 0 [{level}] [{code}] [{sub}] {msg}\n")
        } else if v >= (5, 7, 0) {
            format!("{t} 0 [{}] {msg}\n", if level == "System" { "Note" } else { level })
        } else {
            format!("{t} 1 [{}] {msg}\n", if level == "System" { "Note" } else { level })
        };
        common::err(os, &line);
    }

    fn boot_logs(&self, os: &mut dyn Os) {
        let v = vnum(&self.version);
        let pid = os.pid();
        if v >= (8, 0, 0) {
            self.log(os, "System", "MY-010116", "Server", &format!("/usr/sbin/mysqld (mysqld {}) starting as process {pid}", self.version));
            self.log(os, "System", "MY-013576", "InnoDB", "InnoDB initialization has started.");
            self.log(os, "System", "MY-013577", "InnoDB", "InnoDB initialization has ended.");
        } else {
            // 5.6 and 5.7 open the same way.
            self.log(os, "Warning", "", "", "TIMESTAMP with implicit DEFAULT value is deprecated. Please use --explicit_defaults_for_timestamp server option (see documentation for more details).");
            self.log(os, "Note", "", "", &format!("mysqld (mysqld {}) starting as process {pid} ...", self.version));
            for m in [
                "InnoDB: Mutexes and rw_locks use GCC atomic builtins",
                "InnoDB: Using Linux native AIO",
                "InnoDB: Initializing buffer pool, total size = 128M, instances = 1, chunk size = 128M",
                "InnoDB: Completed initialization of buffer pool",
                "InnoDB: Highest supported file format is Barracuda.",
                "InnoDB: 96 redo rollback segment(s) found. 96 redo rollback segment(s) are active.",
                "InnoDB: Waiting for purge to start",
                "InnoDB: 5.7.44 started; log sequence number 12219475",
            ] {
                let m = m.replace("5.7.44", &self.version);
                self.log(os, "Note", "", "", &m);
            }
        }
    }

    fn ready_logs(&self, os: &mut dyn Os) {
        let v = vnum(&self.version);
        let port = if self.skip_networking { 0 } else { self.cnf.port };
        if v >= (8, 0, 0) {
            self.log(os, "Warning", "MY-010068", "Server", "CA certificate ca.pem is self signed.");
            self.log(
                os,
                "System",
                "MY-013602",
                "Server",
                "Channel mysql_main configured to support TLS. Encrypted connections are now supported for this channel.",
            );
            self.log(os, "Warning", "MY-011810", "Server", "Insecure configuration for --pid-file: Location '/var/run/mysqld' in the path is accessible to all OS users. Consider choosing a different directory.");
            if !self.skip_networking {
                self.log(
                    os,
                    "System",
                    "MY-011323",
                    "Server",
                    "X Plugin ready for connections. Bind-address: '::' port: 33060, socket: /var/run/mysqld/mysqlx.sock",
                );
            }
            self.log(os, "System", "MY-010931", "Server", &format!("/usr/sbin/mysqld: ready for connections. Version: '{}'  socket: '/var/run/mysqld/mysqld.sock'  port: {port}  MySQL Community Server - GPL.", self.version));
        } else {
            if !self.skip_networking {
                self.log(os, "Note", "", "", &format!("Server hostname (bind-address): '*'; port: {port}"));
                self.log(os, "Note", "", "", "IPv6 is available.");
                self.log(os, "Note", "", "", "  - '::' resolves to '::';");
                self.log(os, "Note", "", "", "Server socket created on IP: '::'.");
            }
            if v >= (5, 7, 0) {
                self.log(os, "Note", "", "", "Event Scheduler: Loaded 0 events");
            }
            self.log(os, "Note", "", "", "mysqld: ready for connections.");
            common::err(os, &format!("Version: '{}'  socket: '/var/run/mysqld/mysqld.sock'  port: {port}  MySQL Community Server (GPL)\n", self.version));
        }
    }

    fn shutdown_logs(&self, os: &mut dyn Os) {
        let v = vnum(&self.version);
        if v >= (8, 0, 0) {
            self.log(
                os,
                "System",
                "MY-013172",
                "Server",
                &format!("Received SHUTDOWN from user <via user signal>. Shutting down mysqld (Version: {}).", self.version),
            );
            self.log(
                os,
                "System",
                "MY-010910",
                "Server",
                &format!("/usr/sbin/mysqld: Shutdown complete (mysqld {})  MySQL Community Server - GPL.", self.version),
            );
        } else {
            self.log(os, "Note", "", "", "Giving 0 client threads a chance to die gracefully");
            self.log(os, "Note", "", "", "Shutting down slave threads");
            self.log(os, "Note", "", "", "Forcefully disconnecting 0 remaining clients");
            self.log(os, "Note", "", "", "Binlog end");
            self.log(os, "Note", "", "", "InnoDB: Starting shutdown...");
            self.log(os, "Note", "", "", "InnoDB: Shutdown completed; log sequence number 12219494");
            self.log(os, "Note", "", "", "mysqld: Shutdown complete\n");
        }
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        if self.spawn.argv.iter().any(|a| a == "--version" || a == "-V") {
            common::out(os, &format!("/usr/sbin/mysqld  Ver {} for Linux on x86_64 (MySQL Community Server - GPL)\n", self.version));
            self.phase = SPhase::Done;
            return Step::Exit(0);
        }
        self.cnf = read_cnf(os);
        self.skip_networking |= self.cnf.skip_networking;
        if self.init_only {
            initialize(os, &self.version, "");
            self.phase = SPhase::Done;
            return Step::Compute { cpu_ms: 2_500, threads: 1 };
        }
        if os.fs_ref().stat(&format!("{DATADIR}/mysql")).is_err() {
            self.boot_logs(os);
            let t = ts(os, &self.version);
            if vnum(&self.version) >= (8, 0, 0) {
                common::err(os, &format!("{t} 0 [ERROR] [MY-010735] [Server] Can't open the mysql.plugin table. Please run mysql_upgrade to create it.\n{t} 0 [ERROR] [MY-010119] [Server] Aborting\n"));
            } else {
                common::err(
                    os,
                    &format!("{t} 0 [ERROR] Fatal error: Can't open and lock privilege tables: Table 'mysql.user' doesn't exist\n{t} 0 [ERROR] Aborting\n\n"),
                );
            }
            self.phase = SPhase::Done;
            return Step::Exit(1);
        }
        self.boot_logs(os);
        // InnoDB start-up and recovery take about a second of CPU.
        let until = os.now_ms() + 1_200;
        self.phase = SPhase::Booting(until);
        Step::Compute { cpu_ms: 900, threads: 1 }
    }

    fn session_exec(&mut self, os: &mut dyn Os, user: &str, host: &str, db: Option<String>, sql: &str, out: &mut String) {
        let server_id = self.cnf.server_id.unwrap_or(if vnum(&self.version) >= (8, 0, 0) { 1 } else { 0 });
        let mut s = Session { os, db, user: user.to_string(), host: host.to_string(), version: self.version.clone(), server_id, read_only: self.cnf.read_only };
        for st in split_statements(sql).into_iter().take(10_000) {
            self.cpu.charge_us(250);
            match s.exec(&st) {
                Res::Ok(n) => out.push_str(&format!("K {n}\n")),
                Res::Use(d) => out.push_str(&format!("U {}\n", esc(&d))),
                Res::Err(c, state, m) => {
                    out.push_str(&format!("E {c} {state} {}\n", esc(&m)));
                    return;
                }
                Res::Rows(cols, rows) => {
                    out.push_str(&format!("R {} {}\n", cols.len(), rows.len()));
                    for (n, num) in &cols {
                        out.push_str(&format!("{}\t{}\n", esc(n), if *num { "n" } else { "s" }));
                    }
                    for r in rows {
                        out.push_str(&r.iter().map(|v| v.text().map(|t| esc(&t)).unwrap_or_else(|| "\\N".into())).collect::<Vec<_>>().join("\t"));
                        out.push('\n');
                    }
                }
            }
        }
    }
}

/// Creates a fresh data directory (what `mysqld --initialize-insecure` leaves).
fn initialize(os: &mut dyn Os, version: &str, root_password: &str) {
    let fs = os.fs();
    for d in ["mysql", "performance_schema", "sys"] {
        if d == "sys" && vnum(version) < (5, 7, 0) {
            continue;
        }
        let _ = fs.mkdir(&format!("{DATADIR}/{d}"), 0o750, true);
    }
    let _ = fs.write(&format!("{DATADIR}/auto.cnf"), b"[auto]\nserver-uuid=5c3a8f4e-2f1e-11f1-9c1a-0242ac110002\n", WriteMode::Truncate);
    let _ = fs.write(&format!("{DATADIR}/ibdata1"), b"kubesim: InnoDB system tablespace placeholder\n", WriteMode::Truncate);
    let _ = fs.write(&format!("{DATADIR}/ib_logfile0"), b"", WriteMode::Truncate);
    let users = format!("root\t%\t{}\n", esc(root_password));
    let _ = fs.write(&format!("{DATADIR}/mysql/user.kubesim"), users.as_bytes(), WriteMode::Truncate);
}

fn users(os: &mut dyn Os) -> Vec<(String, String)> {
    let t = common::read_file(os, &format!("{DATADIR}/mysql/user.kubesim"), 1 << 20).unwrap_or_default();
    String::from_utf8_lossy(&t)
        .lines()
        .filter_map(|l| {
            let mut p = l.split('\t');
            let u = p.next()?.to_string();
            let _h = p.next()?;
            Some((u, unesc(p.next().unwrap_or(""))))
        })
        .collect()
}

/// MySQL's initial handshake packet (what a non-kubesim client sees).
fn greeting(version: &str) -> Vec<u8> {
    let mut payload = vec![10u8];
    payload.extend_from_slice(version.as_bytes());
    payload.push(0);
    payload.extend_from_slice(&[2, 0, 0, 0]);
    payload.extend_from_slice(b"kubesim\0");
    let mut p = vec![payload.len() as u8, 0, 0, 0];
    p.extend(payload);
    p
}

impl Program for Mysqld {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match (self.phase.clone(), wake) {
            (SPhase::Start, _) => self.start(os),
            (SPhase::Done, _) => Step::Exit(0),
            (_, Wake::Signal(Signal::Kill)) => Step::Exit(137),
            (_, Wake::Signal(Signal::Term | Signal::Int | Signal::Quit)) => {
                self.shutdown_logs(os);
                self.phase = SPhase::Done;
                Step::Exit(0)
            }
            (SPhase::Booting(t), _) => {
                if os.now_ms() < t {
                    return Step::Sleep(t - os.now_ms());
                }
                if !self.quiet {
                    self.ready_logs(os);
                }
                self.phase = SPhase::Serving;
                common::idle(&mut self.cpu, os.now_ms(), None)
            }
            (SPhase::Serving, _) => common::idle(&mut self.cpu, os.now_ms(), None),
        }
    }

    fn memory_bytes(&self) -> u64 {
        let v = vnum(&self.version);
        let base = if v >= (8, 0, 0) {
            365_000_000
        } else if v >= (5, 7, 0) {
            205_000_000
        } else {
            460_000_000
        };
        match self.phase {
            SPhase::Serving => base,
            SPhase::Booting(_) => base / 2,
            _ => 20_000_000,
        }
    }

    fn listening(&self) -> Vec<(u16, bool)> {
        if self.phase == SPhase::Serving && !self.skip_networking {
            let mut v = vec![(self.cnf.port, false)];
            if vnum(&self.version) >= (8, 0, 0) {
                v.push((33060, false));
            }
            v
        } else {
            Vec::new()
        }
    }

    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        if !self.listening().contains(&(conn.port, false)) || conn.udp {
            return None;
        }
        self.conns += 1;
        let data = String::from_utf8_lossy(&conn.data[..conn.data.len().min(common::MAX_REQUEST)]).into_owned();
        let Some(rest) = data.strip_prefix(MAGIC) else { return Some(Outgoing::Reply(greeting(&self.version))) };
        let (head, sql) = rest.split_once("\n\n").unwrap_or((rest, ""));
        let mut user = "root".to_string();
        let mut pass: Option<String> = None;
        let mut db = None;
        for l in head.lines() {
            if let Some((k, v)) = l.split_once(": ") {
                match k {
                    "user" => user = v.to_string(),
                    "password" => pass = Some(unesc(v)),
                    "database" if !v.is_empty() => db = Some(v.to_string()),
                    _ => {}
                }
            }
        }
        let host = if conn.src == "127.0.0.1" { "localhost".to_string() } else { conn.src.clone() };
        let us = users(os);
        let ok = match us.iter().find(|(u, _)| *u == user) {
            Some((_, p)) => p == pass.as_deref().unwrap_or(""),
            None => false,
        };
        if !ok {
            let m = format!(
                "Access denied for user '{user}'@'{host}' (using password: {})",
                if pass.as_deref().is_some_and(|p| !p.is_empty()) { "YES" } else { "NO" }
            );
            return Some(Outgoing::Reply(format!("{MAGIC} DENIED 1045 28000 {}\n", esc(&m)).into_bytes()));
        }
        if let Some(d) = &db {
            if os.fs_ref().stat(&format!("{DATADIR}/{d}")).is_err() {
                return Some(Outgoing::Reply(format!("{MAGIC} DENIED 1049 42000 {}\n", esc(&format!("Unknown database '{d}'"))).into_bytes()));
            }
        }
        let mut out = format!("{MAGIC} OK {} {}\n", self.conns + 1, self.version);
        self.session_exec(os, &user, &host, db, sql, &mut out);
        Some(Outgoing::Reply(out.into_bytes()))
    }
}

// ---------------------------------------------------------------------------------------------
// The entrypoint.

#[derive(Clone, Debug, PartialEq, Eq)]
enum EPhase {
    Start,
    /// Initialising; the step list plays out.
    Init(usize),
    Exec,
    Done,
}

/// The official image's `docker-entrypoint.sh` (`mysql-entrypoint`).
#[derive(Clone, Debug)]
pub struct MysqlEntrypoint {
    spawn: Spawn,
    version: String,
    phase: EPhase,
    inner: Option<Box<dyn Program>>,
    script: Vec<(u64, String, String)>,
}

impl MysqlEntrypoint {
    /// From a spawn (`docker-entrypoint.sh mysqld`).
    pub fn new(spawn: &Spawn) -> MysqlEntrypoint {
        MysqlEntrypoint { spawn: spawn.clone(), version: version_of(spawn), phase: EPhase::Start, inner: None, script: Vec::new() }
    }

    fn note(os: &dyn Os, msg: &str) -> String {
        let t = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S+00:00", os.unix_time() as i64, 0);
        format!("{t} [Note] [Entrypoint]: {msg}\n")
    }

    fn exec_server(&mut self, os: &mut dyn Os) -> Step {
        let argv: Vec<String> = self.spawn.argv.iter().skip(1).cloned().collect();
        let argv = if argv.first().is_some_and(|a| a.starts_with('-')) { std::iter::once("mysqld".to_string()).chain(argv).collect() } else { argv };
        self.phase = EPhase::Exec;
        match common::exec(os, &argv, &self.spawn.env, &self.spawn.cwd) {
            Ok(mut p) => {
                let s = p.resume(os, Wake::Start);
                self.inner = Some(p);
                s
            }
            Err(e) => {
                common::err(os, &format!("/usr/local/bin/docker-entrypoint.sh: line 432: exec: {}: not found\n", e.name));
                self.phase = EPhase::Done;
                Step::Exit(127)
            }
        }
    }

    fn start(&mut self, os: &mut dyn Os) -> Step {
        let full = self.spawn.env.get("MYSQL_VERSION").cloned().unwrap_or_else(|| self.version.clone());
        let is_mysqld = self.spawn.argv.get(1).is_some_and(|a| a == "mysqld" || a.starts_with('-'));
        if !is_mysqld {
            return self.exec_server(os);
        }
        let started = Self::note(os, &format!("Entrypoint script for MySQL Server {full} started."));
        common::out(os, &started);
        if os.creds().uid == 0 {
            let n = Self::note(os, "Switching to dedicated user 'mysql'");
            common::out(os, &n);
            common::out(os, &started);
        }
        if os.fs_ref().stat(&format!("{DATADIR}/mysql")).is_ok() {
            return self.exec_server(os);
        }
        let env = |k: &str| self.spawn.env.get(k).filter(|v| !v.is_empty()).cloned();
        let root_pw = env("MYSQL_ROOT_PASSWORD");
        let empty = env("MYSQL_ALLOW_EMPTY_PASSWORD");
        let random = env("MYSQL_RANDOM_ROOT_PASSWORD");
        if root_pw.is_none() && empty.is_none() && random.is_none() {
            let t = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S+00:00", os.unix_time() as i64, 0);
            common::err(os, &format!("{t} [ERROR] [Entrypoint]: Database is uninitialized and password option is not specified\n    You need to specify one of the following as an environment variable:\n    - MYSQL_ROOT_PASSWORD\n    - MYSQL_ALLOW_EMPTY_PASSWORD\n    - MYSQL_RANDOM_ROOT_PASSWORD\n"));
            self.phase = EPhase::Done;
            return Step::Exit(1);
        }
        // The initialisation plays as a script of (delay before, stdout, stderr) lines.
        let v = vnum(&self.version);
        let mut s: Vec<(u64, String, String)> = vec![
            (0, "Initializing database files".into(), String::new()),
            (3_000, "Database files initialized".into(), String::new()),
            (0, "Starting temporary server".into(), String::new()),
            (0, "Waiting for server startup".into(), String::new()),
            (1_500, "Temporary server started.".into(), String::new()),
        ];
        if v >= (8, 0, 0) {
            s.push((0, "@'/var/lib/mysql/mysql.sock' -> '/var/run/mysqld/mysqld.sock'".into(), String::new()));
        }
        s.push((1_000, String::new(), "Warning: Unable to load '/usr/share/zoneinfo/iso3166.tab' as time zone. Skipping it.\nWarning: Unable to load '/usr/share/zoneinfo/leap-seconds.list' as time zone. Skipping it.\nWarning: Unable to load '/usr/share/zoneinfo/zone.tab' as time zone. Skipping it.\nWarning: Unable to load '/usr/share/zoneinfo/zone1970.tab' as time zone. Skipping it.\n".into()));
        if let Some(pw) = random.as_ref().map(|_| "Aesh7ahphaiv5ahg2ohd0Yie".to_string()) {
            s.push((0, format!("GENERATED ROOT PASSWORD: {pw}"), String::new()));
        }
        if let Some(db) = env("MYSQL_DATABASE") {
            s.push((0, format!("Creating database {db}"), String::new()));
        }
        if let Some(u) = env("MYSQL_USER") {
            s.push((0, format!("Creating user {u}"), String::new()));
            if env("MYSQL_DATABASE").is_some() {
                s.push((0, format!("Giving user {u} access to schema {}", env("MYSQL_DATABASE").unwrap_or_default()), String::new()));
            }
        }
        s.push((0, String::new(), String::new()));
        s.push((0, "Stopping temporary server".into(), String::new()));
        s.push((1_500, "Temporary server stopped".into(), String::new()));
        s.push((0, "\n".into(), String::new()));
        s.push((0, "MySQL init process done. Ready for start up.".into(), String::new()));
        s.push((0, "\n".into(), String::new()));
        self.script = s;
        // The data directory appears once the files are initialised.
        let pw = root_pw.or(random.map(|_| "Aesh7ahphaiv5ahg2ohd0Yie".to_string())).unwrap_or_default();
        initialize(os, &self.version, &pw);
        if let Some(db) = env("MYSQL_DATABASE") {
            let _ = os.fs().mkdir(&format!("{DATADIR}/{db}"), 0o750, true);
        }
        if let (Some(u), Some(p)) = (env("MYSQL_USER"), env("MYSQL_PASSWORD")) {
            let mut t = common::read_file(os, &format!("{DATADIR}/mysql/user.kubesim"), 1 << 20).unwrap_or_default();
            t.extend_from_slice(format!("{u}\t%\t{}\n", esc(&p)).as_bytes());
            let _ = os.fs().write(&format!("{DATADIR}/mysql/user.kubesim"), &t, WriteMode::Truncate);
        }
        self.phase = EPhase::Init(0);
        Step::Compute { cpu_ms: 400, threads: 1 }
    }

    fn play(&mut self, os: &mut dyn Os, mut i: usize) -> Step {
        while i < self.script.len() {
            let (delay, out, err) = self.script[i].clone();
            if delay > 0 {
                self.script[i].0 = 0;
                self.phase = EPhase::Init(i);
                return Step::Compute { cpu_ms: delay / 2, threads: 1 };
            }
            if out == "\n" {
                common::out(os, "\n");
            } else if let Some(raw) = out.strip_prefix('@') {
                common::out(os, &format!("{raw}\n"));
            } else if !out.is_empty() {
                let n = Self::note(os, &out);
                common::out(os, &n);
            }
            common::err(os, &err);
            i += 1;
        }
        self.exec_server(os)
    }
}

impl Program for MysqlEntrypoint {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Some(p) = self.inner.as_mut() {
            return p.resume(os, wake);
        }
        match (self.phase.clone(), wake) {
            (EPhase::Start, _) => self.start(os),
            (EPhase::Init(_), Wake::Signal(s)) => match kubesim_os::program::default_signal_exit(os, s) {
                Some(c) => {
                    self.phase = EPhase::Done;
                    Step::Exit(c)
                }
                None => Step::Compute { cpu_ms: 1, threads: 1 },
            },
            (EPhase::Init(i), _) => self.play(os, i),
            _ => Step::Exit(0),
        }
    }
    fn memory_bytes(&self) -> u64 {
        self.inner.as_ref().map(|p| p.memory_bytes()).unwrap_or(120_000_000)
    }
    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        self.inner.as_mut()?.serve(os, conn)
    }
    fn listening(&self) -> Vec<(u16, bool)> {
        self.inner.as_ref().map(|p| p.listening()).unwrap_or_default()
    }
}

// ---------------------------------------------------------------------------------------------
// Clients.

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tool {
    Mysql,
    Admin(String),
}

/// `mysql` and `mysqladmin`.
#[derive(Clone, Debug)]
pub struct MysqlClient {
    spawn: Spawn,
    tool: Tool,
    host: Option<String>,
    port: u16,
    user: String,
    password: Option<String>,
    database: Option<String>,
    execute: Option<String>,
    table: Option<bool>,
    silent: u32,
    skip_names: bool,
    client: Option<TcpClient>,
    done: bool,
    version: String,
    vertical: bool,
}

impl MysqlClient {
    /// From a spawn; `admin` for mysqladmin.
    pub fn new(spawn: &Spawn, admin: bool) -> MysqlClient {
        let mut c = MysqlClient {
            spawn: spawn.clone(),
            tool: if admin { Tool::Admin(String::new()) } else { Tool::Mysql },
            host: None,
            port: 3306,
            user: "root".into(),
            password: None,
            database: None,
            execute: None,
            table: None,
            silent: 0,
            skip_names: false,
            client: None,
            done: false,
            version: version_of(spawn),
            vertical: false,
        };
        let args: Vec<String> = spawn.argv.iter().skip(1).cloned().collect();
        let mut i = 0;
        while i < args.len() {
            let a = args[i].clone();
            let val = |i: &mut usize, inline: &str| -> String {
                if !inline.is_empty() {
                    return inline.to_string();
                }
                *i += 1;
                args.get(*i).cloned().unwrap_or_default()
            };
            if let Some(r) = a.strip_prefix("--host=") {
                c.host = Some(r.into());
            } else if let Some(r) = a.strip_prefix("--user=") {
                c.user = r.into();
            } else if let Some(r) = a.strip_prefix("--password=") {
                c.password = Some(r.into());
            } else if let Some(r) = a.strip_prefix("--port=") {
                c.port = r.parse().unwrap_or(3306);
            } else if let Some(r) = a.strip_prefix("--execute=") {
                c.execute = Some(r.into());
            } else if let Some(r) = a.strip_prefix("--database=") {
                c.database = Some(r.into());
            } else if a == "--table" {
                c.table = Some(true);
            } else if a == "--batch" {
                c.table = Some(false);
            } else if a == "--silent" {
                c.silent += 1;
            } else if a == "--skip-column-names" {
                c.skip_names = true;
            } else if a.starts_with("--") {
            } else if let Some(r) = a.strip_prefix("-h") {
                c.host = Some(val(&mut i, r));
            } else if let Some(r) = a.strip_prefix("-u") {
                c.user = val(&mut i, r);
            } else if let Some(r) = a.strip_prefix("-P") {
                c.port = val(&mut i, r).parse().unwrap_or(3306);
            } else if let Some(r) = a.strip_prefix("-p") {
                c.password = Some(r.to_string());
            } else if let Some(r) = a.strip_prefix("-e") {
                c.execute = Some(val(&mut i, r));
            } else if let Some(r) = a.strip_prefix("-D") {
                c.database = Some(val(&mut i, r));
            } else if a == "-t" {
                c.table = Some(true);
            } else if a == "-B" {
                c.table = Some(false);
            } else if a == "-N" {
                c.skip_names = true;
            } else if a == "-E" {
                c.vertical = true;
            } else if a.starts_with("-s") {
                c.silent += a.len() as u32 - 1;
            } else if a.starts_with('-') {
            } else if let Tool::Admin(cmd) = &mut c.tool {
                if cmd.is_empty() {
                    *cmd = a.clone();
                }
            } else if c.database.is_none() {
                c.database = Some(a.clone());
            }
            i += 1;
        }
        c
    }

    fn tty(&self) -> bool {
        self.spawn.env.get("TERM").is_some_and(|t| !t.is_empty() && t != "dumb")
    }

    fn name(&self) -> &'static str {
        match self.tool {
            Tool::Mysql => "mysql",
            Tool::Admin(_) => "mysqladmin",
        }
    }

    fn connect_error(&self, os: &mut dyn Os, code: u32, msg: &str) -> Step {
        match &self.tool {
            Tool::Admin(cmd) => {
                let host = self.host.clone().unwrap_or_else(|| "localhost".into());
                common::err(os, &format!("mysqladmin: connect to server at '{host}' failed\nerror: '{msg}'\n"));
                if code == 2002 {
                    common::err(os, "Check that mysqld is running and that the socket: '/var/run/mysqld/mysqld.sock' exists!\n");
                }
                // `ping` counts an access error as a live server.
                if cmd == "ping" && code == 1045 {
                    return Step::Exit(0);
                }
                Step::Exit(1)
            }
            Tool::Mysql => {
                let state = match code {
                    1045 => "28000",
                    1049 => "42000",
                    _ => "HY000",
                };
                common::err(os, &format!("ERROR {code} ({state}): {msg}\n"));
                Step::Exit(1)
            }
        }
    }
}

impl Program for MysqlClient {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if self.done {
            return Step::Exit(0);
        }
        if self.client.is_none() {
            if self.spawn.argv.iter().any(|a| a == "--version" || a == "-V") {
                self.done = true;
                common::out(os, &format!("{}  Ver {} for Linux on x86_64 (MySQL Community Server - GPL)\n", self.name(), self.version));
                return Step::Exit(0);
            }
            if let Tool::Admin(cmd) = &self.tool {
                if !matches!(cmd.as_str(), "ping" | "status" | "version" | "shutdown" | "create" | "drop") {
                    self.done = true;
                    common::err(os, &format!("mysqladmin: Unknown command: '{cmd}'\n"));
                    return Step::Exit(1);
                }
            }
            if self.password.as_deref().is_some_and(|p| !p.is_empty()) {
                let w = if vnum(&self.version) >= (5, 7, 0) {
                    format!("{}: [Warning] Using a password on the command line interface can be insecure.\n", self.name())
                } else {
                    "Warning: Using a password on the command line interface can be insecure.\n".to_string()
                };
                common::err(os, &w);
            }
            let sql = match &self.tool {
                Tool::Admin(_) => String::new(),
                Tool::Mysql => match &self.execute {
                    Some(e) => e.clone(),
                    None => String::from_utf8_lossy(&self.spawn.stdin).into_owned(),
                },
            };
            if self.tool == Tool::Mysql && self.execute.is_none() && self.spawn.stdin.is_empty() && self.tty() {
                // An interactive session: the banner and a prompt waiting for input.
                self.done = true;
                let v = &self.version;
                let comment = if vnum(v) >= (8, 0, 0) { "MySQL Community Server - GPL" } else { "MySQL Community Server (GPL)" };
                common::out(os, &format!("Welcome to the MySQL monitor.  Commands end with ; or \\g.\nYour MySQL connection id is 2\nServer version: {v} {comment}\n\nCopyright (c) 2000, 2023, Oracle and/or its affiliates.\n\nOracle is a registered trademark of Oracle Corporation and/or its\naffiliates. Other names may be trademarks of their respective\nowners.\n\nType 'help;' or '\\h' for help. Type '\\c' to clear the current input statement.\n\nmysql> "));
                return Step::Wait;
            }
            let mut req = format!("{MAGIC}\nuser: {}\n", self.user);
            if let Some(p) = &self.password {
                req.push_str(&format!("password: {}\n", esc(p)));
            }
            req.push_str(&format!("database: {}\n\n", self.database.clone().unwrap_or_default()));
            req.push_str(&sql);
            let host = self.host.clone().unwrap_or_else(|| "127.0.0.1".into());
            let host = if host == "localhost" { "127.0.0.1".to_string() } else { host };
            let mut c = TcpClient::new(&host, self.port, req.into_bytes(), 30_000);
            let s = c.start(os);
            self.client = Some(c);
            return self.handle(os, s);
        }
        if let Wake::Signal(s) = wake {
            self.done = true;
            return Step::Exit(s.exit_code());
        }
        let s = match self.client.as_mut() {
            Some(c) => c.wake(&wake),
            None => return Step::Exit(1),
        };
        self.handle(os, s)
    }

    fn memory_bytes(&self) -> u64 {
        6_000_000
    }
}

fn table_format(cols: &[(String, bool)], rows: &[Vec<Option<String>>]) -> String {
    let mut w: Vec<usize> = cols.iter().map(|(n, _)| n.chars().count()).collect();
    for r in rows {
        for (i, v) in r.iter().enumerate() {
            let l = v.as_deref().unwrap_or("NULL").chars().count();
            if i < w.len() {
                w[i] = w[i].max(l);
            }
        }
    }
    let sep = format!("+{}+\n", w.iter().map(|n| "-".repeat(n + 2)).collect::<Vec<_>>().join("+"));
    let mut s = sep.clone();
    s.push_str(&format!("| {} |\n", cols.iter().enumerate().map(|(i, (n, _))| format!("{n:<w$}", w = w[i])).collect::<Vec<_>>().join(" | ")));
    s.push_str(&sep);
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let t = v.as_deref().unwrap_or("NULL");
                if cols.get(i).is_some_and(|c| c.1) {
                    format!("{t:>w$}", w = w[i])
                } else {
                    format!("{t:<w$}", w = w[i])
                }
            })
            .collect();
        s.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    s.push_str(&sep);
    s
}

impl MysqlClient {
    fn handle(&mut self, os: &mut dyn Os, s: TcpStep) -> Step {
        let host = self.host.clone().unwrap_or_else(|| "localhost".into());
        let local = self.host.is_none() || host == "localhost";
        match s {
            TcpStep::Call(st) => st,
            TcpStep::NoHost(_) => {
                self.done = true;
                let code = if vnum(&self.version) >= (8, 0, 0) { -2 } else { 0 };
                self.connect_error(os, 2005, &format!("Unknown MySQL server host '{host}' ({code})"))
            }
            TcpStep::Failed(e) => {
                self.done = true;
                if local {
                    return self.connect_error(os, 2002, "Can't connect to local MySQL server through socket '/var/run/mysqld/mysqld.sock' (2)");
                }
                let errno = match e {
                    NetError::Refused => 111,
                    NetError::TimedOut => 110,
                    NetError::HostUnreachable => 113,
                    NetError::NetworkUnreachable => 101,
                    NetError::Reset => 104,
                };
                let target = if vnum(&self.version) >= (8, 0, 0) { format!("{host}:{}", self.port) } else { host.clone() };
                self.connect_error(os, 2003, &format!("Can't connect to MySQL server on '{target}' ({errno})"))
            }
            TcpStep::Reply(b) => {
                self.done = true;
                let text = String::from_utf8_lossy(&b).into_owned();
                let mut lines = text.lines();
                let head = lines.next().unwrap_or("");
                if let Some(rest) = head.strip_prefix(&format!("{MAGIC} DENIED ")) {
                    let mut p = rest.splitn(3, ' ');
                    let code: u32 = p.next().and_then(|c| c.parse().ok()).unwrap_or(1045);
                    let _state = p.next();
                    let msg = unesc(p.next().unwrap_or(""));
                    return self.connect_error(os, code, &msg);
                }
                if !head.starts_with(MAGIC) {
                    return self.connect_error(os, 2013, "Lost connection to MySQL server at 'reading initial communication packet', system error: 0");
                }
                if let Tool::Admin(cmd) = self.tool.clone() {
                    match cmd.as_str() {
                        "ping" => common::out(os, "mysqld is alive\n"),
                        "version" | "status" => common::out(os, "Uptime: 120  Threads: 2  Questions: 5  Slow queries: 0  Opens: 115  Flush tables: 3  Open tables: 35  Queries per second avg: 0.041\n"),
                        _ => {}
                    }
                    return Step::Exit(0);
                }
                let table = self.table.unwrap_or(self.tty());
                let mut out = String::new();
                let mut stmt_no = 0;
                let lines: Vec<&str> = lines.collect();
                let mut i = 0;
                while i < lines.len() {
                    let l = lines[i];
                    i += 1;
                    if let Some(rest) = l.strip_prefix("R ") {
                        stmt_no += 1;
                        let mut p = rest.split(' ');
                        let nc: usize = p.next().and_then(|x| x.parse().ok()).unwrap_or(0);
                        let nr: usize = p.next().and_then(|x| x.parse().ok()).unwrap_or(0);
                        let mut cols = Vec::new();
                        for _ in 0..nc {
                            let c = lines.get(i).copied().unwrap_or("");
                            i += 1;
                            let (n, t) = c.split_once('\t').unwrap_or((c, "s"));
                            cols.push((unesc(n), t == "n"));
                        }
                        let mut rows = Vec::new();
                        for _ in 0..nr {
                            let r = lines.get(i).copied().unwrap_or("");
                            i += 1;
                            rows.push(r.split('\t').map(|f| if f == "\\N" { None } else { Some(unesc(f)) }).collect::<Vec<_>>());
                        }
                        if nc == 0 {
                            continue;
                        }
                        if self.vertical {
                            let w = cols.iter().map(|c| c.0.chars().count()).max().unwrap_or(0);
                            for (k, r) in rows.iter().enumerate() {
                                out.push_str(&format!("*************************** {}. row ***************************\n", k + 1));
                                for (j, c) in cols.iter().enumerate() {
                                    out.push_str(&format!("{:>w$}: {}\n", c.0, r.get(j).cloned().flatten().unwrap_or_else(|| "NULL".into())));
                                }
                            }
                        } else if table {
                            if !rows.is_empty() {
                                out.push_str(&table_format(&cols, &rows));
                            }
                        } else {
                            if !self.skip_names && self.silent < 2 {
                                out.push_str(&cols.iter().map(|c| c.0.clone()).collect::<Vec<_>>().join("\t"));
                                out.push('\n');
                            }
                            for r in rows {
                                out.push_str(
                                    &r.iter()
                                        .map(|v| v.clone().unwrap_or_else(|| "NULL".into()).replace('\\', "\\\\").replace('\n', "\\n").replace('\t', "\\t"))
                                        .collect::<Vec<_>>()
                                        .join("\t"),
                                );
                                out.push('\n');
                            }
                        }
                    } else if l.starts_with("K ") || l.starts_with("U ") {
                        stmt_no += 1;
                    } else if let Some(rest) = l.strip_prefix("E ") {
                        stmt_no += 1;
                        let mut p = rest.splitn(3, ' ');
                        let code = p.next().unwrap_or("1064");
                        let state = p.next().unwrap_or("42000");
                        let msg = unesc(p.next().unwrap_or(""));
                        common::out(os, &out);
                        common::err(os, &format!("ERROR {code} ({state}) at line {stmt_no}: {msg}\n"));
                        return Step::Exit(1);
                    }
                }
                common::out(os, &out);
                Step::Exit(0)
            }
        }
    }
}
