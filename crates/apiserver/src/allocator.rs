//! The Service registry's allocators: ClusterIPs (pkg/registry/core/service/ipallocator, the
//! IPAddress-backed allocator of MultiCIDRServiceAllocator, GA and on by default since v1.33)
//! and NodePorts (pkg/registry/core/service/portallocator). Both split their range in two
//! bands (KEP-3070): a lower "static" band that automatic allocation uses only when the upper
//! band is full, so users who pick addresses or ports themselves pick from the lower band
//! without colliding. Automatic allocation starts at a random point of the upper band (the
//! world's seeded RNG) and scans up, wrapping; then the same in the lower band.

use std::collections::BTreeSet;

/// ipallocator `calculateRangeOffset`: the static band of a CIDR of `cidr_size` addresses
/// (network and broadcast included): `min(max(16, size/16), 256)`, none for 16 or fewer.
pub fn ip_range_offset(cidr_size: u128) -> u128 {
    const MIN: u128 = 16;
    const MAX: u128 = 256;
    const STEP: u128 = 16;
    if cidr_size <= MIN {
        return 0;
    }
    (cidr_size / STEP).clamp(MIN, MAX)
}

/// portallocator `calculateRangeOffset`: the static band of a port range of `size` ports:
/// `min(max(16, size/32), 128)`, none for 16 or fewer.
pub fn port_range_offset(size: u64) -> u64 {
    const MIN: u64 = 16;
    const MAX: u64 = 128;
    const STEP: u64 = 32;
    if size <= MIN {
        return 0;
    }
    (size / STEP).clamp(MIN, MAX)
}

/// Why an allocation failed (interfaces.go's errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// `ErrFull`: `range is full`.
    Full,
    /// `ErrAllocated`.
    Allocated,
    /// `ErrNotInRange`.
    NotInRange,
}

/// A range of `size` values `0..size`, the first `offset` of them the static band, with the
/// set of allocated ones (the bitmap, or the IPAddress objects' index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Range {
    size: u64,
    offset: u64,
    allocated: BTreeSet<u64>,
}

impl Range {
    /// A range of `size` values whose first `offset` are the static band.
    pub fn new(size: u64, offset: u64) -> Range {
        Range { size, offset: offset.min(size), allocated: BTreeSet::new() }
    }

    /// `Allocate`: a value the caller chose.
    pub fn allocate(&mut self, value: u64) -> Result<(), AllocError> {
        if value >= self.size {
            return Err(AllocError::NotInRange);
        }
        if !self.allocated.insert(value) {
            return Err(AllocError::Allocated);
        }
        Ok(())
    }

    /// `AllocateNext` (randomScanStrategyWithOffset / the IPAddress allocator's iterators): a
    /// random start in the upper band scanning up with wrap-around, then a random start in the
    /// static band. `random(n)` is a uniform draw from `0..n`.
    pub fn allocate_next(&mut self, random: &mut dyn FnMut(u64) -> u64) -> Result<u64, AllocError> {
        let allocated = &self.allocated;
        let v = self.scan_next(&|v| allocated.contains(&v), random)?;
        self.allocated.insert(v);
        Ok(v)
    }

    /// The value `AllocateNext` would pick, given which values are taken (`taken`: the IPAddress
    /// objects, for the ClusterIP allocator, whose state lives in the store).
    pub fn scan_next(&self, taken: &dyn Fn(u64) -> bool, random: &mut dyn FnMut(u64) -> u64) -> Result<u64, AllocError> {
        let upper = self.size - self.offset;
        if upper > 0 {
            let start = random(upper);
            if let Some(v) = (0..upper).map(|i| self.offset + (start + i) % upper).find(|v| !taken(*v)) {
                return Ok(v);
            }
        }
        if self.offset > 0 {
            let start = random(self.offset);
            if let Some(v) = (0..self.offset).map(|i| (start + i) % self.offset).find(|v| !taken(*v)) {
                return Ok(v);
            }
        }
        Err(AllocError::Full)
    }

