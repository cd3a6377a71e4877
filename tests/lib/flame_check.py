"""Reads a profd SVG flamegraph back, for the tests: every frame's kind,
name, value and geometry from its <g>, <title> and <rect>.

    python3 flame_check.py FILE.svg [hot_a hot_b RATIO TOLERANCE]

checks the structure, and with the last four arguments that the widths of
the two named frames keep RATIO within TOLERANCE (a fraction)."""
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
TITLE = re.compile(r"^(.*) \(([\d,]+) (samples|bytes), (\d+\.\d\d)%\)$", re.S)


def load(path):
    root = ET.parse(path).getroot()
    frames_g = [g for g in root.iter(NS + "g") if "frames" in g.get("class", "").split()]
    assert len(frames_g) == 1, "no <g class=frames>"
    frames = []
    for g in frames_g[0]:
        title = g.find(NS + "title").text
        rect = g.find(NS + "rect")
        m = TITLE.match(title)
        assert m, f"title {title!r} is not 'function (N samples, P%)'"
        frames.append({
            "kind": g.get("class"), "name": m.group(1),
            "value": int(m.group(2).replace(",", "")), "unit": m.group(3),
            "pct": float(m.group(4)), "x": float(rect.get("x")),
            "y": float(rect.get("y")), "w": float(rect.get("width")),
        })
    return root, frames


def main():
    root, frames = load(sys.argv[1])
    assert frames and frames[0]["name"] == "all" and frames[0]["kind"] == "a", frames[:1]
    total = frames[0]["value"]
    assert total > 0, "no samples"
    scripts = list(root.iter(NS + "script"))
    assert len(scripts) == 1, "want one embedded <script>"
    full = frames[0]["w"]
    for f in frames[1:]:
        # Width is proportional to value (x and width are rounded to 0.1 px).
        assert abs(f["w"] - full * f["value"] / total) <= 0.11, f
        assert abs(f["pct"] - 100 * f["value"] / total) <= 0.006, f
    out = {"frames": len(frames), "total": total,
           "kinds": sorted({f["kind"] for f in frames})}
    if len(sys.argv) > 2:
        a, b, want, tol = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
        wa = sum(f["w"] for f in frames if f["name"] == a)
        wb = sum(f["w"] for f in frames if f["name"] == b)
        assert wa > 0 and wb > 0, f"{a}: {wa} px, {b}: {wb} px"
        ratio = wa / wb
        # Samples are a draw: with n of them in the two frames, the share
        # p = want/(1+want) has a standard error of sqrt(p(1-p)/n), and the
        # ratio p/(1-p) that times 1/(1-p)^2.  Allow the tolerance, or 3 of
        # those errors when there are too few samples for it (a CI machine
        # whose hypervisor steals time makes the draw noisier still).
        n = sum(f["value"] for f in frames if f["name"] in (a, b))
        p = want / (1 + want)
        allowed = max(tol * want, 3 * (p * (1 - p) / n) ** 0.5 / (1 - p) ** 2)
        assert abs(ratio - want) <= allowed, \
            f"{a}:{b} widths {wa}:{wb} = {ratio:.2f} over {n} samples, want {want} +-{allowed:.2f}"
        out["ratio"] = round(ratio, 3)
        out["names"] = sorted({f["name"] for f in frames})[:20]
    print(out)


if __name__ == "__main__":
    main()
