#!/usr/bin/env python3
"""tests/docs/check_status.py README.md docs/performance.md: README's Status
quotes docs/performance.md and cannot drift from it.

Status is the part of README.md from "## Status" to the next "## ". Its
items are its paragraphs and bullets. An item that quotes a figure (a
number with a unit: 1.02x, 731 TFLOP/s, 4.42 ms, 14%, ...) must link the
sections of docs/performance.md it quotes (docs/performance.md#ANCHOR, the
anchor of a "## " heading as GitHub makes it), and then:

  - every number of every figure (both ends of a range, 1.00-1.06x) appears
    in the text of those sections, as a number;
  - every GPU it names (H100, H200, ...) is named in those sections' headings;
  - the first item that links a section links the latest one (the first
    "## " of docs/performance.md): a new run on top makes Status stale,
    and this check says so.

Prints one line per problem; exit status 1 when there is any, else 0."""

import re
import sys

FIGURE = re.compile(r"(\d+(?:\.\d+)?)(?:\s*(?:–|-|to)\s*(\d+(?:\.\d+)?))?\s*(×(?!\d)|%|TFLOP/s|GB/s|TB/s|ms\b|µs\b)")
GPU = re.compile(r"\b([HAB]\d00)\b")
LINK = re.compile(r"docs/performance\.md#([\w-]+)")


def anchor(heading):
    """GitHub's anchor of a heading: lower case, punctuation but - and _
    dropped, spaces as -."""
    a = heading.strip().lower()
    a = re.sub(r"[^\w\- ]", "", a)
    return a.replace(" ", "-")


def sections(perf):
    """[(anchor, heading, text)] of the "## " sections, in order."""
    out = []
    for part in re.split(r"(?m)^(?=## )", perf):
        if part.startswith("## "):
            head, _, body = part.partition("\n")
            out.append((anchor(head[3:]), head[3:], body))
    return out


def status_items(readme):
    m = re.search(r"(?ms)^## Status\n(.*?)(?=^## )", readme)
    if not m:
        return None
    items, cur = [], []
    for line in m.group(1).split("\n"):
        if line.startswith("- ") or not line.strip():
            if cur:
                items.append(" ".join(cur))
            cur = [line[2:]] if line.startswith("- ") else []
        else:
            cur.append(line.strip())
    if cur:
        items.append(" ".join(cur))
    return items


def has_number(text, num):
    return re.search(r"(?<![\d.])" + re.escape(num) + r"(?![\d])", text) is not None


def check(readme, perf):
    problems = []
    secs = sections(perf)
    if not secs:
        return ["docs/performance.md has no '## ' section"]
    by_anchor = {a: (h, t) for a, h, t in secs}
    items = status_items(readme)
    if items is None:
        return ["README.md has no '## Status' section"]
    first_linked = True
    for item in items:
        short = item[:60] + ("..." if len(item) > 60 else "")
        links = LINK.findall(item)
        figures = FIGURE.findall(item)
        bad = [a for a in links if a not in by_anchor]
        for a in bad:
            problems.append(f"Status links docs/performance.md#{a}, which is no '## ' section of it ({short})")
        links = [a for a in links if a in by_anchor]
        if links and first_linked:
            first_linked = False
            if secs[0][0] not in links:
                problems.append(f"Status's first item with figures does not quote the latest run "
                                f"(docs/performance.md#{secs[0][0]}): {short}")
        if figures and not links and not bad:
            problems.append(f"Status quotes {''.join(figures[0][:1])}{figures[0][2]} without linking the section "
                            f"of docs/performance.md it comes from: {short}")
            continue
        text = "\n".join(by_anchor[a][1] for a in links)
        heads = " ".join(by_anchor[a][0] for a in links)
        for lo, hi, unit in figures:
            for num in (lo, hi):
                if num and not has_number(text, num):
                    problems.append(f"Status says {num}{' ' if unit[0].isalpha() else ''}{unit}; the sections it "
                                    f"links ({', '.join(links)}) have no {num}")
        for gpu in GPU.findall(item):
            if gpu not in heads:
                problems.append(f"Status names the {gpu} beside sections of other GPUs ({', '.join(links)})")
    return problems


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n")[0])
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        readme = f.read()
    with open(sys.argv[2], encoding="utf-8") as f:
        perf = f.read()
    problems = check(readme, perf)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
