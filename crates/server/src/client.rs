//! A minimal blocking HTTP/1.1 client for `kubesim ctl`, the tests and the benchmarks (one
//! request per connection, `Content-Length` or chunked responses).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A response: status, headers (lower-case names), body.
#[derive(Clone, Debug)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Headers.
    pub headers: Vec<(String, String)>,
    /// Body (chunked bodies joined).
    pub body: String,
}

/// `host:port` of an `http://host:port` URL.
pub fn authority(url: &str) -> Result<&str, String> {
    let rest = url.strip_prefix("http://").ok_or_else(|| format!("only http:// servers are supported, got {url:?}"))?;
    Ok(rest.split('/').next().unwrap_or(rest))
}

/// Sends one request and reads the whole response.
pub fn request(url: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Result<Reply, String> {
    let authority = authority(url)?;
    let mut stream = TcpStream::connect(authority).map_err(|e| format!("cannot reach kubesim at {url}: {e}"))?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).map_err(|e| e.to_string())?;
    stream.write_all(body).map_err(|e| e.to_string())?;
    read_reply(&mut BufReader::new(stream))
}

/// Reads one response from a stream.
pub fn read_reply(reader: &mut impl BufRead) -> Result<Reply, String> {
    let mut line = String::new();
    reader.read_line(&mut line).map_err(|e| e.to_string())?;
    let status: u16 = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| format!("malformed status line {line:?}"))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).map_err(|e| e.to_string())?;
        let t = line.trim_end();
        if t.is_empty() {
            break;
        }
        if let Some((k, v)) = t.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
        loop {
            line.clear();
            if reader.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                break;
            }
            let size = usize::from_str_radix(line.trim(), 16).map_err(|_| format!("malformed chunk size {line:?}"))?;
            if size == 0 {
                break;
            }
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).map_err(|e| e.to_string())?;
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(len) = header("content-length").and_then(|l| l.parse::<usize>().ok()) {
        body.resize(len, 0);
        reader.read_exact(&mut body).map_err(|e| e.to_string())?;
    } else {
        reader.read_to_end(&mut body).map_err(|e| e.to_string())?;
    }
    Ok(Reply { status, headers, body: String::from_utf8_lossy(&body).into_owned() })
}
