//! The catalogue: every image of the docs corpus resolves, missing tags and unreachable registries
//! fail with containerd's texts, unknown repositories are generic, and per-image facts.

use std::path::Path;

use kubesim_images::{repositories, repository, resolve, PullError, PullPath};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus/k8s-docs-examples");

/// Every `image:` of the Kubernetes documentation example corpus (skipped when the corpus is absent).
fn corpus_images() -> Option<Vec<(String, String)>> {
    let root = Path::new(CORPUS);
    if !root.is_dir() {
        return None;
    }
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                let text = std::fs::read_to_string(&path).ok()?;
                for line in text.lines() {
                    let t = line.trim_start().trim_start_matches("- ");
                    if let Some(rest) = t.strip_prefix("image:") {
                        let image = rest.trim().trim_end_matches(',').trim_matches(|c| c == '"' || c == '\'').to_string();
                        if !image.is_empty() {
                            out.push((path.display().to_string(), image));
                        }
                    }
                }
            }
        }
    }
    out.sort();
    Some(out)
}

#[test]
fn every_corpus_image_resolves() {
    let Some(images) = corpus_images() else {
        eprintln!("corpus not found at {CORPUS}; skipping");
        return;
    };
    assert!(images.len() > 50, "found only {} images", images.len());
    let mut generic = Vec::new();
    for (file, image) in &images {
        let info = resolve(image).unwrap_or_else(|e| panic!("{file}: {image}: {e}"));
        assert!(!info.default_command().is_empty() || !info.generic, "{image}: no command");
        assert!(info.compressed_size > 0, "{image}: no size");
        assert!(info.digest.starts_with("sha256:") && info.digest.len() == 71, "{image}: digest {}", info.digest);
        assert!(info.image_id.starts_with("sha256:") && info.image_id.len() == 71, "{image}: id {}", info.image_id);
        if info.generic {
            generic.push(image.clone());
        }
    }
    // The docs' own placeholder image is catalogued; nothing in the corpus needs the generic stand-in.
    assert!(generic.is_empty(), "generic: {generic:?}");
}

#[test]
fn missing_tags_fail_as_containerd_reports_them() {
    let err = resolve("nginx:1.161").unwrap_err();
    assert_eq!(err, PullError::NotFound { reference: "docker.io/library/nginx:1.161".into() });
    assert_eq!(err.grpc_code(), "NotFound");
    assert_eq!(
        err.message(),
        "failed to pull and unpack image \"docker.io/library/nginx:1.161\": failed to resolve reference \"docker.io/library/nginx:1.161\": docker.io/library/nginx:1.161: not found"
    );
    assert_eq!(
        err.message_via(PullPath::TransferService),
        "failed to pull and unpack image \"docker.io/library/nginx:1.161\": failed to resolve image: docker.io/library/nginx:1.161: not found"
    );
    assert_eq!(
        err.kubelet_message("nginx:1.161"),
        "Failed to pull image \"nginx:1.161\": rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:1.161\": failed to resolve reference \"docker.io/library/nginx:1.161\": docker.io/library/nginx:1.161: not found"
    );
    assert_eq!(err.kubelet_reason(), "ErrImagePull");
    // the Kubernetes Basics tutorial's deliberate mistake
    assert!(matches!(resolve("gcr.io/google-samples/kubernetes-bootcamp:v10"), Err(PullError::NotFound { .. })));
    // tags that never existed: nginx skipped 1.13.4 and 1.21.2; agnhost has no latest
    for image in ["nginx:1.13.4", "nginx:1.21.2", "nginx:1.14.3", "registry.k8s.io/e2e-test-images/agnhost", "busybox:1.28.5", "mysql:5.8", "redis:5.1"] {
        assert!(matches!(resolve(image), Err(PullError::NotFound { .. })), "{image} should not exist");
    }
    let d = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    let err = resolve(&format!("nginx@{d}")).unwrap_err();
    assert_eq!(err.message(), format!("failed to pull and unpack image \"docker.io/library/nginx@{d}\": failed to resolve reference \"docker.io/library/nginx@{d}\": docker.io/library/nginx@{d}: not found"));
}

