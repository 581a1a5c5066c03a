/// A plane-to-plane projective map (a homography): the view of a flat symbol from a tilted camera. Built from four
/// point pairs, so a symbol's module grid can be sampled wherever the camera put it.
struct Perspective: Sendable {
    // x' = (a11 x + a21 y + a31) / (a13 x + a23 y + a33), y' = (a12 x + a22 y + a32) / (…)
    private let a11, a12, a13, a21, a22, a23, a31, a32, a33: Double

    private init(
        _ a11: Double, _ a21: Double, _ a31: Double, _ a12: Double, _ a22: Double, _ a32: Double,
        _ a13: Double, _ a23: Double, _ a33: Double
    ) {
        (self.a11, self.a12, self.a13, self.a21, self.a22, self.a23, self.a31, self.a32, self.a33) =
            (a11, a12, a13, a21, a22, a23, a31, a32, a33)
    }

    /// The map that takes each of `from` to the matching point of `to` (four each, in the same order).
    init?(from: [ImagePoint], to: [ImagePoint]) {
        guard from.count == 4, to.count == 4, let toSquare = Perspective.squareTo(from)?.adjoint(),
            let fromSquare = Perspective.squareTo(to)
        else { return nil }
        self = toSquare.then(fromSquare)
    }

    func map(_ x: Double, _ y: Double) -> ImagePoint {
        let denominator = a13 * x + a23 * y + a33
        return ImagePoint(x: (a11 * x + a21 * y + a31) / denominator, y: (a12 * x + a22 * y + a32) / denominator)
    }

    /// The map from the unit square's corners (0,0), (1,0), (1,1), (0,1) to `points`.
    private static func squareTo(_ points: [ImagePoint]) -> Perspective? {
        let (x0, y0, x1, y1) = (points[0].x, points[0].y, points[1].x, points[1].y)
        let (x2, y2, x3, y3) = (points[2].x, points[2].y, points[3].x, points[3].y)
        let dx3 = x0 - x1 + x2 - x3, dy3 = y0 - y1 + y2 - y3
        if abs(dx3) < 1e-12, abs(dy3) < 1e-12 {
            return Perspective(x1 - x0, x2 - x1, x0, y1 - y0, y2 - y1, y0, 0, 0, 1)
        }
        let dx1 = x1 - x2, dx2 = x3 - x2, dy1 = y1 - y2, dy2 = y3 - y2
        let denominator = dx1 * dy2 - dx2 * dy1
        guard abs(denominator) > 1e-12 else { return nil }
        let a13 = (dx3 * dy2 - dx2 * dy3) / denominator
        let a23 = (dx1 * dy3 - dx3 * dy1) / denominator
        return Perspective(
            x1 - x0 + a13 * x1, x3 - x0 + a23 * x3, x0, y1 - y0 + a13 * y1, y3 - y0 + a23 * y3, y0,
            a13, a23, 1)
    }

    /// The inverse up to scale (which a projective map ignores).
    private func adjoint() -> Perspective {
        Perspective(
            a22 * a33 - a23 * a32, a23 * a31 - a21 * a33, a21 * a32 - a22 * a31,
            a13 * a32 - a12 * a33, a11 * a33 - a13 * a31, a12 * a31 - a11 * a32,
            a12 * a23 - a13 * a22, a13 * a21 - a11 * a23, a11 * a22 - a12 * a21)
    }

    /// This map followed by `other`.
    private func then(_ other: Perspective) -> Perspective {
        Perspective(
            a11 * other.a11 + a12 * other.a21 + a13 * other.a31,
            a21 * other.a11 + a22 * other.a21 + a23 * other.a31,
            a31 * other.a11 + a32 * other.a21 + a33 * other.a31,
            a11 * other.a12 + a12 * other.a22 + a13 * other.a32,
            a21 * other.a12 + a22 * other.a22 + a23 * other.a32,
            a31 * other.a12 + a32 * other.a22 + a33 * other.a32,
            a11 * other.a13 + a12 * other.a23 + a13 * other.a33,
            a21 * other.a13 + a22 * other.a23 + a23 * other.a33,
            a31 * other.a13 + a32 * other.a23 + a33 * other.a33)
    }
}
