#!/usr/bin/env python3
"""Generates crates/images/data/official.txt: the tags, floating aliases and Dockerfile facts of the
Docker official images the catalogue covers.

It reads git mirrors (bare repositories) of docker-library/official-images and of the source
repositories its library files point at (nginx/docker-nginx, docker-library/python, ...):

    python3 tools/official.py --mirrors /path/to/mirrors --out data/official.txt nginx busybox ...

`--mirrors` holds `<owner>+<name>/repo` git directories. For every repository named it walks the
history of `library/<name>` up to the snapshot date, keeps each tag's last entry (so tags removed
from the library still exist, frozen at their last build), reads the Dockerfile that entry names
and emits what the catalogue needs: tag existence (compressed version sets), aliases, and per tag
pattern the config runs (FROM, ENTRYPOINT, CMD, ENV, EXPOSE, VOLUME, STOPSIGNAL, WORKDIR, USER).
Only facts are emitted; no Dockerfile text is copied.
"""
import argparse, collections, json, os, re, subprocess, sys

CUT = '2025-08-27'
MIRRORS = '/work/.mirror'

# --- official-images library history ------------------------------------------------------------
def git(*a):
    repo = f'{MIRRORS}/docker-library+official-images/repo'
    return subprocess.run(['git','-C',repo]+list(a),capture_output=True,text=True,errors='replace').stdout
def parse(text):
    """returns list of (tags, info dict)"""
    out=[]
    if 'Tags:' in text or 'GitRepo:' in text:
        glob={}
        entries=[]; cur=None
        for para in re.split(r'\n\s*\n', text):
            d={}
            for line in para.split('\n'):
                if line.startswith('#') or ':' not in line: continue
                k,v=line.split(':',1); d[k.strip()]=v.strip()
            if not d: continue
            if 'Tags' not in d and 'SharedTags' not in d:
                glob.update(d); continue
            e=dict(glob); e.update(d)
            tags=[t.strip() for t in (d.get('Tags','')+','+d.get('SharedTags','')).split(',') if t.strip()]
            shared=set(t.strip() for t in d.get('SharedTags','').split(',') if t.strip())
            out.append((tags,{'repo':e.get('GitRepo'),'commit':e.get('amd64-GitCommit',e.get('GitCommit')),'dir':e.get('amd64-Directory',e.get('Directory','.')),'file':e.get('amd64-File',e.get('File','Dockerfile')),'arch':e.get('Architectures',''),'tags':tags},shared))
    else:
        for line in text.split('\n'):
            line=line.strip()
            if not line or line.startswith('#'): continue
            m=re.match(r'([^:\s]+):\s*(\S+)@(\S+)(?:\s+(\S+))?',line)
            if m:
                out.append(([m.group(1)],{'repo':m.group(2),'commit':m.group(3),'dir':m.group(4) or '.','file':'Dockerfile','arch':''},set()))
    return out

def library_tags(name):
    
    commits=git('log','--full-history','--reverse','--before='+CUT,'--format=%H %cI','--','library/'+name).split('\n')
    tags={}
    for line in commits:
        if not line.strip(): continue
        c,date=line.split()
        text=git('show',c+':library/'+name)
        if not text: continue
        seen={}
        for ts,info,shared in parse(text):
            linux = not info['arch'] or any(not a.strip().startswith('windows') for a in info['arch'].split(','))
            for t in ts:
                rank=(linux, not (t in shared))
                if t in seen and seen[t]>rank: continue
                seen[t]=rank
                if t not in tags: tags[t]={'first':date}
                tags[t].update(info); tags[t]['last']=date; tags[t]['entry']=ts[0]; tags[t]['linux']=linux
    # which are current at cut
    last=commits[-2].split()[0] if commits[-1]=='' else commits[-1].split()[0]
    cur=set()
    for ts,info,_ in parse(git('show',last+':library/'+name)):
        cur.update(ts)
    for t in tags: tags[t]['current']= t in cur
    return tags
    

