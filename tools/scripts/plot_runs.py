#!/usr/bin/env python3
"""Curves of drk runs as an SVG image (no plotting library needed).

    plot_runs.py OUT.svg METRIC LABEL=RUN_OUTPUT.txt [LABEL=RUN_OUTPUT.txt ...]
                 [--x steps|evaluations] [--all-measured N]

RUN_OUTPUT.txt is what `drk run` printed (stdout and stderr together). METRIC is `reward`
(the step's mean reward) or `speedup` (the step's best verified speedup), read from the head's
progress lines ("step 3/8  policy v3  mean reward 1.012 ... best speedup 2.10x"). With
`--x evaluations` the x axis is the number of candidates measured so far, from the Oracle's
lines ("oracle: step N: X candidates evaluated, Y screened ..."), so that runs with and without
screening compare at equal cost; a run without screening prints no such lines: --all-measured N
says it measured N candidates per step (tasks x group_size x turns). Prints the table it plotted.
"""
import re
import sys

PROGRESS = re.compile(r"step (\d+)/\d+\s+policy v\d+\s+mean reward ([-\d.]+).*?best speedup ([-\d.]+)x")
EVALUATED = re.compile(r"oracle: step (\d+): (\d+) candidates evaluated, (\d+) screened")
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def read_run(path, metric, x_axis, all_measured):
    values, evaluated = {}, {}
    with open(path, errors="replace") as text:
        for line in text:
            progress = PROGRESS.search(line)
            if progress:
                step = int(progress.group(1))
                values[step] = float(progress.group(2) if metric == "reward" else progress.group(3))
            count = EVALUATED.search(line)
            if count:  # steps count from 0 in the Oracle's lines, from 1 in the head's
                evaluated[int(count.group(1)) + 1] = int(count.group(2))
    points, total = [], 0
    for step in sorted(values):
        total += evaluated.get(step, all_measured or 0)
        points.append((step if x_axis == "steps" else total, values[step]))
    if x_axis == "evaluations" and not evaluated and not all_measured:
        sys.exit(f"plot_runs: {path} has no 'oracle: step N: X candidates evaluated' lines for --x evaluations")
    return points


def main(argv):
    x_axis, all_measured = "steps", None
    if "--x" in argv:
        at = argv.index("--x")
        x_axis = argv[at + 1]
        del argv[at:at + 2]
    if "--all-measured" in argv:
        at = argv.index("--all-measured")
        all_measured = int(argv[at + 1])
        del argv[at:at + 2]
    if len(argv) < 3 or argv[1] not in ("reward", "speedup") or x_axis not in ("steps", "evaluations"):
        sys.exit(__doc__)
    out, metric = argv[0], argv[1]
    runs = []
    for spec in argv[2:]:
        label, _, path = spec.partition("=")
        points = read_run(path, metric, x_axis, all_measured)
        if not points:
            sys.exit(f"plot_runs: no progress lines in {path}")
        runs.append((label, points))

    xs = [x for _, points in runs for x, _ in points]
    ys = [y for _, points in runs for _, y in points]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0, y1 = min(ys), max(ys)
    pad = (y1 - y0) * 0.1 or 0.1
    y0, y1 = y0 - pad, y1 + pad
    width, height, left, bottom, top, right = 640, 400, 70, 50, 30, 170
    sx = lambda x: left + (x - x0) / (x1 - x0) * (width - left - right)
    sy = lambda y: height - bottom - (y - y0) / (y1 - y0) * (height - bottom - top)
    y_name = "mean reward" if metric == "reward" else "best speedup (x)"
    x_name = "training step" if x_axis == "steps" else "candidates measured"
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
           f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">{x_name}</text>',
           f'<text x="16" y="{(top + height - bottom) / 2}" transform="rotate(-90 16 {(top + height - bottom) / 2})" text-anchor="middle">{y_name}</text>']
    for k in range(5):
        y = y0 + (y1 - y0) * k / 4
        x = x0 + (x1 - x0) * k / 4
        svg.append(f'<text x="{left - 6}" y="{sy(y) + 4}" text-anchor="end">{y:.2f}</text>')
        svg.append(f'<line x1="{left}" y1="{sy(y)}" x2="{width - right}" y2="{sy(y)}" stroke="#ddd"/>')
        svg.append(f'<text x="{sx(x)}" y="{height - bottom + 16}" text-anchor="middle">{x:.0f}</text>')
    for index, (label, points) in enumerate(runs):
        colour = COLOURS[index % len(COLOURS)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
        svg.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in points:
            svg.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>')
        legend_y = top + 18 * index
        svg.append(f'<line x1="{width - right + 12}" y1="{legend_y}" x2="{width - right + 32}" y2="{legend_y}" stroke="{colour}" stroke-width="2"/>')
        svg.append(f'<text x="{width - right + 38}" y="{legend_y + 4}">{label}</text>')
        print(label, " ".join(f"({x:g}, {y:.3f})" for x, y in points))
    svg.append("</svg>")
    with open(out, "w") as image:
        image.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
