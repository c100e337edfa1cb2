#!/usr/bin/env python3
"""Two readability measures of the Rust source (issue 26), not tests: the figures a refactoring
reports before and after.

  scripts/readability.py long-functions [--limit N] [--count] [PATH...]
      Functions longer than N lines (default 100), counted from the line of the `fn` keyword to
      the line of the closing brace, both included (`fn f() {}` on one line is 1). Nested
      functions and closures count inside their parent and also on their own. Prints
      `LINES path:line module::fn`, longest first, then the total.

  scripts/readability.py one-letter [--list] [--by-file] [PATH...]
      One-letter lowercase names bound by `let` (and `if let`/`while let`), `for` and function
      parameters, per 1,000 code lines (lines with code once comments, strings and blank lines
      are taken out); closure parameters are counted apart (a one-letter name in a tiny closure
      is fine). `_` is not a name. --by-file: one line per file, most first; --list: each
      binding as path:line name.

Default PATH: src. Strings, char literals and comments are blanked before matching, so braces
and words inside them count for nothing.
"""
import os
import re
import sys

FN = re.compile(r'\bfn\s+([A-Za-z_][A-Za-z0-9_]*)')


def strip(text):
    """The text with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text.startswith('/*', i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith('/*', j):
                    depth, j = depth + 1, j + 2
                elif text.startswith('*/', j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == 'r' and re.match(r'r#*"', text[i:i + 260]) and not (i and (text[i - 1].isalnum() or text[i - 1] == '_')):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            out.append(re.sub(r'[^\n]', ' ', text[i:j + 1]))
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'])'", text[i:i + 12])
            if m:  # a char literal; otherwise a lifetime or label
                out.append(' ' * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def functions(path):
    """(name, first line, line count) of every function with a body in the file."""
    code = strip(open(path, encoding='utf-8').read())
    line_of = [0] * (len(code) + 1)
    line = 1
    for idx, ch in enumerate(code):
        line_of[idx] = line
        if ch == '\n':
            line += 1
    line_of[len(code)] = line
    for m in FN.finditer(code):
        # The body opens at the first `{` before any `;` at depth 0 (a `;` first means a
        # declaration without body, as in a trait). Skip `{` inside the signature's generics? Rust
        # signatures hold no braces except in const generic args, which this tree does not use.
        j, depth_paren = m.end(), 0
        while j < len(code):
            ch = code[j]
            if ch in '([':
                depth_paren += 1
            elif ch in ')]':
                depth_paren -= 1
            elif ch == ';' and depth_paren == 0:
                j = -1
                break
            elif ch == '{' and depth_paren == 0:
                break
            j += 1
        if j < 0 or j >= len(code):
            continue
        depth, k = 0, j
        while k < len(code):
            if code[k] == '{':
                depth += 1
            elif code[k] == '}':
                depth -= 1
                if depth == 0:
                    break
            k += 1
        first = line_of[m.start()]
        yield m.group(1), first, line_of[k] - first + 1


def module_of(path, root):
    rel = os.path.relpath(path, root)[:-3].replace(os.sep, '::')
    return re.sub(r'(::)?(mod|lib|main)$', '', rel)


def long_functions(argv):
    limit, count_only, roots = 100, False, []
    args = iter(argv)
    for a in args:
        if a == '--limit':
            limit = int(next(args))
        elif a == '--count':
            count_only = True
        else:
            roots.append(a)
    roots = roots or ['src']
    found = []
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith('.rs'):
                    path = os.path.join(dirpath, f)
                    for name, first, lines in functions(path):
                        if lines > limit:
                            mod = module_of(path, root)
                            found.append((lines, f'{path}:{first}', f'{mod}::{name}' if mod else name))
    found.sort(key=lambda t: (-t[0], t[1]))
    if not count_only:
        for lines, where, name in found:
            print(f'{lines:5} {where} {name}')
    print(f'{len(found)} functions over {limit} lines')



ONE = re.compile(r'(?<![A-Za-z0-9_\'.])([a-z])(?![A-Za-z0-9_(!])')


def pattern_names(pattern):
    """One-letter names a pattern binds: not a field name (`a: x`) nor a path (`a::B`)."""
    names = []
    for m in ONE.finditer(pattern):
        rest = pattern[m.end():].lstrip()
        if rest.startswith(':') or pattern[:m.start()].rstrip().endswith('::'):
            continue
        names.append(m.group(1))
    return names


def until_depth0(code, start, stops):
    """Index in code of the first of `stops` (regexes) at bracket depth 0 from start, or -1."""
    depth, j, n = 0, start, len(code)
    while j < n:
        ch = code[j]
        if ch in '([{':
            if depth == 0 and '{' in stops and ch == '{':
                return j
            depth += 1
        elif ch in ')]}':
            if depth == 0:
                return -1
            depth -= 1
        elif depth == 0:
            for stop in stops:
                if stop != '{' and re.match(stop, code[j:j + 8]):
                    return j
        j += 1
    return -1


def bindings(code):
    """(offset, name, kind) of one-letter bindings: kind is let, for, param or closure."""
    for m in re.finditer(r'\blet\s+', code):
        end = until_depth0(code, m.end(), [r':(?!:)', r'=(?![=>])', r';'])
        if end > 0:
            for name in pattern_names(code[m.end():end]):
                yield m.start(), name, 'let'
    for m in re.finditer(r'\bfor\s+(?!<)', code):
        end = until_depth0(code, m.end(), [r'in\b', '{', ';'])
        if end > 0 and code.startswith('in', end):
            for name in pattern_names(code[m.end():end]):
                yield m.start(), name, 'for'
    for m in re.finditer(r'\bfn\s+[A-Za-z_][A-Za-z0-9_]*\s*', code):
        j = m.end()
        if code.startswith('<', j):  # generics: skip to the matching `>`
            depth = 0
            while j < len(code):
                depth += {'<': 1, '>': -1}.get(code[j], 0)
                j += 1
                if depth == 0:
                    break
        if not code.startswith('(', j):
            continue
        end = until_depth0(code, j + 1, [r'\)'])
        close = j + 1
        depth = 1
        while close < len(code) and depth:
            depth += {'(': 1, '[': 1, '{': 1, ')': -1, ']': -1, '}': -1}.get(code[close], 0)
            close += 1
        params, depth, piece = [], 0, ''
        for ch in code[j + 1:close - 1]:
            if ch in '([{<':
                depth += 1
            elif ch in ')]}>':
                depth -= 1
            if ch == ',' and depth == 0:
                params.append(piece)
                piece = ''
            else:
                piece += ch
        params.append(piece)
        del end
        for param in params:
            pat = re.split(r':(?!:)', param, maxsplit=1)[0]
            for name in pattern_names(pat):
                yield m.start(), name, 'param'
    # A closure's `|` follows `(`, `,`, `=`, `{`, `move`, `return` or `=>`; a bitwise or follows
    # an operand.
    for m in re.finditer(r'(?:[(,={;]|=>|\bmove|\breturn)\s*\|(?!\|)([^|]*)\|', code):
        for name in pattern_names(re.sub(r':[^,]*', '', m.group(1))):
            yield m.start(), name, 'closure'


def code_lines(code):
    return sum(1 for line in code.split('\n') if line.strip())


def one_letter(argv):
    show_list = '--list' in argv
    by_file = '--by-file' in argv
    roots = [a for a in argv if not a.startswith('--')] or ['src']
    total_lines, counts, per_file = 0, {}, []
    for root in roots:
        paths = [root] if root.endswith('.rs') else sorted(
            os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith('.rs'))
        for path in paths:
            code = strip(open(path, encoding='utf-8').read())
            lines = code_lines(code)
            total_lines += lines
            found = sorted(set(bindings(code)))
            outside = 0
            for offset, name, kind in found:
                counts[kind] = counts.get(kind, 0) + 1
                if kind != 'closure':
                    outside += 1
                    if show_list:
                        print(f'{path}:{code.count(chr(10), 0, offset) + 1} {kind} {name}')
            per_file.append((outside, lines, path))
    if by_file:
        for outside, lines, path in sorted(per_file, reverse=True):
            if outside:
                print(f'{outside:5} {lines:6} {path}')
    named = sum(v for k, v in counts.items() if k != 'closure')
    rate = 1000 * named / total_lines if total_lines else 0
    detail = ', '.join(f'{k} {counts.get(k, 0)}' for k in ('let', 'for', 'param'))
    print(f'{named} one-letter bindings ({detail}) in {total_lines} code lines: '
          f'{rate:.1f} per 1,000; closure parameters apart: {counts.get("closure", 0)}')


if __name__ == '__main__':
    commands = {'long-functions': long_functions, 'one-letter': one_letter}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit('usage: readability.py long-functions|one-letter [OPTIONS] [PATH...]')
    commands[sys.argv[1]](sys.argv[2:])