# --- Dockerfile facts ------------------------------------------------------------
MAP={'nginxinc/docker-nginx':'nginx+docker-nginx','nginx/docker-nginx':'nginx+docker-nginx',
 'docker-library/busybox':'docker-library+busybox','docker-library/redis':'docker-library+redis','redis/docker-library-redis':'redis+docker-library-redis',
 'docker-library/mysql':'docker-library+mysql','docker-library/python':'docker-library+python','docker-library/httpd':'docker-library+httpd',
 'docker-library/postgres':'docker-library+postgres','perl/docker-perl':'Perl+docker-perl','nodejs/docker-node':'nodejs+docker-node',
 'docker-library/php':'docker-library+php','tianon/docker-bash':'tianon+docker-bash','docker-library/wordpress':'docker-library+wordpress',
 'docker-library/golang':'docker-library+golang','docker-library/cassandra':'docker-library+cassandra','docker-library/mongo':'docker-library+mongo',
 'docker-library/memcached':'docker-library+memcached','docker-library/rabbitmq':'docker-library+rabbitmq'}
def mirror(url):
    M = MIRRORS
    m=re.search(r'github\.com/([^/]+/[^/.]+)',url or '')
    if not m: return None
    k=m.group(1)
    for a,b in MAP.items():
        if a.lower()==k.lower(): return f'{M}/{b}/repo'
    return None
def show(repo,spec):
    p=subprocess.run(['git','-C',repo,'show',spec],capture_output=True,text=True,errors='replace')
    return p.stdout if p.returncode==0 else None
def parse_df(text):
    lines=[]; buf=''
    for raw in text.split('\n'):
        s=raw.rstrip()
        if not buf and (s.strip().startswith('#') or not s.strip()): continue
        if buf and s.strip().startswith('#'): continue
        if s.endswith('\\'):
            buf+=s[:-1]; continue
        buf+=s; lines.append(buf.strip()); buf=''
    if buf: lines.append(buf.strip())
    res={'from':[], 'env':[], 'entrypoint':None,'cmd':None,'expose':[],'stopsignal':None,'workdir':None,'user':None,'volume':[],'copy':[]}
    args={}; cmd_set=False
    for l in lines:
        parts=l.split(None,1)
        if not parts: continue
        ins=parts[0].upper(); rest=parts[1] if len(parts)>1 else ''
        if ins=='FROM':
            cmd_set=False
            res['from'].append(rest)
            for k in ('env','expose','volume','copy','run'): res[k]=[]
            for k in ('entrypoint','cmd','stopsignal','workdir','user'): res[k]=None
        elif ins=='ARG':
            k,_,v=rest.partition('='); args[k.strip()]=v.strip().strip('"')
        elif ins=='ENV':
            # ENV values may name build ARGs (`ENV MONGO_PACKAGE=${MONGO_PACKAGE}`): use their defaults
            for an, av in args.items():
                rest = rest.replace('${'+an+'}', av)
            if '=' in rest.split(None,1)[0]:
                for m in re.finditer(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)',rest):
                    v=m.group(2)
                    if v.startswith('"'): v=v[1:-1]
                    res['env'].append((m.group(1),v))
            else:
                k,_,v=rest.partition(' '); res['env'].append((k,v.strip()))
        elif ins in ('ENTRYPOINT','CMD'):
            try: v=json.loads(rest)
            except Exception: v=['/bin/sh','-c',rest]
            res[ins.lower()]=v
            if ins=='ENTRYPOINT' and not cmd_set: res['cmd']=[]
            if ins=='CMD': cmd_set=True
        elif ins=='EXPOSE': res['expose']+=rest.split()
        elif ins=='STOPSIGNAL': res['stopsignal']=rest
        elif ins=='WORKDIR': res['workdir']=rest
        elif ins=='USER': res['user']=rest
        elif ins=='VOLUME':
            try: res['volume']+=json.loads(rest)
            except Exception: res['volume']+=rest.split()
        elif ins in ('COPY','ADD'): res['copy'].append(rest)
        elif ins=='RUN': res.setdefault('run',[]).append(rest)
    res['args']=args
    return res

