//! A small HTTP/1.1 server side over `std::net`: request parsing with limits and deadlines
//! (slow or hostile clients get 408/413/431/400 and never a stuck thread), responses with
//! `Content-Length`, and chunked streams for watches and followed logs.

use std::io::{BufRead, ErrorKind, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Limits on what one request may send.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The largest body accepted (kube-apiserver: 3 MiB, `MaxRequestBodyBytes`).
    pub max_body: usize,
    /// The largest request head (request line and headers).
    pub max_head: usize,
    /// How long a connection may sit idle between requests.
    pub idle: Duration,
    /// How long a client may take to send a request once it started.
    pub request: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_body: 3 * 1024 * 1024, max_head: 64 * 1024, idle: Duration::from_secs(120), request: Duration::from_secs(30) }
    }
}

/// A parsed request.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The percent-decoded path.
    pub path: String,
    /// Query parameters in order, percent-decoded.
    pub query: Vec<(String, String)>,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// A header's value (first occurrence).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
    /// A query parameter (first occurrence).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
    /// Every value of a repeated query parameter.
    pub fn params(&self, name: &str) -> Vec<&str> {
        self.query.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str()).collect()
    }
    /// A boolean query parameter, as Go's strconv.ParseBool reads it (`1`, `t`, `T`, `true`,
    /// `True`, `TRUE`; clients such as the Python one send `True`).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.param(name), Some("1" | "t" | "T" | "true" | "True" | "TRUE" | ""))
    }
    /// Whether the client asked to keep the connection open (HTTP/1.1 default).
    pub fn keep_alive(&self) -> bool {
        !self.header("connection").is_some_and(|c| c.eq_ignore_ascii_case("close"))
    }
}

/// Why no request could be read.
#[derive(Debug)]
pub enum ReadError {
    /// The client closed the connection (or was idle too long) between requests.
    Closed,
    /// The client started a request and did not finish it in time (408).
    Timeout,
    /// The body is larger than allowed (413).
    TooLarge(usize),
    /// The head is larger than allowed (431).
    HeadTooLarge,
    /// Not HTTP (400).
    Malformed(String),
}

/// Reads bytes with deadlines: `idle` before the first byte, `request` after it.
struct Deadline {
    started: Option<Instant>,
    opened: Instant,
    limits: Limits,
}

impl Deadline {
    fn expired(&self) -> Option<ReadError> {
        match self.started {
            None if self.opened.elapsed() > self.limits.idle => Some(ReadError::Closed),
            Some(t) if t.elapsed() > self.limits.request => Some(ReadError::Timeout),
            _ => None,
        }
    }
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

/// Reads one line (up to `\n`) into `line`, honouring the deadline and the head limit.
fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>, deadline: &mut Deadline, head_used: &mut usize) -> Result<(), ReadError> {
    loop {
        let available = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if is_timeout(&e) => {
                if let Some(err) = deadline.expired() {
                    return Err(err);
                }
                continue;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Err(if deadline.started.is_some() { ReadError::Timeout } else { ReadError::Closed }),
        };
        if available.is_empty() {
            return Err(if deadline.started.is_some() && !line.is_empty() {
                ReadError::Malformed("unexpected end of request".into())
            } else {
                ReadError::Closed
            });
        }
        deadline.started.get_or_insert_with(Instant::now);
        let (take, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        line.extend_from_slice(&available[..take]);
        reader.consume(take);
        *head_used += take;
        if *head_used > deadline.limits.max_head {
            return Err(ReadError::HeadTooLarge);
        }
        if done {
            return Ok(());
        }
        if let Some(err) = deadline.expired() {
            return Err(err);
        }
    }
}

fn read_exact(reader: &mut impl BufRead, buf: &mut [u8], deadline: &Deadline) -> Result<(), ReadError> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => return Err(ReadError::Malformed("unexpected end of body".into())),
            Ok(n) => filled += n,
            Err(e) if is_timeout(&e) || e.kind() == ErrorKind::Interrupted => {
                if let Some(err) = deadline.expired() {
                    return Err(err);
                }
            }
            Err(_) => return Err(ReadError::Timeout),
        }
    }
    Ok(())
}

