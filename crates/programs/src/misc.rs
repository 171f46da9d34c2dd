//! The thinner models: `pause`, the generic server, and daemons modelled as start-up banner +
//! listening ports + a minimal protocol reply + signal behaviour (etcd, postgres, mongod,
//! memcached, rabbitmq, fluentd, kube-scheduler, cassandra with nodetool).

use crate::common::{self, go_response, CpuQueue, TcpClient, TcpStep};
use kubesim_os::net::http::Request;
use kubesim_os::program::{default_signal_exit, Incoming, Os, Outgoing, Program, Signal, Spawn, Step, Wake};
use std::collections::BTreeMap;

/// `registry.k8s.io/pause`: waits for a signal; SIGINT/SIGTERM → exit 0.
#[derive(Clone, Debug)]
pub struct Pause {
    spawn: Spawn,
    started: bool,
}

impl Pause {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> Pause {
        Pause { spawn: spawn.clone(), started: false }
    }
}

impl Program for Pause {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if !self.started {
            self.started = true;
            if self.spawn.argv.iter().skip(1).any(|a| a.eq_ignore_ascii_case("-v")) {
                common::out(os, "pause.c v3.10\n");
                return Step::Exit(0);
            }
            if os.pid() != 1 {
                common::err(os, "Warning: pause should be the first process\n");
            }
            return Step::Wait;
        }
        match wake {
            Wake::Signal(Signal::Term) => {
                common::err(os, "Shutting down, got signal: Terminated\n");
                Step::Exit(0)
            }
            Wake::Signal(Signal::Int) => {
                common::err(os, "Shutting down, got signal: Interrupt\n");
                Step::Exit(0)
            }
            Wake::Signal(Signal::Kill) => Step::Exit(137),
            _ => Step::Wait,
        }
    }
    fn memory_bytes(&self) -> u64 {
        320_000
    }
}

/// How a daemon answers connections.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Proto {
    /// A small HTTP page.
    Generic,
    /// etcd's HTTP endpoints (`/health`, `/version`, `/metrics`) and a kubesim key/value API.
    Etcd,
    /// PostgreSQL: `N` to an SSLRequest, else an ErrorResponse.
    Postgres,
    /// memcached's text protocol.
    Memcached,
    /// A fixed reply.
    Fixed(Vec<u8>),
    /// Cassandra: nodetool's kubesim protocol on 7199, nothing on CQL.
    Cassandra,
    /// The scheduler's /healthz.
    Healthz,
    /// CoreDNS: the health (8080 `/health`), ready (8181 `/ready`) and prometheus (9153
    /// `/metrics`) plugins over HTTP. DNS queries on 53 are answered by the fabric from the
    /// `kubernetes` plugin's view of the cluster (`kubesim_runtime::net::DnsServer`).
    CoreDns,
    /// The ingress-nginx controller: `/healthz` and `/metrics` on 10254. Requests on 80/443
    /// are routed by the fabric from the controller's rendered configuration
    /// (`kubesim_runtime::ingress`); until it is published nginx's default server answers 404.
    IngressNginx,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum DPhase {
    Start,
    Booting(u64),
    Serving,
    Done,
}

/// A daemon model.
#[derive(Clone, Debug)]
pub struct Daemon {
    spawn: Spawn,
    name: String,
    phase: DPhase,
    ports: Vec<(u16, bool)>,
    proto: Proto,
    boot_ms: u64,
    memory: u64,
    kv: BTreeMap<String, Vec<u8>>,
    cpu: CpuQueue,
    exit_code_on_term: i32,
    version: String,
    drained: bool,
}

fn ts_rfc3339(os: &dyn Os) -> String {
    let ms = os.unix_time_ms();
    format!("{}.{:03}Z", kubesim_os::time::strftime("%Y-%m-%dT%H:%M:%S", (ms / 1000) as i64, 0), ms % 1000)
}

fn klog_ts(os: &dyn Os, level: char) -> String {
    let ms = os.unix_time_ms();
    format!(
        "{level}{} {}.{:03}000       1",
        kubesim_os::time::strftime("%m%d", (ms / 1000) as i64, 0),
        kubesim_os::time::strftime("%H:%M:%S", (ms / 1000) as i64, 0),
        ms % 1000
    )
}

impl Daemon {
    fn new(spawn: &Spawn, name: &str, ports: Vec<(u16, bool)>, proto: Proto, boot_ms: u64, memory: u64) -> Daemon {
        Daemon {
            spawn: spawn.clone(),
            name: name.into(),
            phase: DPhase::Start,
            ports,
            proto,
            boot_ms,
            memory,
            kv: BTreeMap::new(),
            cpu: CpuQueue::default(),
            exit_code_on_term: 0,
            version: String::new(),
            drained: false,
        }
    }

    /// A generic server on `ports` (images the catalogue does not know).
    pub fn generic(ports: &[(u16, bool)]) -> Daemon {
        let p = if ports.is_empty() { vec![(80, false)] } else { ports.to_vec() };
        Daemon::new(&Spawn::default(), "generic", p, Proto::Generic, 0, 6_000_000)
    }

    /// etcd.
    pub fn etcd(spawn: &Spawn) -> Daemon {
        let mut d = Daemon::new(spawn, "etcd", vec![(2379, false), (2380, false)], Proto::Etcd, 300, 28_000_000);
        d.version = spawn.env.get("ETCD_VERSION").cloned().unwrap_or_else(|| "3.5.21".into());
        let f = common::Flags::parse(&spawn.argv[1.min(spawn.argv.len())..], |_| true);
        if let Some(u) = f.get("listen-client-urls") {
            let ports: Vec<(u16, bool)> =
                u.split(',').filter_map(|x| x.rsplit(':').next().and_then(|p| p.trim_end_matches('/').parse().ok())).map(|p| (p, false)).collect();
            if !ports.is_empty() {
                d.ports = ports;
                d.ports.push((2380, false));
            }
        }
        d
    }

    /// postgres (the server; the entrypoint handles initialisation).
    pub fn postgres(spawn: &Spawn) -> Daemon {
        let mut d = Daemon::new(spawn, "postgres", vec![(5432, false)], Proto::Postgres, 200, 32_000_000);
        d.version = spawn
            .env
            .get("PG_VERSION")
            .map(|v| v.split(['-', '~']).next().unwrap_or(v).to_string())
            .or_else(|| spawn.env.get("PG_MAJOR").map(|m| format!("{m}.4")))
            .unwrap_or_else(|| "17.6".into());
        d
    }