def dockerfile_facts(tags):
    
    out={}
    cache={}
    for t,i in tags.items():
        repo=mirror(i['repo'])
        key=(i['repo'],i['commit'],i['dir'],i['file'])
        if key in cache: out[t]=cache[key]; continue
        r=None
        if repo:
            d=i['dir'].strip('/')
            f=i['file']
            path=(d+'/'+f) if d and d!='.' else f
            txt=show(repo,i['commit']+':'+path)
            if txt is not None:
                r=parse_df(txt)
                r['path']=path
        cache[key]=r; out[t]=r
    return out
    

# --- tag sets ------------------------------------------------------------
VER=re.compile(r'^((?:[a-z]+-)*)(\d+(?:\.\d+)*)((?:-.+)?)$')
def split(tag):
    m=VER.match(tag)
    if m: return m.group(2), m.group(1)+'@'+m.group(3)
    return None, tag
def vkey(v): return [int(x) for x in v.split('.')]
def vset(vs):
    # group by prefix
    groups=collections.defaultdict(list)
    for v in vs:
        p=v.rsplit('.',1)
        if len(p)==1: groups[''].append(p[0])
        else: groups[p[0]].append(p[1])
    items=[]
    for pre in sorted(groups, key=lambda x: vkey(x) if x else []):
        strs=set(groups[pre]); ns=sorted(int(x) for x in strs if x.isdigit() and (x=='0' or not x.startswith('0'))); other=sorted(strs-set(str(n) for n in ns))
        runs=[]; 
        for n in ns:
            if runs and n==runs[-1][1]+1: runs[-1][1]=n
            else: runs.append([n,n])
        parts=[f'{a}' if a==b else f'{a}..{b}' for a,b in runs]+other
        body=parts[0] if len(parts)==1 and '..' not in parts[0] else '{'+','.join(parts)+'}'
        items.append((pre+'.' if pre else '')+body)
    return ' '.join(items)
DROP=re.compile(r'(rc\d*|RC\d*|beta|alpha|\d(a|b)\d|devel|nanoserver|windowsservercore|ltsc|\d{8}|(^|-)[Mm]\d\d|snapshot)')
def keep(t): return not DROP.search(t)

# --- output ------------------------------------------------------------


def vk(v): return tuple(int(x) for x in v.split('.'))
DROP_ENV = re.compile(r'(SHA|MD5|ASC_URL|GPG|_KEYS?$|_KEY_IDS?$|SIG|CHECKSUM|PGP|SOURCE_SHA|DOWNLOAD_SHA|^PYTHON_GET_PIP_URL$|^PYTHON_PIP_VERSION$|^PYTHON_SETUPTOOLS_VERSION$|^PYTHON_WHEEL_VERSION$|_URL$|^OTP_VERSION$|^OPENSSL_VERSION$|^RABBITMQ_GITHUB_TAG$|_PATCH$|_BASELINE$|^YARN_VERSION$|^NPM_VERSION$|FLAGS$|_DEPS$|_EXTRA_|FILENAME$)')
PIN = re.compile(r'-(alpine3\.\d+|wheezy|jessie|stretch|buster|bullseye|bookworm|trixie|xenial|bionic|focal|jammy|noble|oraclelinux\d|debian)(?=-|$)')
def unpin(p):
    """Patterns a pinned pattern falls back to at runtime, in order (mirrors the Rust resolver)."""
    out = []
    q = re.sub(r'-(wheezy|jessie|stretch|buster|bullseye|bookworm|trixie|xenial|bionic|focal|jammy|noble)(?=-|$)', '', p)
    a = re.sub(r'-alpine3\.\d+', '-alpine', q)
    b = re.sub(r'-alpine3\.\d+', '', q)
    c = re.sub(r'-php\d+\.\d+', '', p)
    for x in (q, a, b, c):
        if x != p and x not in out: out.append(x)
    segs = p.split('-')
    while len(segs) > 1:
        segs = segs[:-1]
        x = '-'.join(segs)
        if x not in out: out.append(x)
    return out
