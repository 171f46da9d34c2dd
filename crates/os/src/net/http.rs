//! HTTP/1.1 request and response formatting and parsing, shared by the clients here and the
//! server models the host implements.

/// An HTTP request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Method (`GET`).
    pub method: String,
    /// Request target (`/index.html?x=1`).
    pub target: String,
    /// Version (`HTTP/1.1`).
    pub version: String,
    /// Headers in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Vec<u8>,
}

/// Why a message did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// The header section is not complete.
    Incomplete,
    /// Malformed start line or header.
    Malformed(String),
}

fn split_head(data: &[u8]) -> Result<(&str, &[u8]), ParseError> {
    let pos = data.windows(4).position(|w| w == b"\r\n\r\n").map(|p| (p, 4)).or_else(|| data.windows(2).position(|w| w == b"\n\n").map(|p| (p, 2)));
    let Some((p, n)) = pos else { return Err(ParseError::Incomplete) };
    let head = std::str::from_utf8(&data[..p]).map_err(|_| ParseError::Malformed("non-UTF-8 header".into()))?;
    Ok((head, &data[p + n..]))
}

fn parse_headers<'a>(lines: impl Iterator<Item = &'a str>) -> Result<Vec<(String, String)>, ParseError> {
    let mut h = Vec::new();
    for l in lines {
        let l = l.trim_end_matches('\r');
        if l.is_empty() {
            continue;
        }
        let (k, v) = l.split_once(':').ok_or_else(|| ParseError::Malformed(format!("bad header line: {l}")))?;
        h.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(h)
}

/// Case-insensitive header lookup.
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// Decodes a chunked body; `None` if malformed.
pub fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let nl = b.windows(2).position(|w| w == b"\r\n")?;
        let size_line = std::str::from_utf8(&b[..nl]).ok()?;
        let size = usize::from_str_radix(size_line.split(';').next()?.trim(), 16).ok()?;
        b = &b[nl + 2..];
        if size == 0 {
            return Some(out);
        }
        if b.len() < size {
            out.extend_from_slice(b);
            return Some(out);
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size..];
        if b.starts_with(b"\r\n") {
            b = &b[2..];
        }
    }
}

impl Request {
    /// A request with the given method and target and no headers.
    pub fn new(method: &str, target: &str) -> Request {
        Request { method: method.into(), target: target.into(), version: "HTTP/1.1".into(), headers: Vec::new(), body: Vec::new() }
    }

    /// Parses a request (body per Content-Length or chunked; the rest otherwise).
    pub fn parse(data: &[u8]) -> Result<Request, ParseError> {
        let (head, rest) = split_head(data)?;
        let mut lines = head.split('\n');
        let start = lines.next().unwrap_or("").trim_end_matches('\r');
        let mut parts = start.split(' ');
        let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(ParseError::Malformed(format!("bad request line: {start}")));
        };
        if !version.starts_with("HTTP/") {
            return Err(ParseError::Malformed(format!("bad request line: {start}")));
        }
        let headers = parse_headers(lines)?;
        let body = body_of(&headers, rest);
        Ok(Request { method: method.into(), target: target.into(), version: version.into(), headers, body })
    }

    /// Header value.
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// The path part of the target (without the query).
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("/")
    }

    /// Serialises the request.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut s = format!("{} {} {}\r\n", self.method, self.target, self.version);
        for (k, v) in &self.headers {
            s.push_str(&format!("{k}: {v}\r\n"));
        }
        s.push_str("\r\n");
        let mut b = s.into_bytes();
        b.extend_from_slice(&self.body);
        b
    }
}

fn body_of(headers: &[(String, String)], rest: &[u8]) -> Vec<u8> {
    if header(headers, "transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        return dechunk(rest).unwrap_or_else(|| rest.to_vec());
    }
    match header(headers, "content-length").and_then(|v| v.parse::<usize>().ok()) {
        Some(n) => rest[..n.min(rest.len())].to_vec(),
        None => rest.to_vec(),
    }
}

/// An HTTP response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// Version (`HTTP/1.1`).
    pub version: String,
    /// Status code.
    pub status: u16,
    /// Reason phrase.
    pub reason: String,
    /// Headers in order.
    pub headers: Vec<(String, String)>,
    /// Body (de-chunked when parsed).
    pub body: Vec<u8>,
}

/// The standard reason phrase.
pub fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Unknown",
    }
}

impl Response {
    /// A response with the standard reason phrase, a `Content-Length` header and `body`.
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> Response {
        let body = body.into();
        Response { version: "HTTP/1.1".into(), status, reason: reason(status).into(), headers: vec![("Content-Length".into(), body.len().to_string())], body }
    }