    /// mongod.
    pub fn mongod(spawn: &Spawn) -> Daemon {
        let mut d = Daemon::new(spawn, "mongod", vec![(27017, false)], Proto::Fixed(Vec::new()), 1_500, 95_000_000);
        d.version = spawn.env.get("MONGO_VERSION").cloned().unwrap_or_else(|| "8.0.13".into());
        d
    }

    /// memcached.
    pub fn memcached(spawn: &Spawn) -> Daemon {
        let mut d = Daemon::new(spawn, "memcached", vec![(11211, false)], Proto::Memcached, 0, 3_000_000);
        d.version = spawn.env.get("MEMCACHED_VERSION").cloned().unwrap_or_else(|| "1.6.39".into());
        d
    }

    /// rabbitmq-server.
    pub fn rabbitmq(spawn: &Spawn) -> Daemon {
        let mut d = Daemon::new(
            spawn,
            "rabbitmq",
            vec![(5672, false), (15672, false), (4369, false), (25672, false)],
            Proto::Fixed(b"AMQP\x00\x00\x09\x01".to_vec()),
            6_000,
            120_000_000,
        );
        d.version = spawn.env.get("RABBITMQ_VERSION").cloned().unwrap_or_else(|| "4.1.4".into());
        d
    }

    /// fluentd.
    pub fn fluentd(spawn: &Spawn) -> Daemon {
        Daemon::new(spawn, "fluentd", vec![(24224, false)], Proto::Fixed(Vec::new()), 2_000, 60_000_000)
    }

    /// kube-scheduler (a custom scheduler the docs build).
    pub fn kube_scheduler(spawn: &Spawn) -> Daemon {
        Daemon::new(spawn, "kube-scheduler", vec![(10259, false)], Proto::Healthz, 200, 25_000_000)
    }

    /// CoreDNS (`/coredns -conf /etc/coredns/Corefile`, the kube-dns Service's pods).
    pub fn coredns(spawn: &Spawn) -> Daemon {
        let mut d = Daemon::new(spawn, "coredns", vec![(53, true), (53, false), (8080, false), (8181, false), (9153, false)], Proto::CoreDns, 300, 14_000_000);
        d.version = "1.12.1".into();
        d
    }

    /// The ingress-nginx controller (`/nginx-ingress-controller --controller-class=...`);
    /// `image` gives the release (`registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:…`).
    pub fn ingress_nginx(spawn: &Spawn, image: &str) -> Daemon {
        let mut d = Daemon::new(spawn, "ingress-nginx", vec![(80, false), (443, false), (8443, false), (10254, false)], Proto::IngressNginx, 1_500, 95_000_000);
        let tag = image.split('@').next().unwrap_or(image).rsplit_once(':').map(|(_, t)| t).filter(|t| !t.contains('/')).unwrap_or("v1.15.1");
        d.version = tag.to_string();
        d
    }

    /// cassandra (`cassandra -f`, `/run.sh`).
    pub fn cassandra(spawn: &Spawn) -> Daemon {
        let mut d = Daemon::new(spawn, "cassandra", vec![(7000, false), (7001, false), (7199, false), (9042, false)], Proto::Cassandra, 25_000, 1_100_000_000);
        d.version = spawn.env.get("CASSANDRA_VERSION").cloned().unwrap_or_else(|| "3.11.2".into());
        d
    }

