//! Server-side `Table` output (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`) with
//! kubesim's own kubectl printers: one implementation of the columns and cells, so real
//! kubectl's `get` prints what `kubesim kubectl get` prints. As kube-apiserver's
//! TableConvertor, the server always generates the wide form and marks the extra columns
//! priority 1 (kubectl shows them with `-o wide`).

use kubesim_api::object::{KindInfo, Object};
use kubesim_api::Millis;
use kubesim_kubectl::reuse as kubectl;
use serde_json::{json, Value};
use std::sync::Arc;

/// The column definitions: (header, priority).
pub fn columns(info: &KindInfo) -> Vec<(&'static str, u8)> {
    let base = kubectl::headers(info, false);
    let wide: Vec<&'static str> =
        if info.kind == "Event" && info.group().is_empty() { kubectl::EVENT_WIDE_HEADERS.to_vec() } else { kubectl::headers(info, true) };
    wide.into_iter().map(|h| (h, if base.contains(&h) { 0 } else { 1 })).collect()
}

/// A Table of `objects` at virtual `now`; `include` is `includeObject` (None, Metadata, Object).
pub fn table(info: &KindInfo, objects: &[Arc<Object>], now: Millis, include: &str, resource_version: &str) -> Value {
    let definitions: Vec<Value> = columns(info)
        .iter()
        .map(|(name, priority)| {
            let format = if *name == "NAME" { "name" } else { "" };
            json!({ "name": name, "type": "string", "format": format, "description": "", "priority": priority })
        })
        .collect();
    let rows: Vec<Value> = objects.iter().map(|o| row(o, now, include)).collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": { "resourceVersion": resource_version },
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

/// One row: the wide cells and the object in the requested form.
pub fn row(object: &Object, now: Millis, include: &str) -> Value {
    let cells = kubectl::row(object, now, true);
    let mut row = json!({ "cells": cells });
    match include {
        "None" => {}
        "Object" => {
            let mut value = object.to_json();
            kubesim_api::object::go_encoding(object.kind(), &mut value);
            row["object"] = value
        }
        _ => {
            row["object"] = json!({ "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": serde_json::to_value(object.metadata()).unwrap_or_default() })
        }
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_columns_are_priority_one_and_events_interleave() {
        let pod = kubesim_api::kind_info("v1", "Pod").unwrap();
        let cols = columns(pod);
        assert_eq!(cols[0], ("NAME", 0));
        assert_eq!(cols[5], ("IP", 1));
        let event = kubesim_api::kind_info("v1", "Event").unwrap();
        let cols = columns(event);
        assert_eq!(cols.iter().filter(|(_, p)| *p == 0).map(|(h, _)| *h).collect::<Vec<_>>(), vec!["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]);
    }
}
