#!/usr/bin/env python3
"""qpbo_plot.py - the scaling curve of docs/PERFORMANCE.md ("QPBO on the 16-core host"): time
against threads for `pqpbo`, with `qpbo` and Kolmogorov's QPBO (both serial) as horizontal
lines, one panel per energy, from the CSV rows bench/qpbo_objects --csv appends
(spec,nodes,solver,threads,build,solve,labels,total,call,bytes). Writes an SVG by hand (no
dependency) and prints a text version of the same numbers.

usage: qpbo_plot.py ROWS.csv OUT.svg [--time total|call]"""
import csv
import math
import sys


def load(path, key):
    data = {}
    with open(path) as f:
        for row in csv.reader(f):
            if len(row) < 10:
                continue
            spec, nodes, solver, threads = row[0], int(row[1]), row[2], int(row[3])
            value = float(row[7] if key == "total" else row[8])
            panel = data.setdefault((nodes, spec), {})
            panel.setdefault(solver, {})[threads] = value
    return [(spec, nodes, panel) for (nodes, spec), panel in sorted(data.items())]


def text_plot(panels, key):
    for spec, nodes, panel in panels:
        print("%s (%d nodes), %s ms:" % (spec, nodes, key))
        top = max(v for s in panel.values() for v in s.values())
        for solver in ("kolmogorov", "qpbo", "pqpbo"):
            for t, v in sorted(panel.get(solver, {}).items()):
                bar = "#" * max(1, int(round(50 * v / top)))
                print("  %-10s %2d thr %9.0f  %s" % (solver, t, v, bar))


def svg(panels, out, key):
    w, h, pad = 360, 260, 50
    width = w * len(panels) + 20
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'font-family="sans-serif" font-size="11">' % (width, h + 40),
             '<rect width="100%" height="100%" fill="white"/>']
    colors = {"pqpbo": "#1f77b4", "qpbo": "#2ca02c", "kolmogorov": "#d62728"}
    threads = [1, 2, 4, 8, 16]
    for i, (spec, nodes, panel) in enumerate(panels):
        x0 = 10 + i * w
        values = [v for s in panel.values() for v in s.values()]
        lo, hi = math.log10(min(values) * 0.8), math.log10(max(values) * 1.25)

        def px(t):
            return x0 + pad + (w - pad - 20) * math.log2(t) / 4.0

        def py(v):
            return 20 + (h - 40) * (hi - math.log10(v)) / (hi - lo)

        parts.append('<text x="%d" y="14" font-weight="bold">%s (%.2g nodes)</text>' %
                     (x0 + pad, spec, nodes))
        parts.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' %
                     (px(1), h - 20, px(16), h - 20))
        parts.append('<line x1="%d" y1="20" x2="%d" y2="%d" stroke="black"/>' %
                     (px(1), px(1), h - 20))
        for t in threads:
            parts.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' %
                         (px(t), h - 6, t))
        decade = math.floor(lo)
        while decade <= hi:
            for m in (1, 2, 5):
                v = m * 10 ** decade
                if lo <= math.log10(v) <= hi:
                    parts.append('<text x="%.1f" y="%.1f" text-anchor="end">%g</text>' %
                                 (px(1) - 4, py(v) + 4, v))
                    parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" '
                                 'stroke="#ddd"/>' % (px(1), py(v), px(16), py(v)))
            decade += 1
        parts.append('<text x="%.1f" y="%d" text-anchor="middle">threads</text>' %
                     (px(4), h + 12))
        parts.append('<text x="%d" y="%d" transform="rotate(-90 %d %d)">%s ms</text>' %
                     (x0 + 12, h // 2 + 20, x0 + 12, h // 2 + 20, key))
        ly = 30
        for solver in ("kolmogorov", "qpbo", "pqpbo"):
            series = panel.get(solver)
            if not series:
                continue
            c = colors[solver]
            if solver == "pqpbo":
                pts = " ".join("%.1f,%.1f" % (px(t), py(v)) for t, v in sorted(series.items()))
                parts.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>' %
                             (pts, c))
                for t, v in sorted(series.items()):
                    parts.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' %
                                 (px(t), py(v), c))
            else:
                v = series[min(series)]
                parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" '
                             'stroke-width="2" stroke-dasharray="6,4"/>' %
                             (px(1), py(v), px(16), py(v), c))
            label = {"pqpbo": "pqpbo", "qpbo": "qpbo (serial)",
                     "kolmogorov": "Kolmogorov QPBO (serial)"}[solver]
            parts.append('<text x="%.1f" y="%d" fill="%s">%s</text>' %
                         (px(16) - 150, ly, c, label))
            ly += 14
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    key = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--time" else "total"
    panels = load(sys.argv[1], key)
    if not panels:
        sys.exit("no rows in " + sys.argv[1])
    svg(panels, sys.argv[2], key)
    text_plot(panels, key)


main()