    /// `Release`.
    pub fn release(&mut self, value: u64) {
        self.allocated.remove(&value);
    }

    /// `Has`.
    pub fn has(&self, value: u64) -> bool {
        self.allocated.contains(&value)
    }

    /// `Free`.
    pub fn free(&self) -> u64 {
        self.size - self.allocated.len() as u64
    }

    /// `Used`.
    pub fn used(&self) -> u64 {
        self.allocated.len() as u64
    }
}

/// An IPv4 service CIDR: its usable addresses (network+1 … broadcast−1) as a [`Range`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceCidr {
    network: u32,
    prefix: u8,
    range: Range,
}

impl ServiceCidr {
    /// The allocator of `a.b.c.d/prefix` (IPv4).
    pub fn new(network: u32, prefix: u8) -> ServiceCidr {
        let cidr_size: u64 = 1 << (32 - prefix as u32);
        // A /32 or /31 has no usable address between network and broadcast.
        let usable = cidr_size.saturating_sub(2);
        let offset = ip_range_offset(cidr_size as u128) as u64;
        ServiceCidr { network, prefix, range: Range::new(usable, offset) }
    }

    /// The CIDR as text (`10.96.0.0/12`).
    pub fn cidr(&self) -> String {
        format!("{}/{}", ipv4_string(self.network), self.prefix)
    }

    /// The address at a range index.
    pub fn ip_at(&self, index: u64) -> String {
        ipv4_string(self.network + 1 + index as u32)
    }

    /// The range index of an address, if it is a usable address of this CIDR
    /// (`servicecidr.PrefixContainsIP`: not the network, not the broadcast address).
    pub fn index_of(&self, ip: &str) -> Option<u64> {
        let ip = parse_ipv4(ip)?;
        let index = (ip as u64).checked_sub(self.network as u64 + 1)?;
        (index < self.range.size).then_some(index)
    }

    /// The allocations.
    pub fn range(&self) -> &Range {
        &self.range
    }

    /// The allocations, mutably.
    pub fn range_mut(&mut self) -> &mut Range {
        &mut self.range
    }
}

/// A dotted IPv4 address as a number.
pub fn parse_ipv4(text: &str) -> Option<u32> {
    let parts: Vec<u32> = text.split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
    if parts.len() != 4 || parts.iter().any(|p| *p > 255) {
        return None;
    }
    Some((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3])
}

/// A number as a dotted IPv4 address.
pub fn ipv4_string(ip: u32) -> String {
    format!("{}.{}.{}.{}", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255)
}

/// A node port range (`--service-node-port-range`, `base-base+size-1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortRange {
    base: i32,
    range: Range,
}

impl Default for PortRange {
    /// `--service-node-port-range`'s default, 30000-32767.
    fn default() -> Self {
        PortRange::new(30_000, 2_768)
    }
}

impl PortRange {
    /// The range `base..base+size`.
    pub fn new(base: i32, size: u64) -> PortRange {
        PortRange { base, range: Range::new(size, port_range_offset(size)) }
    }

    /// The range as `--service-node-port-range` writes it (`30000-32767`).
    pub fn text(&self) -> String {
        format!("{}-{}", self.base, self.base as i64 + self.range.size as i64 - 1)
    }

    /// `Allocate` a chosen port.
    pub fn allocate(&mut self, port: i32) -> Result<(), AllocError> {
        let index = u64::try_from(port as i64 - self.base as i64).map_err(|_| AllocError::NotInRange)?;
        self.range.allocate(index)
    }

    /// `AllocateNext`.
    pub fn allocate_next(&mut self, random: &mut dyn FnMut(u64) -> u64) -> Result<i32, AllocError> {
        self.range.allocate_next(random).map(|i| self.base + i as i32)
    }

    /// `Release`.
    pub fn release(&mut self, port: i32) {
        if let Ok(index) = u64::try_from(port as i64 - self.base as i64) {
            self.range.release(index);
        }
    }

    /// The allocations.
    pub fn range(&self) -> &Range {
        &self.range
    }