#[test]
fn invalid_registries_fail_with_the_dns_error() {
    let err = resolve("registry.invalid/app:1").unwrap_err();
    assert_eq!(err.grpc_code(), "Unknown");
    assert_eq!(
        err.message(),
        "failed to pull and unpack image \"registry.invalid/app:1\": failed to resolve reference \"registry.invalid/app:1\": failed to do request: Head \"https://registry.invalid/v2/app/manifests/1\": dial tcp: lookup registry.invalid: no such host"
    );
    let err = resolve("my.registry.invalid:5000/team/api").unwrap_err();
    assert_eq!(
        err.message(),
        "failed to pull and unpack image \"my.registry.invalid:5000/team/api:latest\": failed to resolve reference \"my.registry.invalid:5000/team/api:latest\": failed to do request: Head \"https://my.registry.invalid:5000/v2/team/api/manifests/latest\": dial tcp: lookup my.registry.invalid: no such host"
    );
    let err = resolve("Nginx").unwrap_err();
    assert_eq!(err.kubelet_reason(), "InvalidImageName");
    assert_eq!(err.kubelet_message("Nginx"), "Failed to apply default image tag \"Nginx\": couldn't parse image name \"Nginx\": invalid reference format: repository name (library/Nginx) must be lowercase");
}

#[test]
fn unknown_repositories_are_generic() {
    let app = resolve("myorg/api:1.2").unwrap();
    assert!(app.generic);
    assert_eq!(app.reference, "docker.io/myorg/api:1.2");
    assert_eq!(app.repo_tags, ["docker.io/myorg/api:1.2"]);
    assert!(app.digest_synthetic);
    assert_eq!(app.os.flavour, "debian");
    assert_eq!(app.program("/bin/sh"), Some("dash"));
    assert_eq!(app.default_command(), ["/app/server"]);
    assert_eq!(app.program("/app/server"), Some("generic-server"));
    assert!(app.notes[0].contains("not in the image catalogue"));
    // stable per reference, different between references
    assert_eq!(resolve("myorg/api:1.2").unwrap().digest, app.digest);
    assert_ne!(resolve("myorg/api:1.3").unwrap().digest, app.digest);
    assert!(resolve("ghcr.io/someone/tool").unwrap().generic);
}

#[test]
fn nginx_1_14_2() {
    let i = resolve("nginx:1.14.2").unwrap();
    assert_eq!(i.reference, "docker.io/library/nginx:1.14.2");
    assert_eq!(i.repo_digest, "docker.io/library/nginx@sha256:f7988fb6c02e0ce69257d9bd9cf37ae20a60f1df7563c3a2a6abe24160306b8d");
    assert!(!i.digest_synthetic);
    assert_eq!(i.compressed_size, 44_705_866);
    // 1.14.2 predates the entrypoint script (1.19) and the SIGQUIT stop signal (1.19.5)
    assert!(i.config.entrypoint.is_empty());
    assert_eq!(i.config.cmd, ["nginx", "-g", "daemon off;"]);
    assert_eq!(i.config.stop_signal.as_deref(), Some("SIGTERM"));
    assert_eq!(i.config.exposed_ports, ["80/tcp"]);
    assert_eq!(
        i.config.env,
        ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "NGINX_VERSION=1.14.2-1~stretch", "NJS_VERSION=1.14.2.0.2.6-1~stretch"]
    );
    assert_eq!((i.os.flavour.as_str(), i.os.version.as_str(), i.os.codename.as_str()), ("debian", "9", "stretch"));
    assert_eq!(i.program("/usr/sbin/nginx"), Some("nginx"));
    assert_eq!(i.program("/bin/bash"), Some("bash"));
    assert_eq!(i.program("/usr/bin/curl"), None);
    assert_eq!(i.which("ps"), None);
    let index = i.file("/usr/share/nginx/html/index.html").unwrap();
    assert_eq!(index.data.len(), 612);
    assert!(index.data.contains("<title>Welcome to nginx!</title>"));
    assert_eq!(i.file("/usr/share/nginx/html/50x.html").unwrap().data.len(), 537);
    assert!(i.file("/etc/nginx/nginx.conf").unwrap().data.contains("worker_processes  1;"));
    assert!(i.file("/etc/nginx/conf.d/default.conf").unwrap().data.contains("listen       80;"));
    assert!(i.file("/etc/os-release").unwrap().data.starts_with("PRETTY_NAME=\"Debian GNU/Linux 9 (stretch)\"\n"));
    // nginx:1.14 is the same build
    let minor = resolve("nginx:1.14").unwrap();
    assert_eq!((minor.resolved_tag.as_str(), minor.digest.as_str()), ("1.14.2", i.digest.as_str()));
    assert_eq!(minor.repo_tags, ["docker.io/library/nginx:1.14"]);
}

