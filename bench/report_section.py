"""One page, several writers: each benchmark script owns one section of
docs/benchmarks.md, delimited by HTML comments, and replaces only that section.

    <!-- BEGIN section:NAME (written by bench/SCRIPT; do not edit by hand) -->
    ...
    <!-- END section:NAME -->

A section that is not there yet is appended at the end of the page.
"""

import os
import re


def write_section(path, name, text, script):
    """Replaces (or appends) section `name` of the Markdown file `path`."""
    begin = f"<!-- BEGIN section:{name} (written by {script}; do not edit by hand) -->"
    end = f"<!-- END section:{name} -->"
    block = f"{begin}\n{text.rstrip()}\n{end}\n"
    old = ""
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    pattern = re.compile(
        r"<!-- BEGIN section:" + re.escape(name) + r" .*?-->.*?<!-- END section:"
        + re.escape(name) + r" -->\n?",
        re.S,
    )
    if pattern.search(old):
        new = pattern.sub(lambda _m: block, old, count=1)
    else:
        new = (old.rstrip() + "\n\n" if old.strip() else "") + block
    with open(path, "w") as f:
        f.write(new)
