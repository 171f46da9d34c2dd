//! Manifests kubectl reads by URL although the simulation has no network: the ingress-nginx
//! releases' static deploy manifests (`kubectl apply -f https://raw.githubusercontent.com/
//! kubernetes/ingress-nginx/controller-v1.x.y/deploy/static/provider/{kind,cloud,baremetal}/
//! deploy.yaml`, also from `main`) and what `minikube addons enable ingress` applies.
//!
//! Each is the release's manifest reduced to what kubesim models, with the real object names,
//! labels, images (tag and digest), arguments, ports, node selectors and Service types:
//! Namespace, ServiceAccounts, RBAC (kept for `kubectl apply`'s output; authorization is not
//! modelled), the controller ConfigMap, the controller and admission Services, the controller
//! Deployment, the admission Jobs (kube-webhook-certgen), the IngressClass `nginx` and the
//! ValidatingWebhookConfiguration (stored; kubesim does not call admission webhooks). Left
//! out: securityContext details, seccomp profiles and the chart's extra labels.

/// One release: (controller version, controller digest, certgen tag, certgen digest).
type Release = (&'static str, &'static str, &'static str, &'static str);

/// The releases from `controller-v1.3.0` on whose manifests kubesim writes (their images as
/// each release's `deploy/static/provider/kind/deploy.yaml` pins them).
const RELEASES: &[Release] = &[
    ("1.3.0", "d1707ca76d3b044ab8a28277a2466a02100ee9f58a86af1535a3edf9323ea1b5", "v1.1.1", "64d8c73dca984af206adf9d6d7e46aa550362b1d7a01f3a0a91b20cc67868660"),
    ("1.3.1", "54f7fe2c6c5a9db9a0ebf1131797109bb7a4d91f56b9b362bde2abd237dd1974", "v1.3.0", "549e71a6ca248c5abd51cdb73dbc3083df62cf92ed5e6147c780e30f7e007a47"),
    (
        "1.4.0",
        "34ee929b111ffc7aa426ffd409af44da48e5a0eea1eb2207994d9e0c0882d143",
        "v20220916-gd32f8c343",
        "39c5b2e3310dc4264d638ad28d9d1d96c4cbb2b2dcfb52368fe4e3c63f61e10f",
    ),
    (
        "1.5.1",
        "4ba73c697770664c1e00e9f968de14e08f606ff961c76e5d7033a4a9c593c629",
        "v20220916-gd32f8c343",
        "39c5b2e3310dc4264d638ad28d9d1d96c4cbb2b2dcfb52368fe4e3c63f61e10f",
    ),
    (
        "1.7.0",
        "7612338342a1e7b8090bef78f2a04fffcadd548ccaabe8a47bf7758ff549a5f7",
        "v20230312-helm-chart-4.5.2-28-g66a760794",
        "01d181618f270f2a96c04006f33b2699ad3ccb02da48d0f89b22abce084b292f",
    ),
    (
        "1.8.0",
        "744ae2afd433a395eeb13dc03d3313facba92e96ad71d9feaafc85925493fee3",
        "v20230407",
        "543c40fd093964bc9ab509d3e791f9989963021f1e9e4c9c7b6700b02bfb227b",
    ),
    (
        "1.8.1",
        "e5c4824e7375fcf2a393e1c03c293b69759af37a9ca6abdb91b13d78a93da8bd",
        "v20230407",
        "543c40fd093964bc9ab509d3e791f9989963021f1e9e4c9c7b6700b02bfb227b",
    ),
    (
        "1.8.4",
        "8d8ddf32b83ca3e74bd5f66369fa60d85353e18ff55fa7691b321aa4716f5ba9",
        "v20231011-8b53cabe0",
        "a7943503b45d552785aa3b5e457f169a5661fb94d82b8a3373bcd9ebaf9aac80",
    ),
    (
        "1.9.1",
        "605a737877de78969493a4b1213b21de4ee425d2926906857b98050f57a95b25",
        "v20230407",
        "543c40fd093964bc9ab509d3e791f9989963021f1e9e4c9c7b6700b02bfb227b",
    ),
    (
        "1.9.4",
        "5b161f051d017e55d358435f295f5e9a297e66158f136321d9b04520ec6c48a3",
        "v20231011-8b53cabe0",
        "a7943503b45d552785aa3b5e457f169a5661fb94d82b8a3373bcd9ebaf9aac80",
    ),
    (
        "1.9.5",
        "b3aba22b1da80e7acfc52b115cae1d4c687172cbf2b742d5b502419c25ff340e",
        "v20231011-8b53cabe0",
        "a7943503b45d552785aa3b5e457f169a5661fb94d82b8a3373bcd9ebaf9aac80",
    ),
    (
        "1.9.6",
        "1405cc613bd95b2c6edd8b2a152510ae91c7e62aea4698500d23b2145960ab9c",
        "v20231226-1a7112e06",
        "25d6a5f11211cc5c3f9f2bf552b585374af287b4debf693cacbe2da47daa5084",
    ),
    (
        "1.10.0",
        "42b3f0e5d0846876b1791cd3afeb5f1cbbe4259d6f35651dcc1b5c980925379c",
        "v1.4.0",
        "44d1d0e9f19c63f58b380c5fddaca7cf22c7cee564adeff365225a5df5ef3334",
    ),
    (
        "1.10.1",
        "e24f39d3eed6bcc239a56f20098878845f62baa34b9f2be2fd2c38ce9fb0f29e",
        "v1.4.1",
        "36d05b4077fb8e3d13663702fa337f124675ba8667cbd949c03a8e8ea6fa4366",
    ),
    (
        "1.10.2",
        "e3311b3d9671bc52d90572bcbfb7ee5b71c985d6d6cffd445c241f1e2703363c",
        "v1.4.1",
        "36d05b4077fb8e3d13663702fa337f124675ba8667cbd949c03a8e8ea6fa4366",
    ),
    (
        "1.10.3",
        "b5a5082f8e508cc1aac1c0ef101dc2f87b63d51598a5747d81d6cf6e7ba058fd",
        "v1.4.1",
        "36d05b4077fb8e3d13663702fa337f124675ba8667cbd949c03a8e8ea6fa4366",
    ),
    (
        "1.10.4",
        "505b9048c02dde3d6c8667bf0b52aba7b36adf7b03da34c47d5fa312d2d4c6fc",
        "v1.4.3",
        "a320a50cc91bd15fd2d6fa6de58bd98c1bd64b9a6f926ce23a600d87043455a3",
    ),
    (
        "1.10.5",
        "c84d11b1f7bd14ebbf49918a7f0dc01b31c0c6e757e0129520ea93453096315c",
        "v1.4.4",
        "a9f03b34a3cbfbb26d103a14046ab2c5130a80c3d69d526ff8063d2b37b9fd3f",
    ),
    (
        "1.10.6",
        "b6fbd102255edb3ba8e5421feebe14fd3e94cf53d199af9e40687f536152189c",
        "v1.5.0",
        "aaafd456bda110628b2d4ca6296f38731a3aaf0bf7581efae824a41c770a8fc4",
    ),
    (
        "1.11.0",
        "a886e56d532d1388c77c8340261149d974370edca1093af4c97a96fb1467cb39",
        "v1.4.1",
        "36d05b4077fb8e3d13663702fa337f124675ba8667cbd949c03a8e8ea6fa4366",
    ),
    (
        "1.11.1",
        "e6439a12b52076965928e83b7b56aae6731231677b01e81818bce7fa5c60161a",
        "v1.4.1",
        "36d05b4077fb8e3d13663702fa337f124675ba8667cbd949c03a8e8ea6fa4366",
    ),
    (
        "1.11.2",
        "d5f8217feeac4887cb1ed21f27c2674e58be06bd8f5184cacea2a69abaf78dce",
        "v1.4.3",
        "a320a50cc91bd15fd2d6fa6de58bd98c1bd64b9a6f926ce23a600d87043455a3",
    ),
    (
        "1.11.3",
        "d56f135b6462cfc476447cfe564b83a45e8bb7da2774963b00d12161112270b7",
        "v1.4.4",
        "a9f03b34a3cbfbb26d103a14046ab2c5130a80c3d69d526ff8063d2b37b9fd3f",
    ),
    (
        "1.11.4",
        "981a97d78bee3109c0b149946c07989f8f1478a9265031d2d23dea839ba05b52",
        "v1.5.0",
        "aaafd456bda110628b2d4ca6296f38731a3aaf0bf7581efae824a41c770a8fc4",
    ),
    (
        "1.11.5",
        "a1cbad75b0a7098bf9325132794dddf9eef917e8a7fe246749a4cea7ff6f01eb",
        "v1.5.2",
        "e8825994b7a2c7497375a9b945f386506ca6a3eda80b89b74ef2db743f66a5ea",
    ),
    (
        "1.11.6",
        "4f04fad99f00e604ab488cf0945b4eaa2a93f603f97d2a45fc610ff0f3cad0f9",
        "v1.5.3",
        "2cf4ebfa82a37c357455458f6dfc334aea1392d508270b2517795a9933a02524",
    ),
    (
        "1.11.7",
        "016a25cf89bf7f930869ccd7cb3dd4acbe106cd4da1419804951ef9c8636f053",
        "v1.5.4",
        "7a38cf0f8480775baaee71ab519c7465fd1dfeac66c421f28f087786e631456e",
    ),
    (
        "1.11.8",
        "695d79381ee6af00c7f5c9fd434f50851d7d32838ad5b2c507e416cf2084fc79",
        "v1.6.0",
        "c9f76a75fd00e975416ea1b73300efd413116de0de8570346ed90766c5b5cefb",
    ),
    (
        "1.12.0",
        "e6b8de175acda6ca913891f0f727bca4527e797d52688cbe9fec9040d6f6b6fa",
        "v1.5.0",
        "aaafd456bda110628b2d4ca6296f38731a3aaf0bf7581efae824a41c770a8fc4",
    ),
    (
        "1.12.1",
        "d2fbc4ec70d8aa2050dd91a91506e998765e86c96f32cffb56c503c9c34eed5b",
        "v1.5.2",
        "e8825994b7a2c7497375a9b945f386506ca6a3eda80b89b74ef2db743f66a5ea",
    ),
    (
        "1.12.2",
        "03497ee984628e95eca9b2279e3f3a3c1685dd48635479e627d219f00c8eefa9",
        "v1.5.3",
        "2cf4ebfa82a37c357455458f6dfc334aea1392d508270b2517795a9933a02524",
    ),
    (
        "1.12.3",
        "ac444cd9515af325ba577b596fe4f27a34be1aa330538e8b317ad9d6c8fb94ee",
        "v1.5.4",
        "7a38cf0f8480775baaee71ab519c7465fd1dfeac66c421f28f087786e631456e",
    ),
    (
        "1.12.4",
        "05890cb25d37aa5cfe086614104f798f55e1eeec8dda26d9fd6f6acf0e1554a0",
        "v1.6.0",
        "c9f76a75fd00e975416ea1b73300efd413116de0de8570346ed90766c5b5cefb",
    ),
    (
        "1.12.5",
        "f4a204a39ce99e7d297c54b02e64e421d872675c5ee29ab1b6edb62d4d69be5c",
        "v1.6.1",
        "e63459ec5965840af34d6d6a2f4c017eb6e212db83e054908d0bd148e1f35489",
    ),
    (
        "1.12.6",
        "c371fbf42b4f23584ce879d99303463131f4f31612f0875482b983354eeca7e6",
        "v1.6.2",
        "050a34002d5bb4966849c880c56c91f5320372564245733b33d4b3461b4dbd24",
    ),
    (
        "1.12.7",
        "6ca5f62d18ac6b2e57484ecde310dccd3079b545acecff01c4c71eb5fb222438",
        "v1.6.3",
        "3d671cf20a35cd94efc5dcd484970779eb21e7938c98fbc3673693b8a117cf39",
    ),
    (
        "1.12.8",
        "8f8343060688fb2a85752b7345a988d0d3c890d774e18e80b9e8730756e5b530",
        "v1.6.4",
        "bcfc926ed57831edf102d62c5c0e259572591df4796ef1420b87f9cf6092497f",
    ),
    (
        "1.13.0",
        "dc75a7baec7a3b827a5d7ab0acd10ab507904c7dad692365b3e3b596eca1afd2",
        "v1.6.0",
        "c9f76a75fd00e975416ea1b73300efd413116de0de8570346ed90766c5b5cefb",
    ),
    (
        "1.13.1",
        "37e489b22ac77576576e52e474941cd7754238438847c1ee795ad6d59c02b12a",
        "v1.6.1",
        "e63459ec5965840af34d6d6a2f4c017eb6e212db83e054908d0bd148e1f35489",
    ),
    (
        "1.13.2",
        "1f7eaeb01933e719c8a9f4acd8181e555e582330c7d50f24484fb64d2ba9b2ef",
        "v1.6.2",
        "050a34002d5bb4966849c880c56c91f5320372564245733b33d4b3461b4dbd24",
    ),
    (
        "1.13.3",
        "1b044f6dcac3afbb59e05d98463f1dec6f3d3fb99940bc12ca5d80270358e3bd",
        "v1.6.3",
        "3d671cf20a35cd94efc5dcd484970779eb21e7938c98fbc3673693b8a117cf39",
    ),
    (
        "1.13.4",
        "4042ae3c512c5d7bcf9682b0fdff96cd7b46a23dcbe15a762349094cd8087be7",
        "v1.6.4",
        "bcfc926ed57831edf102d62c5c0e259572591df4796ef1420b87f9cf6092497f",
    ),
    (
        "1.13.5",
        "5b346855be6752fa2a40f91983fa35a0c004b41493f36be6068a3d4350e69db8",
        "v1.6.5",
        "03a00eb0e255e8a25fa49926c24cde0f7e12e8d072c445cdf5136ec78b546285",
    ),
    (
        "1.13.6",
        "4b85724d716a545f38338cb99f0e07c83d16780adb0911e0e4d6218c7e5944a8",
        "v1.6.6",
        "b28e0688be7d1e15fe385053bd4c6b631bc7708c9220632de1b95867e5e7da11",
    ),
    (
        "1.13.7",
        "13db2f8aca4bb71ae7f727288620c4569b01bab4911b01fa3917995ff7755de8",
        "v1.6.7",
        "7c74a715af2c94cb734785b4d3ea1357b4f02b88e1e123c622a9cb68b62f669c",
    ),
    (
        "1.13.8",
        "0e7fad5de70f55c7f5fb61858be5ba6794d61091ad0874e963a61851e43edf99",
        "v1.6.8",
        "d7e8257f8d8bce64b6df55f81fba92011a6a77269b3350f8b997b152af348dba",
    ),
    (
        "1.13.9",
        "d803625b20d471400fdae9dce0fdd076c0361f8f7e1ecee0dcd2f84fa0d196f8",
        "v1.6.9",
        "01038e7de14b78d702d2849c3aad72fd25903c4765af63cf16aa3398f5d5f2dd",
    ),
    (
        "1.14.0",
        "e4127065d0317bd11dc64c4dd38dcf7fb1c3d72e468110b4086e636dbaac943d",
        "v1.6.4",
        "bcfc926ed57831edf102d62c5c0e259572591df4796ef1420b87f9cf6092497f",
    ),
    (
        "1.14.1",
        "f95a79b85fb93ac3de752c71a5c27d5ceae10a18b61904dec224c1c6a4581e47",
        "v1.6.5",
        "03a00eb0e255e8a25fa49926c24cde0f7e12e8d072c445cdf5136ec78b546285",
    ),
    (
        "1.14.2",
        "fb3e5c0bdff6a498dd5192b11a09ace0739baa9fe6ba519bf5b22425871ce490",
        "v1.6.6",
        "b28e0688be7d1e15fe385053bd4c6b631bc7708c9220632de1b95867e5e7da11",
    ),
    (
        "1.14.3",
        "82917be97c0939f6ada1717bb39aa7e66c229d6cfb10dcfc8f1bd42f9efe0f81",
        "v1.6.7",
        "7c74a715af2c94cb734785b4d3ea1357b4f02b88e1e123c622a9cb68b62f669c",
    ),
    (
        "1.14.4",
        "f8c7959ed0cc0c1dd6060f291fc50ccaf27a5497d182bbb6bc4ffed943616f23",
        "v1.6.8",
        "d7e8257f8d8bce64b6df55f81fba92011a6a77269b3350f8b997b152af348dba",
    ),
    (
        "1.14.5",
        "af3312d040dbe8d503001a1094b248e8be372f70f317a4bc35f81fb312bff3a8",
        "v1.6.9",
        "01038e7de14b78d702d2849c3aad72fd25903c4765af63cf16aa3398f5d5f2dd",
    ),
    (
        "1.15.0",
        "4eea9a4cc2cb6ddcb7da14d377aaf452e68bd3dbe87fe280755d225c4d5e7e4e",
        "v1.6.8",
        "d7e8257f8d8bce64b6df55f81fba92011a6a77269b3350f8b997b152af348dba",
    ),
    (
        "1.15.1",
        "594ceea76b01c592858f803f9ff4d2cb40542cae2060410b2c95f75907d659e1",
        "v1.6.9",
        "01038e7de14b78d702d2849c3aad72fd25903c4765af63cf16aa3398f5d5f2dd",
    ),
];

