//! Reference parsing, mirroring the tables of `github.com/distribution/reference`
//! (`normalize_test.go`, `reference_test.go`), which containerd and the kubelet use.

use kubesim_images::{parse_reference, ReferenceError};

/// normalize_test.go `TestValidateReferenceName`.
#[test]
fn validate_reference_name() {
    let valid = [
        "docker/docker",
        "library/debian",
        "debian",
        "docker.io/docker/docker",
        "docker.io/library/debian",
        "docker.io/debian",
        "index.docker.io/docker/docker",
        "index.docker.io/library/debian",
        "index.docker.io/debian",
        "127.0.0.1:5000/docker/docker",
        "127.0.0.1:5000/library/debian",
        "127.0.0.1:5000/debian",
        "192.168.0.1",
        "192.168.0.1:80",
        "192.168.0.1:8/debian",
        "192.168.0.2:25000/debian",
        "thisisthesongthatneverendsitgoesonandonandonthisisthesongthatnev",
        "[fc00::1]:5000/docker",
        "[fc00::1]:5000/docker/docker",
        "[fc00:1:2:3:4:5:6:7]:5000/library/debian",
        "docker.io/1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a",
        "Docker/docker",
        "DOCKER/docker",
    ];
    for name in valid {
        assert!(parse_reference(name).is_ok(), "{name} should parse: {:?}", parse_reference(name));
    }
    let invalid = [
        "https://github.com/docker/docker",
        "docker/Docker",
        "-docker",
        "-docker/docker",
        "-docker.io/docker/docker",
        "docker///docker",
        "docker.io/docker/Docker",
        "docker.io/docker///docker",
        "[fc00::1]",
        "[fc00::1]:5000",
        "fc00::1:5000/debian",
        "[fe80::1%eth0]:5000/debian",
        "[2001:db8:3:4::192.0.2.33]:5000/debian",
        "1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a",
    ];
    for name in invalid {
        assert!(parse_reference(name).is_err(), "{name} should not parse");
    }
}

/// normalize_test.go `TestValidateRemoteName`.
#[test]
fn validate_remote_name() {
    for name in [
        "docker/docker",
        "thisisthesongthatneverendsitgoesonandonandonthisisthesongthatnev",
        "docker-rules/docker",
        "docker---rules/docker",
        "doc/docker",
        "d/docker",
        "jess/t",
        "dock__er/docker",
    ] {
        assert!(parse_reference(name).is_ok(), "{name} should parse");
    }
    let long = format!("{}/docker", "this_is_not_a_valid_namespace_because_its_lenth_is_greater_than_255_".repeat(4));
    for name in [
        "docker/Docker",
        "docker///docker",
        "1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a",
        "-docker/docker",
        "docker-/docker",
        "-docker-/docker",
        "____/____",
        "_docker/_docker",
        "dock..er/docker",
        "dock_.er/docker",
        "dock-.er/docker",
        "docker/",
        long.as_str(),
    ] {
        assert!(parse_reference(name).is_err(), "{name} should not parse");
    }
}

