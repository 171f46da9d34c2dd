//! A process's network interfaces (its network namespace's links and addresses), as `ip addr`
//! and `ip link` list them: loopback, and the veth the CNI plugin gave a pod.

/// One network interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// The interface index.
    pub index: u32,
    /// Its name (`lo`, `eth0`).
    pub name: String,
    /// The index of the other end of a veth (`eth0@if7`), in the host's namespace.
    pub peer: Option<u32>,
    /// The link flags (`LOOPBACK,UP,LOWER_UP`).
    pub flags: String,
    /// The MTU.
    pub mtu: u32,
    /// `link/loopback` or `link/ether`.
    pub link_type: String,
    /// The hardware address.
    pub mac: String,
    /// The hardware broadcast address.
    pub brd: String,
    /// The IPv4 address, its prefix length and broadcast (none for loopback).
    pub inet: Option<(String, u8, Option<String>)>,
    /// The IPv4 address's scope (`host`, `global`).
    pub scope: String,
    /// The IPv6 address and prefix length (`::1`, the link-local `fe80::…`).
    pub inet6: Option<(String, u8)>,
}

impl Interface {
    /// `lo`.
    pub fn loopback() -> Interface {
        Interface {
            index: 1,
            name: "lo".into(),
            peer: None,
            flags: "LOOPBACK,UP,LOWER_UP".into(),
            mtu: 65536,
            link_type: "loopback".into(),
            mac: "00:00:00:00:00:00".into(),
            brd: "00:00:00:00:00:00".into(),
            inet: Some(("127.0.0.1".into(), 8, None)),
            scope: "host".into(),
            inet6: Some(("::1".into(), 128)),
        }
    }

    /// The container end of a veth, `eth0@if<peer>` (the ptp and bridge CNI plugins): its
    /// address with the range's prefix and broadcast, a locally administered MAC and the
    /// IPv6 link-local address the kernel derives from it.
    pub fn veth(index: u32, peer: u32, ip: &str, prefix: u8, mac: [u8; 6], mtu: u32) -> Interface {
        Interface {
            index,
            name: "eth0".into(),
            peer: Some(peer),
            flags: "BROADCAST,MULTICAST,UP,LOWER_UP,M-DOWN".into(),
            mtu,
            link_type: "ether".into(),
            mac: mac_string(mac),
            brd: "ff:ff:ff:ff:ff:ff".into(),
            inet: Some((ip.to_string(), prefix, broadcast(ip, prefix))),
            scope: "global".into(),
            inet6: Some((link_local(mac), 64)),
        }
    }
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn mac_string(mac: [u8; 6]) -> String {
    mac.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// A random-looking MAC the kernel would give a new veth (locally administered, unicast),
/// drawn from `seed`.
pub fn random_mac(seed: u64) -> [u8; 6] {
    let b = seed.to_be_bytes();
    [(b[2] & 0xfe) | 0x02, b[3], b[4], b[5], b[6], b[7]]
}

/// The IPv4 broadcast address of `ip/prefix` (none for /31 and /32).
fn broadcast(ip: &str, prefix: u8) -> Option<String> {
    let octets: Vec<u8> = ip.split('.').filter_map(|o| o.parse().ok()).collect();
    let [a, b, c, d] = octets.as_slice() else { return None };
    if prefix >= 31 {
        return None;
    }
    let n = u32::from_be_bytes([*a, *b, *c, *d]) | (u32::MAX >> prefix);
    Some(std::net::Ipv4Addr::from(n).to_string())
}

/// The EUI-64 link-local address of a MAC (`fe80::…`, as the kernel configures it).
pub fn link_local(mac: [u8; 6]) -> String {
    let eui = [mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]];
    let groups: Vec<u16> = eui.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
    let addr = std::net::Ipv6Addr::new(0xfe80, 0, 0, 0, groups[0], groups[1], groups[2], groups[3]);
    addr.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_veth_has_its_broadcast_and_eui64_link_local_address() {
        let mac = [0x0a, 0x58, 0x0a, 0xf4, 0x03, 0x08];
        let eth0 = Interface::veth(2, 7, "10.244.3.8", 24, mac, 1500);
        assert_eq!(eth0.inet, Some(("10.244.3.8".into(), 24, Some("10.244.3.255".into()))));
        assert_eq!(eth0.inet6, Some(("fe80::858:aff:fef4:308".into(), 64)));
        let m = random_mac(0x1234_5678_9abc_def1);
        assert_eq!((m[0] & 0x03, mac_string(m)), (0x02, "56:78:9a:bc:de:f1".to_string()), "locally administered, unicast");
    }
}