/// Reads the next request of a connection. A socket must have a short read timeout set (the
/// deadlines are checked whenever a read times out); any other reader (the fuzz harness's
/// bytes) is read to its end.
pub fn read_request(reader: &mut impl BufRead, limits: Limits) -> Result<Request, ReadError> {
    let mut deadline = Deadline { started: None, opened: Instant::now(), limits };
    let mut head_used = 0;
    let mut line = Vec::new();
    // Tolerate empty lines before a request (RFC 9112 §2.2).
    loop {
        line.clear();
        read_line(reader, &mut line, &mut deadline, &mut head_used)?;
        if line != b"\r\n" && line != b"\n" {
            break;
        }
    }
    let request_line = String::from_utf8(line.clone()).map_err(|_| ReadError::Malformed("request line is not UTF-8".into()))?;
    let mut parts = request_line.trim_end().split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(ReadError::Malformed(format!("malformed request line {:?}", request_line.trim_end())));
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(ReadError::Malformed(format!("malformed request line {:?}", request_line.trim_end())));
    }
    let mut headers = Vec::new();
    loop {
        line.clear();
        read_line(reader, &mut line, &mut deadline, &mut head_used)?;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(ReadError::Malformed(format!("malformed header line {text:?}")));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        if headers.len() > 200 {
            return Err(ReadError::HeadTooLarge);
        }
    }
    let (raw_path, raw_query) = target.split_once('?').unwrap_or((target, ""));
    let mut request = Request { method: method.to_string(), path: percent_decode(raw_path), query: parse_query(raw_query), headers, body: Vec::new() };
    let chunked = request.header("transfer-encoding").is_some_and(|t| t.to_ascii_lowercase().contains("chunked"));
    if chunked {
        loop {
            line.clear();
            let mut size_head = 0;
            read_line(reader, &mut line, &mut deadline, &mut size_head)?;
            let text = String::from_utf8_lossy(&line);
            let size_text = text.trim().split(';').next().unwrap_or("");
            let size = usize::from_str_radix(size_text, 16).map_err(|_| ReadError::Malformed("malformed chunk size".into()))?;
            // (A hostile chunk size near usize::MAX must not overflow the sum.)
            if size > limits.max_body.saturating_sub(request.body.len()) {
                return Err(ReadError::TooLarge(limits.max_body));
            }
            if size == 0 {
                // Trailers, then the empty line.
                loop {
                    line.clear();
                    let mut t = 0;
                    read_line(reader, &mut line, &mut deadline, &mut t)?;
                    if line == b"\r\n" || line == b"\n" {
                        break;
                    }
                }
                break;
            }
            let start = request.body.len();
            request.body.resize(start + size, 0);
            read_exact(reader, &mut request.body[start..], &deadline)?;
            let mut crlf = [0u8; 2];
            read_exact(reader, &mut crlf, &deadline)?;
        }
    } else if let Some(length) = request.header("content-length") {
        let length: usize = length.parse().map_err(|_| ReadError::Malformed("malformed Content-Length".into()))?;
        if length > limits.max_body {
            return Err(ReadError::TooLarge(limits.max_body));
        }
        request.body = vec![0; length];
        read_exact(reader, &mut request.body, &deadline)?;
    }
    Ok(request)
}

/// `%XX` and (in queries) `+` decoding.
pub fn percent_decode(text: &str) -> String {
    decode(text, false)
}

fn decode(text: &str, plus_is_space: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' if plus_is_space => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses `a=1&b=2`.
pub fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode(k, true), decode(v, true)),
            None => (decode(p, true), String::new()),
        })
        .collect()
}

/// `%`-encodes a query value.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A complete response.
#[derive(Clone, Debug)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers (besides Content-Length, Date and Connection, which the writer adds).
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON response.
    pub fn json(status: u16, value: &serde_json::Value) -> Response {
        Response::typed(status, "application/json", serde_json::to_vec(value).expect("JSON values serialize"))
    }
    /// A response with a content type.
    pub fn typed(status: u16, content_type: &str, body: Vec<u8>) -> Response {
        Response { status, headers: vec![("Content-Type".into(), content_type.into())], body }
    }
    /// Sets a header (replacing one of the same name).
    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// The reason phrase of a status code.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Request Entity Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

/// Writes a response.
pub fn write_response(stream: &mut impl Write, response: &Response, keep_alive: bool, head_only: bool) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", response.status, reason_phrase(response.status));
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("Cache-Control: no-cache, private\r\n");
    head.push_str(&format!("Content-Length: {}\r\n", response.body.len()));
    if !keep_alive {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(&response.body)?;
    }
    stream.flush()
}

/// A chunked (`Transfer-Encoding: chunked`) response in progress.
pub struct Chunked<'a> {
    stream: &'a mut TcpStream,
}

impl<'a> Chunked<'a> {
    /// Writes the head of a streamed response.
    pub fn start(stream: &'a mut TcpStream, status: u16, content_type: &str) -> std::io::Result<Chunked<'a>> {
        let head = format!(
            "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nCache-Control: no-cache, private\r\nTransfer-Encoding: chunked\r\n\r\n",
            reason_phrase(status)
        );
        stream.write_all(head.as_bytes())?;
        stream.flush()?;
        Ok(Chunked { stream })
    }
    /// Sends one chunk (empty data is skipped: an empty chunk would end the stream).
    pub fn send(&mut self, data: &[u8]) -> std::io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let mut buf = Vec::with_capacity(data.len() + 12);
        buf.extend_from_slice(format!("{:x}\r\n", data.len()).as_bytes());
        buf.extend_from_slice(data);
        buf.extend_from_slice(b"\r\n");
        self.stream.write_all(&buf)?;
        self.stream.flush()
    }
    /// Ends the stream.
    pub fn finish(self) -> std::io::Result<()> {
        self.stream.write_all(b"0\r\n\r\n")?;
        self.stream.flush()
    }
    /// The underlying stream.
    pub fn stream(&self) -> &TcpStream {
        self.stream
    }
    /// Whether the peer has closed its side (a read returns EOF without blocking long).
    pub fn peer_closed(&mut self) -> bool {
        peer_closed(self.stream)
    }
}

/// Whether the peer closed the connection: a non-blocking peek returns 0 bytes.
pub fn peer_closed(stream: &TcpStream) -> bool {
    if stream.set_nonblocking(true).is_err() {
        return true;
    }
    let mut byte = [0u8; 1];
    let closed = matches!(stream.peek(&mut byte), Ok(0));
    let _ = stream.set_nonblocking(false);
    closed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode_percent_and_plus() {
        let q = parse_query("labelSelector=app%3Dweb%2Ctier+in+(a)&watch=true&x");
        assert_eq!(q[0], ("labelSelector".into(), "app=web,tier in (a)".into()));
        assert_eq!(q[1], ("watch".into(), "true".into()));
        assert_eq!(q[2], ("x".into(), "".into()));
        assert_eq!(percent_decode("/api/v1/namespaces/a%2Fb"), "/api/v1/namespaces/a/b");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