/// normalize_test.go `TestParseRepositoryInfo`: (remote name, familiar, full, ambiguous, domain).
#[test]
fn parse_repository_info() {
    let cases = [
        ("fooo/bar", "fooo/bar", "docker.io/fooo/bar", "index.docker.io/fooo/bar", "docker.io"),
        ("library/ubuntu", "ubuntu", "docker.io/library/ubuntu", "library/ubuntu", "docker.io"),
        ("nonlibrary/ubuntu", "nonlibrary/ubuntu", "docker.io/nonlibrary/ubuntu", "", "docker.io"),
        ("other/library", "other/library", "docker.io/other/library", "", "docker.io"),
        ("private/moonbase", "127.0.0.1:8000/private/moonbase", "127.0.0.1:8000/private/moonbase", "", "127.0.0.1:8000"),
        ("privatebase", "127.0.0.1:8000/privatebase", "127.0.0.1:8000/privatebase", "", "127.0.0.1:8000"),
        ("private/moonbase", "example.com/private/moonbase", "example.com/private/moonbase", "", "example.com"),
        ("privatebase", "example.com/privatebase", "example.com/privatebase", "", "example.com"),
        ("private/moonbase", "example.com:8000/private/moonbase", "example.com:8000/private/moonbase", "", "example.com:8000"),
        ("privatebasee", "example.com:8000/privatebasee", "example.com:8000/privatebasee", "", "example.com:8000"),
        ("library/ubuntu-12.04-base", "ubuntu-12.04-base", "docker.io/library/ubuntu-12.04-base", "index.docker.io/library/ubuntu-12.04-base", "docker.io"),
        ("library/foo", "foo", "docker.io/library/foo", "docker.io/foo", "docker.io"),
        ("library/foo/bar", "library/foo/bar", "docker.io/library/foo/bar", "", "docker.io"),
        ("store/foo/bar", "store/foo/bar", "docker.io/store/foo/bar", "", "docker.io"),
        ("bar", "Foo/bar", "Foo/bar", "", "Foo"),
        ("bar", "FOO/bar", "FOO/bar", "", "FOO"),
    ];
    for (remote, familiar, full, ambiguous, domain) in cases {
        for input in [familiar, full, ambiguous].into_iter().filter(|s| !s.is_empty()) {
            let r = parse_reference(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(r.familiar(), familiar, "familiar name of {input}");
            assert_eq!(r.to_string(), full, "full name of {input}");
            assert_eq!(r.domain(), domain, "domain of {input}");
            assert_eq!(r.path(), remote, "remote name of {input}");
        }
    }
}

/// normalize_test.go `TestNormalizedSplitHostname`.
#[test]
fn normalized_split_hostname() {
    let cases = [
        ("test.com/foo", "test.com", "foo"),
        ("test_com/foo", "docker.io", "test_com/foo"),
        ("docker/migrator", "docker.io", "docker/migrator"),
        ("test.com:8080/foo", "test.com:8080", "foo"),
        ("test-com:8080/foo", "test-com:8080", "foo"),
        ("foo", "docker.io", "library/foo"),
        ("xn--n3h.com/foo", "xn--n3h.com", "foo"),
        ("xn--n3h.com:18080/foo", "xn--n3h.com:18080", "foo"),
        ("docker.io/foo", "docker.io", "library/foo"),
        ("docker.io/library/foo", "docker.io", "library/foo"),
        ("docker.io/library/foo/bar", "docker.io", "library/foo/bar"),
    ];
    for (input, domain, path) in cases {
        let r = parse_reference(input).unwrap();
        assert_eq!((r.domain(), r.path()), (domain, path), "{input}");
    }
}

/// normalize_test.go `TestParseReferenceWithTagAndDigest` and `TestParseAnyReference` (named forms).
#[test]
fn tag_and_digest() {
    let short = "busybox:latest@sha256:86e0e091d0da6bde2456dbb48306f3956bbeb2eae1b5b9a43045843f69fe4aaa";
    let r = parse_reference(short).unwrap();
    assert_eq!(r.to_string(), format!("docker.io/library/{short}"));
    assert_eq!(r.familiar(), short);
    assert_eq!(r.tag(), Some("latest"));
    // containerd's ParseDockerRef drops the tag when a digest is present.
    assert_eq!(r.docker_ref(), "docker.io/library/busybox@sha256:86e0e091d0da6bde2456dbb48306f3956bbeb2eae1b5b9a43045843f69fe4aaa");
    let digest = "sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c";
    for (input, equivalent) in [
        ("redis", "docker.io/library/redis".to_string()),
        ("redis:latest", "docker.io/library/redis:latest".to_string()),
        ("docker.io/library/redis:latest", "docker.io/library/redis:latest".to_string()),
        (&*format!("redis@{digest}"), format!("docker.io/library/redis@{digest}")),
        ("dmcgowan/myapp", "docker.io/dmcgowan/myapp".to_string()),
        ("dmcgowan/myapp:latest", "docker.io/dmcgowan/myapp:latest".to_string()),
        ("docker.io/mcgowan/myapp:latest", "docker.io/mcgowan/myapp:latest".to_string()),
        (&*format!("dmcgowan/myapp@{digest}"), format!("docker.io/dmcgowan/myapp@{digest}")),
        (
            "dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9",
            "docker.io/library/dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9".to_string(),
        ),
        ("dbcc1", "docker.io/library/dbcc1".to_string()),
    ] {
        assert_eq!(parse_reference(input).unwrap().to_string(), equivalent, "{input}");
    }
}

/// The kubesim brief's normalisations and what the kubelet hands to the runtime.
#[test]
fn kubesim_normalisation() {
    let n = |s: &str| parse_reference(s).unwrap().with_default_tag().to_string();
    assert_eq!(n("nginx"), "docker.io/library/nginx:latest");
    assert_eq!(n("nginx:1.14.2"), "docker.io/library/nginx:1.14.2");
    assert_eq!(n("myorg/api:1.2"), "docker.io/myorg/api:1.2");
    assert_eq!(n("registry.k8s.io/pause:3.10"), "registry.k8s.io/pause:3.10");
    assert_eq!(n("localhost/app"), "localhost/app:latest");
    assert_eq!(n("localhost:5000/team/app:v1"), "localhost:5000/team/app:v1");
    assert_eq!(n("myregistry:5000/app"), "myregistry:5000/app:latest");
    assert_eq!(n("index.docker.io/library/redis:7"), "docker.io/library/redis:7");
    assert_eq!(n("docker.io/redis:6.0.5"), "docker.io/library/redis:6.0.5");
    assert_eq!(n("quay.io/fluentd_elasticsearch/fluentd:v5.0.1"), "quay.io/fluentd_elasticsearch/fluentd:v5.0.1");
    assert_eq!(
        n("us-docker.pkg.dev/google-samples/containers/gke/gb-redis-follower:v2"),
        "us-docker.pkg.dev/google-samples/containers/gke/gb-redis-follower:v2"
    );
    // a bare host:port is a familiar name with a tag, not a registry
    assert_eq!(n("localhost:5000"), "docker.io/library/localhost:5000");
    let d = "sha256:141c253bc4c3fd0a201d32dc1f493bcf3fff003b6df416dea4f41046e0f37d47";
    assert_eq!(n(&format!("busybox@{d}")), format!("docker.io/library/busybox@{d}"));
    assert_eq!(n(&format!("busybox:1.28@{d}")), format!("docker.io/library/busybox:1.28@{d}"));
    assert_eq!(parse_reference("registry.k8s.io:443/pause:3.9").unwrap().host(), "registry.k8s.io");
}

/// The error texts, as `docker pull`, containerd and the kubelet print them.
#[test]
fn error_messages() {
    let e = |s: &str| parse_reference(s).unwrap_err().to_string();
    assert_eq!(e("Nginx"), "invalid reference format: repository name (library/Nginx) must be lowercase");
    assert_eq!(e("Nginx:1.14.2"), "invalid reference format: repository name (library/Nginx) must be lowercase");
    assert_eq!(e("myorg/API:1"), "invalid reference format: repository name (myorg/API) must be lowercase");
    assert_eq!(e("nginx:"), "invalid reference format");
    assert_eq!(e("nginx:1.14.2 "), "invalid reference format");
    assert_eq!(e("https://harbor.example.com/release/name:1.1.0"), "invalid reference format");
    assert_eq!(e(":justtag"), "invalid reference format");
    assert_eq!(e("nginx:-tag"), "invalid reference format");
    assert_eq!(e(""), "invalid reference format");
    assert_eq!(e(&format!("nginx:{}", "a".repeat(129))), "invalid reference format");
    assert_eq!(e("repo@sha256:ffffffffffffffffffffffffffffffffff"), "invalid checksum digest length");
    assert_eq!(e("validname@invaliddigest:ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"), "unsupported digest algorithm");
    assert_eq!(e("nginx@sha256:FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"), "invalid checksum digest format");
    assert_eq!(
        e("1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a"),
        "invalid repository name (1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a), cannot specify 64-byte hexadecimal strings"
    );
    let long = format!("{}/docker", "a".repeat(256));
    assert_eq!(e(&long), "repository name must not be more than 255 characters");
    assert_eq!(
        parse_reference("Nginx").unwrap_err().kubelet_message("Nginx"),
        "Failed to apply default image tag \"Nginx\": couldn't parse image name \"Nginx\": invalid reference format: repository name (library/Nginx) must be lowercase"
    );
    assert!(matches!(parse_reference("Nginx"), Err(ReferenceError::RemoteNameNotLowercase(_))));
}
