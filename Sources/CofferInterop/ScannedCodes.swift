import CofferBarcode
import CofferModel
import Foundation

/// Items from barcodes read off pictures (`coffer add card --scan`, `add otp --scan`, `import --from image`): a code
/// holding an `otpauth://` URI is a 2FA token, one holding an `otpauth-migration://` export (Google Authenticator's
/// "transfer accounts") is every token in it, and any other code is a card that carries the code's symbology and
/// bytes exactly.
public enum ScannedCodes {
    /// One barcode read from a picture.
    public struct Code: Sendable, Equatable {
        public let symbology: Symbology
        public let payload: [UInt8]
        /// Where it was read, to name problems: the file's name, with the code's number when the file held several.
        public let source: String

        public init(symbology: Symbology, payload: [UInt8], source: String) {
            self.symbology = symbology
            self.payload = payload
            self.source = source
        }

        /// What the code holds.
        public var kind: Kind {
            let prefix = String(decoding: payload.prefix(24), as: UTF8.self).lowercased()
            if prefix.hasPrefix("otpauth-migration://") { return .tokenExport }
            if prefix.hasPrefix("otpauth://") { return .token }
            return .card
        }
    }

    public enum Kind: Sendable, Equatable {
        case token
        case tokenExport
        case card
    }

    /// The tokens the codes hold. A code that holds no token, or a token that cannot be read, is a problem named by
    /// the code's source; the URIs themselves are never repeated (they hold secrets). All migration codes are read
    /// together, so a Google export spread over several QR codes is checked for missing parts as one.
    public static func tokens(_ codes: [Code]) -> ImportResult {
        var result = ImportResult()
        var uris: [Code] = []
        var exports: [Code] = []
        for code in codes {
            switch code.kind {
            case .card:
                result.problems.append(ImportProblem(entry: code.source, reason: "the \(code.symbology.rawValue) code holds no otpauth:// URI"))
            case .token, .tokenExport:
                // One URI a line: a code with a line break in it is not a URI.
                guard !code.payload.contains(0x0A), !code.payload.contains(0x0D) else {
                    result.problems.append(ImportProblem(entry: code.source, reason: "the code holds more than one line"))
                    continue
                }
                if code.kind == .token { uris.append(code) } else { exports.append(code) }
            }
        }
        for (codes, importer) in [(uris, OTPAuthListImporter.read), (exports, GoogleAuthenticatorImporter.read)]
        where !codes.isEmpty {
            let text = codes.map { $0.payload + [0x0A] }.joined()
            do {
                let read = try importer(Array(text), nil)
                result.items += read.items
                result.problems += read.problems.map { renamed($0, sources: codes.map(\.source)) }
            } catch {
                result.problems.append(ImportProblem(entry: codes.map(\.source).joined(separator: ", "), reason: error.description))
            }
        }
        return result
    }

    /// Cards for the codes that hold no token (named by `cardName`), and the tokens of those that do.
    public static func items(_ codes: [Code], cardName: (Code) -> String) -> ImportResult {
        var result = tokens(codes.filter { $0.kind != .card })
        for code in codes where code.kind == .card {
            do {
                result.items.append(.card(try card(named: cardName(code), from: code)))
            } catch {
                result.problems.append(ImportProblem(entry: code.source, reason: error.description))
            }
        }
        return result
    }

    /// A card for one code, its payload kept byte for byte: text as UTF-8 where the bytes are UTF-8, ISO-8859-1 for
    /// a linear code's other bytes (Code 128 carries Latin-1), binary otherwise.
    public static func card(
        named name: String, from code: Code, tags: [String] = [], networkIDs: [String] = []
    )
        throws(ModelError) -> Card
    {
        let charset: PayloadCharset
        if String(validating: code.payload, as: UTF8.self) != nil {
            charset = .utf8
        } else if [.code128, .gs1_128, .code39, .code93, .codabar, .itf, .itf14].contains(code.symbology) {
            charset = .latin1
        } else {
            charset = .binary
        }
        return try Card(
            name: name, symbology: code.symbology, payload: code.payload, payloadCharset: charset, tags: tags,
            networkIDs: networkIDs)
    }

    /// A problem an importer named "line N" (or "line N, entry M"), named by the N-th code's source instead.
    private static func renamed(_ problem: ImportProblem, sources: [String]) -> ImportProblem {
        guard problem.entry.hasPrefix("line ") else { return problem }
        let rest = problem.entry.dropFirst(5)
        let digits = rest.prefix { $0.isNumber }
        guard let number = Int(digits), number >= 1, number <= sources.count else { return problem }
        return ImportProblem(entry: sources[number - 1] + rest.dropFirst(digits.count), reason: problem.reason)
    }
}