#[test]
fn nginx_latest_and_variants() {
    let i = resolve("nginx").unwrap();
    assert_eq!(i.reference, "docker.io/library/nginx:latest");
    assert_eq!(i.resolved_tag, "1.29.1");
    assert_eq!(i.config.entrypoint, ["/docker-entrypoint.sh"]);
    assert_eq!(i.config.cmd, ["nginx", "-g", "daemon off;"]);
    assert_eq!(i.config.stop_signal.as_deref(), Some("SIGQUIT"));
    assert_eq!(i.env_var("NGINX_VERSION"), Some("1.29.1"));
    assert_eq!((i.os.version.as_str(), i.os.merged_usr), ("12", true));
    assert_eq!(i.program("/usr/bin/curl"), Some("curl"));
    assert_eq!(i.program("/bin/ls"), Some("coreutils"));
    assert_eq!(i.program("/usr/bin/ls"), Some("coreutils"));
    assert_eq!(i.which("sh"), Some(("/usr/bin/sh".to_string(), "dash")));
    assert_eq!(i.file("/usr/share/nginx/html/index.html").unwrap().data.len(), 615);
    assert!(i.file("/etc/nginx/nginx.conf").unwrap().data.contains("pid        /run/nginx.pid;"));
    assert_eq!(resolve("nginx:stable").unwrap().resolved_tag, "1.28.0");
    assert_eq!(resolve("nginx:mainline").unwrap().resolved_tag, "1.29.1");
    assert_eq!(resolve("nginx:1.15").unwrap().resolved_tag, "1.15.12");
    assert_eq!(resolve("nginx:1.16.1").unwrap().repo_digest, "docker.io/library/nginx@sha256:d20aa6d1cae56fd17cd458f4807e0de462caf2336f0b70b5eeb69fcaaf30dd9c");
    assert_eq!(resolve("nginx:1.7.9").unwrap().config.exposed_ports, ["80/tcp", "443/tcp"]);
    // the alpine image: busybox userland
    let a = resolve("nginx:alpine").unwrap();
    assert_eq!(a.resolved_tag, "1.29.1-alpine");
    assert_eq!(a.os.flavour, "alpine");
    assert_eq!(a.os.version, "3.22.1");
    assert_eq!(a.program("/bin/sh"), Some("busybox"));
    assert_eq!(a.program("/usr/bin/wget"), Some("busybox"));
    assert_eq!(a.program("/usr/sbin/nginx"), Some("nginx"));
    assert_eq!(a.config.entrypoint, ["/docker-entrypoint.sh"]);
    assert!(a.bases[0].starts_with("docker.io/library/nginx:1.29.1-alpine-slim"), "{:?}", a.bases);
    // pinned variants fall back to their family with the right base
    let p = resolve("nginx:1.25.1-alpine3.17").unwrap();
    assert_eq!(p.os.version, "3.17.10");
    assert_eq!(resolve("nginx:1.29.1-bookworm").unwrap().digest, i.digest);
    assert_eq!(resolve("nginx:bookworm-perl").unwrap().program("/usr/lib/nginx/modules/ngx_http_perl_module.so"), Some("nginx-module"));
}

