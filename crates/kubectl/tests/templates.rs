//! `-o go-template`, `-o go-template-file`, `-o template`, `--template` (kubectl's
//! genericclioptions GoTemplatePrintFlags and cli-runtime printers/template.go) on get, create,
//! run and apply, and `$(...)` command substitution in command lines (the StatefulSet tutorial's
//! `kubectl drain $(kubectl get pod zk-0 --template {{.spec.nodeName}})`).

mod common;
mod scenario;

use common::Fixture;

fn check(f: &mut Fixture, cmd: &str, stdout: &str, stderr: &str, code: i32) {
    let o = f.kubectl(cmd);
    assert_eq!((o.stdout.as_str(), o.stderr.as_str(), o.exit_code), (stdout, stderr, code), "`kubectl {cmd}`");
}

#[test]
fn go_template_output_on_get() {
    let mut f = scenario::cluster();
    check(&mut f, "get pod web-7d4b9c7f5-abcde --template {{.spec.nodeName}}", "node-1", "", 0);
    check(&mut f, "get pod web-7d4b9c7f5-abcde -o go-template={{.spec.nodeName}}", "node-1", "", 0);
    check(&mut f, "get pod web-7d4b9c7f5-abcde -o template --template={{.metadata.name}}", "web-7d4b9c7f5-abcde", "", 0);
    check(&mut f, "get pod web-7d4b9c7f5-abcde -o go-template --template '{{.metadata.nope}}'", "<no value>", "", 0);
    // A list for several objects.
    check(
        &mut f,
        r#"get pods -o go-template='{{range .items}}{{.metadata.name}} {{.status.phase}}{{"\n"}}{{end}}'"#,
        "web-7d4b9c7f5-abcde Running\nweb-7d4b9c7f5-fghij Running\n",
        "",
        0,
    );
    check(&mut f, r#"get pods -o go-template='{{len .items}} {{.kind}}'"#, "2 List", "", 0);
    check(&mut f, r#"get pods -o go-template='{{range $i, $p := .items}}{{if $i}},{{end}}{{index $p.metadata.labels "app"}}{{end}}'"#, "web,web", "", 0);
    // Parse errors and execution errors, as kubectl prints them.
    check(&mut f, "get pods -o go-template={{.foo", "", "error: error parsing template {{.foo, template: output:1: unclosed action\n", 1);
    check(&mut f, "get pods -o go-template", "", "error: template format specified but no template given\n", 1);
    let o = f.kubectl("get pod web-7d4b9c7f5-abcde -o go-template={{.metadata.name.x}}");
    assert_eq!(o.exit_code, 1);
    assert_eq!(
        o.stderr,
        "error: error executing template \"{{.metadata.name.x}}\": template: output:1:11: executing \"output\" at <.metadata.name.x>: can't evaluate field x in type interface {}\n"
    );
    assert!(o.stdout.starts_with("Error executing template: template: output:1:11:"), "{}", o.stdout);
    let o = f.kubectl("get pod web-7d4b9c7f5-abcde -o go-template={{.nope}} --allow-missing-template-keys=false");
    assert!(o.stderr.contains("map has no entry for key \"nope\""), "{}", o.stderr);
    // Template files.
    f.file("t.tmpl", "{{range .items}}{{.metadata.name}}\n{{end}}");
    check(&mut f, "get pods -o go-template-file=t.tmpl", "web-7d4b9c7f5-abcde\nweb-7d4b9c7f5-fghij\n", "", 0);
    check(&mut f, "get pods -o templatefile --template t.tmpl", "web-7d4b9c7f5-abcde\nweb-7d4b9c7f5-fghij\n", "", 0);
    check(&mut f, "get pods -o go-template-file=nope.tmpl", "", "error: error reading --template nope.tmpl, open nope.tmpl: no such file or directory\n", 1);
    // jsonpath through --template, and an empty list still runs the template.
    check(&mut f, "get pods -o jsonpath --template={.items[0].metadata.name}", "web-7d4b9c7f5-abcde", "", 0);
    check(&mut f, r#"get pods -l app=none -o go-template='{{len .items}}'"#, "0", "", 0);
}

#[test]
fn go_template_on_generators_and_apply() {
    let mut f = scenario::cluster();
    check(
        &mut f,
        "create deployment tmpl --image=nginx --dry-run=client -o go-template={{.spec.template.spec.containers}}",
        "[map[image:nginx name:nginx resources:map[]]]",
        "",
        0,
    );
    check(&mut f, "run box --image=busybox --dry-run=client -o go-template={{.metadata.labels.run}}", "box", "", 0);
    f.file("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tcm}\ndata: {k: v}\n");
    check(&mut f, "apply -f cm.yaml --dry-run=client -o go-template={{.data.k}}", "v", "", 0);
    check(&mut f, "apply -f cm.yaml -o go-template={{.metadata.name}}/{{.metadata.namespace}}", "tcm/default", "", 0);
    check(&mut f, "create configmap c2 --from-literal=a=b -o jsonpath={.data.a}", "b", "", 0);
}

#[test]
fn command_substitution_runs_kubectl_first() {
    let mut f = scenario::cluster();
    let o = f.kubectl("kubectl cordon $(kubectl get pod web-7d4b9c7f5-abcde --template {{.spec.nodeName}})");
    assert_eq!((o.stdout.as_str(), o.exit_code), ("node/node-1 cordoned\n", 0), "{o:?}");
    let o = f.kubectl("get node \"$(kubectl get pods -o jsonpath={.items[0].spec.nodeName})\" -o name");
    assert_eq!(o.stdout, "node/node-1\n");
}

// cli-runtime printers/customcolumn.go prints each result with %v; printers.go printCronJob's
// SUSPEND column is printBoolPtr ("True"/"False").
#[test]
fn custom_columns_print_go_values_and_cron_job_suspend_is_capitalised() {
    let mut f = scenario::cluster();
    let o = f.kubectl("get pod web-7d4b9c7f5-abcde -o custom-columns=NAME:.metadata.name,IPS:.status.podIPs,LABELS:.metadata.labels,C:.spec.containers[*].name,NONE:.spec.nope");
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines[0].split_whitespace().collect::<Vec<_>>(), ["NAME", "IPS", "LABELS", "C", "NONE"]);
    let ip = f.get("pods", "default", "web-7d4b9c7f5-abcde").unwrap().to_json()["status"]["podIP"].as_str().unwrap().to_string();
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["web-7d4b9c7f5-abcde", &format!("[map[ip:{ip}]]"), "map[app:web", "pod-template-hash:7d4b9c7f5]", "nginx", "<none>"]
    );
    f.file("cj.yaml", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: hello}\nspec:\n  schedule: '*/1 * * * *'\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: hello, image: busybox}]\n          restartPolicy: OnFailure\n");
    check(&mut f, "apply -f cj.yaml", "cronjob.batch/hello created\n", "", 0);
    check(
        &mut f,
        "get cronjob hello",
        "NAME    SCHEDULE      TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE\nhello   */1 * * * *   <none>     False     0        <none>          0s\n",
        "",
        0,
    );
}
