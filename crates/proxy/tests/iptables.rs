//! kube-proxy's rules against upstream's test vectors: Services and EndpointSlices in, the
//! iptables-restore input kube-proxy writes out.

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kubesim_host::iptables::{restore_input, sort_restore_rules, Options};
use serde_json::json;

/// upstream's makeTestService: a Service `ns/name`.
fn service(ns: &str, name: &str, spec: serde_json::Value, status: serde_json::Value) -> Service {
    serde_json::from_value(json!({"metadata": {"namespace": ns, "name": name}, "spec": spec, "status": status})).unwrap()
}

/// upstream's makeTestEndpointSlice: slice `<name>-1` of Service `ns/name`, port `p80` 80/TCP.
fn slice(ns: &str, name: &str, endpoints: serde_json::Value) -> EndpointSlice {
    serde_json::from_value(json!({
        "metadata": {"namespace": ns, "name": format!("{name}-1"), "labels": {"kubernetes.io/service-name": name}},
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": [{"name": "p80", "port": 80, "protocol": "TCP"}],
    }))
    .unwrap()
}

/// The fake proxier's configuration (NewFakeProxier): local detector 10.0.0.0/8, node IP
/// 192.168.0.2, masquerade mark 0x4000, no `--random-fully`, localhost node ports.
fn fake() -> Options<'static> {
    Options { cluster_cidr: "10.0.0.0/8", node_ip: "192.168.0.2", masquerade_mark: "0x4000", random_fully: false, localhost_node_ports: true }
}

const TEST_HOSTNAME: &str = "test-hostname";

/// Compares after upstream's sortIPTablesRules, showing the differing lines.
fn assert_rules_equal(expected: &str, restore: &str) {
    let got = sort_restore_rules(restore);
    let want = sort_restore_rules(expected);
    if got != want {
        let diff: Vec<String> = got
            .lines()
            .filter(|l| !want.lines().any(|w| w == *l))
            .map(|l| format!("+ {l}"))
            .chain(want.lines().filter(|w| !got.lines().any(|l| l == *w)).map(|l| format!("- {l}")))
            .collect();
        panic!("{}\n\n{got}", diff.join("\n"));
    }
}

fn p80(extra: serde_json::Value) -> serde_json::Value {
    let mut p = json!({"name": "p80", "port": 80, "protocol": "TCP"});
    p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    json!([p])
}

/// upstream pkg/proxy/iptables/proxier_test.go TestOverallIPTablesRulesWithMultipleServices
/// (reference §4.5): a ClusterIP Service, a LoadBalancer with `externalTrafficPolicy: Local`
/// whose endpoint is on another node, a NodePort, a NodePort without a node port but with an
/// external IP, a LoadBalancer with `loadBalancerSourceRanges` (with upstream's stray space),
/// and a Service without endpoints; compared after upstream's sortIPTablesRules.
#[test]
fn test_overall_iptables_rules_with_multiple_services() {
    let services = [
        service("ns1", "svc1", json!({"clusterIP": "172.30.0.41", "ports": p80(json!({}))}), json!({})),
        service(
            "ns2",
            "svc2",
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "clusterIP": "172.30.0.42", "ports": p80(json!({"nodePort": 3001})),
                   "externalIPs": ["192.168.99.22"], "healthCheckNodePort": 30000}),
            json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}),
        ),
        service("ns3", "svc3", json!({"type": "NodePort", "clusterIP": "172.30.0.43", "ports": p80(json!({"nodePort": 3003}))}), json!({})),
        service(
            "ns4",
            "svc4",
            json!({"type": "NodePort", "clusterIP": "172.30.0.44", "externalIPs": ["192.168.99.33"], "ports": p80(json!({"targetPort": 80}))}),
            json!({}),
        ),
        service(
            "ns5",
            "svc5",
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Cluster", "clusterIP": "172.30.0.45", "ports": p80(json!({"nodePort": 3002})),
                   "healthCheckNodePort": 30000, "loadBalancerSourceRanges": [" 203.0.113.0/25"]}),
            json!({"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}]}}),
        ),
        service("ns6", "svc6", json!({"type": "ClusterIP", "clusterIP": "172.30.0.46", "ports": p80(json!({"targetPort": 80}))}), json!({})),
    ];
    let slices = [
        slice("ns1", "svc1", json!([{"addresses": ["10.180.0.1"]}])),
        // Without a nodeName: not local, so eTP Local has no local endpoint here.
        slice("ns2", "svc2", json!([{"addresses": ["10.180.0.2"]}])),
        slice("ns3", "svc3", json!([{"addresses": ["10.180.0.3"]}])),
        slice("ns4", "svc4", json!([{"addresses": ["10.180.0.4"]}, {"addresses": ["10.180.0.5"], "nodeName": TEST_HOSTNAME}])),
        slice("ns5", "svc5", json!([{"addresses": ["10.180.0.3"]}])),
    ];
    let table = kubesim_proxy::rules(TEST_HOSTNAME, services.iter(), slices.iter());
    let expected = r#"