/// The release `main` deploys at the catalogue snapshot.
const LATEST: &str = "1.15.1";

/// The ingress-nginx release minikube's ingress addon deploys (minikube v1.36).
pub const MINIKUBE_INGRESS_RELEASE: &str = "1.12.2";

/// Where a static manifest is meant to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// `provider/kind`: hostPorts 80/443 on the node labelled `ingress-ready=true` (before
    /// v1.13; any Linux node after, with a LoadBalancer Service for cloud-provider-kind) and
    /// `--publish-status-address=localhost`.
    Kind,
    /// `provider/cloud`: a LoadBalancer Service (`externalTrafficPolicy: Local`) and
    /// `--publish-service`.
    Cloud,
    /// `provider/baremetal`: a NodePort Service.
    Baremetal,
    /// minikube's ingress addon: hostPorts on the primary node, a NodePort Service, the class
    /// marked default.
    Minikube,
}

/// The manifest behind a URL kubectl was asked to read, if kubesim has it.
pub fn remote(url: &str) -> Option<String> {
    if let Some(text) = docs_example(url) {
        return Some(text.to_string());
    }
    let rest = url.strip_prefix("https://raw.githubusercontent.com/kubernetes/ingress-nginx/")?;
    let (reference, path) = rest.split_once("/deploy/static/provider/")?;
    let version = match reference {
        "main" | "master" => LATEST,
        r => r.strip_prefix("controller-v")?,
    };
    let provider = match path {
        "kind/deploy.yaml" => Provider::Kind,
        "cloud/deploy.yaml" => Provider::Cloud,
        "baremetal/deploy.yaml" => Provider::Baremetal,
        _ => return None,
    };
    ingress_nginx(provider, version)
}

