//! Table-driven tests of the kubernetes plugin model. Tables named after an upstream test are
//! CoreDNS v1.12.1's (plugin/kubernetes/*_test.go) with their fixtures rebuilt as Kubernetes
//! objects; like upstream's `test.SortAndCheck`, sections are compared after sorting. The
//! `kind_*` tables are the query vectors of networking-storage.md §5.2 on a kind-like cluster.

use kubesim_api::k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use kubesim_api::k8s_openapi::api::discovery::v1::{Endpoint, EndpointConditions, EndpointPort, EndpointSlice};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubesim_dns::{Answer, DnsMessage, DnsQuestion, DnsRecord, RType, Rcode, Zone, TTL};

// ---------------------------------------------------------------------------------------------
// Fixtures

fn meta(ns: &str, name: &str) -> ObjectMeta {
    ObjectMeta { namespace: Some(ns.into()), name: Some(name.into()), ..Default::default() }
}

fn ports(p: &[(&str, &str, i32)]) -> Option<Vec<ServicePort>> {
    Some(
        p.iter()
            .map(|(n, proto, port)| ServicePort { name: Some(n.to_string()), protocol: Some(proto.to_string()), port: *port, ..Default::default() })
            .collect(),
    )
}

fn svc(ns: &str, name: &str, ips: &[&str], p: &[(&str, &str, i32)]) -> Service {
    Service {
        metadata: meta(ns, name),
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".into()),
            cluster_ip: Some(ips[0].to_string()),
            cluster_ips: Some(ips.iter().map(|s| s.to_string()).collect()),
            ports: ports(p),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn external(ns: &str, name: &str, target: &str) -> Service {
    Service {
        metadata: meta(ns, name),
        spec: Some(ServiceSpec {
            type_: Some("ExternalName".into()),
            external_name: Some(target.into()),
            ports: ports(&[("http", "TCP", 80)]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// One endpoint: addresses, hostname, and `ready` (`None`: conditions unset).
struct Ep(&'static [&'static str], Option<&'static str>, Option<bool>);

fn slice(ns: &str, name: &str, service: &str, p: &[(&str, &str, i32)], eps: &[Ep]) -> EndpointSlice {
    let mut m = meta(ns, name);
    m.labels = Some([("kubernetes.io/service-name".to_string(), service.to_string())].into());
    EndpointSlice {
        metadata: m,
        address_type: "IPv4".into(),
        endpoints: eps
            .iter()
            .map(|Ep(ips, host, ready)| Endpoint {
                addresses: ips.iter().map(|s| s.to_string()).collect(),
                hostname: host.map(str::to_string),
                conditions: ready.map(|r| EndpointConditions { ready: Some(r), serving: Some(r), terminating: Some(false) }),
                ..Default::default()
            })
            .collect(),
        ports: if p.is_empty() {
            None
        } else {
            Some(
                p.iter()
                    .map(|(n, proto, port)| EndpointPort {
                        name: Some(n.to_string()),
                        protocol: Some(proto.to_string()),
                        port: Some(*port),
                        ..Default::default()
                    })
                    .collect(),
            )
        },
    }
}

const HTTP: &[(&str, &str, i32)] = &[("http", "TCP", 80)];

/// handler_test.go's `APIConnServeTest` (svcIndex, epsIndex) as objects; `k.Namespaces = {testns}`.
fn serve_test_zone() -> Zone {
    let services = [
        svc("kube-system", "kubedns", &["10.0.0.10"], &[("dns", "UDP", 53)]),
        svc("testns", "svc1", &["10.0.0.1"], HTTP),
        svc("testns", "svcempty", &["10.0.0.1"], HTTP),
        svc("testns", "svc6", &["1234:abcd::1"], HTTP),
        svc("testns", "hdls1", &["None"], &[]),
        external("testns", "external", "ext.interwebs.test"),
        external("testns", "external-to-service", "svc1.testns.svc.cluster.local."),
        svc("testns", "hdlsprtls", &["None"], &[]),
        svc("unexposedns", "svc1", &["10.0.0.2"], HTTP),
        svc("testns", "svc-dual-stack", &["10.0.0.3", "10::3"], HTTP),
    ];
    let slices = [
        slice("kube-system", "kubedns", "kubedns", &[("dns", "UDP", 53)], &[Ep(&["172.0.0.100"], None, None)]),
        slice("testns", "svc1-slice1", "svc1", HTTP, &[Ep(&["172.0.0.1"], Some("ep1a"), None)]),
        slice("testns", "svcempty-slice1", "svcempty", HTTP, &[]),
        slice(
            "testns",
            "hdls1-slice1",
            "hdls1",
            HTTP,
            &[
                Ep(&["172.0.0.2"], None, None),
                Ep(&["172.0.0.3"], None, None),
                Ep(&["172.0.0.4"], Some("dup-name"), None),
                Ep(&["172.0.0.5"], Some("dup-name"), None),
                Ep(&["5678:abcd::1"], None, None),
                Ep(&["5678:abcd::2"], None, None),
            ],
        ),
        slice("testns", "hdlsprtls-slice1", "hdlsprtls", &[], &[Ep(&["172.0.0.20"], None, None)]),
    ];
    let mut z = Zone::build("cluster.local", &services, &slices, ["testns"]);
    z.set_ttl(5);
    z.set_serial(1499347823);
    z
}

/// What a table row expects.
enum Want {
    Forward,
    /// NOERROR with these answers (and additional records).
    Ok(&'static [&'static str], &'static [&'static str]),
    /// NOERROR, no answer, the table's SOA in authority.
    NoData,
    /// NXDOMAIN with the table's SOA in authority.
    NxDomain,
    /// Any other response, spelled out: rcode, answer, authority, additional.
    Msg(Rcode, &'static [&'static str], &'static [&'static str], &'static [&'static str]),
}

fn rr(r: &DnsRecord) -> String {
    format!("{} {} IN {} {}", r.name, r.ttl, r.rtype.name(), r.data)
}

fn norm(lines: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = lines.iter().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
    v.sort();
    v
}

fn sorted(rs: &[DnsRecord]) -> Vec<String> {
    let mut v: Vec<String> = rs.iter().map(rr).collect();
    v.sort();
    v
}

fn q(name: &str, qtype: RType) -> DnsQuestion {
    DnsQuestion { name: name.into(), qtype }
}

fn check(z: &Zone, soa: &str, table: &[(&str, RType, Want)]) {
    for (i, (name, qtype, want)) in table.iter().enumerate() {
        let got = z.answer(&q(name, *qtype));
        check_one(i, name, *qtype, &got, soa, want);
    }
}

fn check_one(i: usize, name: &str, qtype: RType, got: &Answer, soa: &str, want: &Want) {
    let ctx = format!("case {i}: {name} {}", qtype.name());
    let (rcode, answer, ns, extra): (Rcode, Vec<String>, Vec<String>, Vec<String>) = match want {
        Want::Forward => {
            assert_eq!(got, &Answer::Forward, "{ctx}");
            return;
        }
        Want::Ok(a, e) => (Rcode::NoError, norm(a), vec![], norm(e)),
        Want::NoData => (Rcode::NoError, vec![], norm(&[soa]), vec![]),
        Want::NxDomain => (Rcode::NxDomain, vec![], norm(&[soa]), vec![]),
        Want::Msg(r, a, n, e) => (*r, norm(a), norm(n), norm(e)),
    };
    let Answer::Authoritative(m) = got else { panic!("{ctx}: forwarded, want {rcode:?}") };
    assert!(m.authoritative, "{ctx}");
    assert_eq!(m.rcode, rcode, "{ctx}: {m:?}");
    assert_eq!(sorted(&m.answers), answer, "{ctx}: answer");
    assert_eq!(sorted(&m.authority), ns, "{ctx}: authority");
    assert_eq!(sorted(&m.additional), extra, "{ctx}: additional");
}

const SOA5: &str = "cluster.local. 5 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1499347823 7200 1800 86400 5";

// ---------------------------------------------------------------------------------------------
// Upstream tables

/// TestServeDNS (handler_test.go, `dnsTestCases`).
#[test]
fn upstream_serve_dns() {
    use RType::*;
    use Want::*;
    let z = serve_test_zone();
    let table: &[(&str, RType, Want)] = &[
        ("svc1.testns.svc.cluster.local.", A, Ok(&["svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1"], &[])),
        ("svcempty.testns.svc.cluster.local.", A, Ok(&["svcempty.testns.svc.cluster.local. 5 IN A 10.0.0.1"], &[])),
        (
            "svc1.testns.svc.cluster.local.",
            Srv,
            Ok(&["svc1.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc1.testns.svc.cluster.local."], &["svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1"]),
        ),
        (
            "svcempty.testns.svc.cluster.local.",
            Srv,
            Ok(
                &["svcempty.testns.svc.cluster.local. 5 IN SRV 0 100 80 svcempty.testns.svc.cluster.local."],
                &["svcempty.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
            ),
        ),
        (
            "svc6.testns.svc.cluster.local.",
            Srv,
            Ok(
                &["svc6.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc6.testns.svc.cluster.local."],
                &["svc6.testns.svc.cluster.local. 5 IN AAAA 1234:abcd::1"],
            ),
        ),
        (
            "_http._tcp.svc1.testns.svc.cluster.local.",
            Srv,
            Ok(
                &["_http._tcp.svc1.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc1.testns.svc.cluster.local."],
                &["svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
            ),
        ),
        (
            "_http._tcp.svcempty.testns.svc.cluster.local.",
            Srv,
            Ok(
                &["_http._tcp.svcempty.testns.svc.cluster.local. 5 IN SRV 0 100 80 svcempty.testns.svc.cluster.local."],
                &["svcempty.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
            ),
        ),
        (
            "hdls1.testns.svc.cluster.local.",
            A,
            Ok(
                &[
                    "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.2",
                    "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.3",
                    "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.4",
                    "hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.5",
                ],
                &[],
            ),
        ),
        ("hdlsprtls.testns.svc.cluster.local.", A, Ok(&["hdlsprtls.testns.svc.cluster.local. 5 IN A 172.0.0.20"], &[])),
        ("172-0-0-20.hdlsprtls.testns.svc.cluster.local.", A, Ok(&["172-0-0-20.hdlsprtls.testns.svc.cluster.local. 5 IN A 172.0.0.20"], &[])),
        ("172-0-0-2.hdls1.testns.svc.cluster.local.", A, Ok(&["172-0-0-2.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.2"], &[])),
        ("172-0-0-3.hdls1.testns.svc.cluster.local.", A, Ok(&["172-0-0-3.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.3"], &[])),
        (
            "dup-name.hdls1.testns.svc.cluster.local.",
            A,
            Ok(&["dup-name.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.4", "dup-name.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.5"], &[]),
        ),
        (
            "_http._tcp.hdls1.testns.svc.cluster.local.",
            Srv,
            Ok(
                &[
                    "_http._tcp.hdls1.testns.svc.cluster.local. 5 IN SRV 0 16 80 172-0-0-2.hdls1.testns.svc.cluster.local.",
                    "_http._tcp.hdls1.testns.svc.cluster.local. 5 IN SRV 0 16 80 172-0-0-3.hdls1.testns.svc.cluster.local.",
                    "_http._tcp.hdls1.testns.svc.cluster.local. 5 IN SRV 0 16 80 5678-abcd--1.hdls1.testns.svc.cluster.local.",
                    "_http._tcp.hdls1.testns.svc.cluster.local. 5 IN SRV 0 16 80 5678-abcd--2.hdls1.testns.svc.cluster.local.",
                    "_http._tcp.hdls1.testns.svc.cluster.local. 5 IN SRV 0 16 80 dup-name.hdls1.testns.svc.cluster.local.",
                ],
                &[
                    "172-0-0-2.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.2",
                    "172-0-0-3.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.3",
                    "5678-abcd--1.hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::1",
                    "5678-abcd--2.hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::2",
                    "dup-name.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.4",
                    "dup-name.hdls1.testns.svc.cluster.local. 5 IN A 172.0.0.5",
                ],
            ),
        ),
        ("5678-abcd--2.hdls1.testns.svc.cluster.local", Aaaa, Ok(&["5678-abcd--2.hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::2"], &[])),
        ("external.testns.svc.cluster.local.", Cname, Ok(&["external.testns.svc.cluster.local. 5 IN CNAME ext.interwebs.test."], &[])),
        (
            "external-to-service.testns.svc.cluster.local",
            A,
            Ok(
                &["external-to-service.testns.svc.cluster.local. 5 IN CNAME svc1.testns.svc.cluster.local.", "svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1"],
                &[],
            ),
        ),
        ("svc1.testns.svc.cluster.local.", Aaaa, NoData),
        ("svc0.testns.svc.cluster.local.", Aaaa, NxDomain),
        ("svc0.testns.svc.cluster.local.", A, NxDomain),
        ("svc0.svc-nons.svc.cluster.local.", A, NxDomain),
        ("dns-version.cluster.local.", Txt, Ok(&["dns-version.cluster.local. 28800 IN TXT \"1.1.0\""], &[])),
        ("svc1.testns.svc.cluster.local.", Txt, NoData),
        ("svc0.svc-nons.svc.cluster.local.", Txt, NxDomain),
        ("bogusendpoint.hdls1.testns.svc.cluster.local.", A, NxDomain),
        ("bogusendpoint.svc0.testns.svc.cluster.local.", A, NxDomain),
        ("svc6.testns.svc.cluster.local.", Aaaa, Ok(&["svc6.testns.svc.cluster.local. 5 IN AAAA 1234:abcd::1"], &[])),
        (
            "_http._tcp.svc6.testns.svc.cluster.local.",
            Srv,
            Ok(
                &["_http._tcp.svc6.testns.svc.cluster.local. 5 IN SRV 0 100 80 svc6.testns.svc.cluster.local."],
                &["svc6.testns.svc.cluster.local. 5 IN AAAA 1234:abcd::1"],
            ),
        ),
        (
            "hdls1.testns.svc.cluster.local.",
            Aaaa,
            Ok(&["hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::1", "hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::2"], &[]),
        ),
        ("5678-abcd--1.hdls1.testns.svc.cluster.local.", Aaaa, Ok(&["5678-abcd--1.hdls1.testns.svc.cluster.local. 5 IN AAAA 5678:abcd::1"], &[])),
        ("svc.cluster.local.", A, NoData),
        ("pod.cluster.local.", A, NoData),
        ("testns.svc.cluster.local.", A, NoData),
        ("svc.cluster.local.", Ns, NoData),
        ("testns.svc.cluster.local.", Ns, NoData),
        ("foo.cluster.local.", Ns, NxDomain),
        ("foo.svc.cluster.local.", Ns, NxDomain),
        ("svc-dual-stack.testns.svc.cluster.local.", A, Ok(&["svc-dual-stack.testns.svc.cluster.local. 5 IN A 10.0.0.3"], &[])),
        ("svc-dual-stack.testns.svc.cluster.local.", Aaaa, Ok(&["svc-dual-stack.testns.svc.cluster.local. 5 IN AAAA 10::3"], &[])),
        (
            "svc-dual-stack.testns.svc.cluster.local.",
            Srv,
            Ok(
                &["svc-dual-stack.testns.svc.cluster.local. 5 IN SRV 0 50 80 svc-dual-stack.testns.svc.cluster.local."],
                &["svc-dual-stack.testns.svc.cluster.local. 5 IN A 10.0.0.3", "svc-dual-stack.testns.svc.cluster.local. 5 IN AAAA 10::3"],
            ),
        ),
        ("svc1.testns.svc.cluster.local.", Soa, NoData),
        ("endpoint.external.testns.svc.cluster.local.", Cname, NxDomain),
        ("subdomain.subdomain.external.testns.svc.cluster.local.", Cname, NxDomain),
    ];
    check(&z, SOA5, table);
}

/// TestServeDNS's "CNAME External Truncated Lookup": the upstream's answers follow the CNAME.
#[test]
fn upstream_external_cname_with_upstream() {
    let z = serve_test_zone();
    let mut asked = Vec::new();
    let got = z.answer_with(&q("external.testns.svc.cluster.local.", RType::A), &mut |qq| {
        asked.push(qq.clone());
        Some(DnsMessage::answer(vec![DnsRecord { name: "ext.interwebs.test.".into(), ttl: 5, rtype: RType::A, data: "1.2.3.4".into() }]))
    });
    assert_eq!(asked, vec![q("ext.interwebs.test.", RType::A)]);
    let Answer::Authoritative(m) = got else { panic!() };
    // CNAME first, then its target's records (test.CNAMEOrder).
    assert_eq!(
        m.answers.iter().map(rr).collect::<Vec<_>>(),
        ["external.testns.svc.cluster.local. 5 IN CNAME ext.interwebs.test.", "ext.interwebs.test. 5 IN A 1.2.3.4"]
    );
    // Without an upstream the CNAME stands alone.
    let Answer::Authoritative(m) = z.answer(&q("external.testns.svc.cluster.local.", RType::A)) else { panic!() };
    assert_eq!(m.answers.iter().map(rr).collect::<Vec<_>>(), ["external.testns.svc.cluster.local. 5 IN CNAME ext.interwebs.test."]);
}

/// TestServeNamespaceDNS and TestNotSyncedServeDNS (handler_test.go).
#[test]
fn upstream_namespace_and_not_synced() {
    let mut z = serve_test_zone();
    check(
        &z,
        SOA5,
        &[
            ("svc1.testns.svc.cluster.local.", RType::A, Want::Ok(&["svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1"], &[])),
            ("svc1.nsnoexist.svc.cluster.local.", RType::A, Want::NxDomain),
        ],
    );
    z.set_synced(false);
    check(&z, SOA5, &[("svc0.testns.svc.cluster.local.", RType::A, Want::Msg(Rcode::ServFail, &[], &[SOA5], &[]))]);
}

/// TestServeDNSModeInsecure (handler_pod_insecure_test.go). HINFO is not modelled; ANY takes
/// the same default branch (a fake A lookup).
#[test]
fn upstream_pod_mode_insecure() {
    use RType::*;
    use Want::*;
    let mut z = serve_test_zone();
    z.add_namespace("podns");
    let table: &[(&str, RType, Want)] = &[
        ("10-240-0-1.podns.pod.cluster.local.", A, Ok(&["10-240-0-1.podns.pod.cluster.local. 5 IN A 10.240.0.1"], &[])),
        ("172-0-0-2.podns.pod.cluster.local.", A, Ok(&["172-0-0-2.podns.pod.cluster.local. 5 IN A 172.0.0.2"], &[])),
        ("blah.podns.pod.cluster.local.", A, NxDomain),
        ("blah.podns.pod.cluster.local.", Aaaa, NxDomain),
        ("blah.podns.pod.cluster.local.", Any, NxDomain),
        ("blah.pod-nons.pod.cluster.local.", A, NxDomain),
        ("podns.pod.cluster.local.", A, NoData),
    ];
    check(&z, SOA5, table);
}

/// TestPreserveCase (handler_case_test.go): answers keep the question's case, the zone part of
/// synthesised names too.
#[test]
fn upstream_preserve_case() {
    use RType::*;
    use Want::*;
    let z = serve_test_zone();
    let table: &[(&str, RType, Want)] = &[
        (
            "not-a-service.testns.svc.ClUsTeR.lOcAl.",
            A,
            Msg(Rcode::NxDomain, &[], &["ClUsTeR.lOcAl. 5 IN SOA ns.dns.ClUsTeR.lOcAl. hostmaster.ClUsTeR.lOcAl. 1499347823 7200 1800 86400 5"], &[]),
        ),
        ("SvC1.TeStNs.SvC.cLuStEr.LoCaL.", A, Ok(&["SvC1.TeStNs.SvC.cLuStEr.LoCaL. 5 IN A 10.0.0.1"], &[])),
        (
            "_HtTp._TcP.sVc1.TeStNs.SvC.cLuStEr.LoCaL.",
            Srv,
            Ok(
                &["_HtTp._TcP.sVc1.TeStNs.SvC.cLuStEr.LoCaL. 5 IN SRV 0 100 80 svc1.testns.svc.cLuStEr.LoCaL."],
                &["svc1.testns.svc.cLuStEr.LoCaL. 5 IN A 10.0.0.1"],
            ),
        ),
        ("Cluster.local.", Soa, Ok(&["Cluster.local. 5 IN SOA ns.dns.Cluster.local. hostmaster.Cluster.local. 1499347823 7200 1800 86400 5"], &[])),
    ];
    check(&z, SOA5, table);
}

/// TestServeDNSApex (kubernetes_apex_test.go), `localIPs = [127.0.0.1]`. HINFO → ANY.
#[test]
fn upstream_apex() {
    use RType::*;
    use Want::*;
    let mut z = serve_test_zone();
    z.set_local_ips(["127.0.0.1"]);
    let table: &[(&str, RType, Want)] = &[
        ("cluster.local.", Soa, Ok(&[SOA5], &[])),
        ("cluster.local.", Any, NoData),
        ("cluster.local.", Ns, Ok(&["cluster.local. 5 IN NS ns.dns.cluster.local."], &["ns.dns.cluster.local. 5 IN A 127.0.0.1"])),
        ("cluster.local.", A, NoData),
        ("cluster.local.", Aaaa, NoData),
        ("cluster.local.", Srv, NoData),
        // TestServicesAuthority (kubernetes_test.go): ns.dns.<zone> answers with our own address.
        ("ns.dns.cluster.local.", A, Ok(&["ns.dns.cluster.local. 5 IN A 127.0.0.1"], &[])),
        ("ns.dns.cluster.local.", Aaaa, NoData),
    ];
    check(&z, SOA5, table);
}

/// TestReverse (reverse_test.go). Upstream's test zones are the reverse zones themselves without
/// `fallthrough`; under kubeadm's `fallthrough in-addr.arpa ip6.arpa` the two name errors in
/// reverse zones go to `forward` instead of NXDOMAIN.
#[test]
fn upstream_reverse() {
    use RType::*;
    use Want::*;
    let services = [svc("testns", "svc1", &["192.168.1.100"], HTTP)];
    let slices = [
        slice("testns", "svc1-slice1", "svc1", HTTP, &[Ep(&["10.0.0.100"], Some("ep1a"), None), Ep(&["10.0.0.99"], Some("double-ep"), None)]),
        slice(
            "testns",
            "svc1-slice2",
            "svc1",
            HTTP,
            &[Ep(&["1234:abcd::1"], Some("ep1b"), None), Ep(&["fd00:77:30::a"], Some("ip6svc1ex"), None), Ep(&["fd00:77:30::2:9ba6"], Some("ip6svc1in"), None)],
        ),
        slice("testns", "svc1-ccccc", "svc1", HTTP, &[Ep(&["10.0.0.100"], Some("ep1a"), None)]),
        slice("testns", "svc2-slice1", "svc2", HTTP, &[Ep(&["10.0.0.99"], Some("double-ep"), None)]),
    ];
    let mut z = Zone::build("cluster.local.", &services, &slices, ["testns"]);
    z.set_ttl(5);
    z.set_serial(1499347823);
    let table: &[(&str, RType, Want)] = &[
        ("100.0.0.10.in-addr.arpa.", Ptr, Ok(&["100.0.0.10.in-addr.arpa. 5 IN PTR ep1a.svc1.testns.svc.cluster.local."], &[])),
        ("100.1.168.192.in-addr.arpa.", Ptr, Ok(&["100.1.168.192.in-addr.arpa. 5 IN PTR svc1.testns.svc.cluster.local."], &[])),
        (
            "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.c.b.a.4.3.2.1.ip6.arpa.",
            Ptr,
            Ok(&["1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.c.b.a.4.3.2.1.ip6.arpa. 5 IN PTR ep1b.svc1.testns.svc.cluster.local."], &[]),
        ),
        (
            "a.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.3.0.0.7.7.0.0.0.0.d.f.ip6.arpa.",
            Ptr,
            Ok(&["a.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.3.0.0.7.7.0.0.0.0.d.f.ip6.arpa. 5 IN PTR ip6svc1ex.svc1.testns.svc.cluster.local."], &[]),
        ),
        (
            "6.a.b.9.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.3.0.0.7.7.0.0.0.0.d.f.ip6.arpa.",
            Ptr,
            Ok(&["6.a.b.9.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.3.0.0.7.7.0.0.0.0.d.f.ip6.arpa. 5 IN PTR ip6svc1in.svc1.testns.svc.cluster.local."], &[]),
        ),
        ("101.0.0.10.in-addr.arpa.", Ptr, Forward),
        ("example.org.cluster.local.", Ptr, NxDomain),
        ("svc1.testns.svc.cluster.local.", Ptr, NoData),
        ("svc1.testns.svc.0.10.in-addr.arpa.", A, Forward),
        ("100.0.0.10.cluster.local.", Ptr, NxDomain),
        (
            "99.0.0.10.in-addr.arpa.",
            Ptr,
            Ok(
                &[
                    "99.0.0.10.in-addr.arpa. 5 IN PTR double-ep.svc1.testns.svc.cluster.local.",
                    "99.0.0.10.in-addr.arpa. 5 IN PTR double-ep.svc2.testns.svc.cluster.local.",
                ],
                &[],
            ),
        ),
    ];
    check(&z, SOA5, table);
}

// ---------------------------------------------------------------------------------------------
// A kind-like cluster (networking-storage.md §5.2 vectors), kubeadm's ttl 30

const SERIAL: u32 = 1764547200;
const SOA30: &str = "cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1764547200 7200 1800 86400 30";

fn kind_zone() -> Zone {
    let services = [
        svc("default", "kubernetes", &["10.96.0.1"], &[("https", "TCP", 443)]),
        svc("kube-system", "kube-dns", &["10.96.0.10"], &[("dns", "UDP", 53), ("dns-tcp", "TCP", 53), ("metrics", "TCP", 9153)]),
        svc("default", "web", &["10.96.12.34"], HTTP),
        svc("default", "nginx", &["None"], &[("web", "TCP", 80)]),
        svc("default", "empty-hdls", &["None"], HTTP),
        svc("default", "portless", &["None"], &[]),
        external("default", "ext", "example.com"),
        external("default", "ext-ip", "192.0.2.1"),
    ];
    let slices = [
        slice("default", "kubernetes", "kubernetes", &[("https", "TCP", 6443)], &[Ep(&["172.18.0.2"], None, Some(true))]),
        slice(
            "kube-system",
            "kube-dns-abcde",
            "kube-dns",
            &[("dns", "UDP", 53), ("dns-tcp", "TCP", 53), ("metrics", "TCP", 9153)],
            &[Ep(&["10.244.0.2"], None, Some(true)), Ep(&["10.244.0.3"], None, Some(true))],
        ),
        slice("default", "web-x7k2p", "web", HTTP, &[Ep(&["10.244.1.9"], None, Some(true))]),
        slice(
            "default",
            "nginx-q8r4t",
            "nginx",
            &[("web", "TCP", 80)],
            &[
                Ep(&["10.244.1.5"], Some("web-0"), Some(true)),
                Ep(&["10.244.2.7"], None, Some(true)),
                // Not ready (or terminating: the controller sets ready=false) ⇒ absent.
                Ep(&["10.244.3.9"], Some("web-2"), Some(false)),
            ],
        ),
        slice("default", "empty-hdls-1", "empty-hdls", HTTP, &[Ep(&["10.244.2.8"], None, Some(false))]),
        slice("default", "portless-1", "portless", &[], &[Ep(&["10.244.2.10"], None, None)]),
    ];
    let mut z = Zone::build("cluster.local", &services, &slices, ["default", "kube-system", "kube-public", "kube-node-lease"]);
    z.set_serial(SERIAL);
    z.set_local_ips(["10.244.0.2"]);
    z
}

#[test]
fn kind_services_and_endpoints() {
    use RType::*;
    use Want::*;
    let z = kind_zone();
    let table: &[(&str, RType, Want)] = &[
        ("web.default.svc.cluster.local", A, Ok(&["web.default.svc.cluster.local. 30 IN A 10.96.12.34"], &[])),
        ("web.default.svc.cluster.local", Aaaa, NoData),
        ("nope.default.svc.cluster.local", A, NxDomain),
        ("default.svc.cluster.local", A, NoData),
        (
            "_http._tcp.web.default.svc.cluster.local",
            Srv,
            Ok(
                &["_http._tcp.web.default.svc.cluster.local. 30 IN SRV 0 100 80 web.default.svc.cluster.local."],
                &["web.default.svc.cluster.local. 30 IN A 10.96.12.34"],
            ),
        ),
        ("_http._udp.web.default.svc.cluster.local", Srv, NxDomain),
        ("_https._tcp.web.default.svc.cluster.local", Srv, NxDomain),
        (
            "nginx.default.svc.cluster.local",
            A,
            Ok(&["nginx.default.svc.cluster.local. 30 IN A 10.244.1.5", "nginx.default.svc.cluster.local. 30 IN A 10.244.2.7"], &[]),
        ),
        ("web-0.nginx.default.svc.cluster.local", A, Ok(&["web-0.nginx.default.svc.cluster.local. 30 IN A 10.244.1.5"], &[])),
        ("10-244-2-7.nginx.default.svc.cluster.local", A, Ok(&["10-244-2-7.nginx.default.svc.cluster.local. 30 IN A 10.244.2.7"], &[])),
        // A hostname-named endpoint is not also reachable by its dashed IP.
        ("10-244-1-5.nginx.default.svc.cluster.local", A, NxDomain),
        ("web-2.nginx.default.svc.cluster.local", A, NxDomain),
        // Endpoint names work for ClusterIP services too.
        ("10-244-1-9.web.default.svc.cluster.local", A, Ok(&["10-244-1-9.web.default.svc.cluster.local. 30 IN A 10.244.1.9"], &[])),
        (
            "nginx.default.svc.cluster.local",
            Srv,
            Ok(
                &[
                    "nginx.default.svc.cluster.local. 30 IN SRV 0 50 80 web-0.nginx.default.svc.cluster.local.",
                    "nginx.default.svc.cluster.local. 30 IN SRV 0 50 80 10-244-2-7.nginx.default.svc.cluster.local.",
                ],
                &["web-0.nginx.default.svc.cluster.local. 30 IN A 10.244.1.5", "10-244-2-7.nginx.default.svc.cluster.local. 30 IN A 10.244.2.7"],
            ),
        ),
        (
            "_web._tcp.web-0.nginx.default.svc.cluster.local",
            Srv,
            NxDomain, // six labels before the zone: too long
        ),
        // Headless with no ready endpoint: the error stays "no items".
        ("empty-hdls.default.svc.cluster.local", A, NxDomain),
        // Port-less headless: A works, SRV skips port −1.
        ("portless.default.svc.cluster.local", A, Ok(&["portless.default.svc.cluster.local. 30 IN A 10.244.2.10"], &[])),
        ("portless.default.svc.cluster.local", Srv, NoData),
        ("kubernetes.default.svc.cluster.local", A, Ok(&["kubernetes.default.svc.cluster.local. 30 IN A 10.96.0.1"], &[])),
        (
            "_dns._udp.kube-dns.kube-system.svc.cluster.local",
            Srv,
            Ok(
                &["_dns._udp.kube-dns.kube-system.svc.cluster.local. 30 IN SRV 0 100 53 kube-dns.kube-system.svc.cluster.local."],
                &["kube-dns.kube-system.svc.cluster.local. 30 IN A 10.96.0.10"],
            ),
        ),
        (
            "kube-dns.kube-system.svc.cluster.local",
            Srv,
            Ok(
                &[
                    "kube-dns.kube-system.svc.cluster.local. 30 IN SRV 0 33 53 kube-dns.kube-system.svc.cluster.local.",
                    "kube-dns.kube-system.svc.cluster.local. 30 IN SRV 0 33 9153 kube-dns.kube-system.svc.cluster.local.",
                ],
                &["kube-dns.kube-system.svc.cluster.local. 30 IN A 10.96.0.10"],
            ),
        ),
        ("nonexistent-ns.svc.cluster.local", A, NxDomain),
        ("web.nonexistent-ns.svc.cluster.local", A, NxDomain),
        ("kube-public.svc.cluster.local", A, NoData),
        ("a.b.web.default.svc.cluster.local", A, NxDomain),
        ("web.default.cluster.local", A, NxDomain),
        // No wildcard support in v1.12.1: `*` and `any` are plain labels.
        ("*.default.svc.cluster.local", A, NxDomain),
        ("any.default.svc.cluster.local", A, NxDomain),
        ("web.default.svc.cluster.local", Mx, NoData),
        ("nope.default.svc.cluster.local", Mx, NxDomain),
        ("web.default.svc.cluster.local", Any, NoData),
        ("web.default.svc.cluster.local", Cname, NoData),
        ("nope.default.svc.cluster.local", Soa, NoData),
    ];
    check(&z, SOA30, table);
}

#[test]
fn kind_external_name() {
    use RType::*;
    use Want::*;
    let z = kind_zone();
    let table: &[(&str, RType, Want)] = &[
        ("ext.default.svc.cluster.local", Cname, Ok(&["ext.default.svc.cluster.local. 30 IN CNAME example.com."], &[])),
        ("ext.default.svc.cluster.local", A, Ok(&["ext.default.svc.cluster.local. 30 IN CNAME example.com."], &[])),
        ("ext.default.svc.cluster.local", Aaaa, Ok(&["ext.default.svc.cluster.local. 30 IN CNAME example.com."], &[])),
        ("ext.default.svc.cluster.local", Srv, NoData),
        ("_http._tcp.ext.default.svc.cluster.local", Srv, NxDomain),
        ("x.ext.default.svc.cluster.local", A, NxDomain),
        ("ext.default.svc.cluster.local", Txt, NoData),
        // An IP in externalName is no CNAME: nothing at all.
        ("ext-ip.default.svc.cluster.local", A, NxDomain),
    ];
    check(&z, SOA30, table);
}

#[test]
fn kind_pods_insecure() {
    use RType::*;
    use Want::*;
    let z = kind_zone();
    let table: &[(&str, RType, Want)] = &[
        ("10-244-2-7.default.pod.cluster.local", A, Ok(&["10-244-2-7.default.pod.cluster.local. 30 IN A 10.244.2.7"], &[])),
        ("1-2-3-4.kube-system.pod.cluster.local", A, Ok(&["1-2-3-4.kube-system.pod.cluster.local. 30 IN A 1.2.3.4"], &[])),
        ("1-2-3-4.kube-system.pod.cluster.local", Aaaa, NoData),
        ("1-2-3-4.nonexistent-ns.pod.cluster.local", A, NxDomain),
        ("1-2-3-400.default.pod.cluster.local", A, NxDomain),
        ("web.default.pod.cluster.local", A, NxDomain),
        ("fd00-10-244--5.default.pod.cluster.local", Aaaa, Ok(&["fd00-10-244--5.default.pod.cluster.local. 30 IN AAAA fd00:10:244::5"], &[])),
        ("fd00-10-244--5.default.pod.cluster.local", A, NoData),
        ("default.pod.cluster.local", A, NoData),
        ("nonexistent-ns.pod.cluster.local", A, NxDomain),
    ];
    check(&z, SOA30, table);
}

#[test]
fn kind_reverse_and_forward() {
    use RType::*;
    use Want::*;
    let z = kind_zone();
    let table: &[(&str, RType, Want)] = &[
        ("34.12.96.10.in-addr.arpa", Ptr, Ok(&["34.12.96.10.in-addr.arpa. 30 IN PTR web.default.svc.cluster.local."], &[])),
        ("10.0.96.10.in-addr.arpa.", Ptr, Ok(&["10.0.96.10.in-addr.arpa. 30 IN PTR kube-dns.kube-system.svc.cluster.local."], &[])),
        ("5.1.244.10.in-addr.arpa", Ptr, Ok(&["5.1.244.10.in-addr.arpa. 30 IN PTR web-0.nginx.default.svc.cluster.local."], &[])),
        ("7.2.244.10.in-addr.arpa", Ptr, Ok(&["7.2.244.10.in-addr.arpa. 30 IN PTR 10-244-2-7.nginx.default.svc.cluster.local."], &[])),
        // Not ready, unknown, malformed: fallthrough to forward.
        ("9.3.244.10.in-addr.arpa", Ptr, Forward),
        ("9.9.9.9.in-addr.arpa", Ptr, Forward),
        ("3.2.1.in-addr.arpa", Ptr, Forward),
        ("34.12.96.10.in-addr.arpa", A, Forward),
        ("1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.", Ptr, Forward),
        // The reverse zone apex itself is the plugin's (NODATA with that zone's SOA).
        (
            "in-addr.arpa.",
            A,
            Msg(Rcode::NoError, &[], &["in-addr.arpa. 30 IN SOA ns.dns.in-addr.arpa. hostmaster.in-addr.arpa. 1764547200 7200 1800 86400 30"], &[]),
        ),
        // Outside every zone of the plugin.
        ("example.com", A, Forward),
        ("kubernetes.default", A, Forward),
        ("cluster.local.example.com.", A, Forward),
        ("xcluster.local", A, Forward),
        (".", Ns, Forward),
    ];
    check(&z, SOA30, table);
}

#[test]
fn kind_apex_txt_ns() {
    use RType::*;
    use Want::*;
    let z = kind_zone();
    let table: &[(&str, RType, Want)] = &[
        ("dns-version.cluster.local", Txt, Ok(&["dns-version.cluster.local. 28800 IN TXT \"1.1.0\""], &[])),
        ("Dns-Version.Cluster.Local.", Txt, Ok(&["Dns-Version.Cluster.Local. 28800 IN TXT \"1.1.0\""], &[])),
        ("dns-version.cluster.local", A, NxDomain),
        ("web.default.svc.cluster.local", Txt, NoData),
        // The namespace-only name has no records of any type, so TXT there is NXDOMAIN.
        ("default.svc.cluster.local", Txt, NxDomain),
        ("cluster.local", Soa, Ok(&[SOA30], &[])),
        // Our own address is a kube-dns endpoint: NS names the kube-dns Service.
        (
            "cluster.local.",
            Ns,
            Ok(&["cluster.local. 30 IN NS kube-dns.kube-system.svc.cluster.local."], &["kube-dns.kube-system.svc.cluster.local. 30 IN A 10.96.0.10"]),
        ),
        ("ns.dns.cluster.local.", A, Ok(&["ns.dns.cluster.local. 30 IN A 10.96.0.10"], &[])),
        ("cluster.local.", A, NoData),
        ("WEB.Default.SVC.cluster.local", A, Ok(&["WEB.Default.SVC.cluster.local. 30 IN A 10.96.12.34"], &[])),
    ];
    check(&z, SOA30, table);
}

// ---------------------------------------------------------------------------------------------
// Informer updates and determinism

#[test]
fn informer_updates() {
    let mut z = kind_zone();
    let a = |z: &Zone, n: &str| z.answer(&q(n, RType::A));
    assert!(matches!(a(&z, "web.default.svc.cluster.local"), Answer::Authoritative(DnsMessage { rcode: Rcode::NoError, .. })));

    // The service changes its IP: the old reverse entry goes.
    z.set_service(&svc("default", "web", &["10.96.50.50"], HTTP));
    check(&z, SOA30, &[("web.default.svc.cluster.local", RType::A, Want::Ok(&["web.default.svc.cluster.local. 30 IN A 10.96.50.50"], &[]))]);
    assert_eq!(z.answer(&q("34.12.96.10.in-addr.arpa", RType::Ptr)), Answer::Forward);

    // A pod turns ready: the slice update adds it.
    z.set_endpoint_slice(&slice(
        "default",
        "nginx-q8r4t",
        "nginx",
        &[("web", "TCP", 80)],
        &[Ep(&["10.244.1.5"], Some("web-0"), Some(true)), Ep(&["10.244.3.9"], Some("web-2"), Some(true))],
    ));
    check(
        &z,
        SOA30,
        &[
            ("web-2.nginx.default.svc.cluster.local", RType::A, Want::Ok(&["web-2.nginx.default.svc.cluster.local. 30 IN A 10.244.3.9"], &[])),
            ("7.2.244.10.in-addr.arpa", RType::Ptr, Want::Forward),
        ],
    );

    z.remove_endpoint_slice("default", "nginx-q8r4t");
    check(&z, SOA30, &[("nginx.default.svc.cluster.local", RType::A, Want::NxDomain)]);
    z.remove_service("default", "web");
    check(&z, SOA30, &[("web.default.svc.cluster.local", RType::A, Want::NxDomain)]);
    z.remove_namespace("kube-system");
    check(&z, SOA30, &[("1-2-3-4.kube-system.pod.cluster.local", RType::A, Want::NxDomain), ("kube-system.svc.cluster.local", RType::A, Want::NxDomain)]);
    z.set_serial(SERIAL + 60);
    check(
        &z,
        "cluster.local. 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. 1764547260 7200 1800 86400 30",
        &[("nope.default.svc.cluster.local", RType::A, Want::NxDomain)],
    );
}

/// Answers are a function of the caches' contents, not of the order objects arrived in; the
/// record order is the caches' order (slice endpoints in slice order).
#[test]
fn deterministic_order() {
    let z = kind_zone();
    let Answer::Authoritative(m) = z.answer(&q("nginx.default.svc.cluster.local", RType::Srv)) else { panic!() };
    assert_eq!(
        m.answers.iter().map(rr).collect::<Vec<_>>(),
        [
            "nginx.default.svc.cluster.local. 30 IN SRV 0 50 80 web-0.nginx.default.svc.cluster.local.",
            "nginx.default.svc.cluster.local. 30 IN SRV 0 50 80 10-244-2-7.nginx.default.svc.cluster.local.",
        ]
    );
    let services = [svc("default", "b", &["10.96.0.2"], HTTP), svc("default", "a", &["10.96.0.3"], HTTP)];
    let slices =
        [slice("default", "b-2", "b", HTTP, &[Ep(&["10.244.0.9"], None, None)]), slice("default", "b-1", "b", HTTP, &[Ep(&["10.244.0.8"], None, None)])];
    let one = Zone::build("cluster.local", &services, &slices, ["default"]);
    let rev_s: Vec<Service> = services.iter().rev().cloned().collect();
    let rev_e: Vec<EndpointSlice> = slices.iter().rev().cloned().collect();
    let two = Zone::build("cluster.local", &rev_s, &rev_e, ["default"]);
    assert_eq!(one, two);
    for name in ["10-244-0-9.b.default.svc.cluster.local", "b.default.svc.cluster.local", "a.default.svc.cluster.local"] {
        for t in [RType::A, RType::Srv, RType::Aaaa] {
            assert_eq!(one.answer(&q(name, t)), two.answer(&q(name, t)), "{name}");
        }
    }
    assert_eq!(TTL, 30);
    assert_eq!(Zone::new("Cluster.Local.").domain(), "cluster.local.");
}