*filter
:KUBE-NODEPORTS - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-EXTERNAL-SERVICES - [0:0]
:KUBE-FIREWALL - [0:0]
:KUBE-FORWARD - [0:0]
:KUBE-PROXY-FIREWALL - [0:0]
-A KUBE-NODEPORTS -m comment --comment "ns2/svc2:p80 health check node port" -m tcp -p tcp --dport 30000 -j ACCEPT
-A KUBE-SERVICES -m comment --comment "ns6/svc6:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.46 --dport 80 -j REJECT
-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns2/svc2:p80 has no local endpoints" -m tcp -p tcp -d 192.168.99.22 --dport 80 -j DROP
-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns2/svc2:p80 has no local endpoints" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP
-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns2/svc2:p80 has no local endpoints" -m addrtype --dst-type LOCAL -m tcp -p tcp --dport 3001 -j DROP
-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A KUBE-PROXY-FIREWALL -m comment --comment "ns5/svc5:p80 traffic not accepted by KUBE-FW-NUKIZ6OKUXPJNT4C" -m tcp -p tcp -d 5.6.7.8 --dport 80 -j DROP
COMMIT
*nat
:KUBE-NODEPORTS - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-EXT-4SW47YFZTEDKD3PK - [0:0]
:KUBE-EXT-GNZBNJ2PO5MGZ6GT - [0:0]
:KUBE-EXT-NUKIZ6OKUXPJNT4C - [0:0]
:KUBE-EXT-X27LE4BHSL4DOUIK - [0:0]
:KUBE-FW-NUKIZ6OKUXPJNT4C - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-SEP-C6EBXVWJJZMIWKLZ - [0:0]
:KUBE-SEP-I77PXRDZVX7PMWMN - [0:0]
:KUBE-SEP-OYPFS5VJICHGATKP - [0:0]
:KUBE-SEP-RS4RBKLTHTF2IUXJ - [0:0]
:KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]
:KUBE-SEP-UKSFD7AGPMPPLUHC - [0:0]
:KUBE-SVC-4SW47YFZTEDKD3PK - [0:0]
:KUBE-SVC-GNZBNJ2PO5MGZ6GT - [0:0]
:KUBE-SVC-NUKIZ6OKUXPJNT4C - [0:0]
:KUBE-SVC-X27LE4BHSL4DOUIK - [0:0]
:KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]
-A KUBE-NODEPORTS -m comment --comment ns2/svc2:p80 -m tcp -p tcp --dport 3001 -j KUBE-EXT-GNZBNJ2PO5MGZ6GT
-A KUBE-NODEPORTS -m comment --comment ns3/svc3:p80 -m tcp -p tcp --dport 3003 -j KUBE-EXT-X27LE4BHSL4DOUIK
-A KUBE-NODEPORTS -m comment --comment ns5/svc5:p80 -m tcp -p tcp --dport 3002 -j KUBE-EXT-NUKIZ6OKUXPJNT4C
-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O
-A KUBE-SERVICES -m comment --comment "ns2/svc2:p80 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 80 -j KUBE-SVC-GNZBNJ2PO5MGZ6GT
-A KUBE-SERVICES -m comment --comment "ns2/svc2:p80 external IP" -m tcp -p tcp -d 192.168.99.22 --dport 80 -j KUBE-EXT-GNZBNJ2PO5MGZ6GT
-A KUBE-SERVICES -m comment --comment "ns2/svc2:p80 loadbalancer IP" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j KUBE-EXT-GNZBNJ2PO5MGZ6GT
-A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j KUBE-SVC-X27LE4BHSL4DOUIK
-A KUBE-SERVICES -m comment --comment "ns4/svc4:p80 cluster IP" -m tcp -p tcp -d 172.30.0.44 --dport 80 -j KUBE-SVC-4SW47YFZTEDKD3PK
-A KUBE-SERVICES -m comment --comment "ns4/svc4:p80 external IP" -m tcp -p tcp -d 192.168.99.33 --dport 80 -j KUBE-EXT-4SW47YFZTEDKD3PK
-A KUBE-SERVICES -m comment --comment "ns5/svc5:p80 cluster IP" -m tcp -p tcp -d 172.30.0.45 --dport 80 -j KUBE-SVC-NUKIZ6OKUXPJNT4C
-A KUBE-SERVICES -m comment --comment "ns5/svc5:p80 loadbalancer IP" -m tcp -p tcp -d 5.6.7.8 --dport 80 -j KUBE-FW-NUKIZ6OKUXPJNT4C
-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-EXT-4SW47YFZTEDKD3PK -m comment --comment "masquerade traffic for ns4/svc4:p80 external destinations" -j KUBE-MARK-MASQ
-A KUBE-EXT-4SW47YFZTEDKD3PK -j KUBE-SVC-4SW47YFZTEDKD3PK
-A KUBE-EXT-GNZBNJ2PO5MGZ6GT -m comment --comment "pod traffic for ns2/svc2:p80 external destinations" -s 10.0.0.0/8 -j KUBE-SVC-GNZBNJ2PO5MGZ6GT
-A KUBE-EXT-GNZBNJ2PO5MGZ6GT -m comment --comment "masquerade LOCAL traffic for ns2/svc2:p80 external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ
-A KUBE-EXT-GNZBNJ2PO5MGZ6GT -m comment --comment "route LOCAL traffic for ns2/svc2:p80 external destinations" -m addrtype --src-type LOCAL -j KUBE-SVC-GNZBNJ2PO5MGZ6GT
-A KUBE-EXT-NUKIZ6OKUXPJNT4C -m comment --comment "masquerade traffic for ns5/svc5:p80 external destinations" -j KUBE-MARK-MASQ
-A KUBE-EXT-NUKIZ6OKUXPJNT4C -j KUBE-SVC-NUKIZ6OKUXPJNT4C
-A KUBE-EXT-X27LE4BHSL4DOUIK -m comment --comment "masquerade traffic for ns3/svc3:p80 external destinations" -j KUBE-MARK-MASQ
-A KUBE-EXT-X27LE4BHSL4DOUIK -j KUBE-SVC-X27LE4BHSL4DOUIK
-A KUBE-FW-NUKIZ6OKUXPJNT4C -m comment --comment "ns5/svc5:p80 loadbalancer IP" -s 203.0.113.0/25 -j KUBE-EXT-NUKIZ6OKUXPJNT4C
-A KUBE-FW-NUKIZ6OKUXPJNT4C -m comment --comment "other traffic to ns5/svc5:p80 will be dropped by KUBE-PROXY-FIREWALL"
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
-A KUBE-SEP-C6EBXVWJJZMIWKLZ -m comment --comment ns4/svc4:p80 -s 10.180.0.5 -j KUBE-MARK-MASQ
-A KUBE-SEP-C6EBXVWJJZMIWKLZ -m comment --comment ns4/svc4:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.5:80
-A KUBE-SEP-I77PXRDZVX7PMWMN -m comment --comment ns5/svc5:p80 -s 10.180.0.3 -j KUBE-MARK-MASQ
-A KUBE-SEP-I77PXRDZVX7PMWMN -m comment --comment ns5/svc5:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.3:80
-A KUBE-SEP-OYPFS5VJICHGATKP -m comment --comment ns3/svc3:p80 -s 10.180.0.3 -j KUBE-MARK-MASQ
-A KUBE-SEP-OYPFS5VJICHGATKP -m comment --comment ns3/svc3:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.3:80
-A KUBE-SEP-RS4RBKLTHTF2IUXJ -m comment --comment ns2/svc2:p80 -s 10.180.0.2 -j KUBE-MARK-MASQ
-A KUBE-SEP-RS4RBKLTHTF2IUXJ -m comment --comment ns2/svc2:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.2:80
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ
-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80
-A KUBE-SEP-UKSFD7AGPMPPLUHC -m comment --comment ns4/svc4:p80 -s 10.180.0.4 -j KUBE-MARK-MASQ
-A KUBE-SEP-UKSFD7AGPMPPLUHC -m comment --comment ns4/svc4:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.4:80
-A KUBE-SVC-4SW47YFZTEDKD3PK -m comment --comment "ns4/svc4:p80 cluster IP" -m tcp -p tcp -d 172.30.0.44 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-4SW47YFZTEDKD3PK -m comment --comment "ns4/svc4:p80 -> 10.180.0.4:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-UKSFD7AGPMPPLUHC
-A KUBE-SVC-4SW47YFZTEDKD3PK -m comment --comment "ns4/svc4:p80 -> 10.180.0.5:80" -j KUBE-SEP-C6EBXVWJJZMIWKLZ
-A KUBE-SVC-GNZBNJ2PO5MGZ6GT -m comment --comment "ns2/svc2:p80 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-GNZBNJ2PO5MGZ6GT -m comment --comment "ns2/svc2:p80 -> 10.180.0.2:80" -j KUBE-SEP-RS4RBKLTHTF2IUXJ
-A KUBE-SVC-NUKIZ6OKUXPJNT4C -m comment --comment "ns5/svc5:p80 cluster IP" -m tcp -p tcp -d 172.30.0.45 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-NUKIZ6OKUXPJNT4C -m comment --comment "ns5/svc5:p80 -> 10.180.0.3:80" -j KUBE-SEP-I77PXRDZVX7PMWMN
-A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 cluster IP" -m tcp -p tcp -d 172.30.0.43 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-X27LE4BHSL4DOUIK -m comment --comment "ns3/svc3:p80 -> 10.180.0.3:80" -j KUBE-SEP-OYPFS5VJICHGATKP
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -j KUBE-SEP-SXIVWICOYRO3J4NJ
COMMIT
"#;
    assert_eq!(sort_restore_rules(expected), expected.trim_start(), "the expected dump is already in sortIPTablesRules' order");
    assert_rules_equal(expected, &restore_input(&table, &fake()));
}

