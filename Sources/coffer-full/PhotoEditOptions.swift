import ArgumentParser
import CofferCLI
import CofferKit
import CofferPlatform
import CofferVault
import Foundation

/// `coffer edit CARD --photo SIDE FILE` and `--remove-photo SIDE`: the photo changes of an edit, read and checked
/// before anything is written (a file that is missing, too large or not a PNG or JPEG changes nothing).
struct PhotoEditOptions: ParsableArguments {
    init() {}

    @Option(
        name: .customLong("photo"), parsing: .upToNextOption,
        help: ArgumentHelp("Cards: set the front or back photo from a PNG or JPEG file of at most 2 MiB.", valueName: "side> <file"))
    var photo: [String] = []
    @Option(name: .customLong("remove-photo"), help: ArgumentHelp("Cards: remove the front or back photo (repeatable).", valueName: "side"))
    var removePhoto: [PhotoSide] = []

    var isGiven: Bool { !photo.isEmpty || !removePhoto.isEmpty }

    /// `--photo` as (side, file) pairs; `--photo` may be given once per side.
    private var pairs: [(side: PhotoSide?, path: String)] {
        stride(from: 0, to: photo.count - 1, by: 2).map { (PhotoSide(rawValue: photo[$0]), photo[$0 + 1]) }
    }

    func validate() throws {
        let sides = pairs.compactMap(\.side)
        guard photo.count % 2 == 0, sides.count == pairs.count else {
            throw ValidationError("--photo takes a side (front or back) and a file: --photo front card.jpg")
        }
        guard Set(sides).count == sides.count, Set(sides).isDisjoint(with: removePhoto) else {
            throw ValidationError("each side takes one of --photo and --remove-photo, once")
        }
    }

    /// The changes, with each image read from its file and checked.
    func changes() throws -> PhotoChanges {
        var changes = PhotoChanges(removals: Set(removePhoto))
        for case let (side?, path) in pairs {
            let image: [UInt8]
            do {
                image = try PrivateFiles.read(path, limit: CardPhoto.maximumBytes)
            } catch {
                if case .tooLarge = error { throw CLIError.badData("\(path): a photo is at most 2 MiB; shrink it first") }
                throw CLIError.failure(error.description)
            }
            do {
                _ = try CardPhoto.checkedType(of: image)
            } catch {
                throw CLIError.badData("\(path): \(error.description)")
            }
            changes.images[side] = Data(image)
        }
        return changes
    }
}