/// The documentation example a URL names: `https://k8s.io/examples/PATH`,
/// `https://kubernetes.io/examples/PATH` (either scheme) or the file in kubernetes/website
/// (`raw.githubusercontent.com/kubernetes/website/main/content/en/examples/PATH`).
pub fn docs_example(url: &str) -> Option<&'static str> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"))?;
    let path = ["k8s.io/examples/", "kubernetes.io/examples/", "raw.githubusercontent.com/kubernetes/website/main/content/en/examples/"]
        .iter()
        .find_map(|prefix| rest.strip_prefix(prefix))?;
    let i = crate::docs_examples::EXAMPLES.binary_search_by(|(p, _)| (*p).cmp(path)).ok()?;
    Some(crate::docs_examples::EXAMPLES[i].1)
}

fn vnum(v: &str) -> (u32, u32, u32) {
    let mut it = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (it.next().unwrap_or(0), it.next().unwrap_or(0), it.next().unwrap_or(0))
}

/// The ingress-nginx manifest of `version` (`1.12.1`) for `provider`; `None` for releases
/// kubesim does not carry.
pub fn ingress_nginx(provider: Provider, version: &str) -> Option<String> {
    let &(v, digest, certgen_tag, certgen_digest) = RELEASES.iter().find(|r| r.0 == version)?;
    let modern = vnum(v) >= (1, 13, 0);
    let part_of = if provider == Provider::Minikube {
        String::new()
    } else {
        format!("\n    app.kubernetes.io/part-of: ingress-nginx\n    app.kubernetes.io/version: {v}")
    };
    let labels = |component: &str| {
        format!("  labels:\n    app.kubernetes.io/component: {component}\n    app.kubernetes.io/instance: ingress-nginx\n    app.kubernetes.io/name: ingress-nginx{part_of}")
    };
    let controller = labels("controller");
    let admission = labels("admission-webhook");
    let cluster_labels: String = labels("").lines().filter(|l| !l.contains("component: ")).map(|l| format!("{l}\n")).collect();
    let image = format!("registry.k8s.io/ingress-nginx/controller:v{v}@sha256:{digest}");
    let certgen = format!("registry.k8s.io/ingress-nginx/kube-webhook-certgen:{certgen_tag}@sha256:{certgen_digest}");
    let mut args = vec!["/nginx-ingress-controller".to_string()];
    if provider == Provider::Cloud {
        args.push("--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller".into());
    }
    args.push("--election-id=ingress-nginx-leader".into());
    args.push("--controller-class=k8s.io/ingress-nginx".into());
    if provider != Provider::Minikube {
        args.push("--ingress-class=nginx".into());
    }
    args.push("--configmap=$(POD_NAMESPACE)/ingress-nginx-controller".into());
    if provider == Provider::Minikube {
        args.push("--watch-ingress-without-class=true".into());
        args.push("--tcp-services-configmap=$(POD_NAMESPACE)/tcp-services".into());
        args.push("--udp-services-configmap=$(POD_NAMESPACE)/udp-services".into());
    }
    args.push("--validating-webhook=:8443".into());
    args.push("--validating-webhook-certificate=/usr/local/certificates/cert".into());
    args.push("--validating-webhook-key=/usr/local/certificates/key".into());
    if provider == Provider::Kind {
        args.push("--watch-ingress-without-class=true".into());
        args.push("--publish-status-address=localhost".into());
    }
    let args: String = args.iter().map(|a| format!("        - {a}\n")).collect();
    let host_ports = matches!(provider, Provider::Kind | Provider::Minikube);
    let port = |p: u16, name: &str| {
        if host_ports {
            format!("        - containerPort: {p}\n          hostPort: {p}\n          name: {name}\n          protocol: TCP\n")
        } else {
            format!("        - containerPort: {p}\n          name: {name}\n          protocol: TCP\n")
        }
    };
    let ports = format!("{}{}        - containerPort: 8443\n          name: webhook\n          protocol: TCP\n", port(80, "http"), port(443, "https"));
    let node_selector = match provider {
        Provider::Kind if !modern => "        ingress-ready: \"true\"\n        kubernetes.io/os: linux\n",
        Provider::Minikube => "        kubernetes.io/os: linux\n        minikube.k8s.io/primary: \"true\"\n",
        _ => "        kubernetes.io/os: linux\n",
    };
    let service_spec = match provider {
        Provider::Kind if modern => "  type: LoadBalancer\n",
        Provider::Cloud => "  externalTrafficPolicy: Local\n  type: LoadBalancer\n",
        _ => "  type: NodePort\n",
    };
    // The admission Jobs run on any Linux node (minikube: its primary node).
    let job_node_selector = if provider == Provider::Minikube { node_selector } else { "        kubernetes.io/os: linux\n" };
    let ttl = if modern && provider != Provider::Minikube { "  ttlSecondsAfterFinished: 0\n" } else { "" };
    let default_class = if provider == Provider::Minikube { "  annotations:\n    ingressclass.kubernetes.io/is-default-class: \"true\"\n" } else { "" };
    let minikube_config_maps = if provider == Provider::Minikube {
        format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n{controller}\n  name: tcp-services\n  namespace: ingress-nginx\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n{controller}\n  name: udp-services\n  namespace: ingress-nginx\n")
    } else {
        String::new()
    };
    let job = |name: &str, container: &str, job_args: &str| {
        format!(
            "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n{admission}\n  name: ingress-nginx-admission-{name}\n  namespace: ingress-nginx\nspec:\n  template:\n    metadata:\n{pod_labels}\n      name: ingress-nginx-admission-{name}\n    spec:\n      containers:\n      - args:\n{job_args}        env:\n        - name: POD_NAMESPACE\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.namespace\n        image: {certgen}\n        imagePullPolicy: IfNotPresent\n        name: {container}\n        securityContext:\n          allowPrivilegeEscalation: false\n          runAsNonRoot: true\n          runAsUser: 65532\n      nodeSelector:\n{job_node_selector}      restartPolicy: OnFailure\n      serviceAccountName: ingress-nginx-admission\n{ttl}",
            pod_labels = admission.lines().map(|l| format!("    {l}\n")).collect::<String>().trim_end_matches('\n'),
        )
    };
    let create_args = "        - create\n        - --host=ingress-nginx-controller-admission,ingress-nginx-controller-admission.$(POD_NAMESPACE).svc\n        - --namespace=$(POD_NAMESPACE)\n        - --secret-name=ingress-nginx-admission\n";
    let patch_args = "        - patch\n        - --webhook-name=ingress-nginx-admission\n        - --namespace=$(POD_NAMESPACE)\n        - --patch-mutating=false\n        - --secret-name=ingress-nginx-admission\n        - --patch-failure-policy=Fail\n";
    let rules = |list: &[(&str, &str, &str)]| -> String {
        list.iter()
            .map(|(group, resources, verbs)| format!("- apiGroups:\n  - \"{group}\"\n  resources:\n{}  verbs:\n{}", items(resources), items(verbs)))
            .collect()
    };
    let controller_role = rules(&[
        ("", "namespaces", "get"),
        ("", "configmaps pods secrets endpoints", "get list watch"),
        ("", "services", "get list watch"),
        ("networking.k8s.io", "ingresses", "get list watch"),
        ("networking.k8s.io", "ingresses/status", "update"),
        ("networking.k8s.io", "ingressclasses", "get list watch"),
        ("coordination.k8s.io", "leases", "get update create"),
        ("", "events", "create patch"),
        ("discovery.k8s.io", "endpointslices", "list watch get"),
    ]);
    let controller_cluster_role = rules(&[
        ("", "configmaps endpoints nodes pods secrets namespaces", "list watch"),
        ("coordination.k8s.io", "leases", "list watch"),
        ("", "nodes", "get"),
        ("", "services", "get list watch"),
        ("networking.k8s.io", "ingresses", "get list watch"),
        ("", "events", "create patch"),
        ("networking.k8s.io", "ingresses/status", "update"),
        ("networking.k8s.io", "ingressclasses", "get list watch"),
        ("discovery.k8s.io", "endpointslices", "list watch get"),
    ]);
    let admission_role = rules(&[("", "secrets", "get create")]);
    let admission_cluster_role = rules(&[("admissionregistration.k8s.io", "validatingwebhookconfigurations", "get update")]);
    let binding = |kind: &str, role_kind: &str, name: &str, meta: &str, namespaced: bool| {
        let ns = if namespaced { "  namespace: ingress-nginx\n" } else { "" };
        format!("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: {kind}\nmetadata:\n{meta}\n  name: {name}\n{ns}roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: {role_kind}\n  name: {name}\nsubjects:\n- kind: ServiceAccount\n  name: {name}\n  namespace: ingress-nginx\n")
    };
    let cluster_meta = cluster_labels.trim_end_matches('\n').to_string();
    let mut out = String::new();
    out.push_str("apiVersion: v1\nkind: Namespace\nmetadata:\n  labels:\n    app.kubernetes.io/instance: ingress-nginx\n    app.kubernetes.io/name: ingress-nginx\n  name: ingress-nginx\n");
    out.push_str(&format!("---\napiVersion: v1\nautomountServiceAccountToken: true\nkind: ServiceAccount\nmetadata:\n{controller}\n  name: ingress-nginx\n  namespace: ingress-nginx\n"));
    out.push_str(&format!("---\napiVersion: v1\nautomountServiceAccountToken: true\nkind: ServiceAccount\nmetadata:\n{admission}\n  name: ingress-nginx-admission\n  namespace: ingress-nginx\n"));
    out.push_str(&format!("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n{controller}\n  name: ingress-nginx\n  namespace: ingress-nginx\nrules:\n{controller_role}"));
    out.push_str(&format!("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n{admission}\n  name: ingress-nginx-admission\n  namespace: ingress-nginx\nrules:\n{admission_role}"));
    out.push_str(&format!(
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n{cluster_meta}\n  name: ingress-nginx\nrules:\n{controller_cluster_role}"
    ));
    out.push_str(&format!("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n{admission}\n  name: ingress-nginx-admission\nrules:\n{admission_cluster_role}"));
    out.push_str(&binding("RoleBinding", "Role", "ingress-nginx", &controller, true));
    out.push_str(&binding("RoleBinding", "Role", "ingress-nginx-admission", &admission, true));
    out.push_str(&binding("ClusterRoleBinding", "ClusterRole", "ingress-nginx", &cluster_meta, false));
    out.push_str(&binding("ClusterRoleBinding", "ClusterRole", "ingress-nginx-admission", &admission, false));
    out.push_str(&format!(
        "---\napiVersion: v1\ndata: null\nkind: ConfigMap\nmetadata:\n{controller}\n  name: ingress-nginx-controller\n  namespace: ingress-nginx\n"
    ));
    out.push_str(&minikube_config_maps);
    let selector =
        "  selector:\n    app.kubernetes.io/component: controller\n    app.kubernetes.io/instance: ingress-nginx\n    app.kubernetes.io/name: ingress-nginx\n";
    out.push_str(&format!("---\napiVersion: v1\nkind: Service\nmetadata:\n{controller}\n  name: ingress-nginx-controller\n  namespace: ingress-nginx\nspec:\n  ipFamilies:\n  - IPv4\n  ipFamilyPolicy: SingleStack\n  ports:\n  - appProtocol: http\n    name: http\n    port: 80\n    protocol: TCP\n    targetPort: http\n  - appProtocol: https\n    name: https\n    port: 443\n    protocol: TCP\n    targetPort: https\n{selector}{service_spec}"));
    out.push_str(&format!("---\napiVersion: v1\nkind: Service\nmetadata:\n{controller}\n  name: ingress-nginx-controller-admission\n  namespace: ingress-nginx\nspec:\n  ports:\n  - appProtocol: https\n    name: https-webhook\n    port: 443\n    targetPort: webhook\n{selector}  type: ClusterIP\n"));
    let pod_labels: String = controller.lines().map(|l| format!("    {l}\n")).collect();
    let gcp = if provider == Provider::Minikube { "        gcp-auth-skip-secret: \"true\"\n" } else { "" };
    out.push_str(&format!(
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n{controller}\n  name: ingress-nginx-controller\n  namespace: ingress-nginx\nspec:\n  minReadySeconds: 0\n  revisionHistoryLimit: 10\n  selector:\n    matchLabels:\n      app.kubernetes.io/component: controller\n      app.kubernetes.io/instance: ingress-nginx\n      app.kubernetes.io/name: ingress-nginx\n  strategy:\n    rollingUpdate:\n      maxUnavailable: 1\n    type: RollingUpdate\n  template:\n    metadata:\n{pod_labels}{gcp}    spec:\n      containers:\n      - args:\n{args}        env:\n        - name: POD_NAME\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.name\n        - name: POD_NAMESPACE\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.namespace\n        - name: LD_PRELOAD\n          value: /usr/local/lib/libmimalloc.so\n        image: {image}\n        imagePullPolicy: IfNotPresent\n        lifecycle:\n          preStop:\n            exec:\n              command:\n              - /wait-shutdown\n        livenessProbe:\n          failureThreshold: 5\n          httpGet:\n            path: /healthz\n            port: 10254\n            scheme: HTTP\n          initialDelaySeconds: 10\n          periodSeconds: 10\n          successThreshold: 1\n          timeoutSeconds: 1\n        name: controller\n        ports:\n{ports}        readinessProbe:\n          failureThreshold: 3\n          httpGet:\n            path: /healthz\n            port: 10254\n            scheme: HTTP\n          initialDelaySeconds: 10\n          periodSeconds: 10\n          successThreshold: 1\n          timeoutSeconds: 1\n        resources:\n          requests:\n            cpu: 100m\n            memory: 90Mi\n        securityContext:\n          allowPrivilegeEscalation: false\n          runAsNonRoot: true\n          runAsUser: 101\n        volumeMounts:\n        - mountPath: /usr/local/certificates/\n          name: webhook-cert\n          readOnly: true\n      dnsPolicy: ClusterFirst\n      nodeSelector:\n{node_selector}      serviceAccountName: ingress-nginx\n      terminationGracePeriodSeconds: 0\n      tolerations:\n      - effect: NoSchedule\n        key: node-role.kubernetes.io/master\n        operator: Equal\n      - effect: NoSchedule\n        key: node-role.kubernetes.io/control-plane\n        operator: Equal\n      volumes:\n      - name: webhook-cert\n        secret:\n          secretName: ingress-nginx-admission\n"
    ));
    out.push_str(&job("create", "create", create_args));
    out.push_str(&job("patch", "patch", patch_args));
    out.push_str(&format!("---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n{default_class}{controller}\n  name: nginx\nspec:\n  controller: k8s.io/ingress-nginx\n"));
    out.push_str(&format!("---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n{admission}\n  name: ingress-nginx-admission\nwebhooks:\n- admissionReviewVersions:\n  - v1\n  clientConfig:\n    service:\n      name: ingress-nginx-controller-admission\n      namespace: ingress-nginx\n      path: /networking/v1/ingresses\n      port: 443\n  failurePolicy: Fail\n  matchPolicy: Equivalent\n  name: validate.nginx.ingress.kubernetes.io\n  rules:\n  - apiGroups:\n    - networking.k8s.io\n    apiVersions:\n    - v1\n    operations:\n    - CREATE\n    - UPDATE\n    resources:\n    - ingresses\n  sideEffects: None\n"));
    Some(out)
}