/// upstream's testExternalClient.
const EXTERNAL_CLIENT: &str = "203.0.113.2";
/// upstream's testNodeIP.
const NODE_IP: &str = "192.168.0.2";

/// runPacketFlowTests' output for one flow: the endpoints the rules may DNAT it to
/// (`a:80, b:80`), `DROP`, `REJECT`, or empty when no rule matches; every connection of the
/// flow is tried (many source ports) and nothing is recorded.
fn flow(table: &kubesim_host::netfilter::ServiceTable, src: &str, dst: &str, port: u16) -> String {
    use kubesim_host::netfilter::Dnat;
    let mut seen = std::collections::BTreeSet::new();
    for src_port in 1..=400 {
        seen.insert(match table.lookup((src, src_port), dst, port, false, NODE_IP, 0) {
            Dnat::To { ip, port, .. } => format!("{ip}:{port}"),
            Dnat::Drop { .. } => "DROP".into(),
            Dnat::Reject { .. } => "REJECT".into(),
            Dnat::Unchanged => String::new(),
        });
    }
    seen.into_iter().collect::<Vec<_>>().join(", ")
}

fn endpoint(ip: &str, ready: bool, serving: bool, terminating: bool, node: &str) -> serde_json::Value {
    json!({"addresses": [ip], "conditions": {"ready": ready, "serving": serving, "terminating": terminating}, "nodeName": node})
}

/// The unnamed-port slice upstream's traffic-policy tests use (`ns1/svc1`, port "" 80/TCP).
fn unnamed_slice(endpoints: serde_json::Value) -> EndpointSlice {
    serde_json::from_value(json!({
        "metadata": {"namespace": "ns1", "name": "svc1-1", "labels": {"kubernetes.io/service-name": "svc1"}},
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": [{"name": "", "port": 80, "protocol": "TCP"}],
    }))
    .unwrap()
}

const FILTER_BASE: &str = r#"-A KUBE-FIREWALL -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT
-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
"#;

