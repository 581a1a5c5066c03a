/// QR error-correction level. Declared from weakest to strongest.
public enum QRErrorCorrection: String, CaseIterable, Sendable, Comparable {
    /// Recovers about 7 % of codewords.
    case L
    /// Recovers about 15 % of codewords (the default).
    case M
    /// Recovers about 25 % of codewords.
    case Q
    /// Recovers about 30 % of codewords.
    case H

    package var ordinal: Int {
        switch self {
        case .L: 0
        case .M: 1
        case .Q: 2
        case .H: 3
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.ordinal < rhs.ordinal }
}

/// How payload bytes are labelled for a decoder.
///
/// Payloads are always bytes and are encoded bit-exactly; the charset only decides whether a character-set
/// indicator is emitted where the symbology has one (QR's ECI), and whether a symbology without one may carry the
/// bytes at all.
public enum BarcodeCharset: String, Sendable, CaseIterable {
    /// QR: ECI 26 (UTF-8) when the payload is valid UTF-8 containing non-ASCII characters, no ECI otherwise.
    /// Other symbologies: bytes are read as ISO-8859-1.
    case automatic
    /// No character-set indicator: decoders read bytes as ISO-8859-1 (the default of every symbology here).
    case iso8859_1
    /// The payload is UTF-8 text. QR emits ECI 26 when it contains non-ASCII bytes; symbologies that cannot signal
    /// a charset (Code 128) reject non-ASCII bytes, since scanners would read them as ISO-8859-1.
    case utf8
}

/// Encoding options. Each field applies only to the symbologies named in its documentation.
public struct BarcodeOptions: Sendable, Equatable {
    /// QR error-correction level.
    public var qrErrorCorrection: QRErrorCorrection
    /// Smallest QR version (1–40) to consider; a larger one is chosen when the payload needs it.
    public var qrMinimumVersion: Int
    /// Force one QR mask (0–7) instead of choosing the lowest penalty. For tests and interoperability only.
    public var qrMask: Int?
    /// QR: mark the symbol as GS1 (FNC1 in first position); `0x1D` in the payload is the field separator.
    public var gs1: Bool
    /// How payload bytes are labelled for decoders.
    public var charset: BarcodeCharset

    public init(
        qrErrorCorrection: QRErrorCorrection = .M,
        qrMinimumVersion: Int = 1,
        qrMask: Int? = nil,
        gs1: Bool = false,
        charset: BarcodeCharset = .automatic
    ) {
        self.qrErrorCorrection = qrErrorCorrection
        self.qrMinimumVersion = qrMinimumVersion
        self.qrMask = qrMask
        self.gs1 = gs1
        self.charset = charset
    }
}

/// The geometry of an encoded symbol, without quiet zone.
public enum BarcodeSymbol: Sendable, Equatable {
    /// A two-dimensional symbol (QR, Data Matrix, Aztec, PDF417).
    case matrix(BitMatrix)
    /// A one-dimensional symbol: one entry per module, `true` is a bar. `heightHint` is the nominal bar height in
    /// modules, which renderers use unless told otherwise.
    case linear(modules: [Bool], heightHint: Int)
}

/// Light margin around a symbol, in modules.
public struct QuietZone: Sendable, Equatable {
    public var left: Int
    public var right: Int
    public var top: Int
    public var bottom: Int

    public init(left: Int, right: Int, top: Int, bottom: Int) {
        self.left = left
        self.right = right
        self.top = top
        self.bottom = bottom
    }

    /// The same margin on all four sides.
    public init(all: Int) { self.init(left: all, right: all, top: all, bottom: all) }

    /// The margin each symbology's specification requires (or, where it requires none, a small safe one).
    /// Linear codes get a few light modules above and below so renderers never let bars touch other content.
    public static func standard(for symbology: Symbology) -> QuietZone {
        switch symbology {
        case .qr: QuietZone(all: 4)
        case .ean13: QuietZone(left: 11, right: 7, top: 4, bottom: 4)
        case .ean8: QuietZone(left: 7, right: 7, top: 4, bottom: 4)
        case .upcA: QuietZone(left: 9, right: 9, top: 4, bottom: 4)
        case .upcE: QuietZone(left: 9, right: 7, top: 4, bottom: 4)
        case .code128, .gs1_128, .code39, .code93, .itf, .itf14, .codabar:
            QuietZone(left: 10, right: 10, top: 4, bottom: 4)
        case .pdf417: QuietZone(all: 2)
        // Aztec needs none by specification and Data Matrix one module; two keeps them clear of neighbours.
        case .aztec, .dataMatrix, .gs1DataMatrix: QuietZone(all: 2)
        }
    }
}

// Codable is left out of the Embedded Swift build (scripts/build-wasm.sh), which has none; the structs' conformances
// are synthesised, so they stay in this file.
#if !hasFeature(Embedded)
extension QRErrorCorrection: Codable {}
extension BarcodeCharset: Codable {}
extension BarcodeOptions: Codable {}
extension QuietZone: Codable {}
#endif

/// QR parameters actually chosen by the encoder.
public struct QRSymbolInfo: Sendable, Equatable {
    /// Version 1–40 (the symbol is `17 + 4 × version` modules wide).
    public let version: Int
    public let errorCorrection: QRErrorCorrection
    /// Mask pattern 0–7.
    public let mask: Int
    /// Whether an ECI 26 (UTF-8) header was emitted.
    public let utf8ECI: Bool
}

/// An encoded symbol plus what renderers need to draw it.
public struct EncodedBarcode: Sendable, Equatable {
    public let symbology: Symbology
    public let symbol: BarcodeSymbol
    /// The margin this symbology requires; renderers always draw at least this.
    public var quietZone: QuietZone
    /// Set for QR symbols.
    public let qr: QRSymbolInfo?

