//! The machines of a cluster, by name and by the order they joined.

use crate::Host;
use std::collections::BTreeMap;

/// The machines, looked up by name (in name order, as a map) or by [`HostId`], the position
/// in the order they joined: the runtime keeps a component's and a wake-up's host as an id, so
/// the many lookups per event at 5,000 nodes index a vector instead of comparing names down
/// a 5,000-entry tree. A host is never removed (a machine that goes away loses power).
#[derive(Clone, Debug, Default)]
pub struct Hosts {
    by_name: BTreeMap<String, HostId>,
    hosts: Vec<Host>,
}

/// A host's position in the order hosts joined ([`Hosts::id`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId(pub u32);

impl Hosts {
    /// No hosts.
    pub fn new() -> Hosts {
        Hosts::default()
    }

    /// Adds `host` under `name`, or replaces the host of that name (keeping its id); returns
    /// the host replaced.
    pub fn insert(&mut self, name: String, host: Host) -> Option<Host> {
        match self.by_name.get(&name) {
            Some(id) => Some(std::mem::replace(&mut self.hosts[id.0 as usize], host)),
            None => {
                let id = HostId(u32::try_from(self.hosts.len()).expect("fewer than 2^32 hosts"));
                self.by_name.insert(name, id);
                self.hosts.push(host);
                None
            }
        }
    }

    /// The id of the host named `name`.
    pub fn id(&self, name: &str) -> Option<HostId> {
        self.by_name.get(name).copied()
    }

    /// The host named `name`.
    pub fn get(&self, name: &str) -> Option<&Host> {
        self.id(name).map(|id| &self.hosts[id.0 as usize])
    }

    /// The host named `name`, mutably.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Host> {
        let id = self.id(name)?;
        Some(&mut self.hosts[id.0 as usize])
    }

    /// The host with this id (ids come from [`Hosts::id`] of this set, and stay valid).
    pub fn by_id(&self, id: HostId) -> &Host {
        &self.hosts[id.0 as usize]
    }

    /// The host with this id, mutably.
    pub fn by_id_mut(&mut self, id: HostId) -> &mut Host {
        &mut self.hosts[id.0 as usize]
    }

    /// The name of the host with this id.
    pub fn name_of(&self, id: HostId) -> &str {
        &self.hosts[id.0 as usize].name
    }

    /// Whether a host is named `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// How many hosts there are.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// The names, in name order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> + '_ {
        self.by_name.keys()
    }

    /// The hosts, in name order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Host> + '_ {
        self.by_name.values().map(|id| &self.hosts[id.0 as usize])
    }

    /// Names and hosts, in name order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&String, &Host)> + '_ {
        self.by_name.iter().map(|(name, id)| (name, &self.hosts[id.0 as usize]))
    }

    /// The hosts mutably, in name order.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Host> + '_ {
        let mut slots: Vec<Option<&mut Host>> = self.hosts.iter_mut().map(Some).collect();
        self.by_name.values().map(move |id| slots[id.0 as usize].take().expect("each id once"))
    }
}

impl std::ops::Index<&str> for Hosts {
    type Output = Host;
    /// The host named `name`; panics if there is none (as a map's index does).
    fn index(&self, name: &str) -> &Host {
        self.get(name).unwrap_or_else(|| panic!("no host named {name:?}"))
    }
}

impl<'a> IntoIterator for &'a Hosts {
    type Item = (&'a String, &'a Host);
    type IntoIter = Box<dyn DoubleEndedIterator<Item = (&'a String, &'a Host)> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids follow the order hosts joined and survive a replacement; names iterate in order;
    /// every view agrees on which host a name and an id denote.
    #[test]
    fn names_and_ids_denote_the_same_hosts() {
        let mut hosts = Hosts::new();
        for (i, name) in ["node-b", "node-c", "node-a"].into_iter().enumerate() {
            assert!(hosts.insert(name.to_string(), Host::new(name, i as u32)).is_none());
        }
        assert_eq!(hosts.keys().cloned().collect::<Vec<_>>(), ["node-a", "node-b", "node-c"]);
        assert_eq!(hosts.values().map(|h| h.index).collect::<Vec<_>>(), [2, 0, 1]);
        assert_eq!(hosts.id("node-c"), Some(HostId(1)));
        assert_eq!(hosts.name_of(HostId(2)), "node-a");
        let mut again = Host::new("node-c", 7);
        again.powered = false;
        assert_eq!(hosts.insert("node-c".into(), again).map(|h| h.index), Some(1));
        assert_eq!((hosts.len(), hosts.id("node-c")), (3, Some(HostId(1))));
        assert!(!hosts.by_id(HostId(1)).powered && !hosts.get("node-c").expect("node-c").powered);
        hosts.by_id_mut(HostId(0)).powered = false;
        assert_eq!(
            hosts.values_mut().map(|h| (h.name.clone(), h.powered)).collect::<Vec<_>>(),
            [("node-a".to_string(), true), ("node-b".to_string(), false), ("node-c".to_string(), false)]
        );
        assert!(hosts.get("node-d").is_none() && hosts.id("node-d").is_none() && !hosts.contains_key("node-d"));
        assert_eq!((&hosts).into_iter().map(|(n, h)| (n.as_str(), h.name.as_str())).filter(|(n, h)| n == h).count(), 3);
    }
}