const NAT_BASE: &str = r#"-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE
"#;

/// A dump from its filter rules, nat chains and nat rules plus the fixed ones every sync writes.
fn dump(filter_rules: &str, nat_chains: &[&str], nat_rules: &str) -> String {
    let mut text = String::from("*filter\n");
    for c in ["KUBE-NODEPORTS", "KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-FIREWALL", "KUBE-FORWARD", "KUBE-PROXY-FIREWALL"] {
        text.push_str(&format!(":{c} - [0:0]\n"));
    }
    text.push_str(filter_rules);
    text.push_str(FILTER_BASE);
    text.push_str("COMMIT\n*nat\n");
    for c in ["KUBE-NODEPORTS", "KUBE-SERVICES", "KUBE-MARK-MASQ", "KUBE-POSTROUTING"].iter().chain(nat_chains) {
        text.push_str(&format!(":{c} - [0:0]\n"));
    }
    text.push_str(NAT_BASE);
    text.push_str(nat_rules);
    text.push_str("COMMIT\n");
    text
}

/// upstream proxier_test.go TestTerminatingEndpointsTrafficPolicyLocal: a LoadBalancer with
/// `externalTrafficPolicy: Local`, ClientIP affinity (10800 s) and health-check node port
/// 30000; CategorizeEndpoints' fallback to serving-terminating endpoints, independently for
/// the cluster (KUBE-SVC) and local (KUBE-SVL) chains; DROP for external traffic without
/// local endpoints; REJECT without usable endpoints anywhere. Dumps and packet flows.
#[test]
fn test_terminating_endpoints_traffic_policy_local() {
    let svc = service(
        "ns1",
        "svc1",
        json!({"clusterIP": "172.30.1.1", "type": "LoadBalancer", "externalTrafficPolicy": "Local", "selector": {"foo": "bar"},
               "ports": [{"name": "", "targetPort": 80, "port": 80, "protocol": "TCP"}], "healthCheckNodePort": 30000,
               "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}}}),
        json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}),
    );
    let hc = "-A KUBE-NODEPORTS -m comment --comment \"ns1/svc1 health check node port\" -m tcp -p tcp --dport 30000 -j ACCEPT\n";
    let services = r#"-A KUBE-SERVICES -m comment --comment "ns1/svc1 cluster IP" -m tcp -p tcp -d 172.30.1.1 --dport 80 -j KUBE-SVC-AQI2S6QIMU7PVVRP
-A KUBE-SERVICES -m comment --comment "ns1/svc1 loadbalancer IP" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j KUBE-EXT-AQI2S6QIMU7PVVRP
-A KUBE-EXT-AQI2S6QIMU7PVVRP -m comment --comment "pod traffic for ns1/svc1 external destinations" -s 10.0.0.0/8 -j KUBE-SVC-AQI2S6QIMU7PVVRP
-A KUBE-EXT-AQI2S6QIMU7PVVRP -m comment --comment "masquerade LOCAL traffic for ns1/svc1 external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ
-A KUBE-EXT-AQI2S6QIMU7PVVRP -m comment --comment "route LOCAL traffic for ns1/svc1 external destinations" -m addrtype --src-type LOCAL -j KUBE-SVC-AQI2S6QIMU7PVVRP
"#;
    let masq =
        "-A KUBE-SVC-AQI2S6QIMU7PVVRP -m comment --comment \"ns1/svc1 cluster IP\" -m tcp -p tcp -d 172.30.1.1 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ\n";
    let sep = |chain: &str, ip: &str| {
        format!(
            "-A {chain} -m comment --comment ns1/svc1 -s {ip} -j KUBE-MARK-MASQ\n-A {chain} -m comment --comment ns1/svc1 -m recent --name {chain} --set -m tcp -p tcp -j DNAT --to-destination {ip}:80\n"
        )
    };
    let rcheck = |svc_chain: &str, ip: &str, sep: &str| {
        format!("-A {svc_chain} -m comment --comment \"ns1/svc1 -> {ip}:80\" -m recent --name {sep} --rcheck --seconds 10800 --reap -j {sep}\n")
    };
    let pick = |svc_chain: &str, ip: &str, sep: &str, p: &str| {
        let statistic = if p.is_empty() { String::new() } else { format!(" -m statistic --mode random --probability {p}") };
        format!("-A {svc_chain} -m comment --comment \"ns1/svc1 -> {ip}:80\"{statistic} -j {sep}\n")
    };
    let (svc_c, svl_c) = ("KUBE-SVC-AQI2S6QIMU7PVVRP", "KUBE-SVL-AQI2S6QIMU7PVVRP");
    let (sep1, sep2, sep3, sep5) = ("KUBE-SEP-3JOIVZTXZZRGORX4", "KUBE-SEP-IO5XOSKPAXIFQXAJ", "KUBE-SEP-XGJFVO3L2O5SRFNT", "KUBE-SEP-EQCHZ7S2PJ72OHAY");
    let ext_svl = "-A KUBE-EXT-AQI2S6QIMU7PVVRP -j KUBE-SVL-AQI2S6QIMU7PVVRP\n";

    struct Case {
        name: &'static str,
        endpoints: serde_json::Value,
        expected: String,
        flows: Vec<(&'static str, &'static str, &'static str)>,
    }
    let cases = [
        Case {
            name: "ready endpoints exist",
            endpoints: json!([
                endpoint("10.0.1.1", true, true, false, TEST_HOSTNAME),
                endpoint("10.0.1.2", true, true, false, TEST_HOSTNAME),
                endpoint("10.0.1.3", false, true, true, TEST_HOSTNAME),
                endpoint("10.0.1.4", false, false, true, TEST_HOSTNAME),
                endpoint("10.0.1.5", true, true, false, "host-1"),
            ]),
            expected: dump(
                hc,
                &["KUBE-EXT-AQI2S6QIMU7PVVRP", sep1, sep5, sep2, svc_c, svl_c],
                &[
                    services.to_string(),
                    ext_svl.into(),
                    sep(sep1, "10.0.1.1"),
                    sep(sep5, "10.0.1.5"),
                    sep(sep2, "10.0.1.2"),
                    masq.into(),
                    rcheck(svc_c, "10.0.1.1", sep1),
                    rcheck(svc_c, "10.0.1.2", sep2),
                    rcheck(svc_c, "10.0.1.5", sep5),
                    pick(svc_c, "10.0.1.1", sep1, "0.3333333333"),
                    pick(svc_c, "10.0.1.2", sep2, "0.5000000000"),
                    pick(svc_c, "10.0.1.5", sep5, ""),
                    rcheck(svl_c, "10.0.1.1", sep1),
                    rcheck(svl_c, "10.0.1.2", sep2),
                    pick(svl_c, "10.0.1.1", sep1, "0.5000000000"),
                    pick(svl_c, "10.0.1.2", sep2, ""),
                ]
                .concat(),
            ),
            flows: vec![("10.0.0.2", "172.30.1.1", "10.0.1.1:80, 10.0.1.2:80, 10.0.1.5:80"), (EXTERNAL_CLIENT, "1.2.3.4", "10.0.1.1:80, 10.0.1.2:80")],
        },
        Case {
            name: "only terminating endpoints exist",
            endpoints: json!([
                endpoint("10.0.1.2", false, true, true, TEST_HOSTNAME),
                endpoint("10.0.1.3", false, true, true, TEST_HOSTNAME),
                endpoint("10.0.1.4", false, false, true, TEST_HOSTNAME),
                endpoint("10.0.1.5", true, true, false, "host-1"),
            ]),
            expected: dump(
                hc,
                &["KUBE-EXT-AQI2S6QIMU7PVVRP", sep5, sep2, sep3, svc_c, svl_c],
                &[
                    services.to_string(),
                    ext_svl.into(),
                    sep(sep5, "10.0.1.5"),
                    sep(sep2, "10.0.1.2"),
                    sep(sep3, "10.0.1.3"),
                    masq.into(),
                    rcheck(svc_c, "10.0.1.5", sep5),
                    pick(svc_c, "10.0.1.5", sep5, ""),
                    rcheck(svl_c, "10.0.1.2", sep2),
                    rcheck(svl_c, "10.0.1.3", sep3),
                    pick(svl_c, "10.0.1.2", sep2, "0.5000000000"),
                    pick(svl_c, "10.0.1.3", sep3, ""),
                ]
                .concat(),
            ),
            flows: vec![("10.0.0.2", "172.30.1.1", "10.0.1.5:80"), (EXTERNAL_CLIENT, "1.2.3.4", "10.0.1.2:80, 10.0.1.3:80")],
        },
        Case {
            name: "terminating endpoints on remote node",
            endpoints: json!([endpoint("10.0.1.5", false, true, true, "host-1")]),
            expected: dump(
                &format!("{hc}-A KUBE-EXTERNAL-SERVICES -m comment --comment \"ns1/svc1 has no local endpoints\" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j DROP\n"),
                &["KUBE-EXT-AQI2S6QIMU7PVVRP", sep5, svc_c],
                &[services.to_string(), sep(sep5, "10.0.1.5"), masq.into(), rcheck(svc_c, "10.0.1.5", sep5), pick(svc_c, "10.0.1.5", sep5, "")].concat(),
            ),
            flows: vec![("10.0.0.2", "172.30.1.1", "10.0.1.5:80"), (EXTERNAL_CLIENT, "1.2.3.4", "DROP")],
        },
        Case {
            name: "no usable endpoints on any node",
            endpoints: json!([endpoint("10.0.1.5", false, false, true, TEST_HOSTNAME), endpoint("10.0.1.5", false, false, true, "host-1")]),
            expected: dump(
                &format!(
                    "{hc}-A KUBE-SERVICES -m comment --comment \"ns1/svc1 has no endpoints\" -m tcp -p tcp -d 172.30.1.1 --dport 80 -j REJECT\n-A KUBE-EXTERNAL-SERVICES -m comment --comment \"ns1/svc1 has no endpoints\" -m tcp -p tcp -d 1.2.3.4 --dport 80 -j REJECT\n"
                ),
                &[],
                "",
            ),
            flows: vec![("10.0.0.2", "172.30.1.1", "REJECT"), (EXTERNAL_CLIENT, "1.2.3.4", "REJECT")],
        },
    ];
    for case in cases {
        let slices = [unnamed_slice(case.endpoints)];
        let mut table = kubesim_proxy::rules(TEST_HOSTNAME, [&svc], slices.iter());
        table.cluster_cidr = "10.0.0.0/8".into();
        let restore = restore_input(&table, &fake());
        assert_rules_equal(&case.expected, &restore);
        for (src, dst, want) in case.flows {
            assert_eq!(flow(&table, src, dst, 80), want, "{}: {src} -> {dst}", case.name);
        }
        // The EndpointSlice deleted: REJECT from everywhere.
        let mut table = kubesim_proxy::rules(TEST_HOSTNAME, [&svc], []);
        table.cluster_cidr = "10.0.0.0/8".into();
        assert_eq!(flow(&table, "10.0.0.2", "172.30.1.1", 80), "REJECT", "{}", case.name);
        assert_eq!(flow(&table, EXTERNAL_CLIENT, "1.2.3.4", 80), "REJECT", "{}", case.name);
    }
}

/// upstream proxier_test.go TestInternalTrafficPolicyE2E's flows and its "no local
/// endpoints" dump: `internalTrafficPolicy: Local` sends cluster-IP traffic to this node's
/// endpoints only (KUBE-SVL), and DROPs it (`has no local endpoints`) when there are none here.
#[test]
fn test_internal_traffic_policy_e2e() {
    for (policy, hosts, want) in [
        ("Cluster", [TEST_HOSTNAME, "host1", "host2"], "10.0.1.1:80, 10.0.1.2:80, 10.0.1.3:80"),
        ("Local", [TEST_HOSTNAME, "host1", "host2"], "10.0.1.1:80"),
        ("Local", ["host0", "host1", "host2"], "DROP"),
    ] {
        let svc = service(
            "ns1",
            "svc1",
            json!({"clusterIP": "172.30.1.1", "selector": {"foo": "bar"}, "ports": [{"name": "", "port": 80, "protocol": "TCP"}], "internalTrafficPolicy": policy}),
            json!({}),
        );
        let eps: Vec<serde_json::Value> =
            hosts.iter().enumerate().map(|(i, h)| json!({"addresses": [format!("10.0.1.{}", i + 1)], "conditions": {"ready": true}, "nodeName": h})).collect();
        let slices = [unnamed_slice(json!(eps))];
        let mut table = kubesim_proxy::rules(TEST_HOSTNAME, [&svc], slices.iter());
        table.cluster_cidr = "10.0.0.0/8".into();
        assert_eq!(flow(&table, "10.0.0.2", "172.30.1.1", 80), want, "{policy} {hosts:?}");
        if want == "DROP" {
            let expected =
                dump("-A KUBE-SERVICES -m comment --comment \"ns1/svc1 has no local endpoints\" -m tcp -p tcp -d 172.30.1.1 --dport 80 -j DROP\n", &[], "");
            assert_rules_equal(&expected, &restore_input(&table, &fake()));
        }
        if policy == "Local" && want != "DROP" {
            let expected = dump(
                "",
                &["KUBE-SEP-3JOIVZTXZZRGORX4", "KUBE-SVL-AQI2S6QIMU7PVVRP"],
                r#"-A KUBE-SERVICES -m comment --comment "ns1/svc1 cluster IP" -m tcp -p tcp -d 172.30.1.1 --dport 80 -j KUBE-SVL-AQI2S6QIMU7PVVRP
-A KUBE-SEP-3JOIVZTXZZRGORX4 -m comment --comment ns1/svc1 -s 10.0.1.1 -j KUBE-MARK-MASQ
-A KUBE-SEP-3JOIVZTXZZRGORX4 -m comment --comment ns1/svc1 -m tcp -p tcp -j DNAT --to-destination 10.0.1.1:80
-A KUBE-SVL-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 cluster IP" -m tcp -p tcp -d 172.30.1.1 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ
-A KUBE-SVL-AQI2S6QIMU7PVVRP -m comment --comment "ns1/svc1 -> 10.0.1.1:80" -j KUBE-SEP-3JOIVZTXZZRGORX4
"#,
            );
            assert_rules_equal(&expected, &restore_input(&table, &fake()));
        }
    }
}

/// upstream proxier_test.go TestNoEndpointsReject: a LoadBalancer with an external IP and no
/// endpoints REJECTs pod and external traffic to its cluster IP, external IP, node port and
/// load-balancer IP.
#[test]
fn test_no_endpoints_reject() {
    let svc = service(
        "ns1",
        "svc1",
        json!({"type": "LoadBalancer", "clusterIP": "172.30.0.41", "externalIPs": ["192.168.99.11"], "ports": p80(json!({"nodePort": 3001}))}),
        json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}),
    );
    let mut table = kubesim_proxy::rules(TEST_HOSTNAME, [&svc], []);
    table.cluster_cidr = "10.0.0.0/8".into();
    for (src, dst, port) in [
        ("10.0.0.2", "172.30.0.41", 80),
        (EXTERNAL_CLIENT, "192.168.99.11", 80),
        ("10.0.0.2", NODE_IP, 3001),
        (EXTERNAL_CLIENT, NODE_IP, 3001),
        ("10.0.0.2", "1.2.3.4", 80),
        (EXTERNAL_CLIENT, "1.2.3.4", 80),
    ] {
        assert_eq!(flow(&table, src, dst, port), "REJECT", "{src} -> {dst}:{port}");
    }
}

