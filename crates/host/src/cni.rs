//! The node's CNI plugin chain as kind's kindnetd configures it: `ptp` with `host-local` IPAM
//! over the node's `spec.podCIDR` (images/kindnetd/cmd/kindnetd/cni.go), and the host-local
//! allocator's state, which lives on the machine (`/run/cni-ipam-state`) and so survives a
//! kubelet restart.
//!
//! The allocator follows containernetworking/plugins plugins/ipam/host-local/backend/allocator:
//! the range runs from network+1 to the last address before broadcast, the gateway (network+1)
//! is skipped, allocation is round robin from the last reserved address (a released address is
//! reused only once the cursor wraps), and an address is never handed out while reserved.

use std::collections::BTreeMap;
use std::fmt;
use std::net::Ipv4Addr;

/// The CNI plugin kindnetd configures (the type libcni names in errors).
pub const PLUGIN_TYPE: &str = "ptp";

/// An IPv4 subnet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Subnet {
    /// The network address.
    pub network: u32,
    /// The prefix length.
    pub prefix: u8,
}

impl Subnet {
    /// Parses `a.b.c.d/n` (the host bits are cleared, as net.ParseCIDR does).
    pub fn parse(cidr: &str) -> Result<Subnet, String> {
        let (ip, prefix) = cidr.split_once('/').ok_or_else(|| format!("invalid CIDR address: {cidr}"))?;
        let ip: Ipv4Addr = ip.parse().map_err(|_| format!("invalid CIDR address: {cidr}"))?;
        let prefix: u8 = prefix.parse().ok().filter(|p| *p <= 32).ok_or_else(|| format!("invalid CIDR address: {cidr}"))?;
        let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - prefix) };
        Ok(Subnet { network: u32::from(ip) & mask, prefix })
    }
    /// The broadcast (last) address.
    pub fn last(&self) -> u32 {
        let host_bits = 32 - u32::from(self.prefix);
        if host_bits == 32 {
            u32::MAX
        } else {
            self.network | ((1u32 << host_bits) - 1)
        }
    }
    /// Whether the address lies in the subnet.
    pub fn contains(&self, ip: u32) -> bool {
        ip >= self.network && ip <= self.last()
    }
}

impl fmt::Display for Subnet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", Ipv4Addr::from(self.network), self.prefix)
    }
}

/// One host-local range after `Range.Canonicalize`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    /// The subnet.
    pub subnet: Subnet,
    /// First allocatable address (network+1; the gateway is skipped by the iterator).
    pub start: u32,
    /// Last allocatable address (broadcast−1).
    pub end: u32,
    /// The gateway (network+1).
    pub gateway: u32,
}

impl Range {
    /// The canonical range of a subnet.
    pub fn of(subnet: Subnet) -> Result<Range, String> {
        if subnet.prefix > 30 {
            return Err(format!("Network {subnet} too small to allocate from"));
        }
        Ok(Range { subnet, start: subnet.network + 1, end: subnet.last() - 1, gateway: subnet.network + 1 })
    }
    fn contains(&self, ip: u32) -> bool {
        self.subnet.contains(ip) && ip >= self.start && ip <= self.end
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", Ipv4Addr::from(self.start), Ipv4Addr::from(self.end))
    }
}

/// The host-local allocator of one range set, with its store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostLocal {
    /// The range set (ranges tried in order).
    pub ranges: Vec<Range>,
    /// Reserved address → the container (sandbox) ID holding it.
    pub reserved: BTreeMap<u32, String>,
    /// The last reserved address (`last_reserved_ip.0`), kept after release.
    pub last_reserved: Option<u32>,
}

impl HostLocal {
    /// An allocator over these subnets.
    pub fn new(subnets: &[&str]) -> Result<HostLocal, String> {
        let ranges = subnets.iter().map(|s| Subnet::parse(s).and_then(Range::of)).collect::<Result<Vec<_>, _>>()?;
        Ok(HostLocal { ranges, ..Default::default() })
    }

    fn set_string(&self) -> String {
        self.ranges.iter().map(Range::to_string).collect::<Vec<_>>().join(",")
    }

