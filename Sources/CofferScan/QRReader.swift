import CofferBarcode

/// QR symbols in a black-and-white image: finder triples, most plausible first, sampled and decoded; a triple that
/// read is not used again, so several symbols in one image are each read once.
enum QRReader {
    static func read(_ image: BitImage) -> [SymbolOutcome] {
        let finders = QRDetector.finders(in: image)
        var used: [QRDetector.Finder] = []
        var results: [SymbolOutcome] = []
        for triple in QRDetector.candidateTriples(finders)
        where !used.contains(triple.0) && !used.contains(triple.1) && !used.contains(triple.2) {
            let estimate = QRDetector.estimatedDimension(image, triple)
            var tried: [Int] = []
            var queue = [estimate, estimate + 4, estimate - 4]
            dimensions: while let dimension = queue.first {
                queue.removeFirst()
                guard !tried.contains(dimension), tried.count < 4 else { continue }
                tried.append(dimension)
                // The fourth point is searched for only once the format information shows a symbol of this size.
                var candidates = QRDetector.bottomRightCandidates(image, triple, dimension: dimension, search: 0)
                var searched = false
                var index = 0
                while index < candidates.count {
                    let candidate = candidates[index]
                    index += 1
                    guard
                        let placement = QRDetector.placement(
                            triple, dimension: dimension, bottomRight: candidate.point,
                            module: candidate.module),
                        let grid = sample(image, placement)
                    else { continue }
                    switch QRDecoder.decode(grid, dimension: dimension) {
                    case .payload(let payload):
                        results.append(.found(FoundBarcode(symbology: .qr, payload: payload, corners: corners(placement))))
                    case .refused(let refusal):
                        results.append(.refused(refusal))
                    case .otherDimension(let other):
                        // A version word read off a misplaced grid can land within correcting distance of another
                        // version's: the finders' spacing bounds the size, so a far one is not chased.
                        guard abs(other - estimate) <= max(8, estimate / 4) else { continue }
                        queue.insert(other, at: 0)
                        continue dimensions
                    case .uncorrectable:
                        if !searched {
                            searched = true
                            candidates += QRDetector.bottomRightCandidates(image, triple, dimension: dimension, search: max(3, dimension / 25))
                                .filter { $0.module == Double(dimension) - 3.5 }.dropFirst()
                        }
                        continue
                    case nil:
                        continue
                    }
                    used += [triple.0, triple.1, triple.2]
                    break dimensions
                }
            }
        }
        return results
    }

    private static func sample(_ image: BitImage, _ placement: QRDetector.Placement) -> [Bool]? {
        image.modules(placement.grid, columns: placement.dimension, rows: placement.dimension)
    }

    private static func corners(_ placement: QRDetector.Placement) -> [ImagePoint] {
        let side = Double(placement.dimension)
        return [
            placement.grid.map(0, 0), placement.grid.map(side, 0), placement.grid.map(side, side),
            placement.grid.map(0, side),
        ]
    }
}