    /// The error text a user sees (`provided port is not in the valid range. The range of
    /// valid ports is 30000-32767`, `provided port is already allocated`, `range is full`).
    pub fn error_text(&self, error: AllocError) -> String {
        match error {
            AllocError::Full => "range is full".into(),
            AllocError::Allocated => "provided port is already allocated".into(),
            AllocError::NotInRange => format!("provided port is not in the valid range. The range of valid ports is {}", self.text()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic `random(n)` for the tests.
    fn lcg() -> impl FnMut(u64) -> u64 {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        move |n| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % n
        }
    }

    #[test]
    fn ip_range_offsets_as_upstream() {
        // ipallocator bitmap_test.go Test_calculateRangeOffset (CIDR → total addresses).
        let v4 = |prefix: u32| 1u128 << (32 - prefix);
        let v6 = |prefix: u32| 1u128 << (128 - prefix);
        let rows = [
            ("192.168.1.1/32", v4(32), 0),
            ("fd00::1/128", v6(128), 0),
            ("192.168.1.1/30", v4(30), 0),
            ("fd00::1/126", v6(126), 0),
            ("192.168.1.1/28", v4(28), 0),
            ("192.168.1.1/27", v4(27), 16),
            ("fd00::1/124", v6(124), 0),
            ("fd00::1/122", v6(122), 16),
            ("192.168.1.1/22", v4(22), 64),
            ("fd00::1/118", v6(118), 64),
            ("192.168.1.1/8", v4(8), 256),
            ("fd00::1/12", v6(12), 256),
        ];
        for (cidr, size, want) in rows {
            assert_eq!(ip_range_offset(size), want, "{cidr}");
        }
    }

    #[test]
    fn port_range_offsets_as_upstream() {
        // portallocator calculateRangeOffset: the default range's static band is 30000-30085.
        for (range, size, want) in
            [("30000-32767", 2768, 86), ("10000-10200", 201, 16), ("30000-30015", 16, 0), ("30000-30016", 17, 16), ("1-65535", 65535, 128)]
        {
            assert_eq!(port_range_offset(size), want, "{range}");
        }
    }

    #[test]
    fn allocate_as_upstream() {
        // ipallocator TestAllocate: 192.168.1.0/24 has 254 free addresses; the network,
        // broadcast and foreign addresses are not in range; each address once.
        let mut cidr = ServiceCidr::new(parse_ipv4("192.168.1.0").unwrap(), 24);
        assert_eq!(cidr.range().free(), 254);
        let mut random = lcg();
        let mut seen = BTreeSet::new();
        while cidr.range().free() > 0 {
            let i = cidr.range_mut().allocate_next(&mut random).unwrap();
            assert!(seen.insert(cidr.ip_at(i)), "allocated twice");
        }
        assert_eq!(cidr.range_mut().allocate_next(&mut random), Err(AllocError::Full));
        for outside in ["192.168.0.1", "192.168.1.0", "192.168.1.255", "192.168.2.2"] {
            assert_eq!(cidr.index_of(outside), None, "{outside}");
        }
        let released = cidr.index_of("192.168.1.5").unwrap();
        cidr.range_mut().release(released);
        assert_eq!(cidr.range().free(), 1);
        assert_eq!(cidr.range_mut().allocate_next(&mut random), Ok(released));
        assert_eq!(cidr.range_mut().allocate(released), Err(AllocError::Allocated));
        // 10.0.0.0/15: 131070 usable.
        assert_eq!(ServiceCidr::new(parse_ipv4("10.0.0.0").unwrap(), 15).range().free(), 131_070);
    }

    #[test]
    fn allocate_tiny_and_small() {
        // TestAllocateTiny: a /32 has nothing to give. TestAllocateSmall: a /30 exactly two.
        let mut tiny = ServiceCidr::new(parse_ipv4("192.168.1.0").unwrap(), 32);
        assert_eq!(tiny.range().free(), 0);
        assert_eq!(tiny.range_mut().allocate_next(&mut lcg()), Err(AllocError::Full));
        let mut small = ServiceCidr::new(parse_ipv4("192.168.1.240").unwrap(), 30);
        let mut random = lcg();
        let mut got = BTreeSet::new();
        while let Ok(i) = small.range_mut().allocate_next(&mut random) {
            got.insert(small.ip_at(i));
        }
        assert_eq!(got.into_iter().collect::<Vec<_>>(), vec!["192.168.1.241".to_string(), "192.168.1.242".to_string()]);
    }

    #[test]
    fn allocate_reserved_fills_the_dynamic_band_first() {
        // TestAllocateReserved: a /25 (126 usable, static band 16): the 110 dynamic addresses
        // are handed out before any of the 16 static ones.
        let mut cidr = ServiceCidr::new(parse_ipv4("192.168.1.0").unwrap(), 25);
        let mut random = lcg();
        for _ in 0..110 {
            let i = cidr.range_mut().allocate_next(&mut random).unwrap();
            assert!(i >= 16, "{} is in the static band", cidr.ip_at(i));
        }
        for n in 1..=16 {
            assert!(!cidr.range().has(cidr.index_of(&format!("192.168.1.{n}")).unwrap()), "192.168.1.{n} still free");
        }
        let i = cidr.range_mut().allocate_next(&mut random).unwrap();
        assert!(i < 16);
    }

    #[test]
    fn kubeadm_service_cidr_bands() {
        // 10.96.0.0/12: static 10.96.0.1-10.96.1.0, dynamic from 10.96.1.1; `kubernetes`
        // (10.96.0.1) and kube-dns (10.96.0.10) are static-band addresses.
        let cidr = ServiceCidr::new(parse_ipv4("10.96.0.0").unwrap(), 12);
        assert_eq!(cidr.cidr(), "10.96.0.0/12");
        assert_eq!(cidr.ip_at(0), "10.96.0.1");
        assert_eq!(cidr.ip_at(255), "10.96.1.0");
        assert_eq!(cidr.ip_at(256), "10.96.1.1");
        assert_eq!(cidr.ip_at(cidr.range().free() - 1), "10.111.255.254");
        assert_eq!(cidr.index_of("10.96.0.10"), Some(9));
        let mut cidr = cidr;
        let mut random = lcg();
        for _ in 0..1000 {
            assert!(cidr.range_mut().allocate_next(&mut random).unwrap() >= 256);
        }
    }

    #[test]
    fn port_allocate_as_upstream() {
        // portallocator TestAllocate: 10000-10200 has 201 ports; full; a released port comes
        // back; 1, 20000 and 10201 are not in range; an allocated one is refused.
        let mut ports = PortRange::new(10_000, 201);
        let mut random = lcg();
        let mut seen = BTreeSet::new();
        while ports.range().free() > 0 {
            let p = ports.allocate_next(&mut random).unwrap();
            assert!((10_000..=10_200).contains(&p) && seen.insert(p));
        }
        assert_eq!(ports.allocate_next(&mut random), Err(AllocError::Full));
        ports.release(10_005);
        assert_eq!(ports.allocate_next(&mut random), Ok(10_005));
        ports.release(10_005);
        for p in [1, 20_000, 10_201] {
            assert_eq!(ports.allocate(p), Err(AllocError::NotInRange), "{p}");
        }
        assert_eq!(ports.allocate(10_001), Err(AllocError::Allocated));
        assert_eq!(ports.allocate(10_005), Ok(()));
        assert_eq!(ports.range().used(), 201);
        let default = PortRange::new(30_000, 2_768);
        assert_eq!(default.error_text(AllocError::NotInRange), "provided port is not in the valid range. The range of valid ports is 30000-32767");
    }

    #[test]
    fn node_ports_fill_the_dynamic_band_first() {
        // The default range: 30086-32767 before 30000-30085.
        let mut ports = PortRange::new(30_000, 2_768);
        let mut random = lcg();
        for _ in 0..(2_768 - 86) {
            assert!(ports.allocate_next(&mut random).unwrap() >= 30_086);
        }
        assert!(ports.allocate_next(&mut random).unwrap() < 30_086);
    }
}
