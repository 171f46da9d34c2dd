//! Image references, parsed exactly as `github.com/distribution/reference` (v0.6, the package
//! containerd 2.x and the kubelet vendor) does in `ParseNormalizedNamed`, `ParseDockerRef` and
//! `TagNameOnly`, including the digest validation of `github.com/opencontainers/go-digest`.
//!
//! The grammar (from `reference.go`):
//!
//! ```text
//! reference        := name [ ":" tag ] [ "@" digest ]
//! name             := [domain '/'] remote-name
//! domain           := host [':' port-number]
//! host             := domain-name | IPv4address | \[ IPv6address \]
//! domain-name      := domain-component ['.' domain-component]*
//! domain-component := /([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])/
//! path-component   := alpha-numeric [separator alpha-numeric]*
//! alpha-numeric    := /[a-z0-9]+/
//! separator        := /[_.]|__|[-]+/
//! tag              := /[\w][\w.-]{0,127}/
//! digest           := algorithm ":" /[0-9a-fA-F]{32,}/
//! ```

use std::fmt;

/// Docker Hub's canonical domain.
pub const DEFAULT_DOMAIN: &str = "docker.io";
/// The legacy Docker Hub domain, canonicalised to [`DEFAULT_DOMAIN`].
pub const LEGACY_DEFAULT_DOMAIN: &str = "index.docker.io";
/// The namespace of Docker official images.
pub const OFFICIAL_REPO_PREFIX: &str = "library/";
/// The tag added to a reference that names neither a tag nor a digest.
pub const DEFAULT_TAG: &str = "latest";
/// The longest repository path the grammar accepts.
pub const REPOSITORY_NAME_TOTAL_LENGTH_MAX: usize = 255;

/// A parsed, normalised image reference (`docker.io/library/nginx:1.14.2`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reference {
    domain: String,
    path: String,
    tag: Option<String>,
    digest: Option<String>,
}

/// Why a string is not a valid image reference. `Display` prints the exact text of the Go packages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReferenceError {
    /// `repository name must have at least one component` (empty input).
    NameEmpty,
    /// `invalid reference format`.
    InvalidFormat,
    /// `invalid reference format: repository name (library/Nginx) must be lowercase`: the check
    /// `ParseNormalizedNamed` makes on the remote name (the part before the first `:`).
    RemoteNameNotLowercase(String),
    /// `repository name must be lowercase`: the whole reference only parses when lower-cased.
    NameContainsUppercase,
    /// `repository name must not be more than 255 characters`.
    NameTooLong,
    /// `invalid repository name (<64 hex>), cannot specify 64-byte hexadecimal strings`.
    HexIdentifier(String),
    /// `invalid checksum digest format` (go-digest).
    DigestInvalidFormat,
    /// `invalid checksum digest length` (go-digest).
    DigestInvalidLength,
    /// `unsupported digest algorithm` (go-digest).
    DigestUnsupported,
}

impl fmt::Display for ReferenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReferenceError::NameEmpty => f.write_str("repository name must have at least one component"),
            ReferenceError::InvalidFormat => f.write_str("invalid reference format"),
            ReferenceError::RemoteNameNotLowercase(remote) => write!(f, "invalid reference format: repository name ({remote}) must be lowercase"),
            ReferenceError::NameContainsUppercase => f.write_str("repository name must be lowercase"),
            ReferenceError::NameTooLong => write!(f, "repository name must not be more than {REPOSITORY_NAME_TOTAL_LENGTH_MAX} characters"),
            ReferenceError::HexIdentifier(s) => write!(f, "invalid repository name ({s}), cannot specify 64-byte hexadecimal strings"),
            ReferenceError::DigestInvalidFormat => f.write_str("invalid checksum digest format"),
            ReferenceError::DigestInvalidLength => f.write_str("invalid checksum digest length"),
            ReferenceError::DigestUnsupported => f.write_str("unsupported digest algorithm"),
        }
    }
}

impl std::error::Error for ReferenceError {}