    /// Adds a header (builder style).
    pub fn with_header(mut self, k: &str, v: &str) -> Response {
        self.headers.push((k.into(), v.into()));
        self
    }

    /// Parses a response.
    pub fn parse(data: &[u8]) -> Result<Response, ParseError> {
        let (head, rest) = split_head(data)?;
        let mut lines = head.split('\n');
        let start = lines.next().unwrap_or("").trim_end_matches('\r');
        let mut parts = start.splitn(3, ' ');
        let version = parts.next().unwrap_or("");
        if !version.starts_with("HTTP/") {
            return Err(ParseError::Malformed(format!("bad status line: {start}")));
        }
        let status: u16 = parts.next().and_then(|s| s.parse().ok()).ok_or_else(|| ParseError::Malformed(format!("bad status line: {start}")))?;
        let reason = parts.next().unwrap_or("").to_string();
        let headers = parse_headers(lines)?;
        let body = body_of(&headers, rest);
        Ok(Response { version: version.into(), status, reason, headers, body })
    }

    /// Header value.
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// The status line (`HTTP/1.1 200 OK`).
    pub fn status_line(&self) -> String {
        format!("{} {} {}", self.version, self.status, self.reason)
    }

    /// Serialises the response.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut s = format!("{}\r\n", self.status_line());
        for (k, v) in &self.headers {
            s.push_str(&format!("{k}: {v}\r\n"));
        }
        s.push_str("\r\n");
        let mut b = s.into_bytes();
        b.extend_from_slice(&self.body);
        b
    }
}

/// nginx's own responses (its reason phrases and built-in error pages), shared by the nginx
/// program and the ingress-nginx controller's data plane in the fabric.
pub mod nginx {
    /// nginx's reason phrases.
    pub fn reason(code: u16) -> &'static str {
        match code {
            200 => "OK",
            201 => "Created",
            204 => "No Content",
            206 => "Partial Content",
            301 => "Moved Permanently",
            302 => "Moved Temporarily",
            303 => "See Other",
            304 => "Not Modified",
            307 => "Temporary Redirect",
            308 => "Permanent Redirect",
            400 => "Bad Request",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            405 => "Not Allowed",
            408 => "Request Time-out",
            413 => "Request Entity Too Large",
            414 => "Request-URI Too Large",
            429 => "Too Many Requests",
            500 => "Internal Server Error",
            501 => "Not Implemented",
            502 => "Bad Gateway",
            503 => "Service Temporarily Unavailable",
            504 => "Gateway Time-out",
            _ => "",
        }
    }

    /// The built-in error page nginx sends for `code` (CRLF line ends; `bgcolor` before 1.15.3).
    pub fn error_page(code: u16, version: &str, tokens: bool) -> Vec<u8> {
        let title = format!("{code} {}", reason(code));
        let title = if code == 401 { "401 Authorization Required".to_string() } else { title };
        let body_tag = if vnum(version) < (1, 15, 3) { "<body bgcolor=\"white\">" } else { "<body>" };
        let sig = if tokens { format!("nginx/{version}") } else { "nginx".to_string() };
        format!("<html>\r\n<head><title>{title}</title></head>\r\n{body_tag}\r\n<center><h1>{title}</h1></center>\r\n<hr><center>{sig}</center>\r\n</body>\r\n</html>\r\n").into_bytes()
    }

    /// Numeric version for comparisons (`1.21.2` → (1, 21, 2)).
    pub fn vnum(v: &str) -> (u32, u32, u32) {
        let mut it = v.split('.').map(|p| p.chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse::<u32>().unwrap_or(0));
        (it.next().unwrap_or(0), it.next().unwrap_or(0), it.next().unwrap_or(0))
    }
}

