//! Prints catalogue statistics: repositories, tags, real vs synthetic digests.
fn main() {
    let repos = kubesim_images::repositories();
    let tags: usize = repos.iter().map(|r| r.tag_count).sum();
    let official = repos.iter().filter(|r| r.official).count();
    println!("{} repositories ({} official), {} tags, snapshot {}", repos.len(), official, tags, kubesim_images::snapshot_date());
    for r in &repos {
        println!("{:6} {}", r.tag_count, r.name);
    }
}
