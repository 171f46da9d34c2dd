#[test]
fn smoke() {
    for image in [
        "nginx:1.14.2",
        "nginx",
        "busybox:1.28",
        "perl",
        "python",
        "debian",
        "registry.k8s.io/hpa-example",
        "mysql:5.7",
        "redis:5",
        "registry.k8s.io/e2e-test-images/agnhost:2.40",
        "myorg/api:1.2",
        "nginx:1.161",
        "registry.invalid/app:1",
        "Nginx",
    ] {
        match kubesim_images::resolve(image) {
            Ok(i) => println!("{image}: ref={} tag={} base={:?} os={}/{} cmd={:?} ep={:?} env={:?} ports={:?} stop={:?} size={}/{} est={} progs={} files={:?} bases={:?} notes={:?}\n", i.reference, i.resolved_tag, i.os.id, i.os.name, i.os.version, i.config.cmd, i.config.entrypoint, i.config.env, i.config.exposed_ports, i.config.stop_signal, i.compressed_size, i.unpacked_size, i.size_estimated, i.programs.len(), i.files.keys().collect::<Vec<_>>(), i.bases, i.notes),
            Err(e) => println!("{image}: ERR {} | {}\n", e.kubelet_message(image), e.grpc_code()),
        }
    }
}
