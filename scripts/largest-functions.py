#!/usr/bin/env python3
"""List the largest Rust functions (lines from `fn` to its closing brace), `#[cfg(test)] mod`
blocks left out. Usage: scripts/largest-functions.py [DIR...] (default: src crates); TOP=n."""
import os, re, sys

def strip(src):
    # replace comments, strings, chars with spaces, keep newlines
    out = []; i = 0; n = len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i); j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif src.startswith('/*', i):
            depth = 0; j = i
            while j < n:
                if src.startswith('/*', j): depth += 1; j += 2
                elif src.startswith('*/', j):
                    depth -= 1; j += 2
                    if depth == 0: break
                else: j += 1
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j
        elif re.match(r'b?r#*"', src[i:i+10]) and (i == 0 or not (src[i-1].isalnum() or src[i-1]=='_')):
            m = re.match(r'(b?r)(#*)"', src[i:]); hashes = m.group(2)
            end = src.find('"' + hashes, i + len(m.group(0)))
            j = end + 1 + len(hashes)
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == '\\' else 1
            j += 1
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", src[i:])
            if m:
                out.append(' ' * len(m.group(0))); i += len(m.group(0))
            else:
                out.append(c); i += 1
        else:
            out.append(c); i += 1
    return ''.join(out)

def functions(path):
    src = strip(open(path, encoding='utf-8').read())
    res = []
    for m in re.finditer(r'\bfn\s+([A-Za-z_][A-Za-z0-9_]*)', src):
        # find body start: first '{' at depth 0 of parens/brackets before ';'
        j = m.end(); depth = 0
        while j < len(src):
            ch = src[j]
            if ch in '([<': depth += 1
            elif ch in ')]>':
                if not (ch == '>' and src[j-1] == '-'): depth -= 1
            elif ch == ';' and depth <= 0: j = -1; break
            elif ch == '{' and depth <= 0: break
            j += 1
        if j < 0 or j >= len(src): continue
        d = 0; k = j
        while k < len(src):
            if src[k] == '{': d += 1
            elif src[k] == '}':
                d -= 1
                if d == 0: break
            k += 1
        start = src.count('\n', 0, m.start()) + 1
        end = src.count('\n', 0, k) + 1
        res.append((end - start + 1, path, start, m.group(1)))
    return res

def in_test(path, line, tests):
    return any(a <= line <= b for a, b in tests.get(path, []))

roots = sys.argv[1:] or ['src', 'crates']
allf = []
for root in roots:
    for dp, _, fs in os.walk(root):
        for f in fs:
            if f.endswith('.rs'):
                p = os.path.join(dp, f)
                text = open(p, encoding='utf-8').read()
                # exclude `mod tests { ... }` blocks
                s = strip(text); spans = []
                for m in re.finditer(r'#\[cfg\(test\)\]\s*mod\s+\w+\s*\{', s):
                    d = 0; k = m.end() - 1
                    while k < len(s):
                        if s[k] == '{': d += 1
                        elif s[k] == '}':
                            d -= 1
                            if d == 0: break
                        k += 1
                    spans.append((s.count('\n', 0, m.start()) + 1, s.count('\n', 0, k) + 1))
                for fn in functions(p):
                    if not any(a <= fn[2] <= b for a, b in spans):
                        allf.append(fn)
allf.sort(reverse=True)
for n, p, l, name in allf[:int(os.environ.get('TOP', '10'))]:
    print(f"{n:5} {p}:{l} {name}")