impl ReferenceError {
    /// The message the kubelet (v1.28+) puts in the `InspectFailed` event and the `InvalidImageName`
    /// waiting reason when a container's image does not parse:
    /// `Failed to apply default image tag "Nginx": couldn't parse image name "Nginx": invalid reference format: repository name (library/Nginx) must be lowercase`.
    pub fn kubelet_message(&self, image: &str) -> String {
        format!("Failed to apply default image tag {image:?}: couldn't parse image name {image:?}: {self}")
    }
}

impl Reference {
    /// The registry host, with port if any (`docker.io`, `registry.k8s.io`, `localhost:5000`).
    pub fn domain(&self) -> &str {
        &self.domain
    }
    /// The repository path inside the registry (`library/nginx`, `e2e-test-images/agnhost`).
    pub fn path(&self) -> &str {
        &self.path
    }
    /// The repository name: domain and path (`docker.io/library/nginx`).
    pub fn name(&self) -> String {
        format!("{}/{}", self.domain, self.path)
    }
    /// The tag, if the reference names one.
    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }
    /// The digest (`sha256:…`), if the reference names one.
    pub fn digest(&self) -> Option<&str> {
        self.digest.as_deref()
    }
    /// The host part of the domain, without a port (`localhost` for `localhost:5000`).
    pub fn host(&self) -> &str {
        if let Some(rest) = self.domain.strip_prefix('[') {
            return rest.split(']').next().unwrap_or(rest);
        }
        self.domain.split(':').next().unwrap_or(&self.domain)
    }
    /// The reference with the default tag added when it names neither a tag nor a digest
    /// (`TagNameOnly`): what the kubelet hands to the runtime, e.g. `docker.io/library/nginx:latest`.
    pub fn with_default_tag(&self) -> Reference {
        let mut r = self.clone();
        if r.tag.is_none() && r.digest.is_none() {
            r.tag = Some(DEFAULT_TAG.to_string());
        }
        r
    }
    /// The reference containerd pulls (`ParseDockerRef`): a digest wins over a tag
    /// (`busybox:latest@sha256:…` → `docker.io/library/busybox@sha256:…`), otherwise the tag or `latest`.
    pub fn docker_ref(&self) -> String {
        match (&self.digest, &self.tag) {
            (Some(d), _) => format!("{}@{d}", self.name()),
            (None, Some(t)) => format!("{}:{t}", self.name()),
            (None, None) => format!("{}:{DEFAULT_TAG}", self.name()),
        }
    }
    /// The familiar (Docker UI) form: `docker.io/library/` and `docker.io/` dropped (`nginx:1.14.2`, `myorg/api:1.2`).
    pub fn familiar(&self) -> String {
        let mut name = if self.domain == DEFAULT_DOMAIN {
            match self.path.strip_prefix(OFFICIAL_REPO_PREFIX) {
                Some(rest) if !rest.contains('/') => rest.to_string(),
                _ => self.path.clone(),
            }
        } else {
            self.name()
        };
        if let Some(t) = &self.tag {
            name.push(':');
            name.push_str(t);
        }
        if let Some(d) = &self.digest {
            name.push('@');
            name.push_str(d);
        }
        name
    }
}

impl fmt::Display for Reference {
    /// The normalised reference as `ParseNormalizedNamed(...).String()` prints it: `name[:tag][@digest]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.domain, self.path)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Reference {
    type Err = ReferenceError;
    fn from_str(s: &str) -> Result<Reference, ReferenceError> {
        parse_reference(s)
    }
}

