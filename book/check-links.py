#!/usr/bin/env python3
"""Check the book's relative links and anchors (plain python3, no packages).

Walks every .md file under book/src, expanding mdBook's {{#include FILE}} the way mdBook
does (a chapter's text is its own lines with each include replaced by the included file,
to any depth), plus the top-level README.md and CHANGELOG.md. For each link or image
`[text](TARGET)` outside code blocks and code spans, where TARGET is relative (no scheme,
not absolute):

- the file part must exist, resolved from the directory of the page it is read in: the
  chapter's for an included file (an include is text pasted into the chapter);
- a `#anchor` must be produced by a heading of the target page (or of this page for
  `#anchor` alone) under mdBook's rule: the heading's text lower-cased, white space
  turned into `-`, every character other than a letter, a digit, `_` or `-` dropped; a
  second heading with the same id gets `-1`, a third `-2`. `{#id}` after a heading and
  `id="..."`/`name="..."` in HTML also count. Anchors are checked only in .md targets.

Every broken link is printed with the file and line it is written on (the included
file's, for text that comes from an include) and the page it is read in; the exit code
is 1 when any is broken, 0 otherwise.

Usage: python3 book/check-links.py   (from anywhere; paths are taken from this file's place)
"""

import os
import re
import sys
from urllib.parse import unquote

BOOK = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(BOOK, "src")
ROOT = os.path.dirname(BOOK)

INCLUDE = re.compile(r"\{\{#include\s+([^\s}]+)\s*\}\}")
FENCE = re.compile(r"^\s*(```+|~~~+)")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ID = re.compile(r"""\b(?:id|name)\s*=\s*["']([^"']+)["']""")


def expand(path, depth=0):
    """The lines of `path` with includes expanded: a list of (text, file, line number)."""
    out = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for n, line in enumerate(lines, 1):
        m = INCLUDE.search(line)
        if m and depth < 10:
            target = m.group(1).split(":", 1)[0]
            inc = os.path.normpath(os.path.join(os.path.dirname(path), target))
            before, after = line[: m.start()], line[m.end() :]
            if before.strip():
                out.append((before, path, n))
            if os.path.isfile(inc):
                out.extend(expand(inc, depth + 1))
            else:
                out.append((line, path, n))  # reported below as a missing include
            if after.strip():
                out.append((after, path, n))
        else:
            out.append((line, path, n))
    return out


def prose(lines):
    """(text, file, line) for the lines outside fenced code blocks, code spans blanked."""
    fence = None
    for text, path, n in lines:
        m = FENCE.match(text)
        if fence is None and m:
            fence = m.group(1)[0] * 3
            continue
        if fence is not None:
            if text.strip().startswith(fence):
                fence = None
            continue
        yield re.sub(r"(`+)(?:(?!\1).)+?\1", lambda c: " " * len(c.group(0)), text), path, n


def heading_text(raw):
    """A heading's text as rendered: links to their text, emphasis and code marks gone."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.replace("`", "")
    text = re.sub(r"(\*+|\b_+|_+\b)(?=\S)(.+?)(?<=\S)\1", r"\2", text)
    return text


def slug(text):
    out = []
    for ch in text.strip():
        if ch.isalnum() or ch in "_-":
            out.append(ch.lower())
        elif ch.isspace():
            out.append("-")
    return "".join(out)


_anchors = {}


def anchors(path):
    """Every id a page produces (its headings under mdBook's rule, explicit ids)."""
    if path in _anchors:
        return _anchors[path]
    ids, seen = set(), {}
    fence = None
    for text, _, _ in expand(path):
        m = FENCE.match(text)
        if fence is None and m:
            fence = m.group(1)[0] * 3
            continue
        if fence is not None:
            if text.strip().startswith(fence):
                fence = None
            continue
        ids.update(HTML_ID.findall(text))
        h = HEADING.match(text)
        if not h:
            continue
        body = h.group(2)
        explicit = re.search(r"\{#([^\s}]+)[^}]*\}\s*$", body)
        if explicit:
            ids.add(explicit.group(1))
            continue
        base = slug(heading_text(body))
        k = seen.get(base, 0)
        seen[base] = k + 1
        ids.add(base if k == 0 else f"{base}-{k}")
    _anchors[path] = ids
    return ids


def check(page):
    """The broken links of one page (a chapter, or README.md / CHANGELOG.md)."""
    broken = []
    here = os.path.dirname(page)
    lines = expand(page)
    for text, path, n in lines:
        m = INCLUDE.search(text)
        if m:
            broken.append((path, n, page, m.group(0), "included file does not exist"))
    for text, path, n in prose(lines):
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("/"):
                continue
            file_part, _, anchor = target.partition("#")
            file_part = unquote(file_part)
            dest = os.path.normpath(os.path.join(here, file_part)) if file_part else page
            if not os.path.exists(dest):
                broken.append((path, n, page, target, "no such file"))
                continue
            if anchor and dest.endswith(".md") and os.path.isfile(dest):
                if unquote(anchor) not in anchors(dest):
                    broken.append((path, n, page, target, "no heading gives this anchor"))
    return broken


def main():
    pages = []
    for d, _, files in os.walk(SRC):
        pages += [os.path.join(d, f) for f in files if f.endswith(".md")]
    pages.sort()
    pages += [os.path.join(ROOT, f) for f in ("README.md", "CHANGELOG.md") if os.path.isfile(os.path.join(ROOT, f))]
    broken, links = [], 0
    for page in pages:
        links += sum(len(LINK.findall(t)) for t, _, _ in prose(expand(page)))
        broken += check(page)
    rel = lambda p: os.path.relpath(p, ROOT)
    for path, n, page, target, why in broken:
        via = "" if path == page else f" (read in {rel(page)})"
        print(f"{rel(path)}:{n}: {target}: {why}{via}")
    print(f"{len(pages)} pages, {links} links, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