    /// `IPAllocator.Get`: the next free address for container `id`.
    pub fn allocate(&mut self, id: &str) -> Result<Ipv4Addr, String> {
        if let Some((ip, _)) = self.reserved.iter().find(|(_, holder)| holder.as_str() == id) {
            return Err(format!("{} has been allocated to {id}, duplicate allocation is not allowed", Ipv4Addr::from(*ip)));
        }
        if self.ranges.is_empty() {
            return Err("no IP addresses available in range set: ".into());
        }
        // GetIter: start after the last reserved address if it lies in the set.
        let mut idx = 0;
        let mut cur: Option<u32> = None;
        if let Some(last) = self.last_reserved {
            if let Some(i) = self.ranges.iter().position(|r| r.contains(last)) {
                idx = i;
                cur = Some(last);
            }
        }
        let mut start: Option<u32> = None;
        loop {
            // RangeIter.Next
            let range = &self.ranges[idx];
            let next = match cur {
                None => range.start,
                Some(c) if c == range.end => {
                    idx = (idx + 1) % self.ranges.len();
                    self.ranges[idx].start
                }
                Some(c) => c + 1,
            };
            cur = Some(next);
            match start {
                None => start = Some(next),
                Some(s) if s == next => break,
                Some(_) => {}
            }
            if next == self.ranges[idx].gateway || self.reserved.contains_key(&next) {
                continue;
            }
            self.reserved.insert(next, id.to_string());
            self.last_reserved = Some(next);
            return Ok(Ipv4Addr::from(next));
        }
        Err(format!("no IP addresses available in range set: {}", self.set_string()))
    }

    /// `ReleaseByID`: frees whatever container `id` holds (no error if it holds nothing).
    pub fn release(&mut self, id: &str) {
        self.reserved.retain(|_, holder| holder != id);
    }
}

/// The node's CNI: unconfigured until kindnetd writes the conflist for the node's podCIDR.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cni {
    /// The pod CIDR the conflist was written for.
    pub pod_cidr: Option<String>,
    /// host-local's state.
    pub ipam: HostLocal,
    /// The veths created so far (their host ends take the next interface indexes).
    pub veths: u32,
}

impl Cni {
    /// kindnetd writes the conflist for the node's podCIDR. Rewriting it for the same CIDR keeps
    /// the allocator's state (as the files in /run/cni-ipam-state stay).
    pub fn configure(&mut self, pod_cidr: &str) -> Result<(), String> {
        if self.pod_cidr.as_deref() == Some(pod_cidr) {
            return Ok(());
        }
        let mut ipam = HostLocal::new(&[pod_cidr])?;
        ipam.reserved = std::mem::take(&mut self.ipam.reserved);
        ipam.reserved.retain(|ip, _| ipam.ranges.iter().any(|r| r.contains(*ip)));
        self.ipam = ipam;
        self.pod_cidr = Some(pod_cidr.to_string());
        Ok(())
    }

    /// The pod range's gateway (network+1), which the ptp plugin puts on the host side of
    /// every pod's veth; `None` before the conflist is written.
    pub fn gateway(&self) -> Option<String> {
        let cidr = self.pod_cidr.as_deref()?;
        let subnet = Subnet::parse(cidr).ok()?;
        Some(Ipv4Addr::from(subnet.network + 1).to_string())
    }

    /// Whether a conflist is in place.
    pub fn configured(&self) -> bool {
        self.pod_cidr.is_some()
    }

    /// CNI ADD for sandbox `id`: its address, or the error containerd reports
    /// (`failed to setup network for sandbox …` is added by the caller).
    pub fn add(&mut self, id: &str) -> Result<Ipv4Addr, String> {
        if !self.configured() {
            return Err("cni plugin not initialized".into());
        }
        self.ipam.allocate(id).map_err(|e| format!("plugin type=\"{PLUGIN_TYPE}\" failed (add): failed to allocate for range 0: {e}"))
    }

    /// CNI DEL for sandbox `id`.
    pub fn del(&mut self, id: &str) {
        self.ipam.release(id);
    }