    fn banner(&mut self, os: &mut dyn Os) -> Result<(), i32> {
        let ts = ts_rfc3339(os);
        match self.name.as_str() {
            "generic" => {
                let p: Vec<String> = self.ports.iter().map(|(p, u)| format!("{p}/{}", if *u { "udp" } else { "tcp" })).collect();
                common::out(os, &format!("kubesim generic server: listening on {}\n", p.join(", ")));
            }
            "coredns" => {
                let v = self.version.clone();
                common::out(os, &format!(".:53\n[INFO] plugin/reload: Running configuration SHA512 = 1b226df79860026c6a52e67daa10d7f0d57ec5b023288ec00c5e05f93523c894564e15b91770d3a07ae1cfbe861d15b37d4a0027e69c546ab112970993a3b03b\nCoreDNS-{v}\nlinux/amd64, go1.24.1, 707c7c1\n"));
            }
            "etcd" => {
                let v = self.version.clone();
                let host = os.hostname();
                for (caller, msg) in [
                    ("etcdmain/etcd.go:73", "Running: ".to_string()),
                    ("embed/etcd.go:140", "configuring peer listeners".to_string()),
                    ("embed/etcd.go:148", "configuring client listeners".to_string()),
                    ("embed/etcd.go:323", format!("starting an etcd server\",\"etcd-version\":\"{v}\",\"go-version\":\"go1.23.7\",\"go-os\":\"linux\",\"go-arch\":\"amd64\",\"name\":\"default")),
                    ("etcdserver/raft.go:530", "starting local member\",\"local-member-id\":\"8e9e05c52164694d\",\"cluster-id\":\"cdf818194e3a8c32".to_string()),
                    ("membership/cluster.go:421", "added member\",\"cluster-id\":\"cdf818194e3a8c32\",\"local-member-id\":\"8e9e05c52164694d\",\"added-peer-id\":\"8e9e05c52164694d\",\"added-peer-peer-urls\":[\"http://localhost:2380\"]".to_string()),
                    ("raft/raft.go:765", "8e9e05c52164694d became leader at term 2".to_string()),
                    ("etcdserver/server.go:2068", format!("published local member to cluster through raft\",\"local-member-id\":\"8e9e05c52164694d\",\"local-member-attributes\":\"{{Name:{host} ClientURLs:[http://localhost:2379]}}\"")),
                    ("embed/serve.go:103", "ready to serve client requests".to_string()),
                    ("embed/serve.go:187", "serving client traffic insecurely; this is strongly discouraged!\",\"traffic\":\"grpc+http\",\"address\":\"127.0.0.1:2379".to_string()),
                ] {
                    common::err(os, &format!("{{\"level\":\"info\",\"ts\":\"{ts}\",\"caller\":\"{caller}\",\"msg\":\"{msg}\"}}\n"));
                }
            }
            "ingress-nginx" => {
                // cmd/nginx/main.go's banner (version.String()) and its first klog lines.
                let v = self.version.clone();
                let f = common::Flags::parse(&self.spawn.argv[1.min(self.spawn.argv.len())..], |_| true);
                let class = f.get("controller-class").unwrap_or("k8s.io/ingress-nginx").to_string();
                let i = klog_ts(os, 'I');
                common::out(os, &format!("-------------------------------------------------------------------------------\nNGINX Ingress controller\n  Release:       {v}\n  Build:         kubesim\n  Repository:    https://github.com/kubernetes/ingress-nginx\n  nginx version: nginx/1.27.1\n\n-------------------------------------------------------------------------------\n\n"));
                common::err(os, &format!("{i} main.go:205] \"Creating API client\" host=\"https://10.96.0.1:443\"\n{i} main.go:248] \"Running in Kubernetes cluster\" major=\"1\" minor=\"34\" git=\"v1.34.0\" state=\"clean\" platform=\"linux/amd64\"\n{i} main.go:101] \"SSL fake certificate created\" file=\"/etc/ingress-controller/ssl/default-fake-certificate.pem\"\n{i} nginx.go:273] \"Starting NGINX Ingress controller\"\n{i} controller.go:214] \"Configuration changes detected, backend reload required\"\n{i} controller.go:234] \"Backend successfully reloaded\"\n{i} controller.go:245] \"Initial sync, sleeping for 1 second\"\n{i} store.go:440] \"watching ingresses of class\" controller-class=\"{class}\"\n"));
            }
            "postgres" => {
                let ms = os.unix_time_ms();
                let t = format!("{}.{:03} UTC", kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S", (ms / 1000) as i64, 0), ms % 1000);
                let v = self.version.clone();
                let major = v.split('.').next().unwrap_or("17").to_string();
                let pid = os.pid();
                common::err(os, &format!("{t} [{pid}] LOG:  starting PostgreSQL {v} (Debian {v}-1.pgdg120+1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit\n{t} [{pid}] LOG:  listening on IPv4 address \"0.0.0.0\", port 5432\n{t} [{pid}] LOG:  listening on IPv6 address \"::\", port 5432\n{t} [{pid}] LOG:  listening on Unix socket \"/var/run/postgresql/.s.PGSQL.5432\"\n{t} [62] LOG:  database system was shut down at {}\n{t} [{pid}] LOG:  database system is ready to accept connections\n", t.replace(".000", "")));
                let _ = major;
            }
            "mongod" => {
                let d = ts.replace('Z', "+00:00");
                let v = self.version.clone();
                let pid = os.pid();
                let host = os.hostname();
                for (s, c, id, ctx, msg, attr) in [
                    (
                        "I",
                        "CONTROL",
                        23285,
                        "main",
                        "Automatically disabling TLS 1.0, to force-enable TLS 1.0 specify --sslDisabledProtocols 'none'",
                        "".to_string(),
                    ),
                    (
                        "I",
                        "CONTROL",
                        4615611,
                        "initandlisten",
                        "MongoDB starting",
                        format!(",\"attr\":{{\"pid\":{pid},\"port\":27017,\"dbPath\":\"/data/db\",\"architecture\":\"64-bit\",\"host\":\"{host}\"}}"),
                    ),
                    ("I", "CONTROL", 23403, "initandlisten", "Build Info", format!(",\"attr\":{{\"buildInfo\":{{\"version\":\"{v}\"}}}}")),
                    ("I", "NETWORK", 23015, "listener", "Listening on", ",\"attr\":{\"address\":\"0.0.0.0\"}".to_string()),
                    ("I", "NETWORK", 23016, "listener", "Waiting for connections", ",\"attr\":{\"port\":27017,\"ssl\":\"off\"}".to_string()),
                ] {
                    common::out(
                        os,
                        &format!("{{\"t\":{{\"$date\":\"{d}\"}},\"s\":\"{s}\",  \"c\":\"{c}\",  \"id\":{id},   \"ctx\":\"{ctx}\",\"msg\":\"{msg}\"{attr}}}\n"),
                    );
                }
            }
            "rabbitmq" => {
                let v = self.version.clone();
                let host = os.hostname();
                let t = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S", os.unix_time() as i64, 0);
                common::out(os, &format!("{t}.000000+00:00 [notice] <0.44.0> Application syslog exited with reason: stopped\n{t}.000000+00:00 [info] <0.229.0> Starting RabbitMQ {v} on Erlang 27.3.4 [jit]\n{t}.000000+00:00 [info] <0.229.0>  node           : rabbit@{host}\n\n  ##  ##      RabbitMQ {v}\n  ##  ##\n  ##########  Copyright (c) 2007-2025 Broadcom Inc and/or its subsidiaries\n  ######  ##\n  ##########  Licensed under the MPL 2.0. Website: https://rabbitmq.com\n\n  Erlang:      27.3.4 [jit]\n  TLS Library: OpenSSL - OpenSSL 3.3.4 1 Jul 2025\n  Release series support status: see https://www.rabbitmq.com/release-information\n\n  Doc guides:  https://www.rabbitmq.com/docs\n  Support:     https://www.rabbitmq.com/docs/contact\n  Tutorials:   https://www.rabbitmq.com/tutorials\n  Monitoring:  https://www.rabbitmq.com/docs/monitoring\n  Upgrading:   https://www.rabbitmq.com/docs/upgrade\n\n  Logs: <stdout>\n\n  Config file(s): /etc/rabbitmq/conf.d/10-defaults.conf\n\n  Starting broker...\n"));
            }
            "fluentd" => {
                let t = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S +0000", os.unix_time() as i64, 0);
                common::out(os, &format!("{t} [info]: init supervisor logger path=nil rotate_age=nil rotate_size=nil\n{t} [info]: parsing config file is succeeded path=\"/etc/fluent/fluent.conf\"\n{t} [info]: gem 'fluentd' version '1.16.2'\n{t} [info]: using configuration file: <ROOT>\n</ROOT>\n{t} [info]: starting fluentd-1.16.2 pid=7 ruby=\"3.1.4\"\n{t} [info]: spawn command to main:  cmdline=[\"/usr/local/bin/ruby\", \"-Eascii-8bit:ascii-8bit\", \"/usr/local/bin/fluentd\", \"--under-supervisor\"]\n{t} [info]: #0 starting fluentd worker pid=16 ppid=7 worker=0\n{t} [info]: #0 fluentd worker is now running worker=0\n"));
            }
            "kube-scheduler" => {
                let f = common::Flags::parse(&self.spawn.argv[1.min(self.spawn.argv.len())..], |_| true);
                if let Some(c) = f.get("config") {
                    if os.fs_ref().stat(c).is_err() {
                        let e = klog_ts(os, 'E');
                        common::err(os, &format!("{e} run.go:72] \"command failed\" err=\"open {c}: no such file or directory\"\n"));
                        return Err(1);
                    }
                }
                let i = klog_ts(os, 'I');
                common::err(os, &format!("{i} serving.go:386] Generated self-signed cert in-memory\n{i} server.go:167] \"Starting Kubernetes Scheduler\" version=\"v1.34.0\"\n{i} server.go:169] \"Golang settings\" GOGC=\"\" GOMAXPROCS=\"\" GOTRACEBACK=\"\"\n{i} secure_serving.go:211] Serving securely on [::]:10259\n{i} tlsconfig.go:243] \"Starting DynamicServingCertificateController\"\n"));
            }
            "cassandra" => {
                let t = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S,000", os.unix_time() as i64, 0);
                let v = self.version.clone();
                let hn = os.hostname();
                common::out(os, &format!("INFO  [main] {t} YamlConfigurationLoader.java:89 - Configuration location: file:/etc/cassandra/cassandra.yaml\nINFO  [main] {t} CassandraDaemon.java:471 - Hostname: {}\nINFO  [main] {t} CassandraDaemon.java:478 - JVM vendor/version: OpenJDK 64-Bit Server VM/1.8.0_181\nINFO  [main] {t} StorageService.java:626 - Cassandra version: {v}\nINFO  [main] {t} StorageService.java:627 - Thrift API version: 20.1.0\nINFO  [main] {t} StorageService.java:628 - CQL supported versions: 3.4.4 (default: 3.4.4)\n", hn));
            }
            _ => {}
        }
        Ok(())
    }

    fn ready(&mut self, os: &mut dyn Os) {
        match self.name.as_str() {
            "mongod" => {}
            "rabbitmq" => {
                let t = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S", os.unix_time() as i64, 0);
                common::out(os, &format!("{t}.000000+00:00 [info] <0.229.0> Server startup complete; 4 plugins started.\n{t}.000000+00:00 [info] <0.229.0>  * rabbitmq_prometheus\n{t}.000000+00:00 [info] <0.229.0>  * rabbitmq_federation\n{t}.000000+00:00 [info] <0.229.0>  * rabbitmq_management_agent\n{t}.000000+00:00 [info] <0.229.0>  * rabbitmq_web_dispatch\n"));
            }
            "cassandra" => {
                let t = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S,000", os.unix_time() as i64, 0);
                let ip = self.ip(os);
                common::out(os, &format!("INFO  [main] {t} StorageService.java:1446 - JOINING: Finish joining ring\nINFO  [main] {t} StorageService.java:2289 - Node /{} state jump to NORMAL\nINFO  [main] {t} Server.java:156 - Starting listening for CQL clients on /0.0.0.0:9042 (unencrypted)...\nINFO  [main] {t} CassandraDaemon.java:556 - Not starting RPC server as requested. Use JMX (StorageService->startRPCServer()) or nodetool (enablethrift) to start it\n", ip));
            }
            _ => {}
        }
    }

    fn ip(&self, os: &dyn Os) -> String {
        self.spawn.env.get("POD_IP").cloned().or_else(|| kubesim_os::net::hosts_lookup(os.fs_ref(), &os.hostname())).unwrap_or_else(|| "127.0.0.1".into())
    }

    fn shutdown(&mut self, os: &mut dyn Os, sig: Signal) -> i32 {
        match self.name.as_str() {
            "postgres" => {
                let ms = os.unix_time_ms();
                let t = format!("{}.{:03} UTC", kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S", (ms / 1000) as i64, 0), ms % 1000);
                let pid = os.pid();
                let kind = if sig == Signal::Term {
                    "smart"
                } else if sig == Signal::Int {
                    "fast"
                } else {
                    "immediate"
                };
                common::err(os, &format!("{t} [{pid}] LOG:  received {kind} shutdown request\n{t} [{pid}] LOG:  background worker \"logical replication launcher\" (PID 68) exited with exit code 1\n{t} [63] LOG:  shutting down\n{t} [63] LOG:  checkpoint starting: shutdown immediate\n{t} [63] LOG:  checkpoint complete: wrote 3 buffers (0.0%); 0 WAL file(s) added, 0 removed, 0 recycled; write=0.001 s, sync=0.001 s, total=0.005 s; sync files=2, longest=0.001 s, average=0.001 s; distance=0 kB, estimate=0 kB; lsn=0/1527C48, redo lsn=0/1527C48\n{t} [{pid}] LOG:  database system is shut down\n"));
                0
            }
            "mongod" => {
                let d = ts_rfc3339(os).replace('Z', "+00:00");
                common::out(os, &format!("{{\"t\":{{\"$date\":\"{d}\"}},\"s\":\"I\",  \"c\":\"CONTROL\",  \"id\":23377,   \"ctx\":\"SignalHandler\",\"msg\":\"Received signal\",\"attr\":{{\"signal\":{},\"error\":\"{}\"}}}}\n{{\"t\":{{\"$date\":\"{d}\"}},\"s\":\"I\",  \"c\":\"CONTROL\",  \"id\":20565,   \"ctx\":\"SignalHandler\",\"msg\":\"Now exiting\"}}\n{{\"t\":{{\"$date\":\"{d}\"}},\"s\":\"I\",  \"c\":\"CONTROL\",  \"id\":23138,   \"ctx\":\"SignalHandler\",\"msg\":\"Shutting down\",\"attr\":{{\"exitCode\":0}}}}\n", sig.number(), if sig == Signal::Term { "Terminated" } else { "Interrupt" }));
                0
            }
            "etcd" => {
                let ts = ts_rfc3339(os);
                common::err(os, &format!("{{\"level\":\"info\",\"ts\":\"{ts}\",\"caller\":\"osutil/interrupt_unix.go:64\",\"msg\":\"received signal; shutting down\",\"signal\":\"{}\"}}\n{{\"level\":\"info\",\"ts\":\"{ts}\",\"caller\":\"embed/etcd.go:408\",\"msg\":\"closing etcd server\",\"name\":\"default\"}}\n", if sig == Signal::Term { "terminated" } else { "interrupt" }));
                0
            }
            "rabbitmq" => {
                let t = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S", os.unix_time() as i64, 0);
                common::out(os, &format!("{t}.000000+00:00 [info] <0.229.0> RabbitMQ is asked to stop...\n{t}.000000+00:00 [info] <0.229.0> Successfully stopped RabbitMQ and its dependencies\n"));
                0
            }
            "kube-scheduler" => crate::agnhost::go_default_signal(os, sig),
            // SIGTERM: nginx drains (`--shutdown-grace-period`) and the controller exits 0.
            "ingress-nginx" => {
                let i = klog_ts(os, 'I');
                common::err(os, &format!("{i} sigterm.go:36] \"Received SIGTERM, shutting down\"\n{i} nginx.go:393] \"Shutting down controller queues\"\n{i} nginx.go:401] \"Stopping admission controller\"\n{i} nginx.go:409] \"Stopping NGINX process\"\n{i} nginx.go:422] \"NGINX process has stopped\"\n{i} sigterm.go:47] Handled quit, delaying controller exit for 10 seconds\n{i} sigterm.go:50] \"Exiting\" code=0\n"));
                0
            }
            // The health plugin's lameduck (5s in kubeadm's Corefile) then exit 0.
            "coredns" => {
                common::out(os, "[INFO] SIGTERM: Shutting down servers then terminating\n[INFO] plugin/health: Going into lameduck mode for 5s\n");
                0
            }
            "cassandra" => {
                let t = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S,000", os.unix_time() as i64, 0);
                let ip = self.ip(os);
                common::out(os, &format!("INFO  [StorageServiceShutdownHook] {t} HintsService.java:209 - Paused hints dispatch\nINFO  [StorageServiceShutdownHook] {t} Server.java:176 - Stop listening for CQL clients\nINFO  [StorageServiceShutdownHook] {t} Gossiper.java:1540 - Announcing shutdown\nINFO  [StorageServiceShutdownHook] {t} StorageService.java:2289 - Node /{} state jump to shutdown\n", ip));
                143
            }
            "memcached" => {
                if sig == Signal::Term || sig == Signal::Int {
                    common::err(os, &format!("Signal handled: {}.\n", if sig == Signal::Term { "Terminated" } else { "Interrupt" }));
                }
                0
            }
            "generic" | "fluentd" => default_signal_exit(os, sig).unwrap_or(i32::MIN),
            _ => self.exit_code_on_term,
        }
    }

    fn handle(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Vec<u8>> {
        let now = os.unix_time();
        let data = &conn.data[..conn.data.len().min(common::MAX_REQUEST)];
        match self.proto.clone() {
            Proto::Generic => {
                let Ok(req) = Request::parse(data) else { return Some(Vec::new()) };
                let host = os.hostname();
                let body = format!("<!DOCTYPE html>\n<html><head><title>{host}</title></head><body><h1>{host}</h1><p>kubesim generic server: this image is not modelled; it answers every request with this page.</p></body></html>\n");
                let line = String::from_utf8_lossy(data.split(|&b| b == b'\n').next().unwrap_or(&[])).trim_end_matches('\r').to_string();
                common::out(os, &format!("{} - - [{}] \"{line}\" 200 {}\n", conn.src, common::clf_time(now), body.len()));
                let mut s = format!("HTTP/1.1 200 OK\r\nServer: kubesim-generic\r\nDate: {}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", common::http_date(now), body.len());
                if req.method != "HEAD" {
                    s.push_str(&body);
                }
                Some(s.into_bytes())
            }
            Proto::CoreDns => {
                let req = Request::parse(data).ok()?;
                let path = req.path().to_string();
                let (code, body): (u16, Vec<u8>) = match (conn.port, path.as_str()) {
                    (8080, "/health") | (8181, "/ready") => (200, b"OK".to_vec()),
                    (9153, "/metrics") => (200, format!("# HELP coredns_build_info A metric with a constant '1' value labeled by version, revision, and goversion from which CoreDNS was built.\n# TYPE coredns_build_info gauge\ncoredns_build_info{{goversion=\"go1.24.1\",revision=\"707c7c1\",version=\"{}\"}} 1\n", self.version).into_bytes()),
                    _ => (404, b"404 page not found\n".to_vec()),
                };
                Some(go_response(Some(&req), code, vec![], &body, now))
            }
            Proto::IngressNginx => {
                let req = Request::parse(data).ok()?;
                match conn.port {
                    10254 => {
                        let (code, body): (u16, Vec<u8>) = match req.path() {
                            "/healthz" => (200, b"ok".to_vec()),
                            "/metrics" => (200, format!("# HELP nginx_ingress_controller_build_info A metric with a constant '1' labeled with information about the build.\n# TYPE nginx_ingress_controller_build_info gauge\nnginx_ingress_controller_build_info{{build=\"kubesim\",release=\"{}\",repository=\"https://github.com/kubernetes/ingress-nginx\"}} 1\n", self.version).into_bytes()),
                            _ => (404, b"404 page not found\n".to_vec()),
                        };
                        Some(go_response(Some(&req), code, vec![], &body, now))
                    }
                    // nginx's default server before the first configuration: `return 404`.
                    80 | 443 => {
                        let body = kubesim_os::net::http::nginx::error_page(404, "1.27.1", false);
                        let mut s = format!(
                            "HTTP/1.1 404 Not Found\r\nDate: {}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n",
                            common::http_date(now),
                            body.len()
                        )
                        .into_bytes();
                        s.extend_from_slice(&body);
                        Some(s)
                    }
                    // The validating webhook speaks HTTPS only.
                    _ => Some(Vec::new()),
                }
            }
            Proto::Healthz => {
                let req = Request::parse(data).ok()?;
                Some(go_response(
                    Some(&req),
                    200,
                    vec![("Cache-Control".into(), "no-cache, private".into()), ("X-Content-Type-Options".into(), "nosniff".into())],
                    b"ok",
                    now,
                ))
            }
            Proto::Etcd => {
                let req = Request::parse(data).ok()?;
                let v = self.version.clone();
                let json = |body: String| go_response(Some(&req), 200, vec![("Content-Type".into(), "application/json".into())], body.as_bytes(), now);
                Some(match req.path() {
                    "/health" | "/livez" | "/readyz" => json("{\"health\":\"true\",\"reason\":\"\"}".into()),
                    "/version" => json(format!("{{\"etcdserver\":\"{v}\",\"etcdcluster\":\"{}.0\"}}", v.rsplit_once('.').map(|x| x.0).unwrap_or(&v))),
                    "/metrics" => go_response(Some(&req), 200, vec![("Content-Type".into(), "text/plain; version=0.0.4; charset=utf-8".into())], format!("# HELP etcd_server_has_leader Whether or not a leader exists. 1 is existence, 0 is not.\n# TYPE etcd_server_has_leader gauge\netcd_server_has_leader 1\n# HELP etcd_mvcc_db_total_size_in_bytes Total size of the underlying database physically allocated in bytes.\n# TYPE etcd_mvcc_db_total_size_in_bytes gauge\netcd_mvcc_db_total_size_in_bytes {}\n", 20480 + self.kv.values().map(|x| x.len()).sum::<usize>()).as_bytes(), now),
                    "/kubesim/put" => {
                        let k = common::query_value(&req.target, "key");
                        self.kv.insert(k, req.body.clone());
                        json("{\"ok\":true}".into())
                    }
                    "/kubesim/get" => {
                        let k = common::query_value(&req.target, "key");
                        match self.kv.get(&k) {
                            Some(v) => go_response(Some(&req), 200, Vec::new(), v, now),
                            None => go_response(Some(&req), 404, Vec::new(), b"", now),
                        }
                    }
                    _ => go_response(Some(&req), 404, vec![("Content-Type".into(), "text/plain; charset=utf-8".into()), ("X-Content-Type-Options".into(), "nosniff".into())], b"404 page not found\n", now),
                })
            }
            Proto::Postgres => {
                if data.len() == 8 && data[4..8] == [0x04, 0xd2, 0x16, 0x2f] {
                    return Some(b"N".to_vec());
                }
                let msg = "kubesim: the PostgreSQL wire protocol is not modelled";
                let mut body = Vec::new();
                body.push(b'S');
                body.extend_from_slice(b"FATAL\0");
                body.push(b'C');
                body.extend_from_slice(b"08P01\0");
                body.push(b'M');
                body.extend_from_slice(msg.as_bytes());
                body.extend_from_slice(b"\0\0");
                let mut out = vec![b'E'];
                out.extend_from_slice(&((body.len() + 4) as u32).to_be_bytes());
                out.extend(body);
                Some(out)
            }
            Proto::Memcached => Some(self.memcached_cmds(data)),
            Proto::Fixed(b) => Some(b),
            Proto::Cassandra => {
                if conn.port != 7199 {
                    return Some(Vec::new());
                }
                let t = String::from_utf8_lossy(data).into_owned();
                let cmd = t.strip_prefix("KUBESIM-NODETOOL ").unwrap_or("").trim().to_string();
                let ip = self.ip(os);
                let dc = self.spawn.env.get("CASSANDRA_DC").cloned().unwrap_or_else(|| "datacenter1".into());
                let rack = self.spawn.env.get("CASSANDRA_RACK").cloned().unwrap_or_else(|| "rack1".into());
                Some(match cmd.split_whitespace().next().unwrap_or("") {
                    "status" => {
                        let st = if self.drained { "UL" } else { "UN" };
                        let title = format!("Datacenter: {dc}");
                        format!("{title}\n{}\nStatus=Up/Down\n|/ State=Normal/Leaving/Joining/Moving\n--  Address     Load       Tokens       Owns (effective)  Host ID                               Rack\n{st}  {ip:<10}  {:<9}  32           100.0%            2ec2e0b8-5a5e-4c5a-9e8c-3d6a52d4b9c1  {rack}\n\n", "=".repeat(title.len()), "103.96 KiB").into_bytes()
                    }
                    "drain" => {
                        self.drained = true;
                        let t2 = kubesim_os::time::strftime("%Y-%m-%d %H:%M:%S,000", os.unix_time() as i64, 0);
                        common::out(os, &format!("INFO  [RMI TCP Connection(2)-127.0.0.1] {t2} StorageService.java:1449 - DRAINING: starting drain process\nINFO  [RMI TCP Connection(2)-127.0.0.1] {t2} StorageService.java:1449 - DRAINED\n"));
                        Vec::new()
                    }
                    "version" => format!("ReleaseVersion: {}\n", self.version).into_bytes(),
                    "info" => format!("ID                     : 2ec2e0b8-5a5e-4c5a-9e8c-3d6a52d4b9c1\nGossip active          : {}\nNative Transport active: {}\nLoad                   : 103.96 KiB\nData Center            : {dc}\nRack                   : {rack}\n", !self.drained, !self.drained).into_bytes(),
                    _ => b"nodetool: Found unexpected parameters\n".to_vec(),
                })
            }
        }
    }

    fn memcached_cmds(&mut self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let text = String::from_utf8_lossy(data).into_owned();
        let mut lines = text.split("\r\n").peekable();
        let mut n = 0;
        while let Some(l) = lines.next() {
            n += 1;
            if n > 10_000 {
                break;
            }
            let w: Vec<&str> = l.split_whitespace().collect();
            match w.as_slice() {
                [] => {}
                ["version"] => out.extend_from_slice(format!("VERSION {}\r\n", self.version).as_bytes()),
                ["set", k, _flags, _exp, _len, ..] | ["add", k, _flags, _exp, _len, ..] => {
                    let v = lines.next().unwrap_or("");
                    let add = w[0] == "add";
                    if add && self.kv.contains_key(*k) {
                        out.extend_from_slice(b"NOT_STORED\r\n");
                    } else {
                        self.kv.insert(k.to_string(), v.as_bytes().to_vec());
                        out.extend_from_slice(b"STORED\r\n");
                    }
                }
                ["get", keys @ ..] | ["gets", keys @ ..] => {
                    for k in keys {
                        if let Some(v) = self.kv.get(*k) {
                            out.extend_from_slice(format!("VALUE {k} 0 {}\r\n", v.len()).as_bytes());
                            out.extend_from_slice(v);
                            out.extend_from_slice(b"\r\n");
                        }
                    }
                    out.extend_from_slice(b"END\r\n");
                }
                ["delete", k, ..] => out.extend_from_slice(if self.kv.remove(*k).is_some() { b"DELETED\r\n" } else { b"NOT_FOUND\r\n" }),
                ["stats"] => out.extend_from_slice(
                    format!("STAT pid 1\r\nSTAT version {}\r\nSTAT curr_items {}\r\nSTAT curr_connections 2\r\nEND\r\n", self.version, self.kv.len())
                        .as_bytes(),
                ),
                ["flush_all", ..] => {
                    self.kv.clear();
                    out.extend_from_slice(b"OK\r\n");
                }
                ["quit"] => break,
                _ => out.extend_from_slice(b"ERROR\r\n"),
            }
        }
        out
    }
}

impl Program for Daemon {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        match (self.phase.clone(), wake) {
            (DPhase::Start, _) => {
                if let Err(c) = self.banner(os) {
                    self.phase = DPhase::Done;
                    return Step::Exit(c);
                }
                if self.boot_ms > 0 {
                    let t = os.now_ms() + self.boot_ms;
                    self.phase = DPhase::Booting(t);
                    return Step::Compute { cpu_ms: (self.boot_ms / 2).max(1), threads: 1 };
                }
                self.phase = DPhase::Serving;
                Step::Wait
            }
            (DPhase::Done, _) => Step::Exit(0),
            (_, Wake::Signal(Signal::Kill)) => Step::Exit(137),
            (_, Wake::Signal(s)) if !matches!(s, Signal::Hup | Signal::Usr1 | Signal::Usr2) || self.name == "generic" => {
                let c = self.shutdown(os, s);
                if c == i32::MIN {
                    return match self.phase {
                        DPhase::Booting(t) if t > os.now_ms() => Step::Sleep(t - os.now_ms()),
                        _ => common::idle(&mut self.cpu, os.now_ms(), None),
                    };
                }
                self.phase = DPhase::Done;
                Step::Exit(c)
            }
            (DPhase::Booting(t), _) => {
                if os.now_ms() < t {
                    return Step::Sleep(t - os.now_ms());
                }
                self.ready(os);
                self.phase = DPhase::Serving;
                common::idle(&mut self.cpu, os.now_ms(), None)
            }
            _ => common::idle(&mut self.cpu, os.now_ms(), None),
        }
    }

    fn cpu_backlog_ms(&self) -> u64 {
        self.cpu.backlog_ms()
    }

    fn memory_bytes(&self) -> u64 {
        self.memory + self.kv.iter().map(|(k, v)| (k.len() + v.len()) as u64 + 64).sum::<u64>()
    }

    fn listening(&self) -> Vec<(u16, bool)> {
        if self.phase == DPhase::Serving {
            self.ports.clone()
        } else {
            Vec::new()
        }
    }

    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        if !self.listening().contains(&(conn.port, conn.udp)) {
            return None;
        }
        if conn.data.is_empty() {
            return Some(Outgoing::Reply(Vec::new()));
        }
        self.cpu.charge_us(200);
        Some(match self.handle(os, conn) {
            Some(b) => Outgoing::Reply(b),
            None => Outgoing::Reset,
        })
    }
}

/// The postgres image's `docker-entrypoint.sh postgres`: initdb output on first start (or the
/// missing-password error), then the server.
#[derive(Clone, Debug)]
pub struct PostgresEntrypoint {
    spawn: Spawn,
    inner: Option<Box<dyn Program>>,
}

impl PostgresEntrypoint {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> PostgresEntrypoint {
        PostgresEntrypoint { spawn: spawn.clone(), inner: None }
    }
}

impl Program for PostgresEntrypoint {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if let Some(p) = self.inner.as_mut() {
            return p.resume(os, wake);
        }
        let argv: Vec<String> = self.spawn.argv.iter().skip(1).cloned().collect();
        if argv.first().is_some_and(|a| a == "postgres") {
            let pgdata = self.spawn.env.get("PGDATA").cloned().unwrap_or_else(|| "/var/lib/postgresql/data".into());
            if os.fs_ref().stat(&format!("{pgdata}/PG_VERSION")).is_err() {
                let pw = self.spawn.env.get("POSTGRES_PASSWORD").filter(|v| !v.is_empty());
                let trust = self.spawn.env.get("POSTGRES_HOST_AUTH_METHOD").is_some_and(|v| v == "trust");
                if pw.is_none() && !trust {
                    common::err(os, "Error: Database is uninitialized and superuser password is not specified.\n       You must specify POSTGRES_PASSWORD to a non-empty value for the\n       superuser. For example, \"-e POSTGRES_PASSWORD=password\" on \"docker run\".\n\n       You may also use \"POSTGRES_HOST_AUTH_METHOD=trust\" to allow all\n       connections without a password. This is *not* recommended.\n\n       See PostgreSQL documentation about \"trust\":\n       https://www.postgresql.org/docs/current/auth-trust.html\n");
                    return Step::Exit(1);
                }
                let major = self.spawn.env.get("PG_MAJOR").cloned().unwrap_or_else(|| "17".into());
                let _ = common::write_file(os, &format!("{pgdata}/PG_VERSION"), format!("{major}\n").as_bytes());
                let _ = os.fs().mkdir(&format!("{pgdata}/base"), 0o700, true);
                common::out(os, &format!("The files belonging to this database system will be owned by user \"postgres\".\nThis user must also own the server process.\n\nThe database cluster will be initialized with locale \"en_US.utf8\".\nThe default database encoding has accordingly been set to \"UTF8\".\nThe default text search configuration will be set to \"english\".\n\nData page checksums are disabled.\n\nfixing permissions on existing directory {pgdata} ... ok\ncreating subdirectories ... ok\nselecting dynamic shared memory implementation ... posix\nselecting default \"max_connections\" ... 100\nselecting default \"shared_buffers\" ... 128MB\nselecting default time zone ... Etc/UTC\ncreating configuration files ... ok\nrunning bootstrap script ... ok\nperforming post-bootstrap initialization ... ok\nsyncing data to disk ... ok\n\n\nSuccess. You can now start the database server using:\n\n    pg_ctl -D {pgdata} -l logfile start\n\nwaiting for server to start.... done\nserver started\n\n/usr/local/bin/docker-entrypoint.sh: ignoring /docker-entrypoint-initdb.d/*\n\nwaiting for server to shut down.... done\nserver stopped\n\nPostgreSQL init process complete; ready for start up.\n\n"));
                common::err(os, "initdb: warning: enabling \"trust\" authentication for local connections\ninitdb: hint: You can change this by editing pg_hba.conf or using the option -A, or --auth-local and --auth-host, the next time you run initdb.\n");
            } else {
                common::out(os, "\nPostgreSQL Database directory appears to contain a database; Skipping initialization\n\n");
            }
        }
        let argv = if argv.first().is_none_or(|a| a.starts_with('-')) { std::iter::once("postgres".to_string()).chain(argv).collect() } else { argv };
        let mut p: Box<dyn Program> = if argv[0] == "postgres" { Box::new(Daemon::postgres(&self.spawn)) } else { common::ExecAs::boxed(&self.spawn, argv) };
        let s = p.resume(os, Wake::Start);
        self.inner = Some(p);
        s
    }
    fn memory_bytes(&self) -> u64 {
        self.inner.as_ref().map(|p| p.memory_bytes()).unwrap_or(2_000_000)
    }
    fn serve(&mut self, os: &mut dyn Os, conn: &Incoming) -> Option<Outgoing> {
        self.inner.as_mut()?.serve(os, conn)
    }
    fn listening(&self) -> Vec<(u16, bool)> {
        self.inner.as_ref().map(|p| p.listening()).unwrap_or_default()
    }
}