/// upstream proxier_test.go onlyLocalNodePorts' flows: with `externalTrafficPolicy: Local`,
/// pod traffic to the cluster IP and to the node port reaches both endpoints (the local
/// detector short-circuits pod traffic), external traffic to the node port only the local one.
#[test]
fn test_only_local_node_ports() {
    let svc = service(
        "ns1",
        "svc1",
        json!({"type": "NodePort", "clusterIP": "172.30.0.41", "externalTrafficPolicy": "Local", "ports": p80(json!({"nodePort": 3001}))}),
        json!({}),
    );
    let slices = [slice("ns1", "svc1", json!([{"addresses": ["10.180.0.1"]}, {"addresses": ["10.180.2.1"], "nodeName": TEST_HOSTNAME}]))];
    let mut table = kubesim_proxy::rules(TEST_HOSTNAME, [&svc], slices.iter());
    table.cluster_cidr = "10.0.0.0/8".into();
    assert_eq!(flow(&table, "10.0.0.2", "172.30.0.41", 80), "10.180.0.1:80, 10.180.2.1:80");
    assert_eq!(flow(&table, EXTERNAL_CLIENT, NODE_IP, 3001), "10.180.2.1:80");
    assert_eq!(flow(&table, "10.0.0.2", NODE_IP, 3001), "10.180.0.1:80, 10.180.2.1:80");
    // Without a local detector pod traffic counts as external (upstream's NoClusterCIDR case).
    table.cluster_cidr.clear();
    assert_eq!(flow(&table, "10.0.0.2", NODE_IP, 3001), "10.180.2.1:80");
}