#[test]
fn busybox() {
    let i = resolve("busybox:1.28").unwrap();
    assert_eq!(i.resolved_tag, "1.28.4");
    assert!(i.config.entrypoint.is_empty());
    assert_eq!(i.config.cmd, ["sh"]);
    assert_eq!(i.os.flavour, "busybox");
    assert_eq!(i.os.libc, "uclibc");
    assert_eq!(i.repo_digest, "docker.io/library/busybox@sha256:141c253bc4c3fd0a201d32dc1f493bcf3fff003b6df416dea4f41046e0f37d47");
    assert_eq!(i.program("/bin/nslookup"), Some("busybox-1.28"), "1.28's nslookup (libc resolver, old output)");
    for applet in ["sh", "ls", "wget", "ping", "sleep", "httpd", "vi", "nc", "ps"] {
        assert_eq!(i.program(&format!("/bin/{applet}")), Some("busybox"), "{applet}");
    }
    assert!(i.file("/etc/os-release").is_none(), "busybox has no os-release");
    assert!(i.compressed_size < 1_000_000);
    let latest = resolve("busybox").unwrap();
    assert_eq!(latest.resolved_tag, "1.37.0");
    assert_eq!(latest.os.libc, "glibc");
    assert_eq!(latest.program("/bin/tree"), Some("busybox"));
    assert_eq!(resolve("docker.io/library/busybox").unwrap().reference, "docker.io/library/busybox:latest");
    assert_eq!(resolve("busybox:musl").unwrap().os.libc, "musl");
    let bb = resolve("registry.k8s.io/busybox").unwrap();
    assert_eq!(bb.repo_digest, "registry.k8s.io/busybox@sha256:d8d3bc2c183ed2f9f10e7258f84971202325ee6011ba137112e01e30f206de67");
    assert_eq!(bb.config.cmd, ["sh"]);
    assert_eq!(resolve("k8s.gcr.io/busybox").unwrap().digest, bb.digest);
    assert_eq!(resolve("k8s.gcr.io/busybox").unwrap().reference, "k8s.gcr.io/busybox:latest");
    // by digest: the recorded digest finds its build; containerd keeps no tag for it
    let d = resolve("busybox@sha256:141c253bc4c3fd0a201d32dc1f493bcf3fff003b6df416dea4f41046e0f37d47").unwrap();
    assert_eq!(d.resolved_tag, "1.28.4");
    assert!(d.repo_tags.is_empty());
    assert_eq!(d.reference, "docker.io/library/busybox@sha256:141c253bc4c3fd0a201d32dc1f493bcf3fff003b6df416dea4f41046e0f37d47");
}

#[test]
fn distributions() {
    let d = resolve("debian").unwrap();
    assert_eq!(d.program("/bin/sh"), Some("dash"));
    assert_eq!(d.program("/bin/bash"), Some("bash"));
    assert_eq!(d.program("/bin/ls"), Some("coreutils"));
    for missing in ["ps", "curl", "wget", "nslookup", "ping", "ip"] {
        assert_eq!(d.which(missing), None, "debian has no {missing}");
    }
    assert_eq!(d.config.cmd, ["bash"]);
    assert_eq!(d.os.version, "13");
    assert!(d.file("/etc/os-release").unwrap().data.contains("DEBIAN_VERSION_FULL=13.0\n"));
    assert_eq!(resolve("debian:bookworm-slim").unwrap().file("/etc/debian_version").unwrap().data, "12.11\n");
    assert_eq!(resolve("debian:bullseye").unwrap().os.codename, "bullseye");
    let u = resolve("ubuntu").unwrap();
    assert_eq!(u.resolved_tag, "24.04");
    assert_eq!(u.config.cmd, ["/bin/bash"]);
    assert!(u.file("/etc/os-release").unwrap().data.contains("VERSION_CODENAME=noble"));
    assert_eq!(u.program("/bin/sh"), Some("dash"));
    let a = resolve("alpine").unwrap();
    assert_eq!(a.config.cmd, ["/bin/sh"]);
    assert_eq!(a.program("/sbin/apk"), Some("apk-tools"));
    assert_eq!(a.program("/bin/sh"), Some("busybox"));
    assert_eq!(a.file("/etc/alpine-release").unwrap().data, "3.22.1\n");
    assert!(a.file("/etc/os-release").unwrap().data.contains("PRETTY_NAME=\"Alpine Linux v3.22\""));
}

