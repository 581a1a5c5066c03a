import CofferBarcode

/// Data Matrix symbols in a black-and-white image, dark on light and light on dark: each candidate region framed,
/// sampled at the sizes its border allows, and decoded; a region that read is not tried again, so several symbols in
/// one image are each read once.
enum DataMatrixReader {
    static func read(_ image: BitImage) -> [SymbolOutcome] {
        let candidates = DataMatrixDetector.candidates(in: image)
        return read(image, candidates.dark) + read(image.inverted(), candidates.light)
    }

    private static func read(_ image: BitImage, _ candidates: [DataMatrixDetector.Candidate]) -> [SymbolOutcome] {
        var results: [SymbolOutcome] = []
        for candidate in candidates {
            for frame in DataMatrixDetector.frames(image, candidate) {
                guard let dark = DataMatrixDetector.sample(image, frame),
                    let outcome = DataMatrixDecoder.decode(dark, size: frame.size)
                else { continue }
                switch outcome {
                case .payload(let payload, let gs1):
                    results.append(
                        .found(
                            FoundBarcode(
                                symbology: gs1 ? .gs1DataMatrix : .dataMatrix, payload: payload,
                                corners: frame.corners)))
                case .refused(let refusal):
                    results.append(.refused(refusal))
                }
                break
            }
        }
        return results
    }
}