COARSE = {'postgres': 1, 'php': 2, 'node': 1, 'golang': 2, 'rabbitmq': 2, 'mongo': 2, 'wordpress': 2, 'cassandra': 2, 'memcached': 2}
SKIP_GROUPS = {'php': re.compile(r'-zts'), 'wordpress': re.compile(r'-php\d')}
TEMPLATE_SKIP_ENV = set()

def vz(v):
    return v[:-2] if v.endswith('.0') and v.count('.') >= 2 else v

def template(val, v, key=''):
    if not v or '.' not in v: return val
    z = vz(v)
    if v in val: return val.replace(v, '{v}')
    if z != v and z in val and re.search(r'(^|[^0-9.])' + re.escape(z) + r'($|[^0-9])', val):
        return re.sub(r'(^|[^0-9.])' + re.escape(z) + r'(?=$|[^0-9])', lambda m: m.group(1) + '{vz}', val)
    if not re.search(r'MAJOR|VERSION|BASELINE|MINOR', key): return val
    parts = v.split('.')
    if len(parts) >= 3 and val == '.'.join(parts[:2]): return '{v2}'
    if len(parts) >= 2 and val == parts[0]: return '{v1}'
    return val

def render(x, v):
    if isinstance(x, str):
        parts = v.split('.')
        return x.replace('{vz}', vz(v)).replace('{v2}', '.'.join(parts[:2])).replace('{v1}', parts[0]).replace('{v}', v)
    if isinstance(x, list): return [render(i, v) for i in x]
    if isinstance(x, tuple): return tuple(render(i, v) for i in x)
    if isinstance(x, dict): return {k: render(i, v) for k, i in x.items()}
    return x

def enc(x):
    if x is None: return None
    if isinstance(x, list): return json.dumps(x, separators=(',', ':'))
    s = str(x)
    if s == '' or re.search(r'[\s"\[]', s) or s.startswith('-'): return json.dumps(s)
    return s

def facts(d, v):
    """Config fields of one build, templated against its version."""
    if not d: return None
    f = {}
    if d['from']:
        fr = d['from'][-1].split(' ')[0]
        f['from'] = template(fr, v)
    if d['entrypoint'] is not None: f['entrypoint'] = enc([template(a, v) for a in d['entrypoint']])
    if d['cmd'] is not None: f['cmd'] = enc([template(a, v) for a in d['cmd']])
    if d['expose']: f['expose'] = ','.join(p if '/' in p else p + '/tcp' for p in d['expose'])
    if d['volume']: f['volume'] = enc(d['volume'])
    if d['stopsignal']: f['stop'] = d['stopsignal']
    if d['workdir']: f['workdir'] = enc(template(d['workdir'], v))
    if d['user']: f['user'] = enc(d['user'])
    env = []
    for k, val in d['env']:
        if DROP_ENV.search(k): continue
        if len(val) > 300: continue
        env.append((k, template(val, v, k)))
    # ENV may repeat a key (rabbitmq PATH); keep docker semantics by keeping order, later wins at runtime
    f['env'] = env
    return f

def diff(prev, cur):
    out = []
    keys = ['from', 'entrypoint', 'cmd', 'expose', 'volume', 'stop', 'workdir', 'user']
    for k in keys:
        a, b = prev.get(k), cur.get(k)
        if a == b: continue
        if b is None: out.append('-' + k)
        else: out.append(f'{k}={enc(b) if k in ("from","expose","stop") else b}')
    if prev.get('env') != cur.get('env'):
        pe, ce = prev.get('env') or [], cur.get('env') or []
        ops = []; sim = list(pe)
        ck = dict(ce)
        for k, _ in pe:
            if k not in ck: ops.append('-env.' + k); sim = [(a, b) for a, b in sim if a != k]
        for k, val in ce:
            keys = [a for a, _ in sim]
            if k in keys:
                i = keys.index(k)
                if sim[i][1] != val: ops.append(f'env.{k}={enc(val)}'); sim[i] = (k, val)
            else:
                ops.append(f'env.{k}={enc(val)}'); sim.append((k, val))
        full = 'env=' + enc([f'{k}={val}' for k, val in ce])
        if sim == list(ce) and sum(len(o) + 1 for o in ops) < len(full): out += ops
        else: out.append(full)
    return out