/// `nodetool` (status, drain, info, version) over the kubesim JMX stand-in on 7199, and the
/// Cassandra tutorial's `/ready-probe.sh` (exit 0 when this node is `UN`).
#[derive(Clone, Debug)]
pub struct Nodetool {
    spawn: Spawn,
    probe: bool,
    client: Option<TcpClient>,
    done: bool,
}

impl Nodetool {
    /// `nodetool ...`; `probe` for `/ready-probe.sh`.
    pub fn new(spawn: &Spawn, probe: bool) -> Nodetool {
        Nodetool { spawn: spawn.clone(), probe, client: None, done: false }
    }
}

impl Program for Nodetool {
    fn resume(&mut self, os: &mut dyn Os, wake: Wake) -> Step {
        if self.done {
            return Step::Exit(0);
        }
        let step = match self.client.as_mut() {
            None => {
                let args: Vec<String> = self.spawn.argv.iter().skip(1).filter(|a| !a.starts_with('-')).cloned().collect();
                let cmd = if self.probe { "status".to_string() } else { args.join(" ") };
                if cmd.is_empty() {
                    self.done = true;
                    common::out(os, "usage: nodetool [(-h <host> | --host <host>)] [(-p <port> | --port <port>)] <command> [<args>]\n\nThe most commonly used nodetool commands are:\n    drain    Drain the node (stop accepting writes and flush all tables)\n    info     Print node information (uptime, load, ...)\n    status   Print cluster information (state, load, IDs, ...)\n    version  Print cassandra version\n");
                    return Step::Exit(1);
                }
                let mut c = TcpClient::new("127.0.0.1", 7199, format!("KUBESIM-NODETOOL {cmd}").into_bytes(), 10_000);
                let s = c.start(os);
                self.client = Some(c);
                s
            }
            Some(c) => c.wake(&wake),
        };
        match step {
            TcpStep::Call(s) => s,
            TcpStep::Reply(b) => {
                self.done = true;
                let t = String::from_utf8_lossy(&b).into_owned();
                if self.probe {
                    let ip = self.spawn.env.get("POD_IP").cloned().unwrap_or_default();
                    let ok = t.lines().any(|l| l.contains(&ip) && l.starts_with("UN"));
                    return Step::Exit(if ok { 0 } else { 1 });
                }
                common::out(os, &t);
                Step::Exit(0)
            }
            _ => {
                self.done = true;
                if !self.probe {
                    common::err(os, "nodetool: Failed to connect to '127.0.0.1:7199' - ConnectException: 'Connection refused (Connection refused)'.\n");
                }
                Step::Exit(1)
            }
        }
    }
}

