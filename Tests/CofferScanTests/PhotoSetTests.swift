import CofferBarcode
import CofferTestSupport
import Foundation
import Testing

@testable import CofferImage
@testable import CofferScan

/// Camera-like photos from Tests/oracles/scan_photos.py (perspective, turns, blur, uneven light, noise, JPEG, clutter),
/// read by Coffer and by zxing-cpp on the same files: Coffer must never read a wrong payload, must read every clean
/// render, and must read at least as many photos as zxing-cpp, symbology by symbology, less one (a handful of photos
/// each keeps the test quick; `coffer-bench scan` measures the full set).
@Suite("Barcode reader: camera-like photos against zxing-cpp", .serialized, .offCooperativePool)
struct PhotoSetTests {
    static let symbologies = [
        "ean13", "ean8", "upc_a", "upc_e", "code128", "gs1_128", "code39", "itf", "itf14", "codabar", "qr", "datamatrix",
        "gs1_datamatrix", "aztec", "pdf417",
    ]

    struct Entry: Decodable {
        struct Anchor: Decodable {
            struct Read: Decodable { let correct: Bool }
            let reads: [Read]
        }
        let file: String
        let tier: String
        let symbology: String
        let payload_hex: String
        let zxing: Anchor
    }

    struct Manifest: Decodable { let images: [Entry] }

    @Test("no wrong read, every clean render, and as many photos as zxing-cpp reads")
    func photoSet() throws {
        let directory = try TestSupport.temporaryDirectory("scanset")
        let script = TestSupport.repositoryRoot.appendingPathComponent("Tests/oracles/scan_photos.py").path
        let made = try TestSupport.run(
            "/usr/bin/env",
            [
                "python3", script, "--out", directory, "--per", "6", "--seed", "11", "--tiers", "clean,photo",
                "--symbologies", Self.symbologies.joined(separator: ","),
            ],
            input: [], environment: ProcessInfo.processInfo.environment)
        try #require(made.status == 0, "scan_photos.py failed: \(made.stderr)")
        let manifest = try JSONDecoder().decode(
            Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/manifest.json")))
        var coffer: [String: Int] = [:], anchor: [String: Int] = [:]
        for entry in manifest.images {
            let image = try ImageFile.decode(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + entry.file))))
            let expected = hexBytes(entry.payload_hex)
            let found = BarcodeReader.read(image)
            let right = found.filter {
                $0.payload == expected
                    && ($0.symbology.rawValue == entry.symbology
                        || ($0.symbology == .itf14 && entry.symbology == "itf"))
            }
            #expect(found.count == right.count, "\(entry.file): wrong read \(found.map(\.symbology.rawValue))")
            if entry.tier == "clean" {
                #expect(right.count == 1, "\(entry.file): a clean render not read")
            } else {
                coffer[entry.symbology, default: 0] += right.isEmpty ? 0 : 1
                anchor[entry.symbology, default: 0] += entry.zxing.reads.contains { $0.correct } ? 1 : 0
            }
        }
        for symbology in Self.symbologies {
            #expect(
                coffer[symbology, default: 0] >= anchor[symbology, default: 0] - 1,
                "\(symbology): Coffer read \(coffer[symbology, default: 0]) photos, zxing-cpp \(anchor[symbology, default: 0])")
        }
    }
}
