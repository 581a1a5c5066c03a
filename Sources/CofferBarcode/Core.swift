/// The symbologies Coffer can draw. Raw values are the stable names used in the vault, on the command line and in
/// exports (the first eight match CardOnCue's `barcode_type` values).
public enum Symbology: String, CaseIterable, Sendable {
    case qr
    case code128
    case gs1_128 = "gs1_128"
    case ean13
    case ean8
    case upcA = "upc_a"
    case upcE = "upc_e"
    case code39
    case itf
    case itf14
    case codabar
    case pdf417
    case aztec
    case dataMatrix = "datamatrix"
    case gs1DataMatrix = "gs1_datamatrix"
    case code93
}

// Codable is left out of the Embedded Swift build (scripts/build-wasm.sh), which has none.
#if !hasFeature(Embedded)
extension Symbology: Codable {}
#endif

/// A two-dimensional grid of modules; `true` is a dark module. Row-major, origin top-left, no quiet zone.
public struct BitMatrix: Sendable, Equatable {
    public let width: Int
    public let height: Int
    private var storage: [Bool]

    public init(width: Int, height: Int) {
        precondition(width >= 0 && height >= 0)
        self.width = width
        self.height = height
        self.storage = Array(repeating: false, count: width * height)
    }

    public subscript(x: Int, y: Int) -> Bool {
        get { storage[y * width + x] }
        set { storage[y * width + x] = newValue }
    }
}

/// Why a payload cannot be encoded. Descriptions name the rule, never the payload (payloads can be secrets).
public struct BarcodeError: Error, Equatable, Sendable, CustomStringConvertible {
    public let symbology: Symbology
    public let reason: String

    public init(_ symbology: Symbology, _ reason: String) {
        self.symbology = symbology
        self.reason = reason
    }

    public var description: String { "\(symbology.rawValue): \(reason)" }
}
