mod support;

use kubesim_os::program::{Signal, Step, Wake};
use kubesim_os::testing::run;
use support::*;

fn py(image_ref: &str, argv: &[&str], env: &[(&str, &str)]) -> kubesim_os::testing::Outcome {
    let (mut os, mut spawn) = image(image_ref, "job-0-abcde", Some(argv));
    for (k, v) in env {
        spawn.env.insert(k.to_string(), v.to_string());
    }
    run(start(&os, &spawn), &mut os)
}

const BACKOFF_SCRIPT: &str = "import os, sys\nprint(\"Hello world\")\nif int(os.environ.get(\"JOB_COMPLETION_INDEX\")) % 2 == 0:\n  sys.exit(1)\n";

#[test]
fn the_backoff_limit_per_index_job_script_fails_even_indexes() {
    let out = py("python", &["python3", "-c", BACKOFF_SCRIPT], &[("JOB_COMPLETION_INDEX", "4")]);
    assert_eq!((out.stdout_str().as_str(), out.stderr_str().as_str(), out.code), ("Hello world\n", "", Some(1)));
    let out = py("python", &["python3", "-c", BACKOFF_SCRIPT], &[("JOB_COMPLETION_INDEX", "3")]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("Hello world\n", Some(0)));
}

#[test]
fn the_success_policy_job_script_succeeds_only_for_index_2() {
    let script = "import os, sys\nif os.environ.get(\"JOB_COMPLETION_INDEX\") == \"2\":\n  sys.exit(0)\nelse:\n  sys.exit(1)\n";
    assert_eq!(py("python", &["python3", "-c", script], &[("JOB_COMPLETION_INDEX", "2")]).code, Some(0));
    assert_eq!(py("python", &["python3", "-c", script], &[("JOB_COMPLETION_INDEX", "0")]).code, Some(1));
}

#[test]
fn a_missing_variable_gives_pythons_type_error_traceback() {
    let out = py("python:3.13", &["python3", "-c", BACKOFF_SCRIPT], &[]);
    assert_eq!(out.code, Some(1));
    assert_eq!(
        out.stderr_str(),
        "Traceback (most recent call last):\n  File \"<string>\", line 3, in <module>\n    if int(os.environ.get(\"JOB_COMPLETION_INDEX\")) % 2 == 0:\nTypeError: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'\n"
    );
    // stdout is flushed at shutdown, after the traceback.
    assert_eq!(out.stdout_str(), "Hello world\n");
    let out = py("python:3.11", &["python3", "-c", "x = 1\nprint(y)"], &[]);
    assert_eq!(out.stderr_str(), "Traceback (most recent call last):\n  File \"<string>\", line 2, in <module>\nNameError: name 'y' is not defined\n");
}

#[test]
fn syntax_errors_are_python_shaped() {
    let out = py("python:3.11", &["python3", "-c", "print(\"a\""], &[]);
    assert_eq!(
        (out.stderr_str().as_str(), out.code),
        ("  File \"<string>\", line 1\n    print(\"a\"\n         ^\nSyntaxError: '(' was never closed\n", Some(1))
    );
    let out = py("python:3.11", &["python3", "-c", "if True:\nprint(1)"], &[]);
    assert!(out.stderr_str().ends_with("IndentationError: expected an indented block after 'if' statement on line 1\n"), "{}", out.stderr_str());
}

#[test]
fn version_flags_print_where_each_python_prints_them() {
    let out = py("python:3.13.7", &["python3", "-V"], &[]);
    assert_eq!((out.stdout_str().as_str(), out.code), ("Python 3.13.7\n", Some(0)));
    let out = py("python:2.7", &["python", "-V"], &[]);
    assert_eq!((out.stdout_str().as_str(), out.stderr_str().as_str()), ("", "Python 2.7.18\n"));
}

#[test]
fn scripts_use_loops_functions_fstrings_dicts_and_sleep() {
    let script = "import time\n\ndef fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n\ncounts = {}\nfor w in 'a b a c a'.split():\n    counts[w] = counts.get(w, 0) + 1\nprint(f\"fib(30)={fib(30)} counts={counts}\")\nitems = [x * x for x in range(5) if x % 2 == 0]\nprint(items, len(items), sum(items) / 3)\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(1.5)\nprint('%s-%05.2f' % ('x', 3.14159))\nprint('{} and {name}'.format(1, name='two'))\n";
    let out = py("python", &["python3", "-c", script], &[]);
    assert_eq!(out.code, Some(0), "{}", out.stderr_str());
    assert_eq!(
        out.stdout_str(),
        "fib(30)=832040 counts={'a': 3, 'b': 1, 'c': 1}\n[0, 4, 16] 3 6.666666666666667\ntick 0\ntick 1\ntick 2\nx-03.14\n1 and two\n"
    );
    assert!(out.elapsed_ms >= 4_500 && out.elapsed_ms < 4_700, "{}", out.elapsed_ms);
}

