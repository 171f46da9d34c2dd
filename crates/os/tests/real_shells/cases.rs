// Generated from the real shells on Debian 12: busybox 1.35 `sh`, dash 0.5.12 `sh`, GNU bash 5.2.15.
// Each row: script, then (stdout, stderr, exit code) for ash, dash, bash.
/// (stdout, stderr, exit code).
pub type Expect = (&'static str, &'static str, i32);
pub const CASES: &[(&str, [Expect; 3])] = &[
    (
        r#"echo hello world"#,
        [
            (
                r#"hello world
"#,
                r#""#,
                0,
            ),
            (
                r#"hello world
"#,
                r#""#,
                0,
            ),
            (
                r#"hello world
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo -n no newline; echo"#,
        [
            (
                r#"no newline
"#,
                r#""#,
                0,
            ),
            (
                r#"no newline
"#,
                r#""#,
                0,
            ),
            (
                r#"no newline
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo "a  b"   c"#,
        [
            (
                r#"a  b c
"#,
                r#""#,
                0,
            ),
            (
                r#"a  b c
"#,
                r#""#,
                0,
            ),
            (
                r#"a  b c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo 'single $HOME' "double $((2+3))""#,
        [
            (
                r#"single $HOME double 5
"#,
                r#""#,
                0,
            ),
            (
                r#"single $HOME double 5
"#,
                r#""#,
                0,
            ),
            (
                r#"single $HOME double 5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=5; echo $x ${x} "${x}""#,
        [
            (
                r#"5 5 5
"#,
                r#""#,
                0,
            ),
            (
                r#"5 5 5
"#,
                r#""#,
                0,
            ),
            (
                r#"5 5 5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=; echo "[${x:-default}]" "[${x-unset}]" "[${y:-dflt}]" "[${y-dflt2}]""#,
        [
            (
                r#"[default] [] [dflt] [dflt2]
"#,
                r#""#,
                0,
            ),
            (
                r#"[default] [] [dflt] [dflt2]
"#,
                r#""#,
                0,
            ),
            (
                r#"[default] [] [dflt] [dflt2]
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"y=val; echo ${y:+alt} ${z:+alt} end"#,
        [
            (
                r#"alt end
"#,
                r#""#,
                0,
            ),
            (
                r#"alt end
"#,
                r#""#,
                0,
            ),
            (
                r#"alt end
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo ${u:=assigned} $u"#,
        [
            (
                r#"assigned assigned
"#,
                r#""#,
                0,
            ),
            (
                r#"assigned assigned
"#,
                r#""#,
                0,
            ),
            (
                r#"assigned assigned
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"s=hello.tar.gz; echo ${s#*.} ${s##*.} ${s%.*} ${s%%.*}"#,
        [
            (
                r#"tar.gz gz hello.tar hello
"#,
                r#""#,
                0,
            ),
            (
                r#"tar.gz gz hello.tar hello
"#,
                r#""#,
                0,
            ),
            (
                r#"tar.gz gz hello.tar hello
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"s=abcdef; echo ${#s}"#,
        [
            (
                r#"6
"#, r#""#, 0,
            ),
            (
                r#"6
"#, r#""#, 0,
            ),
            (
                r#"6
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo $((1+2*3)) $((10/3)) $((10%3)) $(( (1+2)*3 )) $((-5+2))"#,
        [
            (
                r#"7 3 1 9 -3
"#,
                r#""#,
                0,
            ),
            (
                r#"7 3 1 9 -3
"#,
                r#""#,
                0,
            ),
            (
                r#"7 3 1 9 -3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"i=0; i=$((i+1)); echo $i"#,
        [
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"a=3; b=4; echo $((a*b)) $((a<b)) $((a==b)) $((a!=b))"#,
        [
            (
                r#"12 1 0 1
"#,
                r#""#,
                0,
            ),
            (
                r#"12 1 0 1
"#,
                r#""#,
                0,
            ),
            (
                r#"12 1 0 1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $((0x1f)) $((010)) $((1<<4)) $((255&15)) $((5|2)) $((5^1))"#,
        [
            (
                r#"31 8 16 15 7 4
"#,
                r#""#,
                0,
            ),
            (
                r#"31 8 16 15 7 4
"#,
                r#""#,
                0,
            ),
            (
                r#"31 8 16 15 7 4
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"for i in 1 2 3; do echo item $i; done"#,
        [
            (
                r#"item 1
item 2
item 3
"#,
                r#""#,
                0,
            ),
            (
                r#"item 1
item 2
item 3
"#,
                r#""#,
                0,
            ),
            (
                r#"item 1
item 2
item 3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"for i in a b; do for j in 1 2; do echo $i$j; done; done"#,
        [
            (
                r#"a1
a2
b1
b2
"#,
                r#""#,
                0,
            ),
            (
                r#"a1
a2
b1
b2
"#,
                r#""#,
                0,
            ),
            (
                r#"a1
a2
b1
b2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"i=0; while [ $i -lt 3 ]; do echo w$i; i=$((i+1)); done"#,
        [
            (
                r#"w0
w1
w2
"#,
                r#""#,
                0,
            ),
            (
                r#"w0
w1
w2
"#,
                r#""#,
                0,
            ),
            (
                r#"w0
w1
w2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"i=0; until [ $i -ge 2 ]; do echo u$i; i=$((i+1)); done"#,
        [
            (
                r#"u0
u1
"#,
                r#""#,
                0,
            ),
            (
                r#"u0
u1
"#,
                r#""#,
                0,
            ),
            (
                r#"u0
u1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"if true; then echo yes; else echo no; fi"#,
        [
            (
                r#"yes
"#, r#""#, 0,
            ),
            (
                r#"yes
"#, r#""#, 0,
            ),
            (
                r#"yes
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"if false; then echo yes; elif true; then echo elif; else echo no; fi"#,
        [
            (
                r#"elif
"#, r#""#, 0,
            ),
            (
                r#"elif
"#, r#""#, 0,
            ),
            (
                r#"elif
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"if [ 1 -eq 2 ]; then echo eq; fi; echo after $?"#,
        [
            (
                r#"after 0
"#,
                r#""#,
                0,
            ),
            (
                r#"after 0
"#,
                r#""#,
                0,
            ),
            (
                r#"after 0
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case hello in h*) echo starts-h;; *) echo other;; esac"#,
        [
            (
                r#"starts-h
"#,
                r#""#,
                0,
            ),
            (
                r#"starts-h
"#,
                r#""#,
                0,
            ),
            (
                r#"starts-h
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case x.txt in *.sh|*.txt) echo script-or-text;; esac"#,
        [
            (
                r#"script-or-text
"#,
                r#""#,
                0,
            ),
            (
                r#"script-or-text
"#,
                r#""#,
                0,
            ),
            (
                r#"script-or-text
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case abc in a?c) echo q;; esac; case b in [abc]) echo class;; esac"#,
        [
            (
                r#"q
class
"#,
                r#""#,
                0,
            ),
            (
                r#"q
class
"#,
                r#""#,
                0,
            ),
            (
                r#"q
class
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case zz in a) echo a;; *) echo default;; esac"#,
        [
            (
                r#"default
"#,
                r#""#,
                0,
            ),
            (
                r#"default
"#,
                r#""#,
                0,
            ),
            (
                r#"default
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"f() { echo in f $1 $2; return 3; }; f one two; echo rc=$?"#,
        [
            (
                r#"in f one two
rc=3
"#,
                r#""#,
                0,
            ),
            (
                r#"in f one two
rc=3
"#,
                r#""#,
                0,
            ),
            (
                r#"in f one two
rc=3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"f() { local v=inner; echo $v; }; v=outer; f; echo $v"#,
        [
            (
                r#"inner
outer
"#,
                r#""#,
                0,
            ),
            (
                r#"inner
outer
"#,
                r#""#,
                0,
            ),
            (
                r#"inner
outer
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"true && echo and-ok; false && echo not-printed; false || echo or-ok"#,
        [
            (
                r#"and-ok
or-ok
"#,
                r#""#,
                0,
            ),
            (
                r#"and-ok
or-ok
"#,
                r#""#,
                0,
            ),
            (
                r#"and-ok
or-ok
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"! true; echo $?; ! false; echo $?"#,
        [
            (
                r#"1
0
"#, r#""#, 0,
            ),
            (
                r#"1
0
"#, r#""#, 0,
            ),
            (
                r#"1
0
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo $(echo nested $(echo deeper))"#,
        [
            (
                r#"nested deeper
"#,
                r#""#,
                0,
            ),
            (
                r#"nested deeper
"#,
                r#""#,
                0,
            ),
            (
                r#"nested deeper
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo `echo back` "`echo tick`""#,
        [
            (
                r#"back tick
"#,
                r#""#,
                0,
            ),
            (
                r#"back tick
"#,
                r#""#,
                0,
            ),
            (
                r#"back tick
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=$(printf 'a\nb\n\n'); echo "[$x]""#,
        [
            (
                r#"[a
b]
"#,
                r#""#,
                0,
            ),
            (
                r#"[a
b]
"#,
                r#""#,
                0,
            ),
            (
                r#"[a
b]
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -- a b c; echo $# $1 $2 $3 "$@"; shift; echo $# $1"#,
        [
            (
                r#"3 a b c a b c
2 b
"#,
                r#""#,
                0,
            ),
            (
                r#"3 a b c a b c
2 b
"#,
                r#""#,
                0,
            ),
            (
                r#"3 a b c a b c
2 b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -- "a b" c; for x in "$@"; do echo "<$x>"; done"#,
        [
            (
                r#"<a b>
<c>
"#,
                r#""#,
                0,
            ),
            (
                r#"<a b>
<c>
"#,
                r#""#,
                0,
            ),
            (
                r#"<a b>
<c>
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -- "a b" c; for x in $*; do echo "<$x>"; done"#,
        [
            (
                r#"<a>
<b>
<c>
"#,
                r#""#,
                0,
            ),
            (
                r#"<a>
<b>
<c>
"#,
                r#""#,
                0,
            ),
            (
                r#"<a>
<b>
<c>
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -- "a b" c; for x in "$*"; do echo "<$x>"; done"#,
        [
            (
                r#"<a b c>
"#,
                r#""#,
                0,
            ),
            (
                r#"<a b c>
"#,
                r#""#,
                0,
            ),
            (
                r#"<a b c>
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"IFS=:; v=a:b:c; for x in $v; do echo $x; done"#,
        [
            (
                r#"a
b
c
"#,
                r#""#,
                0,
            ),
            (
                r#"a
b
c
"#,
                r#""#,
                0,
            ),
            (
                r#"a
b
c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"v="  lead  trail  "; for x in $v; do echo "[$x]"; done"#,
        [
            (
                r#"[lead]
[trail]
"#,
                r#""#,
                0,
            ),
            (
                r#"[lead]
[trail]
"#,
                r#""#,
                0,
            ),
            (
                r#"[lead]
[trail]
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo a > /tmp/w/f1; echo b >> /tmp/w/f1; cat /tmp/w/f1"#,
        [
            (
                r#"a
b
"#, r#""#, 0,
            ),
            (
                r#"a
b
"#, r#""#, 0,
            ),
            (
                r#"a
b
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo err >&2; echo out"#,
        [
            (
                r#"out
"#, r#"err
"#, 0,
            ),
            (
                r#"out
"#, r#"err
"#, 0,
            ),
            (
                r#"out
"#, r#"err
"#, 0,
            ),
        ],
    ),
    (
        r#"ls /nope 2>/dev/null; echo rc=$?"#,
        [
            (
                r#"rc=1
"#, r#""#, 0,
            ),
            (
                r#"rc=2
"#, r#""#, 0,
            ),
            (
                r#"rc=2
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"{ echo grouped; echo two; } > /tmp/w/g; cat /tmp/w/g"#,
        [
            (
                r#"grouped
two
"#,
                r#""#,
                0,
            ),
            (
                r#"grouped
two
"#,
                r#""#,
                0,
            ),
            (
                r#"grouped
two
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"(echo sub; exit 3); echo rc=$?"#,
        [
            (
                r#"sub
rc=3
"#,
                r#""#,
                0,
            ),
            (
                r#"sub
rc=3
"#,
                r#""#,
                0,
            ),
            (
                r#"sub
rc=3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=1; (x=2); echo $x"#,
        [
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo one | cat"#,
        [
            (
                r#"one
"#, r#""#, 0,
            ),
            (
                r#"one
"#, r#""#, 0,
            ),
            (
                r#"one
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo abc | tr a-z A-Z"#,
        [
            (
                r#"ABC
"#, r#""#, 0,
            ),
            (
                r#"ABC
"#, r#""#, 0,
            ),
            (
                r#"ABC
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%s\n' c b a | sort"#,
        [
            (
                r#"a
b
c
"#,
                r#""#,
                0,
            ),
            (
                r#"a
b
c
"#,
                r#""#,
                0,
            ),
            (
                r#"a
b
c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%s\n' b a b a | sort | uniq -c"#,
        [
            (
                r#"      2 a
      2 b
"#,
                r#""#,
                0,
            ),
            (
                r#"      2 a
      2 b
"#,
                r#""#,
                0,
            ),
            (
                r#"      2 a
      2 b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'x y z\n' | awk '{print $2}'"#,
        [
            (
                r#"y
"#, r#""#, 0,
            ),
            (
                r#"y
"#, r#""#, 0,
            ),
            (
                r#"y
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a:b:c\n' | cut -d: -f2"#,
        [
            (
                r#"b
"#, r#""#, 0,
            ),
            (
                r#"b
"#, r#""#, 0,
            ),
            (
                r#"b
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'line1\nline2\nline3\n' | head -n 2"#,
        [
            (
                r#"line1
line2
"#,
                r#""#,
                0,
            ),
            (
                r#"line1
line2
"#,
                r#""#,
                0,
            ),
            (
                r#"line1
line2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'line1\nline2\nline3\n' | tail -n 1"#,
        [
            (
                r#"line3
"#,
                r#""#,
                0,
            ),
            (
                r#"line3
"#,
                r#""#,
                0,
            ),
            (
                r#"line3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'hello\n' | sed 's/l/L/g'"#,
        [
            (
                r#"heLLo
"#,
                r#""#,
                0,
            ),
            (
                r#"heLLo
"#,
                r#""#,
                0,
            ),
            (
                r#"heLLo
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'one\ntwo\n' | grep -n tw"#,
        [
            (
                r#"2:two
"#,
                r#""#,
                0,
            ),
            (
                r#"2:two
"#,
                r#""#,
                0,
            ),
            (
                r#"2:two
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\n' | wc -l"#,
        [
            (
                r#"2
"#, r#""#, 0,
            ),
            (
                r#"2
"#, r#""#, 0,
            ),
            (
                r#"2
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"seq 3"#,
        [
            (
                r#"1
2
3
"#,
                r#""#,
                0,
            ),
            (
                r#"1
2
3
"#,
                r#""#,
                0,
            ),
            (
                r#"1
2
3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq 2 4"#,
        [
            (
                r#"2
3
4
"#,
                r#""#,
                0,
            ),
            (
                r#"2
3
4
"#,
                r#""#,
                0,
            ),
            (
                r#"2
3
4
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq 1 2 7"#,
        [
            (
                r#"1
3
5
7
"#,
                r#""#,
                0,
            ),
            (
                r#"1
3
5
7
"#,
                r#""#,
                0,
            ),
            (
                r#"1
3
5
7
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $(( $(echo 4) * 2 ))"#,
        [
            (
                r#"8
"#, r#""#, 0,
            ),
            (
                r#"8
"#, r#""#, 0,
            ),
            (
                r#"8
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"x=abc; echo ${x/b/X} ${x//[ac]/-}"#,
        [
            (
                r#"aXc -b-
"#,
                r#""#,
                0,
            ),
            (
                r#""#,
                r#"sh: 1: Bad substitution
"#,
                2,
            ),
            (
                r#"aXc -b-
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%05.1f|%-3s|%3d\n' 3.14159 ab 7"#,
        [
            (
                r#"003.1|ab |  7
"#,
                r#""#,
                0,
            ),
            (
                r#"003.1|ab |  7
"#,
                r#""#,
                0,
            ),
            (
                r#"003.1|ab |  7
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%x %o %c\n' 255 8 hello"#,
        [
            (
                r#"ff 10 h
"#,
                r#""#,
                0,
            ),
            (
                r#"ff 10 h
"#,
                r#""#,
                0,
            ),
            (
                r#"ff 10 h
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"yes | head -n 3"#,
        [
            (
                r#"y
y
y
"#,
                r#""#,
                0,
            ),
            (
                r#"y
y
y
"#,
                r#""#,
                0,
            ),
            (
                r#"y
y
y
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo start; sleep 1; echo done"#,
        [
            (
                r#"start
done
"#,
                r#""#,
                0,
            ),
            (
                r#"start
done
"#,
                r#""#,
                0,
            ),
            (
                r#"start
done
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"t=$(( 3 > 2 ? 10 : 20 )); echo $t"#,
        [
            (
                r#"10
"#, r#""#, 0,
            ),
            (
                r#"10
"#, r#""#, 0,
            ),
            (
                r#"10
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"n=0; for x in a b c d; do n=$((n+1)); [ $x = c ] && break; done; echo $n"#,
        [
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"for x in 1 2 3 4; do [ $x = 2 ] && continue; echo $x; done"#,
        [
            (
                r#"1
3
4
"#,
                r#""#,
                0,
            ),
            (
                r#"1
3
4
"#,
                r#""#,
                0,
            ),
            (
                r#"1
3
4
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"for i in 1 2; do for j in 1 2 3; do [ $j = 2 ] && continue 2; echo $i$j; done; done"#,
        [
            (
                r#"11
21
"#,
                r#""#,
                0,
            ),
            (
                r#"11
21
"#,
                r#""#,
                0,
            ),
            (
                r#"11
21
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo ${#@}; set -- 1 2 3; echo ${#@}"#,
        [
            (
                r#"0
5
"#, r#""#, 0,
            ),
            (
                r#"0
5
"#, r#""#, 0,
            ),
            (
                r#"0
3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"[ -z "" ] && echo empty; [ -n "x" ] && echo nonempty"#,
        [
            (
                r#"empty
nonempty
"#,
                r#""#,
                0,
            ),
            (
                r#"empty
nonempty
"#,
                r#""#,
                0,
            ),
            (
                r#"empty
nonempty
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[ abc = abc ] && echo streq; [ abc != abd ] && echo strne"#,
        [
            (
                r#"streq
strne
"#,
                r#""#,
                0,
            ),
            (
                r#"streq
strne
"#,
                r#""#,
                0,
            ),
            (
                r#"streq
strne
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[ 3 -gt 2 ] && [ 2 -le 2 ] && echo numeric"#,
        [
            (
                r#"numeric
"#,
                r#""#,
                0,
            ),
            (
                r#"numeric
"#,
                r#""#,
                0,
            ),
            (
                r#"numeric
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[ -d / ] && [ -f /etc/passwd ] && [ ! -e /nonexistent ] && echo files"#,
        [
            (
                r#"files
"#,
                r#""#,
                0,
            ),
            (
                r#"files
"#,
                r#""#,
                0,
            ),
            (
                r#"files
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"test 1 -eq 1 -a 2 -eq 2 && echo and-a"#,
        [
            (
                r#"and-a
"#,
                r#""#,
                0,
            ),
            (
                r#"and-a
"#,
                r#""#,
                0,
            ),
            (
                r#"and-a
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[ abc -eq 1 ]; echo rc=$?"#,
        [
            (
                r#"rc=2
"#,
                r#"sh: abc: bad number
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"sh: 1: [: Illegal number: abc
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"bash: line 1: [: abc: integer expression expected
"#,
                0,
            ),
        ],
    ),
    (
        r#"[ 1 -foo 2 ]; echo rc=$?"#,
        [
            (
                r#"rc=2
"#,
                r#"sh: -foo: unknown operand
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"sh: 1: [: 1: unexpected operator
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"bash: line 1: [: -foo: binary operator expected
"#,
                0,
            ),
        ],
    ),
    (
        r#"foo; echo rc=$?"#,
        [
            (
                r#"rc=127
"#,
                r#"sh: foo: not found
"#,
                0,
            ),
            (
                r#"rc=127
"#,
                r#"sh: 1: foo: not found
"#,
                0,
            ),
            (
                r#"rc=127
"#,
                r#"bash: line 1: foo: command not found
"#,
                0,
            ),
        ],
    ),
    (
        r#"/nonexistent/cmd; echo rc=$?"#,
        [
            (
                r#"rc=127
"#,
                r#"sh: /nonexistent/cmd: not found
"#,
                0,
            ),
            (
                r#"rc=127
"#,
                r#"sh: 1: /nonexistent/cmd: not found
"#,
                0,
            ),
            (
                r#"rc=127
"#,
                r#"bash: line 1: /nonexistent/cmd: No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"cd /nope; echo rc=$?"#,
        [
            (
                r#"rc=2
"#,
                r#"sh: cd: line 0: can't cd to /nope: No such file or directory
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"sh: 1: cd: can't cd to /nope
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"bash: line 1: cd: /nope: No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp && pwd"#,
        [
            (
                r#"/tmp
"#, r#""#, 0,
            ),
            (
                r#"/tmp
"#, r#""#, 0,
            ),
            (
                r#"/tmp
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo ${x:?}"#,
        [
            (
                r#""#,
                r#"sh: x: parameter not set or null
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: x: parameter not set or null
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: line 1: x: parameter null or not set
"#,
                127,
            ),
        ],
    ),
    (
        r#"echo ${undefined_var:?custom message}; echo notreached"#,
        [
            (
                r#""#,
                r#"sh: undefined_var: custom message
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: undefined_var: custom message
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: line 1: undefined_var: custom message
"#,
                127,
            ),
        ],
    ),
    (
        r#"set -u; echo $unset_thing; echo after"#,
        [
            (
                r#""#,
                r#"sh: unset_thing: parameter not set
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: unset_thing: parameter not set
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: line 1: unset_thing: unbound variable
"#,
                127,
            ),
        ],
    ),
    (r#"set -e; false; echo not-reached"#, [(r#""#, r#""#, 1), (r#""#, r#""#, 1), (r#""#, r#""#, 1)]),
    (
        r#"set -e; false || true; echo reached"#,
        [
            (
                r#"reached
"#,
                r#""#,
                0,
            ),
            (
                r#"reached
"#,
                r#""#,
                0,
            ),
            (
                r#"reached
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -e; if false; then :; fi; echo reached2"#,
        [
            (
                r#"reached2
"#,
                r#""#,
                0,
            ),
            (
                r#"reached2
"#,
                r#""#,
                0,
            ),
            (
                r#"reached2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -e; f() { false; echo inside; }; f || echo caught"#,
        [
            (
                r#"inside
"#,
                r#""#,
                0,
            ),
            (
                r#"inside
"#,
                r#""#,
                0,
            ),
            (
                r#"inside
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $((1/0)); echo after"#,
        [
            (
                r#""#,
                r#"sh: divide by zero
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: arithmetic expression: division by zero: "1/0"
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: line 1: 1/0: division by 0 (error token is "0")
"#,
                1,
            ),
        ],
    ),
    (
        r#"if true; then"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected end of file (expecting "fi")
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: end of file unexpected (expecting "fi")
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: -c: line 2: syntax error: unexpected end of file
"#,
                2,
            ),
        ],
    ),
    (
        r#"if true; then echo a; fi; echo )"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected ")"
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: ")" unexpected
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: -c: line 1: syntax error near unexpected token `)'
bash: -c: line 1: `if true; then echo a; fi; echo )'
"#,
                2,
            ),
        ],
    ),
    (
        r#"readonly R=1; R=2; echo after"#,
        [
            (
                r#""#,
                r#"sh: R: is read only
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: R: is read only
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: line 1: R: readonly variable
"#,
                1,
            ),
        ],
    ),
    (
        r#"x=1; export x; sh -c 'echo child $x'"#,
        [
            (
                r#"child 1
"#,
                r#""#,
                0,
            ),
            (
                r#"child 1
"#,
                r#""#,
                0,
            ),
            (
                r#"child 1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"unset x; echo "[${x}]""#,
        [
            (
                r#"[]
"#, r#""#, 0,
            ),
            (
                r#"[]
"#, r#""#, 0,
            ),
            (
                r#"[]
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"a=1 b=2; echo $a$b"#,
        [
            (
                r#"12
"#, r#""#, 0,
            ),
            (
                r#"12
"#, r#""#, 0,
            ),
            (
                r#"12
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"c=3 sh -c 'echo $c'"#,
        [
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"v=$(exit 4); echo $?"#,
        [
            (
                r#"4
"#, r#""#, 0,
            ),
            (
                r#"4
"#, r#""#, 0,
            ),
            (
                r#"4
"#, r#""#, 0,
            ),
        ],
    ),
    (r#"exit 7"#, [(r#""#, r#""#, 7), (r#""#, r#""#, 7), (r#""#, r#""#, 7)]),
    (
        r#"(exit 5); echo $?; false; echo $?"#,
        [
            (
                r#"5
1
"#, r#""#, 0,
            ),
            (
                r#"5
1
"#, r#""#, 0,
            ),
            (
                r#"5
1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo "tab	here" | cat"#,
        [
            (
                r#"tab	here
"#,
                r#""#,
                0,
            ),
            (
                r#"tab	here
"#,
                r#""#,
                0,
            ),
            (
                r#"tab	here
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo 'it'\''s'"#,
        [
            (
                r#"it's
"#, r#""#, 0,
            ),
            (
                r#"it's
"#, r#""#, 0,
            ),
            (
                r#"it's
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo "a\"b" 'c"d' "e\$f" "g\\h""#,
        [
            (
                r#"a"b c"d e$f g\h
"#,
                r#""#,
                0,
            ),
            (
                r#"a"b c"d e$f g\h
"#,
                r#""#,
                0,
            ),
            (
                r#"a"b c"d e$f g\h
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo \* \$HOME "\*""#,
        [
            (
                r#"* $HOME \*
"#,
                r#""#,
                0,
            ),
            (
                r#"* $HOME \*
"#,
                r#""#,
                0,
            ),
            (
                r#"* $HOME \*
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x='*'; echo "$x""#,
        [
            (
                r#"*
"#, r#""#, 0,
            ),
            (
                r#"*
"#, r#""#, 0,
            ),
            (
                r#"*
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo $(( 7 % 3 )) $(( -7 / 2 ))"#,
        [
            (
                r#"1 -3
"#, r#""#, 0,
            ),
            (
                r#"1 -3
"#, r#""#, 0,
            ),
            (
                r#"1 -3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%d\n' abc; echo rc=$?"#,
        [
            (
                r#"0
rc=1
"#,
                r#"sh: invalid number 'abc'
"#,
                0,
            ),
            (
                r#"0
rc=1
"#,
                r#"sh: 1: printf: abc: expected numeric value
"#,
                0,
            ),
            (
                r#"0
rc=1
"#,
                r#"bash: line 1: printf: abc: invalid number
"#,
                0,
            ),
        ],
    ),
    (r#"printf 'no newline'"#, [(r#"no newline"#, r#""#, 0), (r#"no newline"#, r#""#, 0), (r#"no newline"#, r#""#, 0)]),
    (
        r#"printf '%s-%s\n' a b c"#,
        [
            (
                r#"a-b
c-
"#,
                r#""#,
                0,
            ),
            (
                r#"a-b
c-
"#,
                r#""#,
                0,
            ),
            (
                r#"a-b
c-
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo a; false; echo $?"#,
        [
            (
                r#"a
1
"#, r#""#, 0,
            ),
            (
                r#"a
1
"#, r#""#, 0,
            ),
            (
                r#"a
1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"getopts_test() { while getopts "ab:" o; do echo "opt $o ${OPTARG:-}"; done; }; getopts_test -a -b val"#,
        [
            (
                r#"opt a 
opt b val
"#,
                r#""#,
                0,
            ),
            (
                r#"opt a 
opt b val
"#,
                r#""#,
                0,
            ),
            (
                r#"opt a 
opt b val
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"trap 'echo trapped' EXIT; echo body"#,
        [
            (
                r#"body
trapped
"#,
                r#""#,
                0,
            ),
            (
                r#"body
trapped
"#,
                r#""#,
                0,
            ),
            (
                r#"body
trapped
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"trap 'echo bye' EXIT; exit 2"#,
        [
            (
                r#"bye
"#, r#""#, 2,
            ),
            (
                r#"bye
"#, r#""#, 2,
            ),
            (
                r#"bye
"#, r#""#, 2,
            ),
        ],
    ),
    (
        r#"x=10; x=$((x-3)); echo $x"#,
        [
            (
                r#"7
"#, r#""#, 0,
            ),
            (
                r#"7
"#, r#""#, 0,
            ),
            (
                r#"7
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"type echo"#,
        [
            (
                r#"echo is a shell builtin
"#,
                r#""#,
                0,
            ),
            (
                r#"echo is a shell builtin
"#,
                r#""#,
                0,
            ),
            (
                r#"echo is a shell builtin
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"command -v echo"#,
        [
            (
                r#"echo
"#, r#""#, 0,
            ),
            (
                r#"echo
"#, r#""#, 0,
            ),
            (
                r#"echo
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"eval 'echo evaled $((2*3))'"#,
        [
            (
                r#"evaled 6
"#,
                r#""#,
                0,
            ),
            (
                r#"evaled 6
"#,
                r#""#,
                0,
            ),
            (
                r#"evaled 6
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"eval "x=42"; echo $x"#,
        [
            (
                r#"42
"#, r#""#, 0,
            ),
            (
                r#"42
"#, r#""#, 0,
            ),
            (
                r#"42
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"set -x; echo traced; y=1"#,
        [
            (
                r#"traced
"#,
                r#"+ echo traced
+ y=1
"#,
                0,
            ),
            (
                r#"traced
"#,
                r#"+ echo traced
+ y=1
"#,
                0,
            ),
            (
                r#"traced
"#,
                r#"+ echo traced
+ y=1
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; echo "a b" 'c'"#,
        [
            (
                r#"a b c
"#,
                r#"+ echo 'a b' c
"#,
                0,
            ),
            (
                r#"a b c
"#,
                r#"+ echo a b c
"#,
                0,
            ),
            (
                r#"a b c
"#,
                r#"+ echo 'a b' c
"#,
                0,
            ),
        ],
    ),
    (
        r#"f() { echo $#; }; f; f a; f a b c"#,
        [
            (
                r#"0
1
3
"#,
                r#""#,
                0,
            ),
            (
                r#"0
1
3
"#,
                r#""#,
                0,
            ),
            (
                r#"0
1
3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"fib() { if [ $1 -le 1 ]; then echo $1; else echo $(( $(fib $(($1-1))) + $(fib $(($1-2))) )); fi; }; fib 10"#,
        [
            (
                r#"55
"#, r#""#, 0,
            ),
            (
                r#"55
"#, r#""#, 0,
            ),
            (
                r#"55
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"s=; for w in one two three; do s="$s$w,"; done; echo ${s%,}"#,
        [
            (
                r#"one,two,three
"#,
                r#""#,
                0,
            ),
            (
                r#"one,two,three
"#,
                r#""#,
                0,
            ),
            (
                r#"one,two,three
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo "$(echo "inner quoted")""#,
        [
            (
                r#"inner quoted
"#,
                r#""#,
                0,
            ),
            (
                r#"inner quoted
"#,
                r#""#,
                0,
            ),
            (
                r#"inner quoted
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo pre{a,b}post"#,
        [
            (
                r#"pre{a,b}post
"#,
                r#""#,
                0,
            ),
            (
                r#"pre{a,b}post
"#,
                r#""#,
                0,
            ),
            (
                r#"preapost prebpost
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo x | read y; echo "[$y]""#,
        [
            (
                r#"[]
"#, r#""#, 0,
            ),
            (
                r#"[]
"#, r#""#, 0,
            ),
            (
                r#"[]
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"i=0; while true; do i=$((i+1)); [ $i -ge 5 ] && break; done; echo $i"#,
        [
            (
                r#"5
"#, r#""#, 0,
            ),
            (
                r#"5
"#, r#""#, 0,
            ),
            (
                r#"5
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo $(seq 1 3 | tr '\n' ' ')"#,
        [
            (
                r#"1 2 3
"#,
                r#""#,
                0,
            ),
            (
                r#"1 2 3
"#,
                r#""#,
                0,
            ),
            (
                r#"1 2 3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"for f in /etc/pass*; do echo $f; done"#,
        [
            (
                r#"/etc/passwd
/etc/passwd-
"#,
                r#""#,
                0,
            ),
            (
                r#"/etc/passwd
/etc/passwd-
"#,
                r#""#,
                0,
            ),
            (
                r#"/etc/passwd
/etc/passwd-
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo /etc/passw?"#,
        [
            (
                r#"/etc/passwd
"#,
                r#""#,
                0,
            ),
            (
                r#"/etc/passwd
"#,
                r#""#,
                0,
            ),
            (
                r#"/etc/passwd
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo /nomatch*"#,
        [
            (
                r#"/nomatch*
"#,
                r#""#,
                0,
            ),
            (
                r#"/nomatch*
"#,
                r#""#,
                0,
            ),
            (
                r#"/nomatch*
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=abc; case "$x" in *b*) echo contains-b;; esac"#,
        [
            (
                r#"contains-b
"#,
                r#""#,
                0,
            ),
            (
                r#"contains-b
"#,
                r#""#,
                0,
            ),
            (
                r#"contains-b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $((2**10))"#,
        [
            (
                r#"1024
"#, r#""#, 0,
            ),
            (
                r#""#,
                r#"sh: 1: arithmetic expression: expecting primary: "2**10"
"#,
                2,
            ),
            (
                r#"1024
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"shift 5; echo rc=$?"#,
        [
            (
                r#"rc=1
"#, r#""#, 0,
            ),
            (
                r#""#,
                r#"sh: 1: shift: can't shift that many
"#,
                2,
            ),
            (
                r#"rc=1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"local x=1; echo rc=$?"#,
        [
            (
                r#""#,
                r#"sh: local: line 0: not in a function
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: local: not in a function
"#,
                2,
            ),
            (
                r#"rc=1
"#,
                r#"bash: line 1: local: can only be used in a function
"#,
                0,
            ),
        ],
    ),
    (
        r#"break; echo after-break"#,
        [
            (
                r#"after-break
"#,
                r#""#,
                0,
            ),
            (
                r#"after-break
"#,
                r#""#,
                0,
            ),
            (
                r#"after-break
"#,
                r#"bash: line 1: break: only meaningful in a `for', `while', or `until' loop
"#,
                0,
            ),
        ],
    ),
    (
        r#"echo a | grep -q b; echo rc=$?"#,
        [
            (
                r#"rc=1
"#, r#""#, 0,
            ),
            (
                r#"rc=1
"#, r#""#, 0,
            ),
            (
                r#"rc=1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"expr 2 + 3; expr 10 / 3; expr 5 \> 3; expr abc : 'a\(.\)c'"#,
        [
            (
                r#"5
3
1
b
"#,
                r#""#,
                0,
            ),
            (
                r#"5
3
1
b
"#,
                r#""#,
                0,
            ),
            (
                r#"5
3
1
b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $(expr length hello)"#,
        [
            (
                r#"5
"#, r#""#, 0,
            ),
            (
                r#"5
"#, r#""#, 0,
            ),
            (
                r#"5
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"basename /a/b/c.txt; basename /a/b/c.txt .txt; dirname /a/b/c.txt"#,
        [
            (
                r#"c.txt
c
/a/b
"#,
                r#""#,
                0,
            ),
            (
                r#"c.txt
c
/a/b
"#,
                r#""#,
                0,
            ),
            (
                r#"c.txt
c
/a/b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo "x" > /tmp/w/t && test -s /tmp/w/t && echo nonempty-file"#,
        [
            (
                r#"nonempty-file
"#,
                r#""#,
                0,
            ),
            (
                r#"nonempty-file
"#,
                r#""#,
                0,
            ),
            (
                r#"nonempty-file
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"rm /tmp/w/missing; echo rc=$?"#,
        [
            (
                r#"rc=1
"#,
                r#"rm: can't remove '/tmp/w/missing': No such file or directory
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"rm: cannot remove '/tmp/w/missing': No such file or directory
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"rm: cannot remove '/tmp/w/missing': No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"mkdir /tmp/w/d1 && mkdir /tmp/w/d1; echo rc=$?"#,
        [
            (
                r#"rc=1
"#,
                r#"mkdir: can't create directory '/tmp/w/d1': File exists
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"mkdir: cannot create directory '/tmp/w/d1': File exists
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"mkdir: cannot create directory '/tmp/w/d1': File exists
"#,
                0,
            ),
        ],
    ),
    (
        r#"mkdir -p /tmp/w/a/b/c && ls /tmp/w/a/b"#,
        [
            (
                r#"c
"#, r#""#, 0,
            ),
            (
                r#"c
"#, r#""#, 0,
            ),
            (
                r#"c
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"touch /tmp/w/tf && ls /tmp/w/tf"#,
        [
            (
                r#"/tmp/w/tf
"#,
                r#""#,
                0,
            ),
            (
                r#"/tmp/w/tf
"#,
                r#""#,
                0,
            ),
            (
                r#"/tmp/w/tf
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cp /tmp/w/nope /tmp/w/x; echo rc=$?"#,
        [
            (
                r#"rc=1
"#,
                r#"cp: can't stat '/tmp/w/nope': No such file or directory
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"cp: cannot stat '/tmp/w/nope': No such file or directory
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"cp: cannot stat '/tmp/w/nope': No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"echo hi > /tmp/w/src; cp /tmp/w/src /tmp/w/dst; cat /tmp/w/dst"#,
        [
            (
                r#"hi
"#, r#""#, 0,
            ),
            (
                r#"hi
"#, r#""#, 0,
            ),
            (
                r#"hi
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo hi > /tmp/w/m1; mv /tmp/w/m1 /tmp/w/m2; cat /tmp/w/m2; ls /tmp/w/m1"#,
        [
            (
                r#"hi
"#,
                r#"ls: /tmp/w/m1: No such file or directory
"#,
                1,
            ),
            (
                r#"hi
"#,
                r#"ls: cannot access '/tmp/w/m1': No such file or directory
"#,
                2,
            ),
            (
                r#"hi
"#,
                r#"ls: cannot access '/tmp/w/m1': No such file or directory
"#,
                2,
            ),
        ],
    ),
    (
        r#"ln -s /etc/passwd /tmp/w/lnk; readlink /tmp/w/lnk"#,
        [
            (
                r#"/etc/passwd
"#,
                r#""#,
                0,
            ),
            (
                r#"/etc/passwd
"#,
                r#""#,
                0,
            ),
            (
                r#"/etc/passwd
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo abc | rev"#,
        [
            (
                r#"cba
"#, r#""#, 0,
            ),
            (
                r#"cba
"#, r#""#, 0,
            ),
            (
                r#"cba
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo "hello world" | wc -c"#,
        [
            (
                r#"12
"#, r#""#, 0,
            ),
            (
                r#"12
"#, r#""#, 0,
            ),
            (
                r#"12
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'b\na\nc\n' | sort -r"#,
        [
            (
                r#"c
b
a
"#,
                r#""#,
                0,
            ),
            (
                r#"c
b
a
"#,
                r#""#,
                0,
            ),
            (
                r#"c
b
a
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '10\n9\n100\n' | sort -n"#,
        [
            (
                r#"9
10
100
"#,
                r#""#,
                0,
            ),
            (
                r#"9
10
100
"#,
                r#""#,
                0,
            ),
            (
                r#"9
10
100
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a b\nc d\n' | awk '{print $2, $1}'"#,
        [
            (
                r#"b a
d c
"#,
                r#""#,
                0,
            ),
            (
                r#"b a
d c
"#,
                r#""#,
                0,
            ),
            (
                r#"b a
d c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'k=v\n' | awk -F= '{print $2}'"#,
        [
            (
                r#"v
"#, r#""#, 0,
            ),
            (
                r#"v
"#, r#""#, 0,
            ),
            (
                r#"v
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '1\n2\n3\n' | awk '{s+=$1} END {print s}'"#,
        [
            (
                r#"6
"#, r#""#, 0,
            ),
            (
                r#"6
"#, r#""#, 0,
            ),
            (
                r#"6
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'x\ny\n' | awk 'NR==2'"#,
        [
            (
                r#"y
"#, r#""#, 0,
            ),
            (
                r#"y
"#, r#""#, 0,
            ),
            (
                r#"y
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'foo bar\n' | sed -n 's/foo/baz/p'"#,
        [
            (
                r#"baz bar
"#,
                r#""#,
                0,
            ),
            (
                r#"baz bar
"#,
                r#""#,
                0,
            ),
            (
                r#"baz bar
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\nc\n' | sed '2d'"#,
        [
            (
                r#"a
c
"#, r#""#, 0,
            ),
            (
                r#"a
c
"#, r#""#, 0,
            ),
            (
                r#"a
c
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\nc\n' | sed -n '$p'"#,
        [
            (
                r#"c
"#, r#""#, 0,
            ),
            (
                r#"c
"#, r#""#, 0,
            ),
            (
                r#"c
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'hello\n' | sed -E 's/(h)(e)/\2\1/'"#,
        [
            (
                r#"ehllo
"#,
                r#""#,
                0,
            ),
            (
                r#"ehllo
"#,
                r#""#,
                0,
            ),
            (
                r#"ehllo
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo HeLLo | tr 'A-Z' 'a-z'"#,
        [
            (
                r#"hello
"#,
                r#""#,
                0,
            ),
            (
                r#"hello
"#,
                r#""#,
                0,
            ),
            (
                r#"hello
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo hello | tr -d l"#,
        [
            (
                r#"heo
"#, r#""#, 0,
            ),
            (
                r#"heo
"#, r#""#, 0,
            ),
            (
                r#"heo
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo aaabbb | tr -s a"#,
        [
            (
                r#"abbb
"#, r#""#, 0,
            ),
            (
                r#"abbb
"#, r#""#, 0,
            ),
            (
                r#"abbb
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo "a,b,c" | cut -d, -f1,3"#,
        [
            (
                r#"a,c
"#, r#""#, 0,
            ),
            (
                r#"a,c
"#, r#""#, 0,
            ),
            (
                r#"a,c
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo abc | md5sum"#,
        [
            (
                r#"0bee89b07a248e27c83fc3d5951213c1  -
"#,
                r#""#,
                0,
            ),
            (
                r#"0bee89b07a248e27c83fc3d5951213c1  -
"#,
                r#""#,
                0,
            ),
            (
                r#"0bee89b07a248e27c83fc3d5951213c1  -
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo abc | sha256sum"#,
        [
            (
                r#"edeaaff3f1774ad2888673770c6d64097e391bc362d7d6fb34982ddf0efd18cb  -
"#,
                r#""#,
                0,
            ),
            (
                r#"edeaaff3f1774ad2888673770c6d64097e391bc362d7d6fb34982ddf0efd18cb  -
"#,
                r#""#,
                0,
            ),
            (
                r#"edeaaff3f1774ad2888673770c6d64097e391bc362d7d6fb34982ddf0efd18cb  -
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo hello | base64"#,
        [
            (
                r#"aGVsbG8K
"#,
                r#""#,
                0,
            ),
            (
                r#"aGVsbG8K
"#,
                r#""#,
                0,
            ),
            (
                r#"aGVsbG8K
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo aGVsbG8K | base64 -d"#,
        [
            (
                r#"hello
"#,
                r#""#,
                0,
            ),
            (
                r#"hello
"#,
                r#""#,
                0,
            ),
            (
                r#"hello
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x="a b c"; set -- $x; echo $#"#,
        [
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo "${x:-a b}" | wc -w"#,
        [
            (
                r#"2
"#, r#""#, 0,
            ),
            (
                r#"2
"#, r#""#, 0,
            ),
            (
                r#"2
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%s\n' "$(echo one; echo two)""#,
        [
            (
                r#"one
two
"#,
                r#""#,
                0,
            ),
            (
                r#"one
two
"#,
                r#""#,
                0,
            ),
            (
                r#"one
two
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $(( 1 + ))"#,
        [
            (
                r#""#,
                r#"sh: arithmetic syntax error
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: arithmetic expression: expecting primary: " 1 + "
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: line 1: 1 + : syntax error: operand expected (error token is "+ ")
"#,
                1,
            ),
        ],
    ),
    (
        r#"echo ${x"#,
        [
            (
                r#""#,
                r#"sh: syntax error: missing '}'
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: Missing '}'
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: -c: line 1: unexpected EOF while looking for matching `}'
"#,
                2,
            ),
        ],
    ),
    (
        r#"echo "unterminated"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unterminated quoted string
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: Unterminated quoted string
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: -c: line 1: unexpected EOF while looking for matching `"'
"#,
                2,
            ),
        ],
    ),
    (
        r#"f() { echo f; }; type f | head -1"#,
        [
            (
                r#"f is a function
"#,
                r#""#,
                0,
            ),
            (
                r#"f is a shell function
"#,
                r#""#,
                0,
            ),
            (
                r#"f is a function
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"true; echo $?; false; echo $?"#,
        [
            (
                r#"0
1
"#, r#""#, 0,
            ),
            (
                r#"0
1
"#, r#""#, 0,
            ),
            (
                r#"0
1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo $((3 - -2)) $((~0)) $((!5))"#,
        [
            (
                r#"5 -1 0
"#,
                r#""#,
                0,
            ),
            (
                r#"5 -1 0
"#,
                r#""#,
                0,
            ),
            (
                r#"5 -1 0
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"n=5; echo $(( n += 2 )) $n"#,
        [
            (
                r#"7 7
"#, r#""#, 0,
            ),
            (
                r#"7 7
"#, r#""#, 0,
            ),
            (
                r#"7 7
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo -e 'a\tb'"#,
        [
            (
                r#"a	b
"#, r#""#, 0,
            ),
            (
                r#"-e a	b
"#,
                r#""#,
                0,
            ),
            (
                r#"a	b
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo -e 'x\ny'"#,
        [
            (
                r#"x
y
"#, r#""#, 0,
            ),
            (
                r#"-e x
y
"#,
                r#""#,
                0,
            ),
            (
                r#"x
y
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo 'x\ny'"#,
        [
            (
                r#"x\ny
"#, r#""#, 0,
            ),
            (
                r#"x
y
"#, r#""#, 0,
            ),
            (
                r#"x\ny
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo -E 'p\tq'"#,
        [
            (
                r#"p\tq
"#, r#""#, 0,
            ),
            (
                r#"-E p	q
"#,
                r#""#,
                0,
            ),
            (
                r#"p\tq
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo -- -n"#,
        [
            (
                r#"-- -n
"#,
                r#""#,
                0,
            ),
            (
                r#"-- -n
"#,
                r#""#,
                0,
            ),
            (
                r#"-- -n
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo -n -e 'z\n'"#,
        [
            (
                r#"z
"#, r#""#, 0,
            ),
            (
                r#"-e z
"#, r#""#, 0,
            ),
            (
                r#"z
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"i=0; for x in $(seq 1 100); do i=$((i+x)); done; echo $i"#,
        [
            (
                r#"5050
"#, r#""#, 0,
            ),
            (
                r#"5050
"#, r#""#, 0,
            ),
            (
                r#"5050
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%s %s\n' $(echo a b c d)"#,
        [
            (
                r#"a b
c d
"#,
                r#""#,
                0,
            ),
            (
                r#"a b
c d
"#,
                r#""#,
                0,
            ),
            (
                r#"a b
c d
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo "$@"; set -- x; echo "[$@]""#,
        [
            (
                r#"
[x]
"#, r#""#, 0,
            ),
            (
                r#"
[x]
"#, r#""#, 0,
            ),
            (
                r#"
[x]
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"v=abc; echo ${v:1} ${v:0:2} ${v: -1}"#,
        [
            (
                r#"bc ab c
"#,
                r#""#,
                0,
            ),
            (
                r#""#,
                r#"sh: 1: Bad substitution
"#,
                2,
            ),
            (
                r#"bc ab c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"arr=(a b c); echo ${arr[1]} ${#arr[@]} ${arr[@]}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected "("
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "(" unexpected
"#,
                2,
            ),
            (
                r#"b 3 a b c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[[ abc == a* ]] && echo glob-match"#,
        [
            (
                r#"glob-match
"#,
                r#""#,
                0,
            ),
            (
                r#""#,
                r#"sh: 1: [[: not found
"#,
                127,
            ),
            (
                r#"glob-match
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[[ -f /etc/passwd && -d /tmp ]] && echo cond-and"#,
        [
            (
                r#"cond-and
"#,
                r#""#,
                0,
            ),
            (
                r#""#,
                r#"sh: 1: [[: not found
"#,
                127,
            ),
            (
                r#"cond-and
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[[ mysql-2 =~ -([0-9]+)$ ]] && echo ${BASH_REMATCH[1]}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected "("
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "(" unexpected
"#,
                2,
            ),
            (
                r#"2
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"x=3; (( x > 2 )) && echo arith-cond"#,
        [
            (
                r#""#,
                r#"sh: x: not found
"#,
                127,
            ),
            (
                r#""#,
                r#"sh: 1: x: not found
"#,
                127,
            ),
            (
                r#"arith-cond
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"for ((i=0; i<3; i++)); do echo c$i; done"#,
        [
            (
                r#""#,
                r#"sh: syntax error: bad for loop variable
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: Bad for loop variable
"#,
                2,
            ),
            (
                r#"c0
c1
c2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $'ansi\tc'"#,
        [
            (
                r#"ansi	c
"#,
                r#""#,
                0,
            ),
            (
                r#"$ansi	c
"#,
                r#""#,
                0,
            ),
            (
                r#"ansi	c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"let x=2+3; echo $x"#,
        [
            (
                r#"5
"#, r#""#, 0,
            ),
            (
                r#"
"#,
                r#"sh: 1: let: not found
"#,
                0,
            ),
            (
                r#"5
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo ${v^^} ${v^}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: bad substitution
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Bad substitution
"#,
                2,
            ),
            (
                r#"
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"cat <<< "here string""#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected redirection
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: redirection unexpected
"#,
                2,
            ),
            (
                r#"here string
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo {1..3}"#,
        [
            (
                r#"{1..3}
"#,
                r#""#,
                0,
            ),
            (
                r#"{1..3}
"#,
                r#""#,
                0,
            ),
            (
                r#"1 2 3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"declare -a A=(1 2); echo ${A[0]}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected "("
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "(" unexpected
"#,
                2,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"cat <<EOF
heredoc $((1+1))
  indented
EOF"#,
        [
            (
                r#"heredoc 2
  indented
"#,
                r#""#,
                0,
            ),
            (
                r#"heredoc 2
  indented
"#,
                r#""#,
                0,
            ),
            (
                r#"heredoc 2
  indented
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cat <<'EOF'
quoted $HOME
EOF"#,
        [
            (
                r#"quoted $HOME
"#,
                r#""#,
                0,
            ),
            (
                r#"quoted $HOME
"#,
                r#""#,
                0,
            ),
            (
                r#"quoted $HOME
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cat <<-EOF
	tab stripped
	EOF"#,
        [
            (
                r#"tab stripped
"#,
                r#""#,
                0,
            ),
            (
                r#"tab stripped
"#,
                r#""#,
                0,
            ),
            (
                r#"tab stripped
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"read a b <<EOF
first second third
EOF
echo "$a|$b""#,
        [
            (
                r#"first|second third
"#,
                r#""#,
                0,
            ),
            (
                r#"first|second third
"#,
                r#""#,
                0,
            ),
            (
                r#"first|second third
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"while read -r l; do echo "[$l]"; done <<EOF
a\b
c d
EOF"#,
        [
            (
                r#"[a\b]
[c d]
"#,
                r#""#,
                0,
            ),
            (
                r#"[a]
[c d]
"#,
                r#""#,
                0,
            ),
            (
                r#"[a\b]
[c d]
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'l1\nl2\n' | while read line; do echo "got $line"; done"#,
        [
            (
                r#"got l1
got l2
"#,
                r#""#,
                0,
            ),
            (
                r#"got l1
got l2
"#,
                r#""#,
                0,
            ),
            (
                r#"got l1
got l2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=1
if [ $x = 1 ]; then
  echo multi-line if
fi
foo_missing
echo after"#,
        [
            (
                r#"multi-line if
after
"#,
                r#"sh: foo_missing: not found
"#,
                0,
            ),
            (
                r#"multi-line if
after
"#,
                r#"sh: 5: foo_missing: not found
"#,
                0,
            ),
            (
                r#"multi-line if
after
"#,
                r#"bash: line 5: foo_missing: command not found
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x
x=$(echo hi)
echo "$x" > /dev/null"#,
        [
            (
                r#""#,
                r#"+ echo hi
+ x=hi
+ echo hi
"#,
                0,
            ),
            (
                r#""#,
                r#"+ echo hi
+ x=hi
+ echo hi
"#,
                0,
            ),
            (
                r#""#,
                r#"++ echo hi
+ x=hi
+ echo hi
"#,
                0,
            ),
        ],
    ),
    (
        r#"i=0
while [ $i -lt 2 ]
do
  echo loop $i
  i=$((i+1))
done"#,
        [
            (
                r#"loop 0
loop 1
"#,
                r#""#,
                0,
            ),
            (
                r#"loop 0
loop 1
"#,
                r#""#,
                0,
            ),
            (
                r#"loop 0
loop 1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case "$1" in
  start) echo starting ;;
  *) echo "usage: $0 start" ;;
esac"#,
        [
            (
                r#"usage: sh start
"#,
                r#""#,
                0,
            ),
            (
                r#"usage: sh start
"#,
                r#""#,
                0,
            ),
            (
                r#"usage: bash start
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"arr=(a b c); arr+=(d); echo ${#arr[@]} "${arr[@]:1:2}"; arr[5]=x; echo ${!arr[@]}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected "("
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "(" unexpected
"#,
                2,
            ),
            (
                r#"4 b c
0 1 2 3 5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"arr=(one "two words" three); for x in "${arr[@]}"; do echo "<$x>"; done"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected "("
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "(" unexpected
"#,
                2,
            ),
            (
                r#"<one>
<two words>
<three>
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"arr=(3 1 2); echo ${arr[-1]} ${#arr[1]}; unset 'arr[0]'; echo ${arr[@]}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected "("
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "(" unexpected
"#,
                2,
            ),
            (
                r#"2 1
1 2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -o pipefail; false | true; echo $?"#,
        [
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#""#,
                r#"sh: 1: set: Illegal option -o pipefail
"#,
                2,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"true | false | true; echo ${PIPESTATUS[@]}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: bad substitution
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Bad substitution
"#,
                2,
            ),
            (
                r#"0 1 0
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x="a b"; [[ $x == "a b" ]] && echo quoted-eq; [[ -n $undefined ]] || echo empty-unquoted"#,
        [
            (
                r#""#,
                r#"sh: b: unknown operand
"#,
                0,
            ),
            (
                r#"empty-unquoted
"#,
                r#"sh: 1: [[: not found
sh: 1: [[: not found
"#,
                0,
            ),
            (
                r#"quoted-eq
empty-unquoted
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[[ 1 -lt 2 && 3 -gt 2 ]] && echo both; [[ abc < abd ]] && echo lt"#,
        [
            (
                r#"both
"#,
                r#"sh: can't open abd: no such file
"#,
                1,
            ),
            (
                r#""#,
                r#"sh: 1: [[: not found
sh: 1: cannot open abd: No such file
"#,
                2,
            ),
            (
                r#"both
lt
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $'a\nb' $'\x41\101'"#,
        [
            (
                r#"a
b AA
"#,
                r#""#,
                0,
            ),
            (
                r#"$a
b $\x41A
"#,
                r#""#,
                0,
            ),
            (
                r#"a
b AA
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"s="hello world"; echo ${s// /_} ${s^^} ${s:6} ${s: -5:3} ${s^}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: bad substitution
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Bad substitution
"#,
                2,
            ),
            (
                r#"hello_world HELLO WORLD world wor Hello world
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf -v v '%05d' 42; echo $v"#,
        [
            (
                r#"-v
"#, r#""#, 0,
            ),
            (
                r#"
"#,
                r#"sh: 1: printf: Illegal option -v
"#,
                0,
            ),
            (
                r#"00042
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"read -a parts <<< "a b c"; echo ${parts[1]} ${#parts[@]}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected redirection
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: redirection unexpected
"#,
                2,
            ),
            (
                r#"b 3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"function f { echo f-kw; }; f"#,
        [
            (
                r#"f-kw
"#, r#""#, 0,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "}" unexpected
"#,
                2,
            ),
            (
                r#"f-kw
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"i=0; (( i++ )); echo $i; (( 0 )); echo $?; (( 5 )); echo $?"#,
        [
            (
                r#"0
127
127
"#,
                r#"sh: i++: not found
sh: 0: not found
sh: 5: not found
"#,
                0,
            ),
            (
                r#"0
127
127
"#,
                r#"sh: 1: i++: not found
sh: 1: 0: not found
sh: 1: 5: not found
"#,
                0,
            ),
            (
                r#"1
1
0
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"let "x = 5 * 2"; echo $x"#,
        [
            (
                r#"10
"#, r#""#, 0,
            ),
            (
                r#"
"#,
                r#"sh: 1: let: not found
"#,
                0,
            ),
            (
                r#"10
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"x=b; case $x in a) echo A;& b) echo B;& c) echo C;; d) echo D;; esac"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected "&"
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "&" unexpected
"#,
                2,
            ),
            (
                r#"B
C
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"x=5; echo $(( x ** 2 ))"#,
        [
            (
                r#"25
"#, r#""#, 0,
            ),
            (
                r#""#,
                r#"sh: 1: arithmetic expression: expecting primary: " x ** 2 "
"#,
                2,
            ),
            (
                r#"25
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo {a..c}{1..2}"#,
        [
            (
                r#"{a..c}{1..2}
"#,
                r#""#,
                0,
            ),
            (
                r#"{a..c}{1..2}
"#,
                r#""#,
                0,
            ),
            (
                r#"a1 a2 b1 b2 c1 c2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"if ! grep -q x <<< "abc"; then echo no-x; fi"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected redirection
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: redirection unexpected
"#,
                2,
            ),
            (
                r#"no-x
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"f() { local -a arr=(x y); echo ${arr[1]}; }; f"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected "(" (expecting "}")
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "(" unexpected (expecting "}")
"#,
                2,
            ),
            (
                r#"y
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"declare -i n=5; n+=3; echo $n"#,
        [
            (
                r#"
"#,
                r#"sh: declare: not found
sh: n+=3: not found
"#,
                0,
            ),
            (
                r#"
"#,
                r#"sh: 1: declare: not found
sh: 1: n+=3: not found
"#,
                0,
            ),
            (
                r#"8
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"s=abc; echo ${#s} ${s:1:1}; s+=def; echo $s"#,
        [
            (
                r#"3 b
abc
"#,
                r#"sh: s+=def: not found
"#,
                0,
            ),
            (
                r#""#,
                r#"sh: 1: Bad substitution
"#,
                2,
            ),
            (
                r#"3 b
abcdef
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=; echo ${x:-unset-or-empty}; unset x; echo ${x-unset}"#,
        [
            (
                r#"unset-or-empty
unset
"#,
                r#""#,
                0,
            ),
            (
                r#"unset-or-empty
unset
"#,
                r#""#,
                0,
            ),
            (
                r#"unset-or-empty
unset
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $(( 16#ff )) $(( 2#101 ))"#,
        [
            (
                r#"255 5
"#,
                r#""#,
                0,
            ),
            (
                r#""#,
                r#"sh: 1: arithmetic expression: expecting EOF: " 16#ff "
"#,
                2,
            ),
            (
                r#"255 5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"for ((i=3; i>0; i--)); do printf '%d ' $i; done; echo"#,
        [
            (
                r#""#,
                r#"sh: syntax error: bad for loop variable
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: Bad for loop variable
"#,
                2,
            ),
            (
                r#"3 2 1 
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"while IFS=: read -r a b; do echo "$b-$a"; done <<< "x:y""#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected redirection
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: redirection unexpected
"#,
                2,
            ),
            (
                r#"y-x
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo "$((1 + 2))" '$((1 + 2))'"#,
        [
            (
                r#"3 $((1 + 2))
"#,
                r#""#,
                0,
            ),
            (
                r#"3 $((1 + 2))
"#,
                r#""#,
                0,
            ),
            (
                r#"3 $((1 + 2))
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"f() { echo "args: $*"; }; f 1 "2 3""#,
        [
            (
                r#"args: 1 2 3
"#,
                r#""#,
                0,
            ),
            (
                r#"args: 1 2 3
"#,
                r#""#,
                0,
            ),
            (
                r#"args: 1 2 3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"f() { return 7; }; f; echo $?; f && echo no || echo yes"#,
        [
            (
                r#"7
yes
"#,
                r#""#,
                0,
            ),
            (
                r#"7
yes
"#,
                r#""#,
                0,
            ),
            (
                r#"7
yes
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"f() { echo x; } > /tmp/w/fo; f; cat /tmp/w/fo"#,
        [
            (
                r#"x
"#, r#""#, 0,
            ),
            (
                r#"x
"#, r#""#, 0,
            ),
            (
                r#"x
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo "$(echo "$(echo inner)")""#,
        [
            (
                r#"inner
"#,
                r#""#,
                0,
            ),
            (
                r#"inner
"#,
                r#""#,
                0,
            ),
            (
                r#"inner
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $((u + 1)) $((u))"#,
        [
            (
                r#"1 0
"#, r#""#, 0,
            ),
            (
                r#"1 0
"#, r#""#, 0,
            ),
            (
                r#"1 0
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"x='a*'; case abc in $x) echo unquoted-pat;; esac; case abc in "$x") echo quoted;; *) echo literal;; esac"#,
        [
            (
                r#"unquoted-pat
literal
"#,
                r#""#,
                0,
            ),
            (
                r#"unquoted-pat
literal
"#,
                r#""#,
                0,
            ),
            (
                r#"unquoted-pat
literal
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (r#"set -e; (false); echo after-subshell"#, [(r#""#, r#""#, 1), (r#""#, r#""#, 1), (r#""#, r#""#, 1)]),
    (r#"set -e; x=$(false); echo after-subst"#, [(r#""#, r#""#, 1), (r#""#, r#""#, 1), (r#""#, r#""#, 1)]),
    (
        r#"set -e; false && true; echo after-and"#,
        [
            (
                r#"after-and
"#,
                r#""#,
                0,
            ),
            (
                r#"after-and
"#,
                r#""#,
                0,
            ),
            (
                r#"after-and
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -e; ! true; echo after-bang"#,
        [
            (
                r#"after-bang
"#,
                r#""#,
                0,
            ),
            (
                r#"after-bang
"#,
                r#""#,
                0,
            ),
            (
                r#"after-bang
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"trap 'echo one' EXIT; trap - EXIT; echo cleared"#,
        [
            (
                r#"cleared
"#,
                r#""#,
                0,
            ),
            (
                r#"cleared
"#,
                r#""#,
                0,
            ),
            (
                r#"cleared
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"trap 'echo t' INT TERM; trap"#,
        [
            (
                r#"trap -- 'echo t' INT
trap -- 'echo t' TERM
"#,
                r#""#,
                0,
            ),
            (
                r#"trap -- 'echo t' INT
trap -- 'echo t' TERM
"#,
                r#""#,
                0,
            ),
            (
                r#"trap -- 'echo t' SIGINT
trap -- 'echo t' SIGTERM
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"i=5; while [ $i -gt 0 ]; do i=$((i-2)); done; echo $i"#,
        [
            (
                r#"-1
"#, r#""#, 0,
            ),
            (
                r#"-1
"#, r#""#, 0,
            ),
            (
                r#"-1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo a b | { read x y; echo $y $x; }"#,
        [
            (
                r#"b a
"#, r#""#, 0,
            ),
            (
                r#"b a
"#, r#""#, 0,
            ),
            (
                r#"b a
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"f() { cat; }; echo through | f"#,
        [
            (
                r#"through
"#,
                r#""#,
                0,
            ),
            (
                r#"through
"#,
                r#""#,
                0,
            ),
            (
                r#"through
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $(( $(echo 3) + $(echo 4) ))"#,
        [
            (
                r#"7
"#, r#""#, 0,
            ),
            (
                r#"7
"#, r#""#, 0,
            ),
            (
                r#"7
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"a=1; a=$((a+a)); a=$((a*a)); echo $a"#,
        [
            (
                r#"4
"#, r#""#, 0,
            ),
            (
                r#"4
"#, r#""#, 0,
            ),
            (
                r#"4
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%s\n' "a b" c | while read -r l; do echo "[$l]"; done"#,
        [
            (
                r#"[a b]
[c]
"#,
                r#""#,
                0,
            ),
            (
                r#"[a b]
[c]
"#,
                r#""#,
                0,
            ),
            (
                r#"[a b]
[c]
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -- a b c d e; shift 2; echo "$@"; echo $#"#,
        [
            (
                r#"c d e
3
"#,
                r#""#,
                0,
            ),
            (
                r#"c d e
3
"#,
                r#""#,
                0,
            ),
            (
                r#"c d e
3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -- x y; echo "${1}${2}" "${3:-none}""#,
        [
            (
                r#"xy none
"#,
                r#""#,
                0,
            ),
            (
                r#"xy none
"#,
                r#""#,
                0,
            ),
            (
                r#"xy none
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=1; y=$x$x; echo ${y}0"#,
        [
            (
                r#"110
"#, r#""#, 0,
            ),
            (
                r#"110
"#, r#""#, 0,
            ),
            (
                r#"110
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo ${#}; set -- a; echo ${#}"#,
        [
            (
                r#"0
1
"#, r#""#, 0,
            ),
            (
                r#"0
1
"#, r#""#, 0,
            ),
            (
                r#"0
1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo "$#" "$*" "$@""#,
        [
            (
                r#"0 
"#, r#""#, 0,
            ),
            (
                r#"0 
"#, r#""#, 0,
            ),
            (
                r#"0 
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo $(true) $? ; echo $(false) ; echo $?"#,
        [
            (
                r#"0

0
"#, r#""#, 0,
            ),
            (
                r#"0

0
"#, r#""#, 0,
            ),
            (
                r#"0

0
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"x=$(echo a; exit 3); echo $x $?"#,
        [
            (
                r#"a 3
"#, r#""#, 0,
            ),
            (
                r#"a 3
"#, r#""#, 0,
            ),
            (
                r#"a 3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo `echo \`echo nested-bt\``"#,
        [
            (
                r#"nested-bt
"#,
                r#""#,
                0,
            ),
            (
                r#"nested-bt
"#,
                r#""#,
                0,
            ),
            (
                r#"nested-bt
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo "a"'b'c"d""#,
        [
            (
                r#"abcd
"#, r#""#, 0,
            ),
            (
                r#"abcd
"#, r#""#, 0,
            ),
            (
                r#"abcd
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo \a\b\c"#,
        [
            (
                r#"abc
"#, r#""#, 0,
            ),
            (
                r#"abc
"#, r#""#, 0,
            ),
            (
                r#"abc
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%s' a; printf '%s\n' b"#,
        [
            (
                r#"ab
"#, r#""#, 0,
            ),
            (
                r#"ab
"#, r#""#, 0,
            ),
            (
                r#"ab
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '[%3s][%-3s][%03d][%x][%X][%o]\n' a b 5 255 255 8"#,
        [
            (
                r#"[  a][b  ][005][ff][FF][10]
"#,
                r#""#,
                0,
            ),
            (
                r#"[  a][b  ][005][ff][FF][10]
"#,
                r#""#,
                0,
            ),
            (
                r#"[  a][b  ][005][ff][FF][10]
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%c%c%c\n' a bc d"#,
        [
            (
                r#"abd
"#, r#""#, 0,
            ),
            (
                r#"abd
"#, r#""#, 0,
            ),
            (
                r#"abd
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%.3f %.0f %5.1f\n' 3.14159 2.5 9.99"#,
        [
            (
                r#"3.142 2  10.0
"#,
                r#""#,
                0,
            ),
            (
                r#"3.142 2  10.0
"#,
                r#""#,
                0,
            ),
            (
                r#"3.142 2  10.0
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"exec 3>&1; echo to-three >&3"#,
        [
            (
                r#"to-three
"#,
                r#""#,
                0,
            ),
            (
                r#"to-three
"#,
                r#""#,
                0,
            ),
            (
                r#"to-three
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo out 1>&2 2>/dev/null"#,
        [
            (
                r#""#, r#"out
"#, 0,
            ),
            (
                r#""#, r#"out
"#, 0,
            ),
            (
                r#""#, r#"out
"#, 0,
            ),
        ],
    ),
    (
        r#"{ echo a; echo b >&2; } 2>&1 | cat"#,
        [
            (
                r#"a
b
"#, r#""#, 0,
            ),
            (
                r#"a
b
"#, r#""#, 0,
            ),
            (
                r#"a
b
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"ls /nonexistent 2>&1 | head -1 | cut -c1-3"#,
        [
            (
                r#"ls:
"#, r#""#, 0,
            ),
            (
                r#"ls:
"#, r#""#, 0,
            ),
            (
                r#"ls:
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"for i in $(seq 3); do echo -n $i; done; echo"#,
        [
            (
                r#"123
"#, r#""#, 0,
            ),
            (
                r#"123
"#, r#""#, 0,
            ),
            (
                r#"123
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"n=0; until false; do n=$((n+1)); [ $n -eq 3 ] && break; done; echo $n"#,
        [
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"case "" in "") echo empty-case;; esac"#,
        [
            (
                r#"empty-case
"#,
                r#""#,
                0,
            ),
            (
                r#"empty-case
"#,
                r#""#,
                0,
            ),
            (
                r#"empty-case
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case a in (a) echo paren-pattern;; esac"#,
        [
            (
                r#"paren-pattern
"#,
                r#""#,
                0,
            ),
            (
                r#"paren-pattern
"#,
                r#""#,
                0,
            ),
            (
                r#"paren-pattern
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"f() { g() { echo inner-def; }; g; }; f; g"#,
        [
            (
                r#"inner-def
inner-def
"#,
                r#""#,
                0,
            ),
            (
                r#"inner-def
inner-def
"#,
                r#""#,
                0,
            ),
            (
                r#"inner-def
inner-def
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=1; f() { x=2; }; f; echo $x"#,
        [
            (
                r#"2
"#, r#""#, 0,
            ),
            (
                r#"2
"#, r#""#, 0,
            ),
            (
                r#"2
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"x=1; f() { local x=2; g; }; g() { echo $x; }; f"#,
        [
            (
                r#"2
"#, r#""#, 0,
            ),
            (
                r#"2
"#, r#""#, 0,
            ),
            (
                r#"2
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo ${x:-$(echo default-subst)}"#,
        [
            (
                r#"default-subst
"#,
                r#""#,
                0,
            ),
            (
                r#"default-subst
"#,
                r#""#,
                0,
            ),
            (
                r#"default-subst
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"unset -f nosuch; unset nosuchvar; echo ok"#,
        [
            (
                r#"ok
"#, r#""#, 0,
            ),
            (
                r#"ok
"#, r#""#, 0,
            ),
            (
                r#"ok
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"readonly r=5; echo $r; unset r; echo rc=$?"#,
        [
            (
                r#"5
"#,
                r#"sh: unset: line 0: r: is read only
"#,
                2,
            ),
            (
                r#"5
"#,
                r#"sh: 1: unset: r: is read only
"#,
                2,
            ),
            (
                r#"5
rc=1
"#,
                r#"bash: line 1: unset: r: cannot unset: readonly variable
"#,
                0,
            ),
        ],
    ),
    (
        r#"export A=1; env | grep -c '^A=1$'"#,
        [
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo "${PATH%%:*}""#,
        [
            (
                r#"/usr/local/sbin
"#,
                r#""#,
                0,
            ),
            (
                r#"/usr/local/sbin
"#,
                r#""#,
                0,
            ),
            (
                r#"/usr/local/sbin
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $((10 > 5)) $((5 >= 5)) $((3 && 0)) $((3 || 0))"#,
        [
            (
                r#"1 1 0 1
"#,
                r#""#,
                0,
            ),
            (
                r#"1 1 0 1
"#,
                r#""#,
                0,
            ),
            (
                r#"1 1 0 1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $(( (2 + 3) * (4 - 1) / 5 ))"#,
        [
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"x=10; echo $((x /= 3)) $x; echo $((x <<= 2)) $((x % 5))"#,
        [
            (
                r#"3 3
12 2
"#,
                r#""#,
                0,
            ),
            (
                r#"3 3
12 2
"#,
                r#""#,
                0,
            ),
            (
                r#"3 3
12 2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo -n; echo -n ""; echo done"#,
        [
            (
                r#"done
"#, r#""#, 0,
            ),
            (
                r#"done
"#, r#""#, 0,
            ),
            (
                r#"done
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo -e; echo -n -n x; echo"#,
        [
            (
                r#"
x
"#, r#""#, 0,
            ),
            (
                r#"-e
-n x
"#,
                r#""#,
                0,
            ),
            (
                r#"
x
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"test ! -d /etc/passwd && echo not-dir"#,
        [
            (
                r#"not-dir
"#,
                r#""#,
                0,
            ),
            (
                r#"not-dir
"#,
                r#""#,
                0,
            ),
            (
                r#"not-dir
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[ -r /etc/passwd ] && [ -w /tmp ] && [ -x /bin ] && echo perms"#,
        [
            (
                r#"perms
"#,
                r#""#,
                0,
            ),
            (
                r#"perms
"#,
                r#""#,
                0,
            ),
            (
                r#"perms
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[ "a" \< "b" ] && echo lt-quoted"#,
        [
            (
                r#"lt-quoted
"#,
                r#""#,
                0,
            ),
            (
                r#"lt-quoted
"#,
                r#""#,
                0,
            ),
            (
                r#"lt-quoted
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[ ! ] ; echo $?; [ -n ] ; echo $?"#,
        [
            (
                r#"0
0
"#, r#""#, 0,
            ),
            (
                r#"0
0
"#, r#""#, 0,
            ),
            (
                r#"0
0
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"[ 01 -eq 1 ] && echo octal-not"#,
        [
            (
                r#"octal-not
"#,
                r#""#,
                0,
            ),
            (
                r#"octal-not
"#,
                r#""#,
                0,
            ),
            (
                r#"octal-not
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[ "" ] || echo empty-false"#,
        [
            (
                r#"empty-false
"#,
                r#""#,
                0,
            ),
            (
                r#"empty-false
"#,
                r#""#,
                0,
            ),
            (
                r#"empty-false
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"test; echo $?"#,
        [
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"IFS=: read a b c <<EOF
1:2:3
EOF
echo $c$b$a"#,
        [
            (
                r#"321
"#, r#""#, 0,
            ),
            (
                r#"321
"#, r#""#, 0,
            ),
            (
                r#"321
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"IFS= read -r line <<EOF
  spaced  line  
EOF
echo "[$line]""#,
        [
            (
                r#"[  spaced  line  ]
"#,
                r#""#,
                0,
            ),
            (
                r#"[  spaced  line  ]
"#,
                r#""#,
                0,
            ),
            (
                r#"[  spaced  line  ]
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cat <<EOF | tr a-z A-Z
piped heredoc
EOF"#,
        [
            (
                r#"PIPED HEREDOC
"#,
                r#""#,
                0,
            ),
            (
                r#"PIPED HEREDOC
"#,
                r#""#,
                0,
            ),
            (
                r#"PIPED HEREDOC
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=$(cat <<EOF
inside
EOF
); echo $x"#,
        [
            (
                r#"inside
"#,
                r#""#,
                0,
            ),
            (
                r#"inside
"#,
                r#""#,
                0,
            ),
            (
                r#"inside
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"shopt -s nullglob; echo /nomatch*; echo end"#,
        [
            (
                r#"/nomatch*
end
"#,
                r#"sh: shopt: not found
"#,
                0,
            ),
            (
                r#"/nomatch*
end
"#,
                r#"sh: 1: shopt: not found
"#,
                0,
            ),
            (
                r#"
end
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"declare -A m; echo rc=$?"#,
        [
            (
                r#"rc=127
"#,
                r#"sh: declare: not found
"#,
                0,
            ),
            (
                r#"rc=127
"#,
                r#"sh: 1: declare: not found
"#,
                0,
            ),
            (
                r#"rc=0
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"select x in a b; do echo $x; done < /dev/null; echo rc=$?"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected "do"
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "do" unexpected
"#,
                2,
            ),
            (
                r#"
rc=1
"#,
                r#"1) a
2) b
#? "#,
                0,
            ),
        ],
    ),
    (
        r#"diff <(echo a) <(echo a); echo rc=$?"#,
        [
            (
                r#"rc=0
"#, r#""#, 0,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "(" unexpected
"#,
                2,
            ),
            (
                r#"rc=0
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo ${x@Q}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: bad substitution
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Bad substitution
"#,
                2,
            ),
            (
                r#"
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"coproc cat; echo rc=$?"#,
        [
            (
                r#"rc=127
"#,
                r#"sh: coproc: not found
"#,
                0,
            ),
            (
                r#"rc=127
"#,
                r#"sh: 1: coproc: not found
"#,
                0,
            ),
            (
                r#"rc=0
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'echo "[$0] [$1] [$#]"\nfoo\necho line3 $LINENO\n' > /tmp/w/s.sh; sh /tmp/w/s.sh a b; echo rc=$?"#,
        [
            (
                r#"[/tmp/w/s.sh] [a] [2]
line3 3
rc=0
"#,
                r#"/tmp/w/s.sh: line 2: foo: not found
"#,
                0,
            ),
            (
                r#"[/tmp/w/s.sh] [a] [2]
line3
rc=0
"#,
                r#"/tmp/w/s.sh: 2: foo: not found
"#,
                0,
            ),
            (
                r#"[/tmp/w/s.sh] [a] [2]
line3
rc=0
"#,
                r#"/tmp/w/s.sh: 2: foo: not found
"#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'x=sourced\nf() { echo in-f; }\n' > /tmp/w/lib.sh; . /tmp/w/lib.sh; echo $x; f"#,
        [
            (
                r#"sourced
in-f
"#,
                r#""#,
                0,
            ),
            (
                r#"sourced
in-f
"#,
                r#""#,
                0,
            ),
            (
                r#"sourced
in-f
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'return 3\necho not\n' > /tmp/w/r.sh; . /tmp/w/r.sh; echo rc=$?"#,
        [
            (
                r#"rc=3
"#, r#""#, 0,
            ),
            (
                r#"rc=3
"#, r#""#, 0,
            ),
            (
                r#"rc=3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#". /tmp/w/missing.sh; echo rc=$?"#,
        [
            (
                r#""#,
                r#"sh: .: line 0: can't open '/tmp/w/missing.sh': No such file or directory
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: .: cannot open /tmp/w/missing.sh: No such file
"#,
                2,
            ),
            (
                r#"rc=1
"#,
                r#"bash: line 1: /tmp/w/missing.sh: No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'if true; then\n' > /tmp/w/bad.sh; sh /tmp/w/bad.sh; echo rc=$?"#,
        [
            (
                r#"rc=2
"#,
                r#"/tmp/w/bad.sh: line 2: syntax error: unexpected end of file (expecting "fi")
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"/tmp/w/bad.sh: 2: Syntax error: end of file unexpected (expecting "fi")
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"/tmp/w/bad.sh: 2: Syntax error: end of file unexpected (expecting "fi")
"#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'cd /nope\necho after-cd\n' > /tmp/w/c.sh; sh /tmp/w/c.sh; echo rc=$?"#,
        [
            (
                r#"after-cd
rc=0
"#,
                r#"/tmp/w/c.sh: cd: line 1: can't cd to /nope: No such file or directory
"#,
                0,
            ),
            (
                r#"after-cd
rc=0
"#,
                r#"/tmp/w/c.sh: 1: cd: can't cd to /nope
"#,
                0,
            ),
            (
                r#"after-cd
rc=0
"#,
                r#"/tmp/w/c.sh: 1: cd: can't cd to /nope
"#,
                0,
            ),
        ],
    ),
    (
        r#"sh /tmp/w/none.sh; echo rc=$?"#,
        [
            (
                r#"rc=2
"#,
                r#"sh: can't open '/tmp/w/none.sh': No such file or directory
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"sh: 0: cannot open /tmp/w/none.sh: No such file
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"sh: 0: cannot open /tmp/w/none.sh: No such file
"#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'echo $1-$2\n' > /tmp/w/p.sh; sh -c '. /tmp/w/p.sh' x y z; sh /tmp/w/p.sh 1 2"#,
        [
            (
                r#"y-z
1-2
"#,
                r#""#,
                0,
            ),
            (
                r#"y-z
1-2
"#,
                r#""#,
                0,
            ),
            (
                r#"y-z
1-2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"sh -c 'echo $0 $1' name arg"#,
        [
            (
                r#"name arg
"#,
                r#""#,
                0,
            ),
            (
                r#"name arg
"#,
                r#""#,
                0,
            ),
            (
                r#"name arg
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"sh -c 'exit 3'; echo $?"#,
        [
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
            (
                r#"3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo 'echo from-stdin $((1+1))' | sh"#,
        [
            (
                r#"from-stdin 2
"#,
                r#""#,
                0,
            ),
            (
                r#"from-stdin 2
"#,
                r#""#,
                0,
            ),
            (
                r#"from-stdin 2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; echo a | cat"#,
        [
            (
                r#"a
"#,
                r#"+ cat
+ echo a
"#,
                0,
            ),
            (
                r#"a
"#,
                r#"+ echo a
+ cat
"#,
                0,
            ),
            (
                r#"a
"#,
                r#"+ echo a
+ cat
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; f() { echo in; }; f arg"#,
        [
            (
                r#"in
"#,
                r#"+ f arg
+ echo 'in'
"#,
                0,
            ),
            (
                r#"in
"#,
                r#"+ f arg
+ echo in
"#,
                0,
            ),
            (
                r#"in
"#,
                r#"+ f arg
+ echo in
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; for i in 1 2; do echo $i; done"#,
        [
            (
                r#"1
2
"#,
                r#"+ echo 1
+ echo 2
"#,
                0,
            ),
            (
                r#"1
2
"#,
                r#"+ echo 1
+ echo 2
"#,
                0,
            ),
            (
                r#"1
2
"#,
                r#"+ for i in 1 2
+ echo 1
+ for i in 1 2
+ echo 2
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; if [ 1 = 1 ]; then echo y; fi"#,
        [
            (
                r#"y
"#,
                r#"+ '[' 1 '=' 1 ]
+ echo y
"#,
                0,
            ),
            (
                r#"y
"#,
                r#"+ [ 1 = 1 ]
+ echo y
"#,
                0,
            ),
            (
                r#"y
"#,
                r#"+ '[' 1 = 1 ']'
+ echo y
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; x=$(echo sub); echo "$x""#,
        [
            (
                r#"sub
"#,
                r#"+ echo sub
+ x=sub
+ echo sub
"#,
                0,
            ),
            (
                r#"sub
"#,
                r#"+ echo sub
+ x=sub
+ echo sub
"#,
                0,
            ),
            (
                r#"sub
"#,
                r#"++ echo sub
+ x=sub
+ echo sub
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; case a in a) echo m;; esac"#,
        [
            (
                r#"m
"#,
                r#"+ echo m
"#,
                0,
            ),
            (
                r#"m
"#,
                r#"+ echo m
"#,
                0,
            ),
            (
                r#"m
"#,
                r#"+ case a in
+ echo m
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; while false; do :; done; echo out"#,
        [
            (
                r#"out
"#,
                r#"+ false
+ echo out
"#,
                0,
            ),
            (
                r#"out
"#,
                r#"+ false
+ echo out
"#,
                0,
            ),
            (
                r#"out
"#,
                r#"+ false
+ echo out
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; cd /tmp; pwd"#,
        [
            (
                r#"/tmp
"#,
                r#"+ cd /tmp
+ pwd
"#,
                0,
            ),
            (
                r#"/tmp
"#,
                r#"+ cd /tmp
+ pwd
"#,
                0,
            ),
            (
                r#"/tmp
"#,
                r#"+ cd /tmp
+ pwd
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; export E=1 F; echo $E"#,
        [
            (
                r#"1
"#,
                r#"+ export 'E=1' F
+ echo 1
"#,
                0,
            ),
            (
                r#"1
"#,
                r#"+ export E=1 F
+ echo 1
"#,
                0,
            ),
            (
                r#"1
"#,
                r#"+ export E=1 F
+ E=1
+ echo 1
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; a=1 b=2 env | grep -c ZZZ"#,
        [
            (
                r#"0
"#,
                r#"+ a=1 b=2 env
+ grep -c ZZZ
"#,
                1,
            ),
            (
                r#"0
"#,
                r#"+ grep -c ZZZ
+ a=1 b=2 env
"#,
                1,
            ),
            (
                r#"0
"#,
                r#"+ a=1
+ grep -c ZZZ
+ b=2
+ env
"#,
                1,
            ),
        ],
    ),
    (
        r#"set -x; true && false || echo recovered"#,
        [
            (
                r#"recovered
"#,
                r#"+ true
+ false
+ echo recovered
"#,
                0,
            ),
            (
                r#"recovered
"#,
                r#"+ true
+ false
+ echo recovered
"#,
                0,
            ),
            (
                r#"recovered
"#,
                r#"+ true
+ false
+ echo recovered
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; (echo subsh)"#,
        [
            (
                r#"subsh
"#,
                r#"+ echo subsh
"#,
                0,
            ),
            (
                r#"subsh
"#,
                r#"+ echo subsh
"#,
                0,
            ),
            (
                r#"subsh
"#,
                r#"+ echo subsh
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; { echo grp; } 2>/dev/null"#,
        [
            (
                r#"grp
"#, r#""#, 0,
            ),
            (
                r#"grp
"#, r#""#, 0,
            ),
            (
                r#"grp
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"set -x; echo $((1+2)) "${HOME%/*}""#,
        [
            (
                r#"3 
"#,
                r#"+ echo 3 
"#,
                0,
            ),
            (
                r#"3 
"#,
                r#"+ echo 3 
"#,
                0,
            ),
            (
                r#"3 
"#,
                r#"+ echo 3 ''
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; printf '%s\n' "with space" 'it'"'"'s'"#,
        [
            (
                r#"with space
it's
"#,
                r#"+ printf '%s\n' 'with space' 'it'"'"'s'
"#,
                0,
            ),
            (
                r#"with space
it's
"#,
                r#"+ printf %s\n with space it's
"#,
                0,
            ),
            (
                r#"with space
it's
"#,
                r#"+ printf '%s\n' 'with space' 'it'\''s'
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -ex; echo one; false; echo two"#,
        [
            (
                r#"one
"#,
                r#"+ echo one
+ false
"#,
                1,
            ),
            (
                r#"one
"#,
                r#"+ echo one
+ false
"#,
                1,
            ),
            (
                r#"one
"#,
                r#"+ echo one
+ false
"#,
                1,
            ),
        ],
    ),
    (
        r#"set -e; trap 'echo exit-trap $?' EXIT; false"#,
        [
            (
                r#"exit-trap 1
"#,
                r#""#,
                1,
            ),
            (
                r#"exit-trap 1
"#,
                r#""#,
                1,
            ),
            (
                r#"exit-trap 1
"#,
                r#""#,
                1,
            ),
        ],
    ),
    (
        r#"set -x; read v <<EOF"#,
        [
            (
                r#""#,
                r#"+ read v
"#,
                1,
            ),
            (
                r#""#,
                r#"+ read v
"#,
                1,
            ),
            (
                r#""#,
                r#"bash: line 1: warning: here-document at line 1 delimited by end-of-file (wanted `EOF')
+ read v
"#,
                1,
            ),
        ],
    ),
    (
        r#"line"#,
        [
            (
                r#""#,
                r#"sh: line: not found
"#,
                127,
            ),
            (
                r#""#,
                r#"sh: 1: line: not found
"#,
                127,
            ),
            (
                r#""#,
                r#"bash: line 1: line: command not found
"#,
                127,
            ),
        ],
    ),
    (
        r#"EOF"#,
        [
            (
                r#""#,
                r#"sh: EOF: not found
"#,
                127,
            ),
            (
                r#""#,
                r#"sh: 1: EOF: not found
"#,
                127,
            ),
            (
                r#""#,
                r#"bash: line 1: EOF: command not found
"#,
                127,
            ),
        ],
    ),
    (
        r#"set -x; local_test() { local z=3; echo $z; }; local_test"#,
        [
            (
                r#"3
"#,
                r#"+ local_test
+ local 'z=3'
+ echo 3
"#,
                0,
            ),
            (
                r#"3
"#,
                r#"+ local_test
+ local z=3
+ echo 3
"#,
                0,
            ),
            (
                r#"3
"#,
                r#"+ local_test
+ local z=3
+ echo 3
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; [ -f /etc/passwd ] && echo file"#,
        [
            (
                r#"file
"#,
                r#"+ '[' -f /etc/passwd ]
+ echo file
"#,
                0,
            ),
            (
                r#"file
"#,
                r#"+ [ -f /etc/passwd ]
+ echo file
"#,
                0,
            ),
            (
                r#"file
"#,
                r#"+ '[' -f /etc/passwd ']'
+ echo file
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; test -d /tmp || echo no"#,
        [
            (
                r#""#,
                r#"+ test -d /tmp
"#,
                0,
            ),
            (
                r#""#,
                r#"+ test -d /tmp
"#,
                0,
            ),
            (
                r#""#,
                r#"+ test -d /tmp
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; :"#,
        [
            (
                r#""#, r#"+ :
"#, 0,
            ),
            (
                r#""#, r#"+ :
"#, 0,
            ),
            (
                r#""#, r#"+ :
"#, 0,
            ),
        ],
    ),
    (
        r#"set -x; eval 'echo ev'"#,
        [
            (
                r#"ev
"#,
                r#"+ eval 'echo ev'
+ echo ev
"#,
                0,
            ),
            (
                r#"ev
"#,
                r#"+ eval echo ev
+ echo ev
"#,
                0,
            ),
            (
                r#"ev
"#,
                r#"+ eval 'echo ev'
++ echo ev
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; echo "$(echo "$(echo deep)")""#,
        [
            (
                r#"deep
"#,
                r#"+ echo deep
+ echo deep
+ echo deep
"#,
                0,
            ),
            (
                r#"deep
"#,
                r#"+ echo deep
+ echo deep
+ echo deep
"#,
                0,
            ),
            (
                r#"deep
"#,
                r#"+++ echo deep
++ echo deep
+ echo deep
"#,
                0,
            ),
        ],
    ),
    (
        r#"PS4='>> '; set -x; echo custom-ps4"#,
        [
            (
                r#"custom-ps4
"#,
                r#">> echo custom-ps4
"#,
                0,
            ),
            (
                r#"custom-ps4
"#,
                r#">> echo custom-ps4
"#,
                0,
            ),
            (
                r#"custom-ps4
"#,
                r#">> echo custom-ps4
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; echo *nomatch*"#,
        [
            (
                r#"*nomatch*
"#,
                r#"+ echo '*nomatch*'
"#,
                0,
            ),
            (
                r#"*nomatch*
"#,
                r#"+ echo *nomatch*
"#,
                0,
            ),
            (
                r#"*nomatch*
"#,
                r#"+ echo '*nomatch*'
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; x=; echo "[$x]""#,
        [
            (
                r#"[]
"#,
                r#"+ x=
+ echo '[]'
"#,
                0,
            ),
            (
                r#"[]
"#,
                r#"+ x=
+ echo []
"#,
                0,
            ),
            (
                r#"[]
"#,
                r#"+ x=
+ echo '[]'
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; arr=(1 2); echo ${arr[1]}"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected "("
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: "(" unexpected
"#,
                2,
            ),
            (
                r#"2
"#,
                r#"+ arr=(1 2)
+ echo 2
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; [[ -n x ]] && echo dbl"#,
        [
            (
                r#"dbl
"#,
                r#"+ '[[' -n x ]]
+ echo dbl
"#,
                0,
            ),
            (
                r#""#,
                r#"+ [[ -n x ]]
sh: 1: [[: not found
"#,
                127,
            ),
            (
                r#"dbl
"#,
                r#"+ [[ -n x ]]
+ echo dbl
"#,
                0,
            ),
        ],
    ),
    (
        r#"set -x; (( 2 > 1 )) && echo arith"#,
        [
            (
                r#""#,
                r#"+ 2
sh: 2: not found
"#,
                127,
            ),
            (
                r#""#,
                r#"+ 2
sh: 1: 2: not found
"#,
                127,
            ),
            (
                r#"arith
"#,
                r#"+ ((  2 > 1  ))
+ echo arith
"#,
                0,
            ),
        ],
    ),
    (
        r#"trap 'echo err-trap $?' ERR; false; echo after"#,
        [
            (
                r#"err-trap 1
after
"#,
                r#""#,
                0,
            ),
            (
                r#"after
"#,
                r#"trap: ERR: bad trap
"#,
                0,
            ),
            (
                r#"err-trap 1
after
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"set -e; trap 'echo caught' ERR; false; echo not-reached"#,
        [
            (
                r#"caught
"#,
                r#""#,
                1,
            ),
            (
                r#""#,
                r#"trap: ERR: bad trap
"#,
                1,
            ),
            (
                r#"caught
"#,
                r#""#,
                1,
            ),
        ],
    ),
    (
        r#"trap 'echo e' ERR; if false; then :; fi; false || true; echo quiet"#,
        [
            (
                r#"quiet
"#,
                r#""#,
                0,
            ),
            (
                r#"quiet
"#,
                r#"trap: ERR: bad trap
"#,
                0,
            ),
            (
                r#"quiet
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch a1 a2 b1 .h && echo a* && echo ?1 && echo [ab]2 && echo [!a]* && echo .* && echo *"#,
        [
            (
                r#"a1 a2
a1 b1
a2
b1
. .. .h
a1 a2 b1
"#,
                r#""#,
                0,
            ),
            (
                r#"a1 a2
a1 b1
a2
b1
. .. .h
a1 a2 b1
"#,
                r#""#,
                0,
            ),
            (
                r#"a1 a2
a1 b1
a2
b1
.h
a1 a2 b1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir d && touch d/x d/y && echo d/* && echo */x && echo d/[xy]"#,
        [
            (
                r#"d/x d/y
d/x
d/x d/y
"#,
                r#""#,
                0,
            ),
            (
                r#"d/x d/y
d/x
d/x d/y
"#,
                r#""#,
                0,
            ),
            (
                r#"d/x d/y
d/x
d/x d/y
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch 'sp ace' && for f in *; do echo "<$f>"; done"#,
        [
            (
                r#"<sp ace>
"#,
                r#""#,
                0,
            ),
            (
                r#"<sp ace>
"#,
                r#""#,
                0,
            ),
            (
                r#"<sp ace>
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch f && echo "*" '*' \* && echo f*"#,
        [
            (
                r#"* * *
f
"#,
                r#""#,
                0,
            ),
            (
                r#"* * *
f
"#,
                r#""#,
                0,
            ),
            (
                r#"* * *
f
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp && cd /tmp/w && cd - && pwd"#,
        [
            (
                r#"/tmp
/tmp
"#,
                r#""#,
                0,
            ),
            (
                r#"/tmp
/tmp
"#,
                r#""#,
                0,
            ),
            (
                r#"/tmp
/tmp
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir -p x/y && cd x/y && cd .. && pwd && cd ../.. && pwd"#,
        [
            (
                r#"/tmp/w/x
/tmp
"#,
                r#""#,
                0,
            ),
            (
                r#"/tmp/w/x
/tmp
"#,
                r#""#,
                0,
            ),
            (
                r#"/tmp/w/x
/tmp
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd; pwd"#,
        [
            (
                r#"/root
"#,
                r#""#,
                0,
            ),
            (
                r#"/root
"#,
                r#""#,
                0,
            ),
            (
                r#"/root
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"IFS=, read a b c <<< "1,2,3" 2>/dev/null; echo "$a|$b|$c""#,
        [
            (
                r#""#,
                r#"sh: syntax error: unexpected redirection
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: redirection unexpected
"#,
                2,
            ),
            (
                r#"1|2|3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x="a:b:c"; IFS=:; set -- $x; echo $# $2; IFS=' '"#,
        [
            (
                r#"3 b
"#, r#""#, 0,
            ),
            (
                r#"3 b
"#, r#""#, 0,
            ),
            (
                r#"3 b
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"v='a  b'; echo $v "$v""#,
        [
            (
                r#"a b a  b
"#,
                r#""#,
                0,
            ),
            (
                r#"a b a  b
"#,
                r#""#,
                0,
            ),
            (
                r#"a b a  b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"v="*"; echo $v | head -c 1 >/dev/null; echo ok"#,
        [
            (
                r#"ok
"#, r#""#, 0,
            ),
            (
                r#"ok
"#, r#""#, 0,
            ),
            (
                r#"ok
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"case A in [a-z]) echo lower;; [A-Z]) echo upper;; esac"#,
        [
            (
                r#"upper
"#,
                r#""#,
                0,
            ),
            (
                r#"upper
"#,
                r#""#,
                0,
            ),
            (
                r#"upper
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case foo.tar.gz in *.tar.*) echo tarball;; esac"#,
        [
            (
                r#"tarball
"#,
                r#""#,
                0,
            ),
            (
                r#"tarball
"#,
                r#""#,
                0,
            ),
            (
                r#"tarball
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case x in [!y]) echo not-y;; esac"#,
        [
            (
                r#"not-y
"#,
                r#""#,
                0,
            ),
            (
                r#"not-y
"#,
                r#""#,
                0,
            ),
            (
                r#"not-y
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case 5 in [0-9]) echo digit;; esac"#,
        [
            (
                r#"digit
"#,
                r#""#,
                0,
            ),
            (
                r#"digit
"#,
                r#""#,
                0,
            ),
            (
                r#"digit
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case "a b" in "a b") echo spaced;; esac"#,
        [
            (
                r#"spaced
"#,
                r#""#,
                0,
            ),
            (
                r#"spaced
"#,
                r#""#,
                0,
            ),
            (
                r#"spaced
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"case '' in *) echo star-empty;; esac"#,
        [
            (
                r#"star-empty
"#,
                r#""#,
                0,
            ),
            (
                r#"star-empty
"#,
                r#""#,
                0,
            ),
            (
                r#"star-empty
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"x=abc; case $x in a*c) echo pat1;; esac; case $x in *[b]*) echo pat2;; esac"#,
        [
            (
                r#"pat1
pat2
"#,
                r#""#,
                0,
            ),
            (
                r#"pat1
pat2
"#,
                r#""#,
                0,
            ),
            (
                r#"pat1
pat2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"while getopts ":ab:c" o -a -b x -c -z; do echo "$o ${OPTARG-}"; done"#,
        [
            (
                r#"a 
b x
c 
? z
"#,
                r#""#,
                0,
            ),
            (
                r#"a 
b x
c 
? z
"#,
                r#""#,
                0,
            ),
            (
                r#"a 
b x
c 
? z
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"f() { OPTIND=1; while getopts "n:" o; do echo "n=$OPTARG"; done; shift $((OPTIND-1)); echo "rest=$*"; }; f -n 3 a b"#,
        [
            (
                r#"n=3
rest=a b
"#,
                r#""#,
                0,
            ),
            (
                r#"n=3
rest=a b
"#,
                r#""#,
                0,
            ),
            (
                r#"n=3
rest=a b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%s\n' "$(printf 'x\ty')""#,
        [
            (
                r#"x	y
"#, r#""#, 0,
            ),
            (
                r#"x	y
"#, r#""#, 0,
            ),
            (
                r#"x	y
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%-10s|\n' hello"#,
        [
            (
                r#"hello     |
"#,
                r#""#,
                0,
            ),
            (
                r#"hello     |
"#,
                r#""#,
                0,
            ),
            (
                r#"hello     |
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%5.2s|\n' abcdef"#,
        [
            (
                r#"   ab|
"#,
                r#""#,
                0,
            ),
            (
                r#"   ab|
"#,
                r#""#,
                0,
            ),
            (
                r#"   ab|
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%c' A B; echo"#,
        [
            (
                r#"AB
"#, r#""#, 0,
            ),
            (
                r#"AB
"#, r#""#, 0,
            ),
            (
                r#"AB
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%d%%\n' 50"#,
        [
            (
                r#"50%
"#, r#""#, 0,
            ),
            (
                r#"50%
"#, r#""#, 0,
            ),
            (
                r#"50%
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%s\n'"#,
        [
            (
                r#"
"#, r#""#, 0,
            ),
            (
                r#"
"#, r#""#, 0,
            ),
            (
                r#"
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf -- '-%s\n' x"#,
        [
            (
                r#"-x
"#, r#""#, 0,
            ),
            (
                r#"-x
"#, r#""#, 0,
            ),
            (
                r#"-x
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo a\"#,
        [
            (
                r#"a\
"#, r#""#, 0,
            ),
            (
                r#"a\
"#, r#""#, 0,
            ),
            (
                r#"a\
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"b"#,
        [
            (
                r#""#,
                r#"sh: b: not found
"#,
                127,
            ),
            (
                r#""#,
                r#"sh: 1: b: not found
"#,
                127,
            ),
            (
                r#""#,
                r#"bash: line 1: b: command not found
"#,
                127,
            ),
        ],
    ),
    (
        r#"echo "a\"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unterminated quoted string
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: Unterminated quoted string
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: -c: line 1: unexpected EOF while looking for matching `"'
"#,
                2,
            ),
        ],
    ),
    (
        r#"b""#,
        [
            (
                r#""#,
                r#"sh: syntax error: unterminated quoted string
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: Unterminated quoted string
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: -c: line 1: unexpected EOF while looking for matching `"'
"#,
                2,
            ),
        ],
    ),
    (
        r#"echo 'a\"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unterminated quoted string
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: Unterminated quoted string
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: -c: line 1: unexpected EOF while looking for matching `''
"#,
                2,
            ),
        ],
    ),
    (
        r#"b'"#,
        [
            (
                r#""#,
                r#"sh: syntax error: unterminated quoted string
"#,
                2,
            ),
            (
                r#""#,
                r#"sh: 1: Syntax error: Unterminated quoted string
"#,
                2,
            ),
            (
                r#""#,
                r#"bash: -c: line 1: unexpected EOF while looking for matching `''
"#,
                2,
            ),
        ],
    ),
    (
        r#"x=1; [ $x -eq 1 ] && [ $x -ne 2 ] && [ $x -ge 1 ] && [ $x -le 1 ] && echo nums"#,
        [
            (
                r#"nums
"#, r#""#, 0,
            ),
            (
                r#"nums
"#, r#""#, 0,
            ),
            (
                r#"nums
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"[ -z "$undefined_xyz" ] && echo undef-empty"#,
        [
            (
                r#"undef-empty
"#,
                r#""#,
                0,
            ),
            (
                r#"undef-empty
"#,
                r#""#,
                0,
            ),
            (
                r#"undef-empty
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"[ "abc" = "abc" -a 1 -eq 1 ] && echo and"#,
        [
            (
                r#"and
"#, r#""#, 0,
            ),
            (
                r#"and
"#, r#""#, 0,
            ),
            (
                r#"and
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"[ "abc" = "x" -o 1 -eq 1 ] && echo or"#,
        [
            (
                r#"or
"#, r#""#, 0,
            ),
            (
                r#"or
"#, r#""#, 0,
            ),
            (
                r#"or
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"[ \( 1 -eq 1 \) ] && echo parens"#,
        [
            (
                r#"parens
"#,
                r#""#,
                0,
            ),
            (
                r#"parens
"#,
                r#""#,
                0,
            ),
            (
                r#"parens
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"test -n "" ; echo $?"#,
        [
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"umask; umask 077; umask"#,
        [
            (
                r#"0022
0077
"#,
                r#""#,
                0,
            ),
            (
                r#"0022
0077
"#,
                r#""#,
                0,
            ),
            (
                r#"0022
0077
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $(( 010 + 0x10 + 2 ))"#,
        [
            (
                r#"26
"#, r#""#, 0,
            ),
            (
                r#"26
"#, r#""#, 0,
            ),
            (
                r#"26
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo $(( -3 % 2 )) $(( 7 / -2 ))"#,
        [
            (
                r#"-1 -3
"#,
                r#""#,
                0,
            ),
            (
                r#"-1 -3
"#,
                r#""#,
                0,
            ),
            (
                r#"-1 -3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"a=5; echo $((a++)) $a $((++a)) $((a--)) $a"#,
        [
            (
                r#"5 6 7 7 6
"#,
                r#""#,
                0,
            ),
            (
                r#""#,
                r#"sh: 1: arithmetic expression: expecting primary: "a++"
"#,
                2,
            ),
            (
                r#"5 6 7 7 6
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo $(( 1 ? 2 : 3 )) $(( 0 ? 2 : 3 ))"#,
        [
            (
                r#"2 3
"#, r#""#, 0,
            ),
            (
                r#"2 3
"#, r#""#, 0,
            ),
            (
                r#"2 3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"x=3; echo $(( x > 2 && x < 5 ))"#,
        [
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
            (
                r#"1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo $(( 1 << 10 )) $(( 1024 >> 3 ))"#,
        [
            (
                r#"1024 128
"#,
                r#""#,
                0,
            ),
            (
                r#"1024 128
"#,
                r#""#,
                0,
            ),
            (
                r#"1024 128
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"i=0; while [ $i -lt 100 ]; do i=$((i+1)); done; echo $i"#,
        [
            (
                r#"100
"#, r#""#, 0,
            ),
            (
                r#"100
"#, r#""#, 0,
            ),
            (
                r#"100
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"s=0; for i in 1 2 3 4 5; do s=$((s+i*i)); done; echo $s"#,
        [
            (
                r#"55
"#, r#""#, 0,
            ),
            (
                r#"55
"#, r#""#, 0,
            ),
            (
                r#"55
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"n=10; f=1; while [ $n -gt 1 ]; do f=$((f*n)); n=$((n-1)); done; echo $f"#,
        [
            (
                r#"3628800
"#,
                r#""#,
                0,
            ),
            (
                r#"3628800
"#,
                r#""#,
                0,
            ),
            (
                r#"3628800
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"str=hello; rev=; i=${#str}; while [ $i -gt 0 ]; do i=$((i-1)); rev="$rev$(echo $str | cut -c$((i+1)))"; done; echo $rev"#,
        [
            (
                r#"olleh
"#,
                r#""#,
                0,
            ),
            (
                r#"olleh
"#,
                r#""#,
                0,
            ),
            (
                r#"olleh
"#,
                r#""#,
                0,
            ),
        ],
    ),
];