    /// `quietZone` defaults to the symbology's standard one.
    public init(symbology: Symbology, symbol: BarcodeSymbol, quietZone: QuietZone? = nil, qr: QRSymbolInfo? = nil) {
        self.symbology = symbology
        self.symbol = symbol
        self.quietZone = quietZone ?? .standard(for: symbology)
        self.qr = qr
    }

    /// Symbol width in modules, without quiet zone.
    public var width: Int {
        switch symbol {
        case .matrix(let m): m.width
        case .linear(let modules, _): modules.count
        }
    }
}

/// Encodes `payload` as `symbology`.
///
/// The payload is bytes, never text, so what a decoder reads back is exactly what was stored. Payloads the
/// symbology cannot carry produce a `BarcodeError` naming the rule; the error never quotes the payload. An empty
/// payload is always an error.
///
/// Payload rules per symbology:
/// - `qr`: any bytes. Numeric, alphanumeric and byte segments are mixed for the fewest bits, then the smallest
///   version (≥ `qrMinimumVersion`) at the requested level is used and the lowest-penalty mask chosen. ECI 26 is
///   emitted per `charset` (by default only for valid UTF-8 with non-ASCII bytes). With `gs1`, the payload is a GS1
///   element string (see below) and FNC1-in-first-position is set.
/// - `code128`: any bytes, each read as ISO-8859-1 (FNC4 for 0x80–0xFF); code sets A/B/C switch on the shortest
///   path. With `charset == .utf8`, non-ASCII bytes are refused (Code 128 cannot say "UTF-8").
/// - `gs1_128`: a GS1 element string: AIs and data in GS1 character set 82, `0x1D` after a variable-length field
///   that is followed by another, no leading FNC1 (it is implied) — the same bytes decoders transmit.
/// - `ean13` / `ean8` / `upcA`: 12 / 7 / 11 digits (check digit computed) or 13 / 8 / 12 (check digit verified).
/// - `upcE`: 6 digits (number system 0), 7 (number system 0 or 1 first), or 8 with the check digit; the check
///   digit is that of the expanded UPC-A number.
/// - `code39`: digits, A–Z, space and `- . $ / + %`; no check character. Scanners set to Full ASCII read `$A`,
///   `%U`, `/C`, `+B`-style pairs as other characters, so such pairs are best avoided in payloads.
/// - `code93`: any ASCII (bytes 0–127); characters outside its 43 are carried as shift pairs (full ASCII), and the
///   two check characters are added.
/// - `itf`: an even number of digits. `itf14`: 13 digits (check digit computed) or 14 (verified).
/// - `codabar`: start character A–D, digits and `- $ : / . +`, stop character A–D. The guards are part of the
///   payload because decoders report them.
/// - `pdf417`, `aztec`, `dataMatrix`, `gs1DataMatrix`: see `PDF417Encoder`, `AztecEncoder`, `DataMatrixEncoder`.
public func encode(
    _ payload: [UInt8], as symbology: Symbology, options: BarcodeOptions = BarcodeOptions()
) throws(BarcodeError) -> EncodedBarcode {
    guard !payload.isEmpty else { throw BarcodeError(symbology, "the payload is empty") }
    switch symbology {
    case .qr:
        return try QREncoder.encode(payload, options: options)
    case .code128:
        return try Code128.encode(payload, gs1: false, charset: options.charset)
    case .gs1_128:
        return try Code128.encode(payload, gs1: true, charset: options.charset)
    case .ean13, .ean8, .upcA, .upcE:
        return try EANUPC.encode(payload, as: symbology)
    case .code39:
        return try Code39.encode(payload)
    case .code93:
        return try Code93.encode(payload)
    case .itf, .itf14:
        return try ITF.encode(payload, as: symbology)
    case .codabar:
        return try Codabar.encode(payload)
    case .pdf417:
        return EncodedBarcode(symbology: symbology, symbol: .matrix(try PDF417Encoder.encode(payload)))
    case .aztec:
        return EncodedBarcode(symbology: symbology, symbol: .matrix(try AztecEncoder.encode(payload)))
    case .dataMatrix, .gs1DataMatrix:
        let matrix = try DataMatrixEncoder.encode(payload, gs1: symbology == .gs1DataMatrix)
        return EncodedBarcode(symbology: symbology, symbol: .matrix(matrix))
    }
}
