import ArgumentParser
import CofferKit
import CofferPlatform
import Foundation

extension PhotoSide: ExpressibleByArgument {}

/// `coffer show CARD --photo SIDE --out FILE [--force]`: writes a card's photo to a file (0600, atomically).
package struct PhotoOutputOptions: ParsableArguments {
    package init() {}

    @Option(name: .customLong("photo"), help: ArgumentHelp("Cards: write this photo (front or back) to the file --out names.", valueName: "side"))
    package var side: PhotoSide?
    @Option(help: ArgumentHelp("With --photo: the file to write (owner-only; never replaced without --force).", valueName: "file"))
    package var out: String?
    @Flag(help: "With --photo: replace the file --out names if it exists.") package var force = false

    package func validate() throws {
        if side != nil, out == nil { throw ValidationError("--photo needs --out FILE: coffer show CARD --photo front --out front.jpg") }
        if side == nil, out != nil || force { throw ValidationError("--out and --force go with --photo SIDE") }
    }

    /// Whether a photo was asked for.
    package var isAsked: Bool { side != nil }

    /// Writes the photo asked for.
    package func write(_ item: Item, from coffer: Coffer) throws {
        guard let side, let out else { return }
        guard item.kind == .card else { throw CLIError.usage("only cards have photos") }
        guard let (_, image) = try coffer.photo(side, of: item) else {
            throw CLIError.usage("\"\(item.content.name)\" has no \(side.rawValue) photo")
        }
        do {
            try PrivateFiles.write([UInt8](image), to: out, exclusive: !force)
        } catch {
            if case .alreadyExists = error { throw CLIError.usage("\(out) exists; add --force to replace it") }
            throw CLIError.failure(error.description)
        }
    }
}

/// What `show` says about a card's photos: side, type and size, never the image.
package struct PhotoSummary: Encodable {
    package let side: String
    package let type: String
    package let size: Int

    package init(_ photo: CardPhoto) {
        side = photo.side.rawValue
        type = photo.type.rawValue
        size = photo.size
    }

    /// "front (JPEG, 120 KiB)".
    package var text: String {
        let kind = type == PhotoType.png.rawValue ? "PNG" : "JPEG"
        let amount = size < 1024 ? "\(size) bytes" : "\((size + 1023) / 1024) KiB"
        return "\(side) (\(kind), \(amount))"
    }
}