/// runPacketFlowTests' output and masquerade flag for one flow: the endpoints (as [`flow`])
/// and whether the rules marked the connection for KUBE-POSTROUTING's MASQUERADE (every
/// connection of a flow is marked alike).
fn flow_masq(table: &kubesim_host::netfilter::ServiceTable, src: &str, dst: &str, port: u16) -> (String, bool) {
    use kubesim_host::netfilter::Dnat;
    let marks: std::collections::BTreeSet<bool> = (1..=400)
        .filter_map(|src_port| match table.lookup((src, src_port), dst, port, false, NODE_IP, 0) {
            Dnat::To { masquerade, .. } => Some(masquerade),
            _ => None,
        })
        .collect();
    assert!(marks.len() <= 1, "{src} -> {dst}:{port}: marked for some connections only");
    (flow(table, src, dst, port), marks.contains(&true))
}

/// upstream proxier_test.go TestInternalExternalMasquerade: three LoadBalancers (svc1
/// `externalTrafficPolicy: Cluster`, svc2 `Local`, svc3 `internalTrafficPolicy: Local`), each
/// with an endpoint on this node and one on another, and which flows — pod, node, localhost
/// and external clients to the cluster IP, node port and load-balancer IP — reach which
/// endpoints and are masqueraded; its "base" case (a local traffic detector) and "no
/// LocalTrafficDetector" overrides (kube-proxy's `--masquerade-all` cases are not modelled:
/// kind does not set it).
#[test]
fn test_internal_external_masquerade() {
    let lb = |ns: &str, name: &str, cluster_ip: &str, node_port: u16, hc: u16, lb_ip: &str, extra: serde_json::Value| {
        let mut spec = json!({"type": "LoadBalancer", "clusterIP": cluster_ip, "ports": p80(json!({"nodePort": node_port})), "healthCheckNodePort": hc});
        spec.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        service(ns, name, spec, json!({"loadBalancer": {"ingress": [{"ip": lb_ip}]}}))
    };
    let services = [
        lb("ns1", "svc1", "172.30.0.41", 3001, 30001, "1.2.3.4", json!({})),
        lb("ns2", "svc2", "172.30.0.42", 3002, 30002, "5.6.7.8", json!({"externalTrafficPolicy": "Local"})),
        lb("ns3", "svc3", "172.30.0.43", 3003, 30003, "9.10.11.12", json!({"internalTrafficPolicy": "Local"})),
    ];
    let slices: Vec<EndpointSlice> = (1..=3)
        .map(|i| {
            slice(
                &format!("ns{i}"),
                &format!("svc{i}"),
                json!([{"addresses": [format!("10.180.0.{i}")], "nodeName": TEST_HOSTNAME}, {"addresses": [format!("10.180.1.{i}")], "nodeName": "remote"}]),
            )
        })
        .collect();
    const POD: &str = "10.0.0.2";
    const LOCALHOST: &str = "127.0.0.1";
    let (all1, all2, all3) = ("10.180.0.1:80, 10.180.1.1:80", "10.180.0.2:80, 10.180.1.2:80", "10.180.0.3:80, 10.180.1.3:80");
    // (name, source, destination, port, output, masq): the base case.
    let flows: &[(&str, &str, &str, u16, &str, bool)] = &[
        ("pod to ClusterIP", POD, "172.30.0.41", 80, all1, false),
        ("pod to NodePort", POD, NODE_IP, 3001, all1, true),
        ("pod to LB", POD, "1.2.3.4", 80, all1, true),
        ("node to ClusterIP", NODE_IP, "172.30.0.41", 80, all1, true),
        ("node to NodePort", NODE_IP, NODE_IP, 3001, all1, true),
        ("localhost to NodePort", LOCALHOST, LOCALHOST, 3001, all1, true),
        ("node to LB", NODE_IP, "1.2.3.4", 80, all1, true),
        ("external to ClusterIP", EXTERNAL_CLIENT, "172.30.0.41", 80, all1, true),
        ("external to NodePort", EXTERNAL_CLIENT, NODE_IP, 3001, all1, true),
        ("external to LB", EXTERNAL_CLIENT, "1.2.3.4", 80, all1, true),
        ("pod to ClusterIP with eTP:Local", POD, "172.30.0.42", 80, all2, false),
        ("pod to NodePort with eTP:Local", POD, NODE_IP, 3002, all2, false),
        ("pod to LB with eTP:Local", POD, "5.6.7.8", 80, all2, false),
        ("node to ClusterIP with eTP:Local", NODE_IP, "172.30.0.42", 80, all2, true),
        ("node to NodePort with eTP:Local", NODE_IP, NODE_IP, 3001, all1, true),
        ("localhost to NodePort with eTP:Local", LOCALHOST, LOCALHOST, 3002, all2, true),
        ("node to LB with eTP:Local", NODE_IP, "5.6.7.8", 80, all2, true),
        ("external to ClusterIP with eTP:Local", EXTERNAL_CLIENT, "172.30.0.42", 80, all2, true),
        ("external to NodePort with eTP:Local", EXTERNAL_CLIENT, NODE_IP, 3002, "10.180.0.2:80", false),
        ("external to LB with eTP:Local", EXTERNAL_CLIENT, "5.6.7.8", 80, "10.180.0.2:80", false),
        ("pod to ClusterIP with iTP:Local", POD, "172.30.0.43", 80, "10.180.0.3:80", false),
        ("pod to NodePort with iTP:Local", POD, NODE_IP, 3003, all3, true),
        ("pod to LB with iTP:Local", POD, "9.10.11.12", 80, all3, true),
        ("node to ClusterIP with iTP:Local", NODE_IP, "172.30.0.43", 80, "10.180.0.3:80", true),
        ("node to NodePort with iTP:Local", NODE_IP, NODE_IP, 3003, all3, true),
        ("localhost to NodePort with iTP:Local", LOCALHOST, LOCALHOST, 3003, all3, true),
        ("node to LB with iTP:Local", NODE_IP, "9.10.11.12", 80, all3, true),
        ("external to ClusterIP with iTP:Local", EXTERNAL_CLIENT, "172.30.0.43", 80, "10.180.0.3:80", true),
        ("external to NodePort with iTP:Local", EXTERNAL_CLIENT, NODE_IP, 3003, all3, true),
        ("external to LB with iTP:Local", EXTERNAL_CLIENT, "9.10.11.12", 80, all3, true),
    ];
    // "no LocalTrafficDetector": (name, output override, masq override).
    let no_detector: &[(&str, Option<&str>, Option<bool>)] = &[
        ("node to ClusterIP", None, Some(false)),
        ("node to ClusterIP with eTP:Local", None, Some(false)),
        ("node to ClusterIP with iTP:Local", None, Some(false)),
        ("external to ClusterIP", None, Some(false)),
        ("external to ClusterIP with eTP:Local", None, Some(false)),
        ("external to ClusterIP with iTP:Local", None, Some(false)),
        ("pod to NodePort with eTP:Local", Some("10.180.0.2:80"), None),
        ("pod to LB with eTP:Local", Some("10.180.0.2:80"), None),
    ];
    for detector in [true, false] {
        let mut table = kubesim_proxy::rules(TEST_HOSTNAME, services.iter(), slices.iter());
        table.cluster_cidr = if detector { "10.0.0.0/8".into() } else { String::new() };
        for &(name, src, dst, port, output, masq) in flows {
            let (mut output, mut masq) = (output.to_string(), masq);
            if !detector {
                if let Some((_, o, m)) = no_detector.iter().find(|(n, _, _)| *n == name) {
                    output = o.map_or(output, str::to_string);
                    masq = m.unwrap_or(masq);
                }
            }
            assert_eq!(flow_masq(&table, src, dst, port), (output, masq), "{name} (local detector: {detector})");
        }
    }
}