#[test]
fn an_endless_worker_loop_sleeps_on_virtual_time_and_is_killed_by_sigterm_when_not_pid_1() {
    let (os, spawn) = image("python", "w", Some(&["python3", "-u", "-c", "import time\nwhile True:\n    print('working')\n    time.sleep(10)\n"]));
    let mut os = os.with_signal(25_000, Signal::Term);
    os.pid = 7;
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!((out.stdout_str().as_str(), out.code), ("working\nworking\nworking\n", Some(143)));
}

#[test]
fn exceptions_are_caught_and_uncaught_ones_show_function_frames() {
    let script = "def f(x):\n    return 10 // x\ntry:\n    f(0)\nexcept ZeroDivisionError as e:\n    print('caught', e)\nf(0)\n";
    let out = py("python:3.12", &["python3", "-c", script], &[]);
    assert_eq!(out.stdout_str(), "caught integer division or modulo by zero\n");
    assert_eq!(
        out.stderr_str(),
        "Traceback (most recent call last):\n  File \"<string>\", line 7, in <module>\n  File \"<string>\", line 2, in f\nZeroDivisionError: integer division or modulo by zero\n"
    );
}

#[test]
fn files_are_read_and_written_through_the_container_filesystem() {
    let (os, spawn) = image("python", "w", Some(&["python3", "/app/main.py"]));
    let mut os = os
        .with_file(
            "/app/main.py",
            b"with open('/data/out.txt', 'w') as f:\n    f.write('hello\\n')\nprint(open('/data/out.txt').read(), end='')\nsys.exit(3)\n",
        )
        .with_file("/data/.keep", b"");
    let out = run(start(&os, &spawn), &mut os);
    assert_eq!(out.stdout_str(), "hello\n");
    assert_eq!(
        out.stderr_str(),
        "Traceback (most recent call last):\n  File \"/app/main.py\", line 4, in <module>\n    sys.exit(3)\nNameError: name 'sys' is not defined\n"
    );
    assert_eq!(os.fs.root.read_path("/data/out.txt"), Some(&b"hello\n"[..]));
}

#[test]
fn python_http_server_serves_the_directory_with_pythons_headers_and_logs() {
    let (os, mut spawn) = image("python:3.13", "web", Some(&["python3", "-m", "http.server", "8080"]));
    spawn.cwd = "/srv".into();
    let mut os = os.with_file("/srv/hello.txt", b"hi\n").with_file("/srv/sub/a.html", b"<p>a</p>");
    let mut p = start(&os, &spawn);
    assert_eq!(p.resume(&mut os, Wake::Start), Step::Wait);
    assert_eq!(p.listening(), vec![(8080, false)]);
    assert_eq!(text(&os.stdout), "");
    let r = text(&send(&mut p, &mut os, 8080, &curl_request("web", "/hello.txt")));
    assert_eq!(r, "HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6 Python/3.13.7\r\nDate: Tue, 01 Dec 2026 09:04:57 GMT\r\nContent-type: text/plain\r\nContent-Length: 3\r\nLast-Modified: Thu, 01 Jan 1970 00:00:00 GMT\r\n\r\nhi\n");
    assert_eq!(text(&os.stderr), "::ffff:10.244.0.5 - - [01/Dec/2026 09:04:57] \"GET /hello.txt HTTP/1.1\" 200 -\n");
    let r = text(&send(&mut p, &mut os, 8080, &curl_request("web", "/")));
    assert!(
        r.contains("<title>Directory listing for /</title>")
            && r.contains("<li><a href=\"hello.txt\">hello.txt</a></li>\n<li><a href=\"sub/\">sub/</a></li>\n"),
        "{r}"
    );
    let r = text(&send(&mut p, &mut os, 8080, &curl_request("web", "/nope")));
    assert!(r.starts_with("HTTP/1.0 404 File not found\r\n") && r.contains("Connection: close\r\nContent-Type: text/html;charset=utf-8\r\n"), "{r}");
    assert!(text(&os.stderr).contains("] code 404, message File not found\n"));
    assert_eq!(p.resume(&mut os, Wake::Signal(Signal::Int)), Step::Exit(0));
    assert_eq!(text(&os.stdout), "Serving HTTP on :: port 8080 (http://[::]:8080/) ...\n\nKeyboard interrupt received, exiting.\n");
}

#[test]
fn python2_print_statements_and_integer_division() {
    let out = py("python:2.7", &["python", "-c", "print \"a\", 7 / 2\nprint(3)"], &[]);
    assert_eq!(out.stdout_str(), "a 3\n3\n");
}
