#!/usr/bin/env python3
"""make_examples.py - writes the bundled example problems, deterministically:

  segment-64.max   a 64x64 seeded segmentation as a DIMACS max-flow problem (Boykov-Jolly
                   energy on a narrow band around the object, as in Lattari 2010, 3.5)
  tiny-12x16.grid  a 12x16 4-connected segmentation grid in the gcut grid format

and prints each one's maximum flow, computed here by an independent Dinic, so that
tests/golden_maxflow.sh can check the `gcut maxflow` value. Pure Python 3, no packages.
Run from anywhere: python3 examples/make_examples.py
"""
import math
import os
import struct
import sys
from collections import deque

HERE = os.path.dirname(os.path.abspath(__file__))


class Lcg:
    """A fixed 64-bit LCG (Knuth's MMIX constants), so every run writes the same bytes."""

    def __init__(self, seed):
        self.state = seed

    def uniform(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (self.state >> 11) / float(2**53)


def picture(height, width, seed):
    """A bright blob (an ellipse with a wavy edge) on a dark background, with noise.
    Returns intensities (0-255) and the blob's signed distance, positive inside."""
    rng = Lcg(seed)
    cy, cx = height / 2.0, width / 2.0
    ry, rx = height * 0.30, width * 0.36
    intensity, inside = [], []
    for y in range(height):
        for x in range(width):
            angle = math.atan2(y - cy, x - cx)
            radius = 1.0 + 0.12 * math.sin(5 * angle)
            r = math.hypot((y - cy) / ry, (x - cx) / rx) / radius
            signed = (1.0 - r) * min(ry, rx)
            base = 170 if signed > 0 else 80
            noise = (rng.uniform() + rng.uniform() + rng.uniform() - 1.5) * 50
            intensity.append(max(0, min(255, int(round(base + noise)))))
            inside.append(signed)
    return intensity, inside


def regional(value):
    """Boykov-Jolly regional costs -ln P(I | model) for Gaussian fg/bg models, times 10."""
    def cost(mean):
        sigma = 25.0
        p = math.exp(-((value - mean) ** 2) / (2 * sigma * sigma)) / (sigma * math.sqrt(2 * math.pi))
        return -math.log(max(p, 1e-12))
    return int(round(10 * cost(80))), int(round(10 * cost(170)))  # (to source, to sink)


def boundary(a, b):
    """Contrast-sensitive smoothness w = 50 exp(-dI^2 / (2 sigma^2)) + 1."""
    sigma = 30.0
    return int(round(50 * math.exp(-((a - b) ** 2) / (2 * sigma * sigma)))) + 1


def segmentation(height, width, seed, band):
    """Nodes 0..n-1 (y*width + x), terminal capacities and neighbour edges. Pixels farther
    than band from the blob's edge are seeds (hard constraints); n-links are kept where an
    unknown pixel is involved, which keeps the file small."""
    intensity, inside = picture(height, width, seed)
    n = height * width
    hard = 1000
    source, sink, edges = [0] * n, [0] * n, []
    unknown = [abs(d) <= band for d in inside]
    for i in range(n):
        if unknown[i]:
            s, t = regional(intensity[i])
            low = min(s, t)  # the common part is a constant of the energy: leave it out
            source[i], sink[i] = s - low, t - low
        elif inside[i] > 0:
            source[i] = hard
        else:
            sink[i] = hard
    for y in range(height):
        for x in range(width):
            i = y * width + x
            for j in ([i + 1] if x + 1 < width else []) + ([i + width] if y + 1 < height else []):
                if unknown[i] or unknown[j]:
                    w = boundary(intensity[i], intensity[j])
                    edges.append((i, j, w, w))
    return source, sink, edges


def max_flow(n, source, sink, edges):
    """Dinic (1970) on an adjacency list of its own; node n is the source, n+1 the sink."""
    s, t = n, n + 1
    head = [[] for _ in range(n + 2)]
    to, cap = [], []

    def arc(u, v, c, r):
        head[u].append(len(to))
        to.append(v)
        cap.append(c)
        head[v].append(len(to))
        to.append(u)
        cap.append(r)

    for i in range(n):
        if source[i]:
            arc(s, i, source[i], 0)
        if sink[i]:
            arc(i, t, sink[i], 0)
    for u, v, c, r in edges:
        arc(u, v, c, r)
    flow = 0
    while True:
        level = [-1] * (n + 2)
        level[s] = 0
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for a in head[u]:
                if cap[a] > 0 and level[to[a]] < 0:
                    level[to[a]] = level[u] + 1
                    queue.append(to[a])
        if level[t] < 0:
            return flow
        pos = [0] * (n + 2)

        def push(u, limit):
            if u == t:
                return limit
            while pos[u] < len(head[u]):
                a = head[u][pos[u]]
                v = to[a]
                if cap[a] > 0 and level[v] == level[u] + 1:
                    got = push(v, min(limit, cap[a]))
                    if got:
                        cap[a] -= got
                        cap[a ^ 1] += got
                        return got
                pos[u] += 1
            return 0

        while True:
            got = push(s, 1 << 62)
            if not got:
                break
            flow += got


def write_dimacs(path, height, width, source, sink, edges, value):
    n = height * width
    s_id, t_id = n + 1, n + 2
    arcs = []
    for i in range(n):
        if source[i]:
            arcs.append((s_id, i + 1, source[i]))
        if sink[i]:
            arcs.append((i + 1, t_id, sink[i]))
    for u, v, c, r in edges:
        arcs.append((u + 1, v + 1, c))
        arcs.append((v + 1, u + 1, r))
    with open(path, "w", newline="\n") as f:
        f.write("c gcut example: %dx%d seeded segmentation (Boykov-Jolly energy, narrow band)\n"
                % (height, width))
        f.write("c pixel (y, x) is node y*%d + x + 1; source %d, sink %d\n" % (width, s_id, t_id))
        f.write("c made by examples/make_examples.py; maximum flow %d\n" % value)
        f.write("p max %d %d\nn %d s\nn %d t\n" % (n + 2, len(arcs), s_id, t_id))
        for u, v, c in arcs:
            f.write("a %d %d %d\n" % (u, v, c))


def write_grid(path, height, width, source, sink, edges):
    """gcut grid format (docs/FORMATS.md): header line, then little-endian int32 arrays
    source, sink and the four directions (0,+1) (0,-1) (+1,0) (-1,0)."""
    n = height * width
    dirs = [[0] * n for _ in range(4)]
    for u, v, c, r in edges:
        if v == u + 1:  # right neighbour: u -> v is direction 0, v -> u direction 1
            dirs[0][u], dirs[1][v] = c, r
        else:  # the pixel below: direction 2, and back up direction 3
            dirs[2][u], dirs[3][v] = c, r
    with open(path, "wb") as f:
        f.write(b"gcut-grid 1 ndim 2 shape %d %d conn 4\n" % (height, width))
        for array in [source, sink] + dirs:
            f.write(struct.pack("<%di" % n, *array))


def main():
    sys.setrecursionlimit(20000)  # Dinic's depth-first pushes follow paths of any length
    source, sink, edges = segmentation(64, 64, 20261122, band=6)
    value = max_flow(64 * 64, source, sink, edges)
    write_dimacs(os.path.join(HERE, "segment-64.max"), 64, 64, source, sink, edges, value)
    print("segment-64.max %d" % value)
    source, sink, edges = segmentation(12, 16, 7, band=100)
    value = max_flow(12 * 16, source, sink, edges)
    write_grid(os.path.join(HERE, "tiny-12x16.grid"), 12, 16, source, sink, edges)
    print("tiny-12x16.grid %d" % value)


if __name__ == "__main__":
    main()