/// Go's `net/http` server as the models written in Go answer (agnhost, hello-app, kube-proxy's
/// health servers, ...): shared by the application models and the node's own servers.
pub mod go {
    /// Go's `http.DetectContentType` for the bodies the models produce.
    pub fn go_sniff(body: &[u8]) -> &'static str {
        let s = body.iter().position(|b| !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')).map(|i| &body[i..]).unwrap_or(&[]);
        let html = [
            "<!DOCTYPE HTML",
            "<HTML",
            "<HEAD",
            "<SCRIPT",
            "<IFRAME",
            "<H1",
            "<DIV",
            "<FONT",
            "<TABLE",
            "<A",
            "<STYLE",
            "<TITLE",
            "<B",
            "<BODY",
            "<BR",
            "<P",
            "<!--",
        ];
        for h in html {
            if s.len() > h.len() && s[..h.len()].eq_ignore_ascii_case(h.as_bytes()) && matches!(s[h.len()], b' ' | b'>') {
                return "text/html; charset=utf-8";
            }
        }
        if s.starts_with(b"<?xml") {
            return "text/xml; charset=utf-8";
        }
        if body.iter().take(512).any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | 0x1b)) {
            return "application/octet-stream";
        }
        "text/plain; charset=utf-8"
    }

    /// A response as Go's `net/http` server writes it: handler headers sorted by name, then
    /// `Date`, `Content-Length`, sniffed `Content-Type` (non-empty bodies only) and `Connection:
    /// close` when the client asked for it. HEAD requests get the headers only.
    pub fn go_response(req: Option<&super::Request>, status: u16, mut headers: Vec<(String, String)>, body: &[u8], unix: u64) -> Vec<u8> {
        headers.sort_by(|a, b| a.0.cmp(&b.0));
        let has_type = headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-type"));
        let v11 = req.map(|r| r.version != "HTTP/1.0").unwrap_or(true);
        let mut s = format!("{} {} {}\r\n", if v11 { "HTTP/1.1" } else { "HTTP/1.0" }, status, go_status_text(status));
        for (k, v) in &headers {
            s.push_str(&format!("{k}: {v}\r\n"));
        }
        s.push_str(&format!("Date: {}\r\n", super::http_date(unix)));
        let body_allowed = !(100..200).contains(&status) && status != 204 && status != 304;
        let has_len = headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-length"));
        if body_allowed {
            if !has_len {
                s.push_str(&format!("Content-Length: {}\r\n", body.len()));
            }
            if !has_type && !body.is_empty() {
                s.push_str(&format!("Content-Type: {}\r\n", go_sniff(body)));
            }
        }
        let close = req.is_some_and(|r| {
            r.header("connection").is_some_and(|c| c.eq_ignore_ascii_case("close"))
                || (!v11 && !r.header("connection").is_some_and(|c| c.eq_ignore_ascii_case("keep-alive")))
        });
        if close {
            s.push_str("Connection: close\r\n");
        }
        s.push_str("\r\n");
        let mut b = s.into_bytes();
        if body_allowed && req.map(|r| r.method != "HEAD").unwrap_or(true) {
            b.extend_from_slice(body);
        }
        b
    }

    /// Go's `http.StatusText`.
    pub fn go_status_text(code: u16) -> &'static str {
        match code {
            412 => "Precondition Failed",
            417 => "Expectation Failed",
            418 => "I'm a teapot",
            _ => super::reason(code),
        }
    }

    /// Go's `http.Error`: `Content-Type: text/plain; charset=utf-8`, `X-Content-Type-Options:
    /// nosniff`, body `msg\n`.
    pub fn go_error(req: Option<&super::Request>, status: u16, msg: &str, unix: u64) -> Vec<u8> {
        let h = vec![("Content-Type".to_string(), "text/plain; charset=utf-8".to_string()), ("X-Content-Type-Options".to_string(), "nosniff".to_string())];
        go_response(req, status, h, format!("{msg}\n").as_bytes(), unix)
    }

    /// Go's 404 (`404 page not found`).
    pub fn go_not_found(req: Option<&super::Request>, unix: u64) -> Vec<u8> {
        go_error(req, 404, "404 page not found", unix)
    }
}

/// `Tue, 01 Dec 2026 09:05:00 GMT` (RFC 7231 `Date`).
pub fn http_date(unix: u64) -> String {
    crate::time::strftime("%a, %d %b %Y %H:%M:%S GMT", unix as i64, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_responses_round_trip() {
        let raw = b"GET /healthz?x=1 HTTP/1.1\r\nHost: web\r\nUser-Agent: Wget\r\n\r\n";
        let r = Request::parse(raw).unwrap_or_else(|_| Request::new("X", "/"));
        assert_eq!((r.method.as_str(), r.path(), r.header("host")), ("GET", "/healthz", Some("web")));
        assert_eq!(r.to_bytes(), raw.to_vec());
        let resp = Response::new(200, "hi\n").with_header("Server", "nginx");
        let bytes = resp.to_bytes();
        assert_eq!(String::from_utf8_lossy(&bytes), "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nServer: nginx\r\n\r\nhi\n");
        assert_eq!(Response::parse(&bytes), Ok(resp));
        assert_eq!(dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), Some(b"abcde".to_vec()));
        assert_eq!(Request::parse(b"GET / HTTP/1.1\r\n"), Err(ParseError::Incomplete));
    }
}
