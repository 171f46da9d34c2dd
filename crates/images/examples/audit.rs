//! Prints, for a sample of every repository's tags, base images the catalogue cannot resolve.
use std::collections::BTreeMap;
fn main() {
    let mut missing: BTreeMap<String, usize> = BTreeMap::new();
    let mut n = 0;
    for repo in kubesim_images::repositories() {
        let tags = repo.tags();
        let step = (tags.len() / 60).max(1);
        for tag in tags.iter().step_by(step) {
            n += 1;
            let info = kubesim_images::resolve(&format!("{}:{tag}", repo.name)).unwrap();
            for note in &info.notes {
                if note.starts_with("base image") {
                    *missing.entry(note.clone()).or_default() += 1;
                }
            }
            if info.default_command().is_empty() && !info.generic {
                *missing.entry(format!("no command: {}:{tag}", repo.name)).or_default() += 1;
            }
        }
    }
    println!("{n} images checked");
    for (k, v) in missing {
        println!("{v:5} {k}");
    }
}
