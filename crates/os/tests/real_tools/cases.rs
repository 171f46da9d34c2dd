// Generated from GNU coreutils 9.1 / grep / sed / mawk / findutils on Debian 12 (run under bash 5.2)
// and busybox 1.35 applets (run under its ash), each with TZ=UTC LC_ALL=C and an empty /tmp/w.
// Each row: script, then (stdout, stderr, exit code) for GNU, busybox.
/// (stdout, stderr, exit code).
pub type Expect = (&'static str, &'static str, i32);
pub const CASES: &[(&str, [Expect; 2])] = &[
    (
        r#"cd /tmp/w && printf 'b\na\nc\n' > f && cat -n f"#,
        [
            (
                r#"     1	b
     2	a
     3	c
"#,
                r#""#,
                0,
            ),
            (
                r#"     1	b
     2	a
     3	c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && seq 1 20 > n && head -3 n && tail -2 n && head -n -17 n && tail -n +19 n"#,
        [
            (
                r#"1
2
3
19
20
1
2
3
19
20
"#,
                r#""#,
                0,
            ),
            (
                r#"1
2
3
19
20
1
2
3
19
20
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && seq 1 20 > n && head -c 5 n && echo && tail -c 6 n"#,
        [
            (
                r#"1
2
3
19
20
"#,
                r#""#,
                0,
            ),
            (
                r#"1
2
3
19
20
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf 'one two\nthree\n' > f && wc f && wc -l f && wc -w < f && wc -c f"#,
        [
            (
                r#" 2  3 14 f
2 f
3
14 f
"#,
                r#""#,
                0,
            ),
            (
                r#"        2         3        14 f
2 f
3
14 f
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a b\nc d e\n' | wc"#,
        [
            (
                r#"      2       5      10
"#,
                r#""#,
                0,
            ),
            (
                r#"        2         5        10
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf 'x\n' > a && printf 'y\nz\n' > b && wc -l a b"#,
        [
            (
                r#"1 a
2 b
3 total
"#,
                r#""#,
                0,
            ),
            (
                r#"        1 a
        2 b
        3 total
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '3 c\n1 a\n2 b\n' | sort -k2"#,
        [
            (
                r#"1 a
2 b
3 c
"#,
                r#""#,
                0,
            ),
            (
                r#"1 a
2 b
3 c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '3,c\n10,a\n2,b\n' | sort -t, -k1 -n"#,
        [
            (
                r#"2,b
3,c
10,a
"#,
                r#""#,
                0,
            ),
            (
                r#"2,b
3,c
10,a
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'b\na\nb\na\n' | sort -u"#,
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
        ],
    ),
    (
        r#"printf 'B\na\nC\n' | sort"#,
        [
            (
                r#"B
C
a
"#,
                r#""#,
                0,
            ),
            (
                r#"B
C
a
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'B\na\nC\n' | sort -f"#,
        [
            (
                r#"a
B
C
"#,
                r#""#,
                0,
            ),
            (
                r#"a
B
C
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\na\nb\nc\nc\n' | uniq -d"#,
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
        ],
    ),
    (
        r#"printf 'a\na\nb\nc\nc\n' | uniq -u"#,
        [
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
        r#"printf 'abcdef\n' | cut -c2-4"#,
        [
            (
                r#"bcd
"#, r#""#, 0,
            ),
            (
                r#"bcd
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a:b:c:d\n' | cut -d: -f2-"#,
        [
            (
                r#"b:c:d
"#,
                r#""#,
                0,
            ),
            (
                r#"b:c:d
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'hello world\n' | tr '[:lower:]' '[:upper:]'"#,
        [
            (
                r#"HELLO WORLD
"#,
                r#""#,
                0,
            ),
            (
                r#"HELLO WORLD
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'hello   world\n' | tr -s ' '"#,
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
        ],
    ),
    (r#"printf 'abc123\n' | tr -cd '0-9'"#, [(r#"123"#, r#""#, 0), (r#"123"#, r#""#, 0)]),
    (
        r#"printf 'hello\n' | tr 'el' 'ip'"#,
        [
            (
                r#"hippo
"#,
                r#""#,
                0,
            ),
            (
                r#"hippo
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\nc\nd\n' | sed -n '2,3p'"#,
        [
            (
                r#"b
c
"#, r#""#, 0,
            ),
            (
                r#"b
c
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\nc\n' | sed '1i\
first'"#,
        [
            (
                r#"first
a
b
c
"#,
                r#""#,
                0,
            ),
            (
                r#"first
a
b
c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\n' | sed '$a end'"#,
        [
            (
                r#"a
b
end
"#,
                r#""#,
                0,
            ),
            (
                r#"a
b
end
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\nc\n' | sed '/b/c\
B'"#,
        [
            (
                r#"a
B
c
"#,
                r#""#,
                0,
            ),
            (
                r#"a
B
c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'foo foo\n' | sed 's/foo/bar/2'"#,
        [
            (
                r#"foo bar
"#,
                r#""#,
                0,
            ),
            (
                r#"foo bar
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a.b.c\n' | sed 's/\./-/g'"#,
        [
            (
                r#"a-b-c
"#,
                r#""#,
                0,
            ),
            (
                r#"a-b-c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'key = value\n' | sed 's/^\([a-z]*\) *= *\(.*\)$/\2=\1/'"#,
        [
            (
                r#"value=key
"#,
                r#""#,
                0,
            ),
            (
                r#"value=key
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'x1\ny2\nx3\n' | sed '/^x/d'"#,
        [
            (
                r#"y2
"#, r#""#, 0,
            ),
            (
                r#"y2
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'abc\n' | sed 'y/abc/xyz/'"#,
        [
            (
                r#"xyz
"#, r#""#, 0,
            ),
            (
                r#"xyz
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'one\ntwo\nthree\n' | sed -n '/two/{p;q}'"#,
        [
            (
                r#"two
"#, r#""#, 0,
            ),
            (
                r#"two
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\n' | sed = "#,
        [
            (
                r#"1
a
2
b
"#,
                r#""#,
                0,
            ),
            (
                r#"1
a
2
b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'hello\n' | sed 's/l*/X/g'"#,
        [
            (
                r#"XhXeXoX
"#,
                r#""#,
                0,
            ),
            (
                r#"XhXeXoX
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a b c\n' | awk '{print NF, $NF}'"#,
        [
            (
                r#"3 c
"#, r#""#, 0,
            ),
            (
                r#"3 c
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a b c\n' | awk '{$2="X"; print}'"#,
        [
            (
                r#"a X c
"#,
                r#""#,
                0,
            ),
            (
                r#"a X c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '1 2\n3 4\n' | awk '{sum += $1 * $2} END {printf "%d\n", sum}'"#,
        [
            (
                r#"14
"#, r#""#, 0,
            ),
            (
                r#"14
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'x\ny\nx\n' | awk '{c[$1]++} END {for (k in c) print k, c[k]}'"#,
        [
            (
                r#"x 2
y 1
"#,
                r#""#,
                0,
            ),
            (
                r#"x 2
y 1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN {print length("hello"), substr("hello", 2, 3), index("hello", "ll"), toupper("a")}'"#,
        [
            (
                r#"5 ell 3 A
"#,
                r#""#,
                0,
            ),
            (
                r#"5 ell 3 A
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN {x = 5; y = x * 2; print x, y; print x / 2}'"#,
        [
            (
                r#"5 10
2.5
"#,
                r#""#,
                0,
            ),
            (
                r#"5 10
2.5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a,b\n' | awk -F, -v OFS=- '{print $1, $2}'"#,
        [
            (
                r#"a-b
"#, r#""#, 0,
            ),
            (
                r#"a-b
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'line1\nline2\n' | awk 'NR==1 {print "first:", $0; next} {print "other:", $0}'"#,
        [
            (
                r#"first: line1
other: line2
"#,
                r#""#,
                0,
            ),
            (
                r#"first: line1
other: line2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN {n = split("a:b:c", arr, ":"); print n, arr[2]}'"#,
        [
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
        r#"printf 'foo bar\n' | awk '{gsub(/o/, "0"); print}'"#,
        [
            (
                r#"f00 bar
"#,
                r#""#,
                0,
            ),
            (
                r#"f00 bar
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN {printf "%5.2f|%-4s|%03d\n", 3.14159, "ab", 7}'"#,
        [
            (
                r#" 3.14|ab  |007
"#,
                r#""#,
                0,
            ),
            (
                r#" 3.14|ab  |007
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '5\n3\n8\n' | awk 'BEGIN{max=0} $1>max {max=$1} END{print max}'"#,
        [
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
        r#"printf 'a b\n' | awk '{ if ($1 == "a") print "yes"; else print "no" }'"#,
        [
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
        r#"awk 'BEGIN { for (i = 0; i < 3; i++) printf "%d ", i; print "" }'"#,
        [
            (
                r#"0 1 2 
"#,
                r#""#,
                0,
            ),
            (
                r#"0 1 2 
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'ab\n' | awk '/a/ && /b/'"#,
        [
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
        r#"awk 'BEGIN { s = "x"; s = s "y" 1 + 2; print s }'"#,
        [
            (
                r#"xy3
"#, r#""#, 0,
            ),
            (
                r#"xy3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\n' | grep -c a"#,
        [
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
        r#"printf 'a\nb\n' | grep -v a"#,
        [
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
        r#"printf 'Hello\nhello\n' | grep -i hello"#,
        [
            (
                r#"Hello
hello
"#,
                r#""#,
                0,
            ),
            (
                r#"Hello
hello
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'abc123def\n' | grep -o '[0-9]*'"#,
        [
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
        r#"printf 'foo\nfoobar\n' | grep -w foo"#,
        [
            (
                r#"foo
"#, r#""#, 0,
            ),
            (
                r#"foo
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'ab\ncd\n' | grep -E 'a|c'"#,
        [
            (
                r#"ab
cd
"#,
                r#""#,
                0,
            ),
            (
                r#"ab
cd
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\n' | grep zzz; echo rc=$?"#,
        [
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
        r#"grep x /nonexistent; echo rc=$?"#,
        [
            (
                r#"rc=2
"#,
                r#"grep: /nonexistent: No such file or directory
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"grep: /nonexistent: No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir -p d/e && echo hit > d/e/f && echo miss > d/g && grep -r hit d"#,
        [
            (
                r#"d/e/f:hit
"#,
                r#""#,
                0,
            ),
            (
                r#"d/e/f:hit
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf 'x\n' > a && printf 'x\ny\n' > b && grep -l y a b && grep -c x a b"#,
        [
            (
                r#"b
a:1
b:1
"#,
                r#""#,
                0,
            ),
            (
                r#"b
a:1
b:1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq -s, 1 5"#,
        [
            (
                r#"1,2,3,4,5
"#,
                r#""#,
                0,
            ),
            (
                r#"1,2,3,4,5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq -w 8 11"#,
        [
            (
                r#"08
09
10
11
"#,
                r#""#,
                0,
            ),
            (
                r#"08
09
10
11
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq 0.5 0.5 2"#,
        [
            (
                r#"0.5
1.0
1.5
2.0
"#,
                r#""#,
                0,
            ),
            (
                r#"0.5
1.0
1.5
2.0
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq 5 -1 3"#,
        [
            (
                r#"5
4
3
"#,
                r#""#,
                0,
            ),
            (
                r#"5
4
3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"expr 7 \* 6"#,
        [
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
        r#"expr 8 % 3"#,
        [
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
        r#"expr hello : 'hel'"#,
        [
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
        r#"expr 1 = 2; echo rc=$?"#,
        [
            (
                r#"0
rc=1
"#,
                r#""#,
                0,
            ),
            (
                r#"0
rc=1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"expr index hello l"#,
        [
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
        r#"expr substr hello 2 3"#,
        [
            (
                r#"ell
"#, r#""#, 0,
            ),
            (
                r#"ell
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"expr 10 / 0; echo rc=$?"#,
        [
            (
                r#"rc=2
"#,
                r#"expr: division by zero
"#,
                0,
            ),
            (
                r#"rc=2
"#,
                r#"expr: division by zero
"#,
                0,
            ),
        ],
    ),
    (
        r#"date -u -d @0 +%Y-%m-%dT%H:%M:%S"#,
        [
            (
                r#"1970-01-01T00:00:00
"#,
                r#""#,
                0,
            ),
            (
                r#"1970-01-01T00:00:00
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"date -u -d '2026-03-04 05:06:07' '+%a %A %b %B %d %e %H %I %j %m %M %p %S %u %w %y %Y %Z %%'"#,
        [
            (
                r#"Wed Wednesday Mar March 04  4 05 05 063 03 06 AM 07 3 3 26 2026 UTC %
"#,
                r#""#,
                0,
            ),
            (
                r#"Wed Wednesday Mar March 04  4 05 05 063 03 06 AM 07 3 3 26 2026 UTC %
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"date -u -d @86400 +%s"#,
        [
            (
                r#"86400
"#,
                r#""#,
                0,
            ),
            (
                r#"86400
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"date -u -d '2026-12-01 09:04:57' -R"#,
        [
            (
                r#"Tue, 01 Dec 2026 09:04:57 +0000
"#,
                r#""#,
                0,
            ),
            (
                r#"Tue, 01 Dec 2026 09:04:57 +0000
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"date -u -d '2026-12-01 09:04:57' -I"#,
        [
            (
                r#"2026-12-01
"#,
                r#""#,
                0,
            ),
            (
                r#"2026-12-01
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"date -u -d '2026-12-01 09:04:57' -Iseconds"#,
        [
            (
                r#"2026-12-01T09:04:57+00:00
"#,
                r#""#,
                0,
            ),
            (
                r#"2026-12-01T09:04:57+00:00
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"date -u -d '2026-12-01 09:04:57'"#,
        [
            (
                r#"Tue Dec  1 09:04:57 UTC 2026
"#,
                r#""#,
                0,
            ),
            (
                r#"Tue Dec  1 09:04:57 UTC 2026
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"basename /usr/lib/ ; dirname /usr/lib/ ; dirname file ; basename a.tar.gz .gz"#,
        [
            (
                r#"lib
/usr
.
a.tar
"#,
                r#""#,
                0,
            ),
            (
                r#"lib
/usr
.
a.tar
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch -d '2026-01-02 03:04:05' f && stat -c '%n %s %a %A %U %G' f"#,
        [
            (
                r#"f 0 644 -rw-r--r-- root root
"#,
                r#""#,
                0,
            ),
            (
                r#"f 0 644 -rw-r--r-- root root
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir -p x/y && touch x/1 x/y/2 && find x | sort"#,
        [
            (
                r#"x
x/1
x/y
x/y/2
"#,
                r#""#,
                0,
            ),
            (
                r#"x
x/1
x/y
x/y/2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir -p x/y && touch x/1 x/y/2.txt && find x -name '*.txt'"#,
        [
            (
                r#"x/y/2.txt
"#,
                r#""#,
                0,
            ),
            (
                r#"x/y/2.txt
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir -p x/y && touch x/1 x/y/2 && find x -type d | sort"#,
        [
            (
                r#"x
x/y
"#,
                r#""#,
                0,
            ),
            (
                r#"x
x/y
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir -p x/y/z && find x -maxdepth 1 | sort"#,
        [
            (
                r#"x
x/y
"#,
                r#""#,
                0,
            ),
            (
                r#"x
x/y
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a b\nc\n' | xargs echo"#,
        [
            (
                r#"a b c
"#,
                r#""#,
                0,
            ),
            (
                r#"a b c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '1\n2\n3\n' | xargs -n 1 echo num"#,
        [
            (
                r#"num 1
num 2
num 3
"#,
                r#""#,
                0,
            ),
            (
                r#"num 1
num 2
num 3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\n' | xargs -I{} echo item-{}"#,
        [
            (
                r#"item-a
item-b
"#,
                r#""#,
                0,
            ),
            (
                r#"item-a
item-b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo -n hello | base64; echo"#,
        [
            (
                r#"aGVsbG8=

"#,
                r#""#,
                0,
            ),
            (
                r#"aGVsbG8=

"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo -n '' | md5sum"#,
        [
            (
                r#"d41d8cd98f00b204e9800998ecf8427e  -
"#,
                r#""#,
                0,
            ),
            (
                r#"d41d8cd98f00b204e9800998ecf8427e  -
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'hi' | sha256sum"#,
        [
            (
                r#"8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4  -
"#,
                r#""#,
                0,
            ),
            (
                r#"8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4  -
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"env -i A=1 B=2 env"#,
        [
            (
                r#"A=1
B=2
"#,
                r#""#,
                0,
            ),
            (
                r#"A=1
B=2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%s|%5s|%-5s|%.2s\n' x y z abcdef"#,
        [
            (
                r#"x|    y|z    |ab
"#,
                r#""#,
                0,
            ),
            (
                r#"x|    y|z    |ab
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%d %i %u\n' 42 -7 3"#,
        [
            (
                r#"42 -7 3
"#,
                r#""#,
                0,
            ),
            (
                r#"42 -7 3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%e %g\n' 12345.678 0.00001234"#,
        [
            (
                r#"1.234568e+04 1.234e-05
"#,
                r#""#,
                0,
            ),
            (
                r#"1.234568e+04 1.234e-05
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%%\n'"#,
        [
            (
                r#"%
"#, r#""#, 0,
            ),
            (
                r#"%
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%b\n' 'a\tb\n'"#,
        [
            (
                r#"a	b

"#, r#""#, 0,
            ),
            (
                r#"a	b

"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo | rev; echo abc | rev"#,
        [
            (
                r#"
cba
"#, r#""#, 0,
            ),
            (
                r#"
cba
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && echo data > s && cp s t && mv t u && ls && rm s u && ls"#,
        [
            (
                r#"s
u
"#, r#""#, 0,
            ),
            (
                r#"s
u
"#, r#""#, 0,
            ),
        ],
    ),
    (r#"cd /tmp/w && mkdir e && rmdir e && ls"#, [(r#""#, r#""#, 0), (r#""#, r#""#, 0)]),
    (
        r#"cd /tmp/w && mkdir e && touch e/f && rmdir e; echo rc=$?"#,
        [
            (
                r#"rc=1
"#,
                r#"rmdir: failed to remove 'e': Directory not empty
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"rmdir: 'e': Directory not empty
"#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && rm -r nope; echo rc=$?"#,
        [
            (
                r#"rc=1
"#,
                r#"rm: cannot remove 'nope': No such file or directory
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"rm: can't remove 'nope': No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && rm -f nope; echo rc=$?"#,
        [
            (
                r#"rc=0
"#, r#""#, 0,
            ),
            (
                r#"rc=0
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir d && rm d; echo rc=$?"#,
        [
            (
                r#"rc=1
"#,
                r#"rm: cannot remove 'd': Is a directory
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"rm: 'd' is a directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && ln -s target link && ls -l link | cut -c1-10"#,
        [
            (
                r#"lrwxrwxrwx
"#,
                r#""#,
                0,
            ),
            (
                r#"lrwxrwxrwx
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch f && chmod 751 f && stat -c %a f && chmod u-x,o+w f && stat -c %A f"#,
        [
            (
                r#"751
-rw-r-x-wx
"#,
                r#""#,
                0,
            ),
            (
                r#"751
-rw-r-x-wx
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch f && chmod +x f && stat -c %a f"#,
        [
            (
                r#"755
"#, r#""#, 0,
            ),
            (
                r#"755
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf 'abc' > f && dd if=f of=g bs=1 count=2 2>/dev/null && cat g; echo"#,
        [
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
        r#"cd /tmp/w && touch -d '2026-01-02 03:04:05' a && mkdir -p b && touch -d '2026-01-02 03:04:05' b && touch -d '2026-01-02 03:04:05' . && ls -l"#,
        [
            (
                r#"total 4
-rw-r--r-- 1 root root    0 Jan  2  2026 a
drwxr-xr-x 2 root root 4096 Jan  2  2026 b
"#,
                r#""#,
                0,
            ),
            (
                r#"total 4
-rw-r--r--    1 root     root             0 Jan  2  2026 a
drwxr-xr-x    2 root     root          4096 Jan  2  2026 b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch -d '2026-01-02 03:04:05' a && ls -la a"#,
        [
            (
                r#"-rw-r--r-- 1 root root 0 Jan  2  2026 a
"#,
                r#""#,
                0,
            ),
            (
                r#"-rw-r--r--    1 root     root             0 Jan  2  2026 a
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir -p q/r && touch q/s && ls -R q"#,
        [
            (
                r#"q:
r
s

q/r:
"#,
                r#""#,
                0,
            ),
            (
                r#"q:
r
s

q/r:
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch b a c && ls -1r"#,
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
        ],
    ),
    (
        r#"ls /nonexistent; echo rc=$?"#,
        [
            (
                r#"rc=2
"#,
                r#"ls: cannot access '/nonexistent': No such file or directory
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"ls: /nonexistent: No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"cat /nonexistent; echo rc=$?"#,
        [
            (
                r#"rc=1
"#,
                r#"cat: /nonexistent: No such file or directory
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"cat: can't open '/nonexistent': No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"mkdir /nonexistent/x; echo rc=$?"#,
        [
            (
                r#"rc=1
"#,
                r#"mkdir: cannot create directory '/nonexistent/x': No such file or directory
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"mkdir: can't create directory '/nonexistent/x': No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"touch /nonexistent/x; echo rc=$?"#,
        [
            (
                r#"rc=1
"#,
                r#"touch: cannot touch '/nonexistent/x': No such file or directory
"#,
                0,
            ),
            (
                r#"rc=1
"#,
                r#"touch: /nonexistent/x: No such file or directory
"#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && echo x > f && head -n 1 f g; echo rc=$?"#,
        [
            (
                r#"==> f <==
x
rc=1
"#,
                r#"head: cannot open 'g' for reading: No such file or directory
"#,
                0,
            ),
            (
                r#"==> f <==
x
rc=1
"#,
                r#"head: g: No such file or directory
"#,
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
        ],
    ),
    (
        r#"test -e /etc/passwd; echo $?"#,
        [
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
        r#"echo abc | md5sum | cut -c1-8"#,
        [
            (
                r#"0bee89b0
"#,
                r#""#,
                0,
            ),
            (
                r#"0bee89b0
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\tb\n' | cut -f2"#,
        [
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
        r#"printf '1\n2\n3\n4\n5\n' | sed -n '2~2p'"#,
        [
            (
                r#"2
4
"#, r#""#, 0,
            ),
            (
                r#""#,
                r#"sed: unsupported command ~
"#,
                1,
            ),
        ],
    ),
    (r#"printf 'x y\n' | awk '{print $1; print $2}' | tr '\n' ','"#, [(r#"x,y,"#, r#""#, 0), (r#"x,y,"#, r#""#, 0)]),
    (
        r#"cd /tmp/w && seq 1 1000 > big && touch -d '2026-01-02 03:04:05' big && ls -lh big && ls -l big | tr -s ' ' | cut -d' ' -f5"#,
        [
            (
                r#"-rw-r--r-- 1 root root 3.9K Jan  2  2026 big
3893
"#,
                r#""#,
                0,
            ),
            (
                r#"-rw-r--r--    1 root     root        3.8K Jan  2  2026 big
3893
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf 'x' > a && mkdir b && touch -d '2025-05-06 07:08:09' a b && ls -ld a b"#,
        [
            (
                r#"-rw-r--r-- 1 root root    1 May  6  2025 a
drwxr-xr-x 2 root root 4096 May  6  2025 b
"#,
                r#""#,
                0,
            ),
            (
                r#"-rw-r--r--    1 root     root             1 May  6  2025 a
drwxr-xr-x    2 root     root          4096 May  6  2025 b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch .hidden vis && ls -A && ls -a | head -2"#,
        [
            (
                r#".hidden
vis
.
..
"#,
                r#""#,
                0,
            ),
            (
                r#".hidden
vis
.
..
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir -p p/q && touch p/q/r && ls -lR p | grep -v total"#,
        [
            (
                r#"p:
drwxr-xr-x 2 root root 4096 Dec  1 10:51 q

p/q:
-rw-r--r-- 1 root root 0 Dec  1 10:51 r
"#,
                r#""#,
                0,
            ),
            (
                r#"p:
drwxr-xr-x    2 root     root          4096 Dec  1 10:51 q

p/q:
-rw-r--r--    1 root     root             0 Dec  1 10:51 r
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'b 2\na 10\nc 1\n' | sort -k2,2n"#,
        [
            (
                r#"c 1
b 2
a 10
"#,
                r#""#,
                0,
            ),
            (
                r#"c 1
b 2
a 10
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'b 2\na 10\nc 1\n' | sort -k2 -n -r"#,
        [
            (
                r#"a 10
b 2
c 1
"#,
                r#""#,
                0,
            ),
            (
                r#"a 10
b 2
c 1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '1\n10\n2\n' | sort"#,
        [
            (
                r#"1
10
2
"#,
                r#""#,
                0,
            ),
            (
                r#"1
10
2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'x\n' | sort -c; echo rc=$?"#,
        [
            (
                r#"rc=0
"#, r#""#, 0,
            ),
            (
                r#"rc=0
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a\tb\tc\n' | cut -f1,3"#,
        [
            (
                r#"a	c
"#, r#""#, 0,
            ),
            (
                r#"a	c
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'hello world foo\n' | cut -d' ' -f2-"#,
        [
            (
                r#"world foo
"#,
                r#""#,
                0,
            ),
            (
                r#"world foo
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'abc\n' | cut -c1,3"#,
        [
            (
                r#"ac
"#, r#""#, 0,
            ),
            (
                r#"ac
"#, r#""#, 0,
            ),
        ],
    ),
    (r#"printf 'Hello World\n' | tr -d '[:space:]'"#, [(r#"HelloWorld"#, r#""#, 0), (r#"HelloWorld"#, r#""#, 0)]),
    (
        r#"printf 'aaa\n' | tr a b"#,
        [
            (
                r#"bbb
"#, r#""#, 0,
            ),
            (
                r#"bbb
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'one\ntwo\nthree\n' | grep -n -v two"#,
        [
            (
                r#"1:one
3:three
"#,
                r#""#,
                0,
            ),
            (
                r#"1:one
3:three
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf 'a\nb\n' > x && printf 'b\nc\n' > y && grep -n b x y"#,
        [
            (
                r#"x:2:b
y:1:b
"#,
                r#""#,
                0,
            ),
            (
                r#"x:2:b
y:1:b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf 'a\nb\n' > x && grep -H a x && grep -h a x"#,
        [
            (
                r#"x:a
a
"#,
                r#""#,
                0,
            ),
            (
                r#"x:a
a
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'A1\nb2\n' | grep -E '^[A-Z][0-9]$'"#,
        [
            (
                r#"A1
"#, r#""#, 0,
            ),
            (
                r#"A1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a.b\naxb\n' | grep -F a.b"#,
        [
            (
                r#"a.b
"#, r#""#, 0,
            ),
            (
                r#"a.b
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'foo\n' | grep -q foo && echo found"#,
        [
            (
                r#"found
"#,
                r#""#,
                0,
            ),
            (
                r#"found
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'x\n' | grep -e x -e y"#,
        [
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
        r#"printf 'abc\n' | sed 's/b/\n/'"#,
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
        ],
    ),
    (
        r#"printf 'a b c\n' | sed 's/ /-/2'"#,
        [
            (
                r#"a b-c
"#,
                r#""#,
                0,
            ),
            (
                r#"a b-c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'path/to/file\n' | sed 's|/|:|g'"#,
        [
            (
                r#"path:to:file
"#,
                r#""#,
                0,
            ),
            (
                r#"path:to:file
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\n\nb\n' | sed '/^$/d'"#,
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
        ],
    ),
    (
        r#"printf 'x\n' | sed -e 's/x/y/' -e 's/y/z/'"#,
        [
            (
                r#"z
"#, r#""#, 0,
            ),
            (
                r#"z
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'line\n' | sed 's/.*/[&]/'"#,
        [
            (
                r#"[line]
"#,
                r#""#,
                0,
            ),
            (
                r#"[line]
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'aXbXc\n' | awk -FX '{print $3 $1}'"#,
        [
            (
                r#"ca
"#, r#""#, 0,
            ),
            (
                r#"ca
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'k1 v1\nk2 v2\n' | awk '$1 == "k2" {print $2}'"#,
        [
            (
                r#"v2
"#, r#""#, 0,
            ),
            (
                r#"v2
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '3\n1\n2\n' | awk '{a[NR]=$1} END {for (i=NR; i>0; i--) print a[i]}'"#,
        [
            (
                r#"2
1
3
"#,
                r#""#,
                0,
            ),
            (
                r#"2
1
3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN {printf "%s-%d-%.1f\n", "s", 42, 2.25}'"#,
        [
            (
                r#"s-42-2.2
"#,
                r#""#,
                0,
            ),
            (
                r#"s-42-2.2
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN {print substr("kubernetes", 5)}'"#,
        [
            (
                r#"rnetes
"#,
                r#""#,
                0,
            ),
            (
                r#"rnetes
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a b\n' | awk '{print NF; $5="e"; print; print NF}'"#,
        [
            (
                r#"2
a b   e
5
"#,
                r#""#,
                0,
            ),
            (
                r#"2
a b   e
5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'x=1\ny=2\n' | awk -F= '{sum += $2} END {print "total", sum}'"#,
        [
            (
                r#"total 3
"#,
                r#""#,
                0,
            ),
            (
                r#"total 3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN { if (!(3 in a)) print "absent"; a[3]; if (3 in a) print "present" }'"#,
        [
            (
                r#"absent
present
"#,
                r#""#,
                0,
            ),
            (
                r#"absent
present
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '1 2 3\n' | awk '{for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "\n")}'"#,
        [
            (
                r#"3 2 1
"#,
                r#""#,
                0,
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
        r#"awk 'BEGIN { x = "10"; y = 9; print (x > y) ? "num" : "str" }'"#,
        [
            (
                r#"str
"#, r#""#, 0,
            ),
            (
                r#"str
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'foo\n' | awk '{ sub(/o+/, "0"); print }'"#,
        [
            (
                r#"f0
"#, r#""#, 0,
            ),
            (
                r#"f0
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN { print length() }' </dev/null"#,
        [
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
        r#"printf 'a b c\n' | awk '{ $1 = ""; print }'"#,
        [
            (
                r#" b c
"#, r#""#, 0,
            ),
            (
                r#" b c
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'one\n' | awk 'END { print NR }'"#,
        [
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
        r#"seq 10 | awk 'NR % 3 == 0'"#,
        [
            (
                r#"3
6
9
"#,
                r#""#,
                0,
            ),
            (
                r#"3
6
9
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq 5 | tail -n 2 | head -n 1"#,
        [
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
        r#"seq 3 | tac 2>/dev/null || echo no-tac"#,
        [
            (
                r#"3
2
1
"#,
                r#""#,
                0,
            ),
            (
                r#"3
2
1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq 3 | paste -sd, 2>/dev/null || echo no-paste"#,
        [
            (
                r#"1,2,3
"#,
                r#""#,
                0,
            ),
            (
                r#"1,2,3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo 12345 | fold -w 2 2>/dev/null || echo no-fold"#,
        [
            (
                r#"12
34
5
"#,
                r#""#,
                0,
            ),
            (
                r#"12
34
5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%s\n' a b c | tee /tmp/w/t | wc -l; cat /tmp/w/t"#,
        [
            (
                r#"3
a
b
c
"#,
                r#""#,
                0,
            ),
            (
                r#"3
a
b
c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"date -u -d '2026-12-01 09:04:57' '+%H:%M:%S %D %T %R %F'"#,
        [
            (
                r#"09:04:57 12/01/26 09:04:57 09:04 2026-12-01
"#,
                r#""#,
                0,
            ),
            (
                r#"09:04:57 12/01/26 09:04:57 09:04 2026-12-01
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"date -u -d '2026-02-28 12:00:00' '+%j %U' 2>&1 | cut -c1-3"#,
        [
            (
                r#"059
"#, r#""#, 0,
            ),
            (
                r#"059
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"date -u -d @1700000000"#,
        [
            (
                r#"Tue Nov 14 22:13:20 UTC 2023
"#,
                r#""#,
                0,
            ),
            (
                r#"Tue Nov 14 22:13:20 UTC 2023
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"date -u +%Y -d @0"#,
        [
            (
                r#"1970
"#, r#""#, 0,
            ),
            (
                r#"1970
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"expr 3 + 4 \* 2"#,
        [
            (
                r#"11
"#, r#""#, 0,
            ),
            (
                r#"11
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"expr \( 3 + 4 \) \* 2"#,
        [
            (
                r#"14
"#, r#""#, 0,
            ),
            (
                r#"14
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"expr 5 - 8"#,
        [
            (
                r#"-3
"#, r#""#, 0,
            ),
            (
                r#"-3
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"expr abc \< abd"#,
        [
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
        r#"expr 0; echo rc=$?"#,
        [
            (
                r#"0
rc=1
"#,
                r#""#,
                0,
            ),
            (
                r#"0
rc=1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%5s|%-5s|%5.1f|%-8.3f|\n' ab cd 1.25 2.5"#,
        [
            (
                r#"   ab|cd   |  1.2|2.500   |
"#,
                r#""#,
                0,
            ),
            (
                r#"   ab|cd   |  1.2|2.500   |
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%s %s %s\n' 1 2"#,
        [
            (
                r#"1 2 
"#, r#""#, 0,
            ),
            (
                r#"1 2 
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '%08.3f|%+d|% d\n' 3.14159 5 7"#,
        [
            (
                r#"0003.142|+5| 7
"#,
                r#""#,
                0,
            ),
            (
                r#"0003.142|+5| 7
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%i|%u\n' 010 0x10"#,
        [
            (
                r#"8|16
"#, r#""#, 0,
            ),
            (
                r#"8|16
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a\\nb\n'"#,
        [
            (
                r#"a\nb
"#, r#""#, 0,
            ),
            (
                r#"a\nb
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '\101\102\n'"#,
        [
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
        r#"echo -e 'a\x41\0102' 2>/dev/null | od -c 2>/dev/null | head -1 || echo no-od"#,
        [
            (
                r#"0000000   a   A   B  \n
"#,
                r#""#,
                0,
            ),
            (
                r#"0000000   a   A   B  \n
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"basename a/b/ ; basename / ; dirname /a ; dirname a/b/c/"#,
        [
            (
                r#"b
/
/
a/b
"#,
                r#""#,
                0,
            ),
            (
                r#"b
/
/
a/b
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir -p m/n && touch m/n/o && find m -name o -type f && find m -mindepth 2"#,
        [
            (
                r#"m/n/o
m/n/o
"#,
                r#""#,
                0,
            ),
            (
                r#"m/n/o
m/n/o
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch a.txt b.log && find . -name '*.txt' -o -name '*.log' | sort"#,
        [
            (
                r#"./a.txt
./b.log
"#,
                r#""#,
                0,
            ),
            (
                r#"./a.txt
./b.log
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir e1 && touch f1 && find . -empty | sort"#,
        [
            (
                r#"./e1
./f1
"#,
                r#""#,
                0,
            ),
            (
                r#"./e1
./f1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\nc\n' | xargs -n 2 echo"#,
        [
            (
                r#"a b
c
"#,
                r#""#,
                0,
            ),
            (
                r#"a b
c
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a b' | xargs -0 echo 2>/dev/null"#,
        [
            (
                r#"a b
"#, r#""#, 0,
            ),
            (
                r#"a b
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo 'x y z' | xargs -n1 | sort -r"#,
        [
            (
                r#"z
y
x
"#,
                r#""#,
                0,
            ),
            (
                r#"z
y
x
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'aGk=' | base64 -d; echo"#,
        [
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
        r#"printf 'hello world' | base64 -w 8"#,
        [
            (
                r#"aGVsbG8g
d29ybGQ=
"#,
                r#""#,
                0,
            ),
            (
                r#"aGVsbG8g
d29ybGQ=
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '' | wc -c"#,
        [
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
        r#"printf 'no newline' | wc -l"#,
        [
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
        r#"printf 'a\nb\nc\n' | head -n 0; echo end"#,
        [
            (
                r#"end
"#, r#""#, 0,
            ),
            (
                r#"end
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\nc\n' | tail -n 0; echo end"#,
        [
            (
                r#"end
"#, r#""#, 0,
            ),
            (
                r#"end
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\nc\n' | tail -c 2"#,
        [
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
        r#"printf 'one\n' | cat - /dev/null"#,
        [
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
        r#"cd /tmp/w && printf 'x\n' > f && cat f f"#,
        [
            (
                r#"x
x
"#, r#""#, 0,
            ),
            (
                r#"x
x
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && echo hi > f && cat -n f /dev/null f"#,
        [
            (
                r#"     1	hi
     2	hi
"#,
                r#""#,
                0,
            ),
            (
                r#"     1	hi
     2	hi
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"yes abc | head -n 2"#,
        [
            (
                r#"abc
abc
"#,
                r#""#,
                0,
            ),
            (
                r#"abc
abc
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"echo 'a:b' | awk -F: -v OFS=/ '{$1=$1; print}'"#,
        [
            (
                r#"a/b
"#, r#""#, 0,
            ),
            (
                r#"a/b
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo | awk '{ print "empty line NF=" NF }'"#,
        [
            (
                r#"empty line NF=0
"#,
                r#""#,
                0,
            ),
            (
                r#"empty line NF=0
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'ab\tc\n' | od -c"#,
        [
            (
                r#"0000000   a   b  \t   c  \n
0000005
"#,
                r#""#,
                0,
            ),
            (
                r#"0000000   a   b  \t   c  \n
0000005
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'ab\tc\n' | od -An -tx1"#,
        [
            (
                r#" 61 62 09 63 0a
"#,
                r#""#,
                0,
            ),
            (
                r#" 61 62 09 63 0a
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'abc\n' | od"#,
        [
            (
                r#"0000000 061141 005143
0000004
"#,
                r#""#,
                0,
            ),
            (
                r#"0000000 061141 005143
0000004
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'abcdefghijklmnopqr' | od -c"#,
        [
            (
                r#"0000000   a   b   c   d   e   f   g   h   i   j   k   l   m   n   o   p
0000020   q   r
0000022
"#,
                r#""#,
                0,
            ),
            (
                r#"0000000   a   b   c   d   e   f   g   h   i   j   k   l   m   n   o   p
0000020   q   r
0000022
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq 10 | grep -A1 5"#,
        [
            (
                r#"5
6
"#, r#""#, 0,
            ),
            (
                r#"5
6
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"seq 10 | grep -B2 5"#,
        [
            (
                r#"3
4
5
"#,
                r#""#,
                0,
            ),
            (
                r#"3
4
5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq 20 | grep -C1 -E '^(5|15)$'"#,
        [
            (
                r#"4
5
6
--
14
15
16
"#,
                r#""#,
                0,
            ),
            (
                r#"4
5
6
--
14
15
16
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq 10 | grep -n -A1 -E '^(3|4)$'"#,
        [
            (
                r#"3:3
4:4
5-5
"#,
                r#""#,
                0,
            ),
            (
                r#"3:3
4:4
5-5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"seq 10 | grep -A1 -E '^(3|5)$'"#,
        [
            (
                r#"3
4
5
6
"#,
                r#""#,
                0,
            ),
            (
                r#"3
4
5
6
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf 'a\nb\n' > f && sed -i 's/a/A/' f && cat f"#,
        [
            (
                r#"A
b
"#, r#""#, 0,
            ),
            (
                r#"A
b
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf 'x\n' > f && sed -i.bak 's/x/y/' f && cat f f.bak"#,
        [
            (
                r#"y
x
"#, r#""#, 0,
            ),
            (
                r#"y
x
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf '3 a\n1 b\n2 c\n' > f && sort -o f f && cat f"#,
        [
            (
                r#"1 b
2 c
3 a
"#,
                r#""#,
                0,
            ),
            (
                r#"1 b
2 c
3 a
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a b c\nd e f\n' | awk '{print $1 > "/tmp/w/o"} END {close("/tmp/w/o")}'; cat /tmp/w/o"#,
        [
            (
                r#"a
d
"#, r#""#, 0,
            ),
            (
                r#"a
d
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'k v\n' | awk '{printf "%s=%s\n", $1, $2}'"#,
        [
            (
                r#"k=v
"#, r#""#, 0,
            ),
            (
                r#"k=v
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf '1\n2\n' | awk 'BEGIN{getline_unused=1} {print $1*10}'"#,
        [
            (
                r#"10
20
"#,
                r#""#,
                0,
            ),
            (
                r#"10
20
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a:b\n' | awk 'BEGIN { FS=":" } { print $2 }'"#,
        [
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
        r#"printf 'x\n' | awk '{ print toupper(substr($0,1,1)) substr($0,2) }'"#,
        [
            (
                r#"X
"#, r#""#, 0,
            ),
            (
                r#"X
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN { s = sprintf("%03d-%s", 7, "x"); print s, length(s) }'"#,
        [
            (
                r#"007-x 5
"#,
                r#""#,
                0,
            ),
            (
                r#"007-x 5
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'aa bb\n' | awk '{ n = gsub(/a/, "x"); print n, $0 }'"#,
        [
            (
                r#"2 xx bb
"#,
                r#""#,
                0,
            ),
            (
                r#"2 xx bb
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '10 20\n' | awk '{ print ($1 < $2), ($1 "" < $2 "") }'"#,
        [
            (
                r#"1 1
"#, r#""#, 0,
            ),
            (
                r#"1 1
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN { print 1/3 }'"#,
        [
            (
                r#"0.333333
"#,
                r#""#,
                0,
            ),
            (
                r#"0.333333
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"awk 'BEGIN { print 100000000, 1e6, 0.1+0.2 }'"#,
        [
            (
                r#"100000000 1000000 0.3
"#,
                r#""#,
                0,
            ),
            (
                r#"100000000 1000000 0.3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf 'a\nb\nc\n' | awk 'NR>1 {print prev} {prev=$0}'"#,
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
        ],
    ),
    (
        r#"ls /tmp/w/nope 2>&1; echo rc=$?"#,
        [
            (
                r#"ls: cannot access '/tmp/w/nope': No such file or directory
rc=2
"#,
                r#""#,
                0,
            ),
            (
                r#"ls: /tmp/w/nope: No such file or directory
rc=1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && touch -d '2026-01-01 00:00:00' old && touch -d '2026-06-01 00:00:00' new && ls -t && ls -tr"#,
        [
            (
                r#"new
old
old
new
"#,
                r#""#,
                0,
            ),
            (
                r#"new
old
old
new
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf '12345' > big && printf '1' > small && ls -S && ls -F"#,
        [
            (
                r#"big
small
big
small
"#,
                r#""#,
                0,
            ),
            (
                r#"big
small
big
small
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && mkdir dir && touch exe && chmod +x exe && ls -F && ls -p"#,
        [
            (
                r#"dir/
exe*
dir/
exe
"#,
                r#""#,
                0,
            ),
            (
                r#"dir/
exe*
dir/
exe
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"du -s /tmp/w | cut -f2"#,
        [
            (
                r#"/tmp/w
"#,
                r#""#,
                0,
            ),
            (
                r#"/tmp/w
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"cd /tmp/w && printf 'abc' > f && du -b f 2>/dev/null | cut -f1 || echo nob"#,
        [
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
        r#"wc -m < /dev/null"#,
        [
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
        r#"printf 'héllo\n' | wc -c"#,
        [
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
        r#"printf 'a\nb\n' | head -q -n1"#,
        [
            (
                r#"a
"#, r#""#, 0,
            ),
            (
                r#"a
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"echo 'a b' | cut -b1"#,
        [
            (
                r#"a
"#, r#""#, 0,
            ),
            (
                r#"a
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'A\na\n' | uniq -i"#,
        [
            (
                r#"A
"#, r#""#, 0,
            ),
            (
                r#"A
"#, r#""#, 0,
            ),
        ],
    ),
    (
        r#"printf 'b 1\na 1\nb 2\n' | sort -u -k1,1"#,
        [
            (
                r#"a 1
b 1
"#,
                r#""#,
                0,
            ),
            (
                r#"a 1
b 1
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '%s\n' 1 2 3 | xargs -r echo got"#,
        [
            (
                r#"got 1 2 3
"#,
                r#""#,
                0,
            ),
            (
                r#"got 1 2 3
"#,
                r#""#,
                0,
            ),
        ],
    ),
    (
        r#"printf '' | xargs -r echo never; echo done"#,
        [
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
        r#"printf '' | xargs echo empty"#,
        [
            (
                r#"empty
"#,
                r#""#,
                0,
            ),
            (
                r#"empty
"#,
                r#""#,
                0,
            ),
        ],
    ),
];
