//! The connectivity matrix in the format of the upstream netpol e2e
//! (test/e2e/network/netpol/truthtable.go): rows are sources, columns destinations, `.` means
//! connected, `X` blocked, `?` not probed.

use std::collections::BTreeMap;

/// Which sources reach which destinations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TruthTable {
    /// Row names (`namespace/pod`), in order.
    pub froms: Vec<String>,
    /// Column names, in order.
    pub tos: Vec<String>,
    /// (from, to) → connected.
    pub values: BTreeMap<(String, String), bool>,
}

impl TruthTable {
    /// An empty table over these rows and columns.
    pub fn new(froms: Vec<String>, tos: Vec<String>) -> TruthTable {
        TruthTable { froms, tos, values: BTreeMap::new() }
    }

    /// Records one probe.
    pub fn set(&mut self, from: &str, to: &str, connected: bool) {
        self.values.insert((from.to_string(), to.to_string()), connected);
    }

    /// One cell, `None` if not probed.
    pub fn get(&self, from: &str, to: &str) -> Option<bool> {
        self.values.get(&(from.to_string(), to.to_string())).copied()
    }

    /// `TruthTable.PrettyPrint`: the header `-\t` and the destinations joined by tabs, then per
    /// source its name and each mark followed by a tab, joined by tabs.
    pub fn pretty_print(&self, indent: &str) -> String {
        let mut header = vec!["-\t".to_string()];
        header.extend(self.tos.iter().cloned());
        let mut lines = vec![format!("{indent}{}", header.join("\t"))];
        for from in &self.froms {
            let mut line = vec![from.clone()];
            for to in &self.tos {
                let mark = match self.get(from, to) {
                    None => "?",
                    Some(true) => ".",
                    Some(false) => "X",
                };
                line.push(format!("{mark}\t"));
            }
            lines.push(format!("{indent}{}", line.join("\t")));
        }
        lines.join("\n")
    }

    /// `TruthTable.Compare`: a table whose cells are true where both tables agree.
    pub fn compare(&self, other: &TruthTable) -> TruthTable {
        let mut out = TruthTable::new(self.froms.clone(), self.tos.clone());
        for from in &self.froms {
            for to in &self.tos {
                if let (Some(a), Some(b)) = (self.get(from, to), other.get(from, to)) {
                    out.set(from, to, a == b);
                }
            }
        }
        out
    }

    /// Cells where the tables differ: (from, to, this table's value).
    pub fn differences(&self, other: &TruthTable) -> Vec<(String, String, bool)> {
        self.values.iter().filter(|(k, v)| other.values.get(*k).is_some_and(|o| o != *v)).map(|((f, t), v)| (f.clone(), t.clone(), *v)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_print_is_the_upstream_layout() {
        let mut t = TruthTable::new(vec!["x/a".into(), "x/b".into()], vec!["x/a".into(), "x/b".into()]);
        t.set("x/a", "x/a", true);
        t.set("x/a", "x/b", false);
        t.set("x/b", "x/a", true);
        assert_eq!(t.pretty_print(""), "-\t\tx/a\tx/b\nx/a\t.\t\tX\t\nx/b\t.\t\t?\t");
        let mut u = t.clone();
        u.set("x/a", "x/b", true);
        assert_eq!(t.compare(&u).get("x/a", "x/b"), Some(false));
        assert_eq!(t.differences(&u), vec![("x/a".into(), "x/b".into(), false)]);
    }
}