def gen(name, canonical, out, t, d):
    tags = {k: x for k, x in t.items() if keep(k) and x.get('linux', True)}
    by = collections.defaultdict(set); words = []
    for tg in tags:
        v, s = split(tg)
        if v is None: words.append(tg)
        else: by[s].add(v)
    allv = set().union(*by.values()) if by else set()
    full = sorted({v for v in allv if not any(w.startswith(v + '.') for w in allv)}, key=vk)
    fullset = set(full); idx = {v: i for i, v in enumerate(full)}
    tagset = set(tags)
    L = out.append
    L(f'repo {canonical}')
    L(f'  source official-images library/{name}, history to 2025-08-27; Dockerfiles at the commits it names')
    if full: L('  versions ' + vset(full))
    # tag lines
    lines = collections.defaultdict(list)
    for s, vs in by.items():
        f = sorted((v for v in vs if v in idx), key=lambda v: idx[v])
        runs = []
        for v in f:
            i = idx[v]
            if runs and i == runs[-1][2] + 1: runs[-1][1] = v; runs[-1][2] = i
            else: runs.append([v, v, i])
        parts = [a if a == b else f'{a}..{b}' for a, b, _ in runs]
        derived = set()
        for v in f:
            p = v.split('.')
            for k in range(1, len(p)): derived.add('.'.join(p[:k]))
        partial = vs - set(f)
        parts += ['+' + x for x in sorted(partial - derived, key=vk)] + ['-' + x for x in sorted(derived - partial, key=vk)]
        lines[' '.join(parts)].append(s)
    for vs, ss in sorted(lines.items(), key=lambda x: sorted(x[1])):
        L('  tags ' + ' '.join(sorted(ss)) + ' : ' + vs)
    def exists(v, pat):
        tg = pat.replace('@', v)
        return tg in tagset
    def pattern_versions(pat):
        return sorted((v for v in by.get(pat, ()) if v in fullset), key=vk)
    # concrete resolution of every tag: (version, pattern)
    concrete = {}
    exc_partial = []
    for tg in tags:
        v, s = split(tg)
        if v is None or v in fullset:
            if v is not None: concrete[tg] = (v, s)
            continue
        # partial: expected highest full version of the pattern with that prefix
        cands = [w for w in pattern_versions(s) if w.startswith(v + '.')]
        rule = cands[-1] if cands else None
        entry = tags[tg].get('tags', [])
        actual = None
        for e in entry:
            ev, es = split(e)
            if ev in fullset and es == s: actual = ev; break
        if actual is None: actual = rule
        concrete[tg] = (actual, s)
        if actual != rule: exc_partial.append(f'{tg}={s.replace("@", actual)}')
    alias = collections.defaultdict(list); exc_word = []; selfwords = []
    for w in sorted(words):
        entry = tags[w].get('tags', [])
        cands = {}
        for e in entry:
            ev, es = split(e)
            if ev in fullset: cands.setdefault(es, ev)
        found = None
        segs = w.split('-')
        for i in range(0, len(segs) + 1):
            rest = '-'.join(segs[i:])
            pat = '@' if rest == '' else '@-' + rest
            if pat in cands: found = (cands[pat], pat); break
        if found is None:
            concrete[w] = (w, '@')  # its own build
            selfwords.append(w)
            continue
        V, pat = found
        # runtime rule: shortest base whose candidate exists in the tag set
        rt = None
        for i in range(0, len(segs) + 1):
            rest = '-'.join(segs[i:])
            p = '@' if rest == '' else '@-' + rest
            if exists(V, p): rt = p; break
        alias[V].append(w)
        if rt != pat: exc_word.append(f'{w}={pat.replace("@", V)}')
        concrete[w] = (V, pat)
    for V in sorted(alias, key=vk):
        L(f'  alias {V} ' + ' '.join(alias[V]))
    if selfwords: L('  words ' + ' '.join(selfwords))
    if exc_word: L('  word ' + ' '.join(exc_word))
    if exc_partial: L('  partial ' + ' '.join(exc_partial))
    # builds: concrete (version, pattern) -> facts
    builds = {}
    for tg, (v, s) in concrete.items():
        key = (v, s)
        ct = s.replace('@', v) if v in fullset else tg
        src = d.get(ct) or d.get(tg)
        if key not in builds or (builds[key] is None and src):
            builds[key] = facts(src, v if v in fullset else '')
    if not any(builds.values()):
        return
    if name in COARSE:
        # Coarse repositories: every patch of a release line takes the config of the line's
        # newest patch ({v} keeps the version variables exact).
        depth = COARSE[name]
        newest = {}
        for (v, s), f in builds.items():
            if f is None or not v or not re.match(r'^\d+(\.\d+)*$', v): continue
            line = (s, '.'.join(v.split('.')[:depth]))
            if line not in newest or vk(v) > vk(newest[line][0]): newest[line] = (v, f)
        for (v, s) in list(builds):
            if builds[(v, s)] is None or not v or not re.match(r'^\d+(\.\d+)*$', v): continue
            nv, nf = newest[(s, '.'.join(v.split('.')[:depth]))]
            builds[(v, s)] = nf
    # config groups: merge patterns whose builds agree on shared versions
    allpats = {s for (_, s) in builds}
    def pinned(p): return bool(re.search(r'-(alpine3\.\d+|wheezy|jessie|stretch|buster|bullseye|bookworm|trixie|xenial|bionic|focal|jammy|noble|php\d+\.\d+)(?=-|$)', p))
    skip = SKIP_GROUPS.get(name)
    pats = sorted((p for p in allpats if not (skip and skip.search(p)) and (not pinned(p) or not any(u in allpats for u in unpin(p)[:4]))), key=lambda p: (p.count('-'), len(p), p))
    groups = []
    for p in pats:
        mine = {v: f for (v, s), f in builds.items() if s == p and f is not None}
        if not mine: continue
        best = None; bo = 0
        for g in groups:
            shared = [v for v in mine if v in g['b']]
            if shared and all(g['b'][v] == mine[v] for v in shared) and len(shared) > bo:
                best, bo = g, len(shared)
        if best is not None and bo == len(mine):
            best['pats'].append(p)
        elif best is not None and bo >= max(1, len(mine) // 2):
            best['pats'].append(p); best['b'].update(mine)
        else:
            groups.append({'pats': [p], 'b': dict(mine)})
    for g in groups:
        L('  group ' + ' '.join(g['pats']))
        vs = sorted(g['b'], key=lambda v: vk(v) if re.match(r'^\d+(\.\d+)*$', v) else (10**9,))
        prev = {}; start = None; last = None; cur = None; pending = None
        def flush():
            if start is None: return
            rng = start if start == last else f'{start}..{last}'
            L(f'    run {rng} ' + ' '.join(pending) if pending else f'    run {rng}')
        for v in vs:
            f = g['b'][v]
            if cur is not None and re.match(r'^\d', v) and (f == cur or render(cur, v) == render(f, v)):
                last = v; continue
            flush()
            pending = diff(prev, f); prev = f; cur = f; start = v; last = v
        flush()


def main():
    global MIRRORS, CUT
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--mirrors', default=MIRRORS)
    ap.add_argument('--snapshot', default=CUT)
    ap.add_argument('--out', required=True)
    ap.add_argument('names', nargs='+')
    a = ap.parse_args()
    MIRRORS, CUT = a.mirrors, a.snapshot
    out = ['# Generated by tools/official.py: tags, aliases and Dockerfile facts of Docker official images.',
           f'# Tag history: docker-library/official-images library/<name> up to {CUT} (kubesim snapshot).',
           '# Pre-release, dated-snapshot and Windows tags are left out; build-only variables (checksums,',
           '# keys, URLs, compiler flags) are left out of ENV.', '']
    for name in a.names:
        tags = library_tags(name)
        facts = dockerfile_facts(tags)
        gen(name, f'docker.io/library/{name}', out, tags, facts)
        out.append('')
    open(a.out, 'w').write('\n'.join(out) + '\n')

if __name__ == '__main__':
    main()
