"""Placing text labels beside points without overlaps (used by the roofline for kernels and
ridge points)."""
from __future__ import annotations

import math

import numpy as np

from .style import POINT_LABEL_GID

def _overlap_area(box, boxes):
    """Overlap area of one box (x0, y0, x1, y1) with each of ``boxes`` (n x 4)."""
    if len(boxes) == 0:
        return np.zeros(0)
    w = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    h = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    return np.clip(w, 0, None) * np.clip(h, 0, None)


def place_labels(ax, xs, ys, texts, *, fontsize: float = 7.0, color="0.15", line_paths=(), avoid=(),
                 gid: str = POINT_LABEL_GID, **text_kw):
    """Annotate each point (data coordinates) with its text where no two labels overlap.

    A greedy search, the most crowded points first: candidate boxes on rings of growing radius
    around the point; a candidate must stay inside the axes and off every placed label; among
    those, the nearest one that covers the fewest points and lines wins. Distant labels get a
    leader line. ``color`` is one colour or one per label; ``avoid`` holds artists (texts, markers,
    earlier labels) that no label may cover. Returns the Annotation artists (with ``gid``).
    """
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    pts = ax.transData.transform(np.column_stack([xs, ys])) if len(xs) else np.zeros((0, 2))
    ab = ax.get_window_extent(renderer)
    margin, pad = 2.0, 2.0  # pixels: from the axes' edge, and around each label
    sizes = []
    for t in texts:
        probe = ax.text(0, 0, t, fontsize=fontsize, **text_kw)
        bb = probe.get_window_extent(renderer)
        probe.remove()
        sizes.append((bb.width + 2 * pad, bb.height + 2 * pad))
    r_pt = 4.5  # half a marker, in pixels
    point_boxes = np.column_stack([pts[:, 0] - r_pt, pts[:, 1] - r_pt, pts[:, 0] + r_pt, pts[:, 1] + r_pt]) \
        if len(pts) else np.zeros((0, 4))
    # Lines as a dotted set of small boxes: crossing one costs a little, never forbids.
    line_pts = []
    for path in line_paths:
        disp = ax.transData.transform(np.asarray(path, float))
        for a, b in zip(disp[:-1], disp[1:]):
            k = max(1, int(np.hypot(*(b - a)) / 6))
            line_pts.append(a + (b - a) * np.linspace(0, 1, k, endpoint=False)[:, None])
    line_pts = np.concatenate(line_pts) if line_pts else np.zeros((0, 2))
    line_pts = line_pts[(line_pts[:, 0] >= ab.x0) & (line_pts[:, 0] <= ab.x1) &
                        (line_pts[:, 1] >= ab.y0) & (line_pts[:, 1] <= ab.y1)] if len(line_pts) else line_pts

    # Most crowded first: they have the fewest good spots.
    if len(pts):
        d = np.hypot(pts[:, None, 0] - pts[None, :, 0], pts[:, None, 1] - pts[None, :, 1])
        crowd = (d < 60).sum(axis=1)
    else:
        crowd = np.zeros(0)
    order = sorted(range(len(pts)), key=lambda i: (-crowd[i], i))
    angles = np.deg2rad(np.arange(0, 360, 22.5))
    radii = (4, 10, 18, 28, 40, 55, 75, 100, 130, 170, 220)
    placed = []
    for art in avoid:
        box = getattr(art, "_bwprof_box", None)
        if box is None:
            bb = art.get_window_extent(renderer)
            box = (bb.x0, bb.y0, bb.x1, bb.y1)
        placed.append(box)
    placed = np.array(placed, float).reshape(-1, 4)
    centers = {}
    for i in order:
        w, h = sizes[i]
        px, py = pts[i]
        best, best_score = None, np.inf
        for r in radii:
            for a in angles:
                c, s = math.cos(a), math.sin(a)
                cx, cy = px + c * (r + w / 2), py + s * (r + h / 2)
                box = np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])
                if box[0] < ab.x0 + margin or box[2] > ab.x1 - margin or \
                        box[1] < ab.y0 + margin or box[3] > ab.y1 - margin:
                    continue
                if len(placed) and _overlap_area(box, placed).max() > 0:
                    continue
                cover = _overlap_area(box, point_boxes).sum() / (4 * r_pt * r_pt)
                on_line = 0
                if len(line_pts):
                    on_line = int(((line_pts[:, 0] > box[0]) & (line_pts[:, 0] < box[2]) &
                                   (line_pts[:, 1] > box[1]) & (line_pts[:, 1] < box[3])).sum())
                # near first; right of and above the point read best
                score = r + 200.0 * cover + 4.0 * on_line + (3.0 if c < -0.1 else 0.0)
                if score < best_score:
                    best, best_score = box, score
            if best is not None and best_score < r + 1:  # a clean spot on this ring
                break
        if best is None:  # the rings are full: the nearest free spot anywhere in the axes
            step = 6.0
            gx = np.arange(ab.x0 + margin + w / 2, ab.x1 - margin - w / 2, step)
            gy = np.arange(ab.y0 + margin + h / 2, ab.y1 - margin - h / 2, step)
            cand = sorted(((cx, cy) for cx in gx for cy in gy), key=lambda q: (q[0] - px) ** 2 + (q[1] - py) ** 2)
            for cx, cy in cand:
                box = np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])
                if not len(placed) or _overlap_area(box, placed).max() <= 0:
                    best = box
                    break
        if best is None:  # no room at all: overlap rather than drop the label
            best = np.array([px + 6, py - h / 2, px + 6 + w, py + h / 2])
        placed = np.vstack([placed, best])
        centers[i] = ((best[0] + best[2]) / 2, (best[1] + best[3]) / 2)

    to_pt = 72.0 / fig.dpi
    anns = []
    for i in range(len(pts)):
        cx, cy = centers[i]
        dx, dy = (cx - pts[i, 0]) * to_pt, (cy - pts[i, 1]) * to_pt
        w, h = sizes[i]
        far = abs(cx - pts[i, 0]) > w / 2 + 12 or abs(cy - pts[i, 1]) > h / 2 + 12
        col = color[i] if isinstance(color, (list, tuple)) else color
        ann = ax.annotate(texts[i], (xs[i], ys[i]), xytext=(dx, dy), textcoords="offset points",
                          ha="center", va="center", fontsize=fontsize, color=col, gid=gid, zorder=7,
                          annotation_clip=False,
                          arrowprops=dict(arrowstyle="-", lw=0.5, color="0.45", shrinkA=0, shrinkB=3)
                          if far else None, **text_kw)
        ann._bwprof_box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        anns.append(ann)
    return anns