/// Parses and normalises an image reference as `reference.ParseNormalizedNamed` does: familiar
/// names get the `docker.io` domain and official images the `library/` namespace. No default tag is
/// added (see [`Reference::with_default_tag`]); `Display` shows the normalised form.
///
/// ```
/// use kubesim_images::parse_reference;
/// assert_eq!(parse_reference("nginx").unwrap().with_default_tag().to_string(), "docker.io/library/nginx:latest");
/// assert_eq!(parse_reference("myorg/api:1.2").unwrap().to_string(), "docker.io/myorg/api:1.2");
/// assert_eq!(parse_reference("localhost:5000/app").unwrap().domain(), "localhost:5000");
/// assert_eq!(parse_reference("Nginx").unwrap_err().to_string(),
///            "invalid reference format: repository name (library/Nginx) must be lowercase");
/// assert_eq!(parse_reference("nginx:").unwrap_err().to_string(), "invalid reference format");
/// ```
pub fn parse_reference(s: &str) -> Result<Reference, ReferenceError> {
    if is_identifier(s) {
        return Err(ReferenceError::HexIdentifier(s.to_string()));
    }
    let (domain, remainder) = split_docker_domain(s);
    let remote = match remainder.find(':') {
        Some(i) => &remainder[..i],
        None => &remainder[..],
    };
    if remote.to_lowercase() != remote {
        return Err(ReferenceError::RemoteNameNotLowercase(remote.to_string()));
    }
    let full = format!("{domain}/{remainder}");
    parse(&full)
}

/// `reference.Parse` on an already-qualified string. The domain is whatever the grammar finds.
fn parse(s: &str) -> Result<Reference, ReferenceError> {
    if s.is_empty() {
        return Err(ReferenceError::NameEmpty);
    }
    let Some((name, tag, digest)) = match_reference(s) else {
        let lower = s.to_lowercase();
        if lower != s && match_reference(&lower).is_some() {
            return Err(ReferenceError::NameContainsUppercase);
        }
        return Err(ReferenceError::InvalidFormat);
    };
    let (domain, path) = split_name(name).ok_or(ReferenceError::InvalidFormat)?;
    if path.len() > REPOSITORY_NAME_TOTAL_LENGTH_MAX {
        return Err(ReferenceError::NameTooLong);
    }
    if let Some(d) = digest {
        validate_digest(d)?;
    }
    if name.is_empty() {
        return Err(ReferenceError::NameEmpty);
    }
    Ok(Reference { domain: domain.to_string(), path: path.to_string(), tag: tag.map(str::to_string), digest: digest.map(str::to_string) })
}

/// `splitDockerDomain`.
fn split_docker_domain(name: &str) -> (String, String) {
    let Some((maybe_domain, maybe_remote)) = name.split_once('/') else {
        return (DEFAULT_DOMAIN.to_string(), format!("{OFFICIAL_REPO_PREFIX}{name}"));
    };
    let (domain, mut remote) = if maybe_domain == "localhost" {
        (maybe_domain.to_string(), maybe_remote.to_string())
    } else if maybe_domain == LEGACY_DEFAULT_DOMAIN {
        (DEFAULT_DOMAIN.to_string(), maybe_remote.to_string())
    } else if maybe_domain.contains(['.', ':']) {
        (maybe_domain.to_string(), maybe_remote.to_string())
    } else if maybe_domain.to_lowercase() != maybe_domain {
        // Uppercase namespaces are not allowed, so an uppercase first element is taken as a domain.
        (maybe_domain.to_string(), maybe_remote.to_string())
    } else {
        (DEFAULT_DOMAIN.to_string(), name.to_string())
    };
    if domain == DEFAULT_DOMAIN && !remote.contains('/') {
        remote = format!("{OFFICIAL_REPO_PREFIX}{remote}");
    }
    (domain, remote)
}

/// Matches `referencePat`: returns (name, tag, digest).
fn match_reference(s: &str) -> Option<(&str, Option<&str>, Option<&str>)> {
    let (name_tag, digest) = match s.split_once('@') {
        Some((a, b)) => {
            if !is_digest_pat(b) {
                return None;
            }
            (a, Some(b))
        }
        None => (s, None),
    };
    // A ':' after the first '/' (or in a string without '/') can only separate the tag: ports
    // belong to the domain, which must be followed by '/'.
    let first_slash = name_tag.find('/');
    if let Some(i) = name_tag.rfind(':') {
        if first_slash.is_none_or(|fs| i > fs) {
            let (name, tag) = (&name_tag[..i], &name_tag[i + 1..]);
            if is_tag(tag) && is_name(name) {
                return Some((name, Some(tag), digest));
            }
            return None;
        }
    }
    if is_name(name_tag) {
        return Some((name_tag, None, digest));
    }
    None
}