#[test]
fn language_images() {
    let perl = resolve("perl").unwrap();
    assert_eq!(perl.program("/usr/local/bin/perl"), Some("perl"));
    assert_eq!(perl.which("bash").map(|(_, i)| i), Some("bash"));
    assert_eq!(perl.which("perl").map(|(p, _)| p).as_deref(), Some("/usr/local/bin/perl"));
    assert_eq!(perl.which("ps").map(|(_, i)| i), Some("procps"), "buildpack-deps has procps");
    assert_eq!(perl.config.cmd, ["perl5.42.0", "-de0"]);
    let p5 = resolve("perl:5.34.0").unwrap();
    assert_eq!(p5.config.cmd, ["perl5.34.0", "-de0"]);
    let py = resolve("python").unwrap();
    assert_eq!(py.which("python3").map(|(_, i)| i), Some("python3"));
    assert_eq!(py.config.cmd, ["python3"]);
    assert_eq!(py.env_var("PYTHON_VERSION"), Some("3.13.7"));
    assert_eq!(py.env_var("PATH"), Some("/usr/local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
    let bash = resolve("docker.io/library/bash:5").unwrap();
    assert_eq!(bash.program("/usr/local/bin/bash"), Some("bash"));
    assert_eq!(bash.program("/bin/sh"), Some("busybox"));
    assert_eq!(bash.config.entrypoint, ["docker-entrypoint.sh"]);
    assert_eq!(bash.config.cmd, ["bash"]);
    assert_eq!(bash.os.flavour, "alpine");
    let node = resolve("node:20").unwrap();
    assert_eq!(node.config.entrypoint, ["docker-entrypoint.sh"]);
    assert_eq!(node.config.cmd, ["node"]);
    assert!(node.env_var("NODE_VERSION").unwrap().starts_with("20."));
}

#[test]
fn servers() {
    let r = resolve("redis:5").unwrap();
    assert_eq!(r.config.entrypoint, ["docker-entrypoint.sh"]);
    assert_eq!(r.config.cmd, ["redis-server"]);
    assert_eq!(r.config.working_dir, "/data");
    assert_eq!(r.config.volumes, ["/data"]);
    assert_eq!(r.config.exposed_ports, ["6379/tcp"]);
    assert_eq!(r.program("/usr/local/bin/redis-server"), Some("redis-server"));
    assert_eq!(resolve("docker.io/redis:6.0.5").unwrap().env_var("REDIS_VERSION"), Some("6.0.5"));
    for (tag, os, version) in [("5.6", "debian", "9"), ("5.7", "oraclelinux", "7"), ("8.0", "oraclelinux", "9")] {
        let m = resolve(&format!("mysql:{tag}")).unwrap();
        assert_eq!((m.os.flavour.as_str(), m.os.version.as_str()), (os, version), "mysql:{tag}");
        assert_eq!(m.config.cmd, ["mysqld"]);
        assert_eq!(m.program("/usr/sbin/mysqld"), Some("mysqld"));
        assert_eq!(m.env_var("MYSQL_MAJOR"), Some(tag));
    }
    let h = resolve("httpd").unwrap();
    assert_eq!(h.config.cmd, ["httpd-foreground"]);
    assert_eq!(h.config.stop_signal.as_deref(), Some("SIGWINCH"));
    assert_eq!(h.config.working_dir, "/usr/local/apache2");
    assert_eq!(h.env_var("PATH"), Some("/usr/local/apache2/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
    assert_eq!(h.file("/usr/local/apache2/htdocs/index.html").unwrap().data, "<html><body><h1>It works!</h1></body></html>\n");
    let pg = resolve("postgres:16").unwrap();
    assert_eq!(pg.config.stop_signal.as_deref(), Some("SIGINT"));
    assert_eq!(pg.env_var("PGDATA"), Some("/var/lib/postgresql/data"));
    assert_eq!(pg.program("/usr/lib/postgresql/16/bin/postgres"), Some("postgres"));
    let wp = resolve("wordpress:6.2.1-apache").unwrap();
    assert_eq!(wp.config.cmd, ["apache2-foreground"]);
    assert_eq!(wp.program("/usr/local/bin/docker-entrypoint.sh"), Some("wordpress-entrypoint"));
    assert_eq!(wp.config.exposed_ports, ["80/tcp"]);
}

#[test]
fn kubernetes_images() {
    let pause = resolve("registry.k8s.io/pause:3.10").unwrap();
    assert_eq!(pause.config.entrypoint, ["/pause"]);
    assert_eq!(pause.config.user, "65535:65535");
    assert_eq!(pause.os.flavour, "scratch");
    assert_eq!(pause.repo_digest, "registry.k8s.io/pause@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a");
    assert!(pause.compressed_size < 400_000);
    assert_eq!(pause.which("sh"), None);
    let ag = resolve("registry.k8s.io/e2e-test-images/agnhost:2.40").unwrap();
    assert_eq!(ag.config.entrypoint, ["/agnhost"]);
    assert_eq!(ag.config.cmd, ["pause"]);
    assert_eq!(ag.program("/agnhost"), Some("agnhost"));
    assert_eq!(ag.program("/bin/bash"), Some("bash"));
    assert_eq!(ag.which("curl").map(|(_, i)| i), Some("curl"));
    assert_eq!(ag.which("dig").map(|(_, i)| i), Some("bind9-dig"));
    assert_eq!(ag.config.exposed_ports, ["80/tcp", "8080/tcp", "8081/tcp", "9376/tcp"]);
    let hpa = resolve("registry.k8s.io/hpa-example").unwrap();
    assert_eq!(hpa.config.entrypoint, ["docker-php-entrypoint"]);
    assert_eq!(hpa.config.cmd, ["apache2-foreground"]);
    let php = hpa.file("/var/www/html/index.php").unwrap();
    assert_eq!(php.mode, 0o755);
    assert!(php.data.contains("sqrt") && php.data.contains("echo \"OK!\";"));
    assert_eq!(hpa.env_var("PHP_VERSION"), Some("5.6.40"));
    let zk = resolve("registry.k8s.io/kubernetes-zookeeper:1.0-3.4.10").unwrap();
    assert_eq!(zk.which("zookeeper-ready").map(|(_, i)| i), Some("zookeeper-scripts"));
    assert_eq!(zk.which("start-zookeeper").map(|(_, i)| i), Some("zookeeper-scripts"));
    assert_eq!(zk.os.version, "16.04");
    assert_eq!(zk.env_var("JAVA_HOME"), Some("/usr/lib/jvm/java-8-openjdk-amd64"));
    assert!(matches!(resolve("registry.k8s.io/kubernetes-zookeeper:1.0-3.4.9"), Err(PullError::NotFound { .. })));
    let hello = resolve("gcr.io/google-samples/hello-app:2.0").unwrap();
    assert_eq!(hello.env_var("PORT"), Some("8080"));
    assert_eq!(hello.program("/hello-app"), Some("hello-app"));
    assert_eq!(hello.which("sh"), None, "distroless has no shell");
    let etcd = resolve("registry.k8s.io/etcd:3.5.1-0").unwrap();
    assert_eq!(etcd.program("/usr/local/bin/etcd"), Some("etcd"));
    let stress = resolve("vish/stress").unwrap();
    assert_eq!(stress.config.entrypoint, ["/stress", "-logtostderr"]);
    assert!(stress.config.cmd.is_empty());
    assert_eq!(resolve("polinux/stress").unwrap().which("stress").map(|(_, i)| i), Some("stress"));
    assert_eq!(resolve("registry.k8s.io/goproxy:0.1").unwrap().config.exposed_ports, ["8080/tcp"]);
    assert_eq!(resolve("registry.k8s.io/nginx-slim:0.8").unwrap().program("/usr/sbin/nginx"), Some("nginx"));
    assert_eq!(resolve("registry.k8s.io/e2e-test-images/jessie-dnsutils:1.3").unwrap().which("nslookup").map(|(_, i)| i), Some("bind9-nslookup"));
    assert_eq!(resolve("curlimages/curl").unwrap().config.entrypoint, ["/entrypoint.sh"]);
    // The ingress-nginx manifests pin tag and digest.
    let ctl = resolve("registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:594ceea76b01c592858f803f9ff4d2cb40542cae2060410b2c95f75907d659e1").unwrap();
    assert_eq!(ctl.config.entrypoint, ["/usr/bin/dumb-init", "--"]);
    assert_eq!(ctl.program("/nginx-ingress-controller"), Some("ingress-nginx-controller"));
    assert_eq!(ctl.os.flavour, "alpine");
    assert!(resolve("registry.k8s.io/ingress-nginx/controller:v1.12.1").is_ok());
    assert!(matches!(resolve("registry.k8s.io/ingress-nginx/controller:v1.16.0"), Err(PullError::NotFound { .. })));
    let certgen =
        resolve("registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1.6.9@sha256:01038e7de14b78d702d2849c3aad72fd25903c4765af63cf16aa3398f5d5f2dd").unwrap();
    assert_eq!(certgen.program("/kube-webhook-certgen"), Some("kube-webhook-certgen"));
    assert!(resolve("registry.k8s.io/ingress-nginx/kube-webhook-certgen:v20231011-8b53cabe0").is_ok());
}

#[test]
fn catalogue_listing() {
    let repos = repositories();
    assert!(repos.len() >= 40, "{}", repos.len());
    assert!(repos.iter().all(|r| !r.summary.is_empty()), "every repository has a summary");
    let nginx = repository("nginx").unwrap();
    assert!(nginx.official);
    assert!(nginx.tag_count > 800, "{}", nginx.tag_count);
    assert!(nginx.floating.contains(&("stable".to_string(), "1.28.0".to_string())));
    let tags = nginx.tags();
    assert!(tags.contains(&"1.14.2".to_string()) && tags.contains(&"1.14".to_string()) && tags.contains(&"stable-alpine".to_string()));
    assert!(!tags.contains(&"1.13.4".to_string()));
    assert!(repository("kubesim.invalid/generic").is_none());
    // every listed tag of every repository resolves
    for repo in &repos {
        for tag in repo.tags().iter().take(400) {
            let image = format!("{}:{tag}", repo.name);
            assert!(resolve(&image).is_ok(), "{image}: {:?}", resolve(&image).err());
        }
    }
}

/// Images the Kubernetes task and tutorial pages use in `kubectl run --image=…`, `kubectl create
/// deployment --image=…` and inline manifests (beyond the example corpus).
#[test]
fn docs_page_images_resolve() {
    for image in [
        "registry.k8s.io/e2e-test-images/agnhost:2.39",
        "gcr.io/google-samples/kubernetes-bootcamp:v1",
        "jocatalin/kubernetes-bootcamp:v2",
        "nginx:1.16.1",
        "nginx:1.7.9",
        "busybox:1.28",
        "registry.k8s.io/echoserver:1.10",
        "registry.k8s.io/echoserver:1.4",
        "gcr.io/google-samples/hello-app:1.0",
        "gcr.io/google-samples/node-hello:1.0",
        "mysql:5.7",
        "mysql:5.6",
        "wordpress:6.2.1-apache",
        "mongo:5.0",
        "registry.k8s.io/serve_hostname",
        "radial/busyboxplus:curl",
        "ubuntu",
        "ubuntu:18.04",
        "registry.k8s.io/pause:3.1",
        "registry.k8s.io/pause:2.0",
        "alpine:latest",
        "docker.io/alpine:latest",
        "curlimages/curl",
        "perl:5.34.0",
        "python:3",
        "rabbitmq:3",
        "redis",
        "gcr.io/google-containers/busybox",
        "registry.k8s.io/busybox:1.24",
        "registry.k8s.io/e2e-test-images/jessie-dnsutils:1.3",
        "gcr.io/kubernetes-e2e-test-images/dnsutils:1.3",
        "tutum/dnsutils",
        "registry.k8s.io/nginx-slim:0.21",
        "gcr.io/google-samples/cassandra:v14",
        "us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5",
        "httpd:2.4",
        "postgres",
        "node:20",
        "golang:1.22",
        "memcached",
        "cassandra",
        "centos:7",
        "debian:stable-slim",
    ] {
        let info = resolve(image).unwrap_or_else(|e| panic!("{image}: {e}"));
        assert!(!info.generic, "{image} should be catalogued");
    }
}

/// echoserver runs its server without a command from the pod: nginx in the foreground before
/// 1.9, run.sh (a self-signed certificate, then nginx) from 1.9 (kubernetes
/// test/images/echoserver's ENTRYPOINT).
#[test]
fn echoserver_runs_without_a_command() {
    let old = resolve("registry.k8s.io/echoserver:1.4").unwrap();
    assert!(old.config.entrypoint.is_empty());
    assert_eq!(old.config.cmd, ["nginx", "-g", "daemon off;"]);
    let new = resolve("registry.k8s.io/echoserver:1.10").unwrap();
    assert_eq!(new.config.entrypoint, ["/usr/local/bin/run.sh"]);
    assert_eq!(new.programs.get("/usr/local/bin/run.sh").map(String::as_str), Some("echoserver"));
    assert_eq!(new.config.exposed_ports, ["8080/tcp", "8443/tcp"]);
}