/// `envsubst` (gettext): substitutes `$VAR`/`${VAR}` from the environment in stdin.
pub fn envsubst(spawn: &Spawn) -> Box<dyn Program> {
    let only: Option<Vec<String>> = spawn.argv.get(1).filter(|a| !a.starts_with('-')).map(|a| {
        a.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .filter(|s| s.starts_with('$'))
            .map(|s| s.trim_start_matches('$').to_string())
            .collect()
    });
    let text = String::from_utf8_lossy(&spawn.stdin).into_owned();
    let chars: Vec<char> = text.chars().collect();
    let mut o = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' && i + 1 < chars.len() {
            let (name, next) = if chars[i + 1] == '{' {
                match chars[i + 2..].iter().position(|&c| c == '}') {
                    Some(p) => (chars[i + 2..i + 2 + p].iter().collect::<String>(), i + 3 + p),
                    None => (String::new(), i + 1),
                }
            } else {
                let mut j = i + 1;
                while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
                (chars[i + 1..j].iter().collect::<String>(), j)
            };
            let allowed = only.as_ref().is_none_or(|l| l.contains(&name));
            if !name.is_empty() && allowed {
                o.push_str(spawn.env.get(&name).map(String::as_str).unwrap_or(""));
                i = next;
                continue;
            }
        }
        o.push(chars[i]);
        i += 1;
    }
    common::Print::boxed(o, "", 0)
}