/// `anchoredNameRegexp`: splits into (domain, path); the domain is tried first, as the regexp does.
fn split_name(name: &str) -> Option<(&str, &str)> {
    if let Some((first, rest)) = name.split_once('/') {
        if is_domain_and_port(first) && is_remote_name(rest) {
            return Some((first, rest));
        }
    }
    if is_remote_name(name) {
        return Some(("", name));
    }
    None
}

fn is_name(s: &str) -> bool {
    split_name(s).is_some()
}

fn is_identifier(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_tag(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= 128 && is_word(b[0]) && b[1..].iter().all(|&c| is_word(c) || c == b'.' || c == b'-')
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn is_domain_component(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b[0].is_ascii_alphanumeric() && b[b.len() - 1].is_ascii_alphanumeric() && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'-')
}

fn is_domain_and_port(s: &str) -> bool {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let Some(end) = rest.find(']') else { return false };
        let (v6, after) = (&rest[..end], &rest[end + 1..]);
        if v6.is_empty() || !v6.bytes().all(|c| c.is_ascii_hexdigit() || c == b':') {
            return false;
        }
        (None, after)
    } else {
        match s.find(':') {
            Some(i) => (Some(&s[..i]), &s[i..]),
            None => (Some(s), ""),
        }
    };
    if let Some(host) = host {
        if !host.split('.').all(is_domain_component) {
            return false;
        }
    }
    match port.strip_prefix(':') {
        None => port.is_empty(),
        Some(p) => !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()),
    }
}

fn is_remote_name(s: &str) -> bool {
    !s.is_empty() && s.split('/').all(is_path_component)
}

/// `[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*`
fn is_path_component(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let mut i = 0;
    let run = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && alnum(b[*i]) {
            *i += 1;
        }
        *i > start
    };
    if !run(&mut i) {
        return false;
    }
    while i < b.len() {
        match b[i] {
            b'.' => i += 1,
            b'_' => {
                i += 1;
                if i < b.len() && b[i] == b'_' {
                    i += 1;
                }
            }
            b'-' => {
                while i < b.len() && b[i] == b'-' {
                    i += 1;
                }
            }
            _ => return false,
        }
        if !run(&mut i) {
            return false;
        }
    }
    true
}

/// `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][[:xdigit:]]{32,}`
fn is_digest_pat(s: &str) -> bool {
    let Some((alg, hex)) = s.split_once(':') else { return false };
    if hex.len() < 32 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        return false;
    }
    let b = alg.as_bytes();
    let mut i = 0;
    loop {
        if i >= b.len() || !b[i].is_ascii_alphabetic() {
            return false;
        }
        i += 1;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        if i == b.len() {
            return true;
        }
        if !matches!(b[i], b'-' | b'_' | b'+' | b'.') {
            return false;
        }
        i += 1;
    }
}

/// go-digest `Digest.Validate` with sha256, sha384 and sha512 registered.
fn validate_digest(s: &str) -> Result<(), ReferenceError> {
    let Some(i) = s.find(':').filter(|&i| i > 0 && i + 1 < s.len()) else {
        return Err(ReferenceError::DigestInvalidFormat);
    };
    let (alg, encoded) = (&s[..i], &s[i + 1..]);
    let size = match alg {
        "sha256" => 32,
        "sha384" => 48,
        "sha512" => 64,
        _ => return Err(ReferenceError::DigestUnsupported),
    };
    if encoded.len() != size * 2 {
        return Err(ReferenceError::DigestInvalidLength);
    }
    if !encoded.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)) {
        return Err(ReferenceError::DigestInvalidFormat);
    }
    Ok(())
}
