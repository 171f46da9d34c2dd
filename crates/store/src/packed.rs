//! The compact form the store keeps Events in ([`crate::Slot::Packed`]): every field in a
//! fixed order, strings length-prefixed, times as seconds and nanoseconds. Encoding a
//! recorder's Event takes a fraction of what JSON does (no field names, no RFC 3339 times)
//! and about half the bytes. Events with managedFields (never written by kubesim's
//! recorders) are kept as JSON instead; both decode to the Event that was written.
//!
//! The reader builds every struct with all its fields named (and the writer destructures the
//! smaller ones whole), so a field k8s-openapi adds fails to compile here rather than being
//! dropped.

use kubesim_api::k8s_openapi::api::core::v1::{Event, EventSeries, EventSource, ObjectReference};
use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference, Time};
use kubesim_api::k8s_openapi::jiff::Timestamp;
use std::collections::BTreeMap;

const JSON: u8 = 0;
const COMPACT: u8 = 1;

/// `event` in its packed form.
pub fn pack(event: &Event) -> Box<[u8]> {
    let mut out = Vec::with_capacity(384);
    if event.metadata.managed_fields.is_some() {
        out.push(JSON);
        serde_json::to_writer(&mut out, event).expect("API objects always serialize to JSON");
    } else {
        out.push(COMPACT);
        Writer(&mut out).event(event);
    }
    out.into_boxed_slice()
}

/// The Event `bytes` ([`pack`]) hold.
pub fn unpack(bytes: &[u8]) -> Event {
    match bytes.split_first() {
        Some((&COMPACT, rest)) => {
            let mut reader = Reader(rest);
            let event = reader.event();
            assert!(reader.0.is_empty(), "a packed Event is read to its end");
            event
        }
        Some((&JSON, rest)) => serde_json::from_slice(rest).expect("a packed Event was serialized from one"),
        _ => panic!("a packed Event starts with its format"),
    }
}