    /// The interfaces the ptp plugin gives sandbox `id` with address `ip`: loopback and
    /// `eth0`, a veth whose host end is a new interface of the node (index 3 up: after the
    /// node's lo and eth0), with the range's prefix, a MAC the kernel draws (here from the
    /// sandbox id) and the node network's MTU (1500).
    pub fn interfaces(&mut self, id: &str, ip: &str) -> Vec<kubesim_os::net::iface::Interface> {
        use kubesim_os::net::iface::{random_mac, Interface};
        self.veths += 1;
        let prefix = self.pod_cidr.as_deref().and_then(|c| Subnet::parse(c).ok()).map_or(24, |s| s.prefix);
        let seed = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        vec![Interface::loopback(), Interface::veth(2, 2 + self.veths, ip, prefix, random_mac(seed), 1500)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> u32 {
        u32::from(s.parse::<Ipv4Addr>().unwrap())
    }

    /// plugins/ipam/host-local/backend/allocator/allocator_test.go, "should allocate ips in
    /// round robin": subnets, already reserved, lastIP → result.
    /// (subnets, already reserved, lastIP, result).
    type Case<'a> = (&'a [&'a str], &'a [&'a str], Option<&'a str>, &'a str);

    #[test]
    fn allocator_test_round_robin_vectors() {
        let cases: &[Case] = &[
            (&["10.0.0.0/29"], &[], None, "10.0.0.2"),
            (&["10.0.0.0/30"], &[], None, "10.0.0.2"),
            (&["10.0.0.0/29"], &["10.0.0.2"], None, "10.0.0.3"),
            (&["10.0.0.0/29"], &[], Some("10.0.0.5"), "10.0.0.6"),
            (&["10.0.0.0/29"], &["10.0.0.4", "10.0.0.5"], Some("10.0.0.3"), "10.0.0.6"),
            (&["10.0.0.0/29"], &["10.0.0.6"], Some("10.0.0.5"), "10.0.0.2"),
            (&["10.0.0.0/29"], &["10.0.0.2"], Some("10.0.0.128"), "10.0.0.3"),
            (&["10.0.0.0/29"], &["10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"], Some("10.0.0.3"), "10.0.0.3"),
            (&["10.0.0.0/30", "10.0.1.0/30"], &[], None, "10.0.0.2"),
            (&["10.0.0.0/30", "10.0.1.0/30"], &[], Some("10.0.0.2"), "10.0.1.2"),
            (&["10.0.0.0/30", "10.0.1.0/30", "10.0.2.0/30"], &[], Some("10.0.2.2"), "10.0.0.2"),
        ];
        for (subnets, reserved, last, want) in cases {
            let mut a = HostLocal::new(subnets).unwrap();
            for (i, r) in reserved.iter().enumerate() {
                a.reserved.insert(ip(r), format!("held-{i}"));
            }
            a.last_reserved = last.map(ip);
            assert_eq!(a.allocate("new").unwrap().to_string(), *want, "{subnets:?} reserved {reserved:?} last {last:?}");
        }
    }

    /// allocator_test.go out-of-IPs cases.
    #[test]
    fn allocator_test_out_of_ips() {
        let cases: &[(&[&str], &[&str])] = &[
            (&["10.0.0.0/30"], &["10.0.0.2"]),
            (&["10.0.0.0/29"], &["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"]),
            (&["10.0.0.0/30", "10.0.1.0/30"], &["10.0.0.2", "10.0.1.2"]),
        ];
        for (subnets, reserved) in cases {
            let mut a = HostLocal::new(subnets).unwrap();
            for (i, r) in reserved.iter().enumerate() {
                a.reserved.insert(ip(r), format!("held-{i}"));
            }
            let err = a.allocate("new").unwrap_err();
            assert!(err.starts_with("no IP addresses available in range set"), "{err}");
        }
        let mut a = HostLocal::new(&["10.0.0.0/30"]).unwrap();
        a.allocate("x").unwrap();
        assert_eq!(a.allocate("y").unwrap_err(), "no IP addresses available in range set: 10.0.0.1-10.0.0.2");
    }

    #[test]
    fn too_small_and_duplicates() {
        assert_eq!(HostLocal::new(&["10.0.0.0/31"]).unwrap_err(), "Network 10.0.0.0/31 too small to allocate from");
        let mut a = HostLocal::new(&["10.244.1.0/24"]).unwrap();
        assert_eq!(a.allocate("c1").unwrap().to_string(), "10.244.1.2");
        assert_eq!(a.allocate("c1").unwrap_err(), "10.244.1.2 has been allocated to c1, duplicate allocation is not allowed");
    }

    /// A released address comes back only once the cursor wraps; an address in use never does.
    #[test]
    fn no_reuse_before_wrap_and_never_in_use() {
        let mut cni = Cni::default();
        assert_eq!(cni.add("a").unwrap_err(), "cni plugin not initialized");
        cni.configure("10.244.0.0/24").unwrap();
        assert_eq!(cni.add("a").unwrap().to_string(), "10.244.0.2");
        assert_eq!(cni.add("b").unwrap().to_string(), "10.244.0.3");
        cni.del("a");
        assert_eq!(cni.add("c").unwrap().to_string(), "10.244.0.4", "round robin, not lowest free");
        for i in 5..=254 {
            assert_eq!(cni.add(&format!("p{i}")).unwrap().to_string(), format!("10.244.0.{i}"));
        }
        assert_eq!(cni.add("wrapped").unwrap().to_string(), "10.244.0.2", "after the wrap the freed .2 is reused; .3 is still b's");
        let err = cni.add("full").unwrap_err();
        assert_eq!(err, "plugin type=\"ptp\" failed (add): failed to allocate for range 0: no IP addresses available in range set: 10.244.0.1-10.244.0.254");
        cni.configure("10.244.0.0/24").unwrap();
        assert_eq!(cni.ipam.reserved.len(), 253, "rewriting the same conflist keeps the state");
    }
}
