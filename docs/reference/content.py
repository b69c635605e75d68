#!/usr/bin/python3
"""Copies docs/*.md for gi-docgen: a `Title:` line from the first heading
(gi-docgen's page title), and links between the pages pointed at the
generated .html files. The Markdown in docs/ stays plain for GitHub.
Usage: content.py OUTPUT_DIR PAGE.md..."""
import os
import re
import sys

out_dir = sys.argv[1]
pages = sys.argv[2:]
names = {os.path.basename(p) for p in pages}
os.makedirs(out_dir, exist_ok=True)
for page in pages:
    with open(page, encoding="utf-8") as f:
        text = f.read()
    heading = re.search(r"^# (.+)$", text, re.M)
    title = heading.group(1).strip() if heading else os.path.basename(page)[:-3]

    def link(match):
        target, anchor = match.group(1), match.group(2) or ""
        return "](%s.html%s)" % (target[:-3], anchor) if target in names else match.group(0)

    text = re.sub(r"\]\(([A-Za-z0-9_.-]+\.md)(#[^)]*)?\)", link, text)
    with open(os.path.join(out_dir, os.path.basename(page)), "w", encoding="utf-8") as f:
        f.write("Title: %s\n\n%s" % (title, text))