fn items(words: &str) -> String {
    words.split(' ').map(|w| format!("  - {w}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_manifests_decode_with_the_real_names() {
        for (url, service_type) in [
            ("https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v1.12.1/deploy/static/provider/kind/deploy.yaml", "NodePort"),
            ("https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v1.15.1/deploy/static/provider/kind/deploy.yaml", "LoadBalancer"),
            ("https://raw.githubusercontent.com/kubernetes/ingress-nginx/main/deploy/static/provider/cloud/deploy.yaml", "LoadBalancer"),
            ("https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v1.10.1/deploy/static/provider/baremetal/deploy.yaml", "NodePort"),
        ] {
            let text = remote(url).unwrap_or_else(|| panic!("{url}"));
            let (docs, errors) = kubesim_api::decode::parse_documents("deploy.yaml", &text);
            assert!(errors.is_empty(), "{url}: {errors:?}");
            let objects: Vec<_> =
                docs.iter().flat_map(|d| kubesim_api::decode::decode_document("deploy.yaml", d).unwrap_or_else(|e| panic!("{url}: {e:?}\n{text}"))).collect();
            let names: Vec<String> = objects.iter().map(|o| format!("{}/{}", o.kind(), o.name())).collect();
            for want in [
                "Namespace/ingress-nginx",
                "Service/ingress-nginx-controller",
                "Deployment/ingress-nginx-controller",
                "IngressClass/nginx",
                "Job/ingress-nginx-admission-create",
            ] {
                assert!(names.iter().any(|n| n == want), "{url}: {names:?}");
            }
            let svc = objects.iter().find(|o| o.kind() == "Service" && o.name() == "ingress-nginx-controller").unwrap();
            assert_eq!(svc.to_json()["spec"]["type"], service_type, "{url}");
        }
        assert!(remote("https://raw.githubusercontent.com/kubernetes/ingress-nginx/controller-v9.9.9/deploy/static/provider/kind/deploy.yaml").is_none());
        assert!(remote("https://example.com/deploy.yaml").is_none());
    }
}