/// `kube-webhook-certgen create|patch` (the ingress-nginx admission Jobs): logs what it does and
/// exits 0. Its API writes (the `--secret-name` Secret, the webhook's caBundle) are made for it
/// by the controller's informer in the simulation (`kubesim_sim::ingress_nginx`), since a
/// container program here has no API client.
#[derive(Clone, Debug)]
pub struct WebhookCertgen {
    spawn: Spawn,
}

impl WebhookCertgen {
    /// From a spawn.
    pub fn new(spawn: &Spawn) -> WebhookCertgen {
        WebhookCertgen { spawn: spawn.clone() }
    }
}

impl Program for WebhookCertgen {
    fn resume(&mut self, os: &mut dyn Os, _wake: Wake) -> Step {
        let ts = ts_rfc3339(os);
        let args = &self.spawn.argv[1.min(self.spawn.argv.len())..];
        let line = |os: &mut dyn Os, msg: &str, source: &str| {
            common::err(os, &format!("{{\"level\":\"info\",\"msg\":\"{msg}\",\"source\":\"{source}\",\"time\":\"{ts}\"}}\n"))
        };
        match args.first().map(String::as_str) {
            Some("create") => {
                line(os, "creating new secret", "cmd/create.go:28");
                Step::Exit(0)
            }
            Some("patch") => {
                line(os, "patching webhook configurations 'ingress-nginx-admission' mutating=false, validating=true, failurePolicy=Fail", "k8s/k8s.go:118");
                line(os, "Patched hook(s)", "k8s/k8s.go:138");
                Step::Exit(0)
            }
            _ => {
                common::err(os, "Use this to create a ca and signed certificates and patch admission webhooks to allow for quick\ninstallation and configuration of validating and admission webhooks.\n\nUsage:\n  kube-webhook-certgen [flags]\n  kube-webhook-certgen [command]\n");
                Step::Exit(0)
            }
        }
    }
}

/// ingress-nginx's `/wait-shutdown` (the controller's preStop hook): asks the controller to
/// stop and returns once it has (the SIGTERM the kubelet sends next finds it stopping).
#[derive(Clone, Debug, Default)]
pub struct WaitShutdown;

impl Program for WaitShutdown {
    fn resume(&mut self, _os: &mut dyn Os, _wake: Wake) -> Step {
        Step::Exit(0)
    }
}