/// The (namespace, name) of a compactly packed Event, read without decoding it; `None` for
/// one kept as JSON.
pub fn key(bytes: &[u8]) -> Option<(&str, &str)> {
    let (&COMPACT, rest) = bytes.split_first()? else { return None };
    let mut reader = Reader(rest);
    let name = reader.opt_str_ref().unwrap_or("");
    let namespace = reader.opt_str_ref().unwrap_or("");
    Some((namespace, name))
}

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    /// Whether `value` is present (one byte), then its content.
    fn opt<T>(&mut self, value: Option<T>, content: impl FnOnce(&mut Self, T)) {
        self.0.push(value.is_some() as u8);
        if let Some(value) = value {
            content(self, value);
        }
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.u32(u32::try_from(s.len()).expect("a string under 4 GiB"));
        self.0.extend_from_slice(s.as_bytes());
    }
    fn opt_str(&mut self, s: &Option<String>) {
        self.opt(s.as_deref(), Self::str);
    }
    fn opt_i32(&mut self, v: Option<i32>) {
        self.opt(v, |w, v| w.u32(v as u32));
    }
    fn opt_i64(&mut self, v: Option<i64>) {
        self.opt(v, Self::i64);
    }
    fn opt_bool(&mut self, v: Option<bool>) {
        self.0.push(match v {
            None => 0,
            Some(false) => 1,
            Some(true) => 2,
        });
    }
    fn timestamp(&mut self, t: &Timestamp) {
        self.i64(t.as_second());
        self.u32(t.subsec_nanosecond() as u32);
    }
    fn opt_time(&mut self, t: &Option<Time>) {
        self.opt(t.as_ref(), |w, t| w.timestamp(&t.0));
    }
    fn opt_micro_time(&mut self, t: &Option<MicroTime>) {
        self.opt(t.as_ref(), |w, t| w.timestamp(&t.0));
    }
    fn opt_map(&mut self, map: &Option<BTreeMap<String, String>>) {
        self.opt(map.as_ref(), |w, map| {
            w.u32(map.len() as u32);
            for (k, v) in map {
                w.str(k);
                w.str(v);
            }
        });
    }
    fn opt_strings(&mut self, list: &Option<Vec<String>>) {
        self.opt(list.as_ref(), |w, list| {
            w.u32(list.len() as u32);
            for s in list {
                w.str(s);
            }
        });
    }
    fn reference(&mut self, r: &ObjectReference) {
        let ObjectReference { api_version, field_path, kind, name, namespace, resource_version, uid } = r;
        for s in [api_version, field_path, kind, name, namespace, resource_version, uid] {
            self.opt_str(s);
        }
    }
    fn metadata(&mut self, m: &ObjectMeta) {
        let ObjectMeta {
            annotations,
            creation_timestamp,
            deletion_grace_period_seconds,
            deletion_timestamp,
            finalizers,
            generate_name,
            generation,
            labels,
            managed_fields,
            name,
            namespace,
            owner_references,
            resource_version,
            self_link,
            uid,
        } = m;
        debug_assert!(managed_fields.is_none(), "an Event with managedFields is kept as JSON");
        // The key first: a lease reads it without decoding ([`key`]).
        self.opt_str(name);
        self.opt_str(namespace);
        self.opt_map(annotations);
        self.opt_time(creation_timestamp);
        self.opt_i64(*deletion_grace_period_seconds);
        self.opt_time(deletion_timestamp);
        self.opt_strings(finalizers);
        self.opt_str(generate_name);
        self.opt_i64(*generation);
        self.opt_map(labels);
        self.opt(owner_references.as_ref(), |w, owners| {
            w.u32(owners.len() as u32);
            for OwnerReference { api_version, block_owner_deletion, controller, kind, name, uid } in owners {
                for s in [api_version, kind, name, uid] {
                    w.str(s);
                }
                w.opt_bool(*block_owner_deletion);
                w.opt_bool(*controller);
            }
        });
        self.opt_str(resource_version);
        self.opt_str(self_link);
        self.opt_str(uid);
    }
    fn event(&mut self, e: &Event) {
        // In the order `Reader::event` reads them (its struct literal names every field, so a
        // field k8s-openapi adds fails to compile there).
        self.metadata(&e.metadata);
        self.reference(&e.involved_object);
        self.opt(e.related.as_ref(), Self::reference);
        for s in [&e.action, &e.message, &e.reason, &e.reporting_component, &e.reporting_instance, &e.type_] {
            self.opt_str(s);
        }
        self.opt_i32(e.count);
        self.opt_micro_time(&e.event_time);
        self.opt_time(&e.first_timestamp);
        self.opt_time(&e.last_timestamp);
        self.opt(e.series.as_ref(), |w, EventSeries { count, last_observed_time }| {
            w.opt_i32(*count);
            w.opt_micro_time(last_observed_time);
        });
        self.opt(e.source.as_ref(), |w, EventSource { component, host }| {
            w.opt_str(component);
            w.opt_str(host);
        });
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }
    fn byte(&mut self) -> u8 {
        self.take(1)[0]
    }
    fn flag(&mut self) -> bool {
        self.byte() != 0
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().expect("four bytes"))
    }
    fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take(8).try_into().expect("eight bytes"))
    }
    fn str_ref(&mut self) -> &'a str {
        let n = self.u32() as usize;
        std::str::from_utf8(self.take(n)).expect("packed from a String")
    }
    fn str(&mut self) -> String {
        self.str_ref().to_owned()
    }
    fn opt_str(&mut self) -> Option<String> {
        self.flag().then(|| self.str())
    }
    fn opt_str_ref(&mut self) -> Option<&'a str> {
        self.flag().then(|| self.str_ref())
    }
    fn opt_i32(&mut self) -> Option<i32> {
        self.flag().then(|| self.u32() as i32)
    }
    fn opt_i64(&mut self) -> Option<i64> {
        self.flag().then(|| self.i64())
    }
    fn opt_bool(&mut self) -> Option<bool> {
        match self.byte() {
            0 => None,
            1 => Some(false),
            _ => Some(true),
        }
    }
    fn timestamp(&mut self) -> Timestamp {
        let (seconds, nanos) = (self.i64(), self.u32() as i32);
        Timestamp::new(seconds, nanos).expect("packed from a Timestamp")
    }
    fn opt_time(&mut self) -> Option<Time> {
        self.flag().then(|| Time(self.timestamp()))
    }
    fn opt_micro_time(&mut self) -> Option<MicroTime> {
        self.flag().then(|| MicroTime(self.timestamp()))
    }
    fn opt_map(&mut self) -> Option<BTreeMap<String, String>> {
        self.flag().then(|| (0..self.u32()).map(|_| (self.str(), self.str())).collect())
    }
    fn opt_strings(&mut self) -> Option<Vec<String>> {
        self.flag().then(|| (0..self.u32()).map(|_| self.str()).collect())
    }
    fn reference(&mut self) -> ObjectReference {
        ObjectReference {
            api_version: self.opt_str(),
            field_path: self.opt_str(),
            kind: self.opt_str(),
            name: self.opt_str(),
            namespace: self.opt_str(),
            resource_version: self.opt_str(),
            uid: self.opt_str(),
        }
    }
    fn metadata(&mut self) -> ObjectMeta {
        let name = self.opt_str();
        let namespace = self.opt_str();
        ObjectMeta {
            annotations: self.opt_map(),
            creation_timestamp: self.opt_time(),
            deletion_grace_period_seconds: self.opt_i64(),
            deletion_timestamp: self.opt_time(),
            finalizers: self.opt_strings(),
            generate_name: self.opt_str(),
            generation: self.opt_i64(),
            labels: self.opt_map(),
            managed_fields: None,
            name,
            namespace,
            owner_references: self.flag().then(|| {
                (0..self.u32())
                    .map(|_| OwnerReference {
                        api_version: self.str(),
                        kind: self.str(),
                        name: self.str(),
                        uid: self.str(),
                        block_owner_deletion: self.opt_bool(),
                        controller: self.opt_bool(),
                    })
                    .collect()
            }),
            resource_version: self.opt_str(),
            self_link: self.opt_str(),
            uid: self.opt_str(),
        }
    }
    fn event(&mut self) -> Event {
        let metadata = self.metadata();
        let involved_object = self.reference();
        let related = self.flag().then(|| self.reference());
        let [action, message, reason, reporting_component, reporting_instance, type_] = std::array::from_fn(|_| self.opt_str());
        let count = self.opt_i32();
        let event_time = self.opt_micro_time();
        let first_timestamp = self.opt_time();
        let last_timestamp = self.opt_time();
        let series = self.flag().then(|| EventSeries { count: self.opt_i32(), last_observed_time: self.opt_micro_time() });
        let source = self.flag().then(|| EventSource { component: self.opt_str(), host: self.opt_str() });
        Event {
            action,
            count,
            event_time,
            first_timestamp,
            involved_object,
            last_timestamp,
            message,
            metadata,
            reason,
            related,
            reporting_component,
            reporting_instance,
            series,
            source,
            type_,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubesim_api::k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    #[test]
    fn every_field_of_an_event_reads_back() {
        let time = |s: i64, ns: i32| Timestamp::new(s, ns).unwrap();
        let reference = |kind: &str| ObjectReference {
            api_version: Some("v1".into()),
            field_path: Some("spec.containers{web}".into()),
            kind: Some(kind.into()),
            name: Some("web-1".into()),
            namespace: Some("default".into()),
            resource_version: Some("42".into()),
            uid: Some("0b7c5d0e-1111-2222-3333-444455556666".into()),
        };
        let full = Event {
            action: Some("Binding".into()),
            count: Some(-3),
            event_time: Some(MicroTime(time(1_700_000_000, 123_456_000))),
            first_timestamp: Some(Time(time(1_700_000_000, 0))),
            involved_object: reference("Pod"),
            last_timestamp: Some(Time(time(1_700_000_100, 0))),
            message: Some("Successfully assigned default/web-1 to node-1 — ünïcode".into()),
            metadata: ObjectMeta {
                annotations: Some([("a".to_string(), "1".to_string())].into()),
                creation_timestamp: Some(Time(time(1_700_000_000, 0))),
                deletion_grace_period_seconds: Some(30),
                deletion_timestamp: Some(Time(time(1_700_000_200, 0))),
                finalizers: Some(vec!["x".into(), String::new()]),
                generate_name: Some("web-".into()),
                generation: Some(7),
                labels: Some(BTreeMap::new()),
                managed_fields: None,
                name: Some("web-1.18c2f3a4b5c6d7e8".into()),
                namespace: Some("default".into()),
                owner_references: Some(vec![OwnerReference {
                    api_version: "v1".into(),
                    block_owner_deletion: Some(false),
                    controller: Some(true),
                    kind: "Pod".into(),
                    name: "web-1".into(),
                    uid: "u".into(),
                }]),
                resource_version: Some("43".into()),
                self_link: Some(String::new()),
                uid: Some("9f8e7d6c-aaaa-bbbb-cccc-ddddeeeeffff".into()),
            },
            reason: Some("Scheduled".into()),
            related: Some(reference("Node")),
            reporting_component: Some("default-scheduler".into()),
            reporting_instance: Some(String::new()),
            series: Some(EventSeries { count: Some(2), last_observed_time: Some(MicroTime(time(1_700_000_050, 999_000))) }),
            source: Some(EventSource { component: Some("kubelet".into()), host: None }),
            type_: Some("Normal".into()),
        };
        let packed = pack(&full);
        assert_eq!(packed[0], COMPACT);
        assert_eq!(unpack(&packed), full);
        assert_eq!(key(&packed), Some(("default", "web-1.18c2f3a4b5c6d7e8")), "the key reads without decoding");
        assert_eq!(unpack(&pack(&Event::default())), Event::default());
        // A recorder's Event packs to well under its JSON.
        let json = serde_json::to_vec(&full).unwrap();
        assert!(packed.len() * 3 < json.len() * 2, "{} bytes packed, {} as JSON", packed.len(), json.len());
        // managedFields: kept as JSON, read back all the same.
        let mut managed = full.clone();
        managed.metadata.managed_fields = Some(vec![ManagedFieldsEntry { manager: Some("kubectl".into()), ..Default::default() }]);
        let packed = pack(&managed);
        assert_eq!(packed[0], JSON);
        assert_eq!(unpack(&packed), managed);
        assert_eq!(key(&packed), None);
    }
}