/// The hairpin rule (`-A KUBE-SEP-… -s <endpoint IP> -j KUBE-MARK-MASQ`): a pod reaching
/// itself through its Service's cluster IP is masqueraded; another pod is not.
#[test]
fn a_pod_reaching_itself_through_its_service_is_masqueraded() {
    let svc = service("ns1", "svc1", json!({"clusterIP": "172.30.0.41", "ports": p80(json!({}))}), json!({}));
    let slices = [slice("ns1", "svc1", json!([{"addresses": ["10.180.0.1"], "nodeName": TEST_HOSTNAME}]))];
    let mut table = kubesim_proxy::rules(TEST_HOSTNAME, [&svc], slices.iter());
    table.cluster_cidr = "10.0.0.0/8".into();
    assert_eq!(flow_masq(&table, "10.180.0.1", "172.30.0.41", 80), ("10.180.0.1:80".to_string(), true));
    assert_eq!(flow_masq(&table, "10.180.0.2", "172.30.0.41", 80), ("10.180.0.1:80".to_string(), false));
}

/// kube-proxy's health checks: HealthCheckNodePorts (a LoadBalancer with
/// `externalTrafficPolicy: Local` and a port) and LocalReadyEndpoints (distinct ready
/// addresses on this node; terminating or remote endpoints do not count).
#[test]
fn health_checks_count_this_nodes_ready_endpoints() {
    let svc = |etp: &str, hc: i32| {
        service(
            "ns1",
            "svc1",
            json!({"type": "LoadBalancer", "clusterIP": "172.30.0.41", "externalTrafficPolicy": etp, "healthCheckNodePort": hc, "ports": p80(json!({"nodePort": 3001}))}),
            json!({}),
        )
    };
    let slices = [slice(
        "ns1",
        "svc1",
        json!([
            endpoint("10.180.0.1", true, true, false, TEST_HOSTNAME),
            endpoint("10.180.0.2", false, true, true, TEST_HOSTNAME),
            endpoint("10.180.1.1", true, true, false, "remote"),
            {"addresses": ["10.180.0.3"], "nodeName": TEST_HOSTNAME},
        ]),
    )];
    assert_eq!(kubesim_proxy::health_check(TEST_HOSTNAME, &svc("Local", 30001), slices.iter()), Some((30001, 2)));
    assert_eq!(kubesim_proxy::health_check("remote", &svc("Local", 30001), slices.iter()), Some((30001, 1)));
    assert_eq!(kubesim_proxy::health_check("elsewhere", &svc("Local", 30001), slices.iter()), Some((30001, 0)));
    assert_eq!(kubesim_proxy::health_check(TEST_HOSTNAME, &svc("Cluster", 30001), slices.iter()), None, "Cluster needs none");
    assert_eq!(kubesim_proxy::health_check(TEST_HOSTNAME, &svc("Local", 0), slices.iter()), None, "no port");
}
