"""swgpu sat --box-filter against cv2.boxFilter and an exact reference (CTest: box_filter_opencv).

Usage: box_filter_opencv.py SWGPU_BINARY. Exits 77 (skipped) where this interpreter lacks NumPy or OpenCV.
The exact reference: integer window sums by NumPy (int64, exact), float window sums by math.fsum (correctly rounded
to double, so for float32 data the mean is within 2^-52 relative of the exact one).
"""
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import cv2
except ImportError as e:  # pragma: no cover
    print("skipped: %s" % e)
    sys.exit(77)


def window_sums_int(a, r):
    """Exact (2r+1)^2 window sums under BORDER_REFLECT_101, int64 (a: H x W x C)."""
    p = np.pad(a.astype(np.int64), ((r, r), (r, r), (0, 0)), mode="reflect")  # numpy 'reflect' = REFLECT_101
    c = p.cumsum(0).cumsum(1)
    c = np.pad(c, ((1, 0), (1, 0), (0, 0)))
    k = 2 * r + 1
    h, w = a.shape[:2]
    return c[k:k + h, k:k + w] - c[:h, k:k + w] - c[k:k + h, :w] + c[:h, :w]


def run(binary, src, r, dst):
    subprocess.run([binary, "sat", src, "--box-filter", str(r), "-o", dst, "--backend", "cpu", "-q"], check=True)


def main():
    binary = sys.argv[1]
    rng = np.random.default_rng(7)
    failures = []
    with tempfile.TemporaryDirectory() as d:
        # uint8, grey and colour: ours is the exactly rounded mean; OpenCV's differs from it in a few samples at most.
        for shape in [(300, 400), (120, 90, 3)]:
            a = rng.integers(0, 256, shape, dtype=np.uint8)
            src = os.path.join(d, "u8.npy")
            np.save(src, a)
            for r in (1, 5, 20):
                out = os.path.join(d, "o.npy")
                run(binary, src, r, out)
                ours = np.load(out)
                a3 = a.reshape(a.shape[0], a.shape[1], -1)
                s = window_sums_int(a3, r).reshape(a.shape)
                area = (2 * r + 1) ** 2
                exact = (2 * s + area) // (2 * area)
                cv = cv2.boxFilter(a, -1, (2 * r + 1, 2 * r + 1))
                if ours.dtype != np.uint8 or not np.array_equal(ours, exact):
                    failures.append("uint8 %s r=%d: differs from the exactly rounded mean" % (shape, r))
                diff = np.abs(ours.astype(int) - cv.astype(int))
                print("uint8 %s r=%d: %d of %d samples differ from cv2.boxFilter (max %d)"
                      % (shape, r, int((diff > 0).sum()), diff.size, int(diff.max())))
                if diff.max() > 1 or (diff > 0).sum() > diff.size // 1000:
                    failures.append("uint8 %s r=%d: cv2.boxFilter differs by more than 1 or too often" % (shape, r))
        # float32 near 1000 and of mixed sign: ours within 1 ulp of the mean of math.fsum sums; cv2 within 8 ulp.
        for name, a in [("near 1000", (1000 + rng.random((60, 70))).astype(np.float32)),
                        ("mixed sign", (rng.random((60, 70)) * 2000 - 1000).astype(np.float32))]:
            src = os.path.join(d, "f32.npy")
            np.save(src, a)
            for r in (1, 5):
                out = os.path.join(d, "o.npy")
                run(binary, src, r, out)
                ours = np.load(out)
                p = np.pad(a.astype(np.float64), r, mode="reflect")
                k = 2 * r + 1
                ref = np.array([[math.fsum(p[i:i + k, j:j + k].ravel()) / (k * k) for j in range(a.shape[1])]
                                for i in range(a.shape[0])])
                ulp = np.spacing(np.abs(ours.astype(np.float32))).astype(np.float64)
                err = np.abs(ours.astype(np.float64) - ref) / ulp
                cv = cv2.boxFilter(a, -1, (k, k)).astype(np.float64)
                cv_err = np.abs(cv - ref) / ulp
                print("float32 %s r=%d: ours max %.3f ulp, cv2.boxFilter max %.3f ulp" % (name, r, err.max(), cv_err.max()))
                if ours.dtype != np.float32 or err.max() > 1.0:
                    failures.append("float32 %s r=%d: %.3f ulp from the exact mean" % (name, r, err.max()))
                if cv_err.max() > 8:
                    failures.append("float32 %s r=%d: cv2.boxFilter %.1f ulp away" % (name, r, cv_err.max()))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
