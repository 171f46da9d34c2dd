//! Prints what the catalogue resolves each argument to: `cargo run -p kubesim-images --example show -- nginx busybox:1.28`.
fn main() {
    for image in std::env::args().skip(1) {
        match kubesim_images::resolve(&image) {
            Ok(i) => {
                println!("{image} -> {} ({}) {}", i.reference, i.resolved_tag, if i.generic { "GENERIC" } else { "" });
                println!("  digest {} {}  id {}", i.repo_digest, if i.digest_synthetic { "(synthetic)" } else { "" }, i.image_id);
                println!("  size {} / {} {}", i.compressed_size, i.unpacked_size, if i.size_estimated { "(estimated)" } else { "" });
                println!("  os {} [{}] libc={} merged_usr={}", i.os.name, i.os.id, i.os.libc, i.os.merged_usr);
                println!(
                    "  entrypoint {:?} cmd {:?} workdir {:?} user {:?} stop {:?}",
                    i.config.entrypoint, i.config.cmd, i.config.working_dir, i.config.user, i.config.stop_signal
                );
                println!("  env {:?}", i.config.env);
                println!("  ports {:?} volumes {:?}", i.config.exposed_ports, i.config.volumes);
                println!("  bases {:?}", i.bases);
                println!(
                    "  programs {} (sh={:?} bash={:?} curl={:?} wget={:?} ps={:?})",
                    i.programs.len(),
                    i.which("sh").map(|p| p.1),
                    i.which("bash").map(|p| p.1),
                    i.which("curl").map(|p| p.1),
                    i.which("wget").map(|p| p.1),
                    i.which("ps").map(|p| p.1)
                );
                println!("  files {:?}", i.files.keys().collect::<Vec<_>>());
                for n in &i.notes {
                    println!("  note: {n}");
                }
            }
            Err(e) => println!("{image} -> ERROR [{}] {}", e.grpc_code(), e.message()),
        }
    }
}
