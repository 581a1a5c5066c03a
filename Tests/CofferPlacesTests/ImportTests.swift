@testable import CofferPlaces
import CofferTestSupport
import Foundation
import Testing

/// The importers against Fixtures/expected.json, which make_places.py computes from the files it writes, by rules
/// written down in Fixtures/README.md.
@Suite("Importing places: CardOnCue CSVs, GeoJSON, GeoJSON sequences, Overpass")
struct ImportTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func bytes(_ name: String) throws -> [UInt8] {
        let path = fixtures.appendingPathComponent(name).path
        guard let data = FileManager.default.contents(atPath: path) else {
            Issue.record("fixture \(name) is missing: run Fixtures/make_places.py")
            throw CocoaError(.fileNoSuchFile)
        }
        return Array(data)
    }

    static func expected() throws -> [String: Any] {
        let data = try Data(contentsOf: fixtures.appendingPathComponent("expected.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func knownNetworks() throws -> [Network] {
        try PlaceImporter.read(try bytes("networks.csv")).networks
    }

    static let goodFiles = [
        "networks.csv", "networks_wikidata.csv", "costco.csv", "whole-foods.csv", "kohls.csv", "sfpl.csv",
        "stores.geojson", "stores.geojsonseq", "stores_nors.geojsonseq", "overpass.json",
    ]

    @Test("every good fixture imports exactly as expected.json says", arguments: goodFiles)
    func goodFile(_ name: String) throws {
        let expected = try #require(try Self.expected()[name] as? [String: Any], "expected.json has no entry for \(name)")
        let isLocationsCSV = name.hasSuffix(".csv") && !name.hasPrefix("networks")
        let result = try PlaceImporter.read(
            try Self.bytes(name), network: isLocationsCSV ? String(name.dropLast(4)) : nil,
            known: isLocationsCSV ? try Self.knownNetworks() : [])
        let networks = try #require(expected["networks"] as? [[String: Any]])
        #expect(result.networks.sorted { $0.id < $1.id }.map(Self.json) == networks.map(Self.normalized), "networks of \(name)")
        let locations = try #require(expected["locations"] as? [[String: Any]])
        let ours = result.locations.sorted { $0.id < $1.id }
        #expect(ours.map(\.id) == locations.map { $0["id"] as? String ?? "" }, "location ids of \(name)")
        for (location, theirs) in zip(ours, locations) {
            #expect(location.networkID == theirs["network_id"] as? String, "\(location.id)")
            #expect(location.name == theirs["name"] as? String, "\(location.id)")
            #expect(location.address == theirs["address"] as? String, "\(location.id)")
            #expect(location.phone == theirs["phone"] as? String, "\(location.id)")
            #expect(location.hours == theirs["hours"] as? String, "\(location.id)")
            #expect(location.radius == theirs["radius_meters"] as? Int, "\(location.id)")
            let latitude = try #require(theirs["lat"] as? Double)
            let longitude = try #require(theirs["lon"] as? Double)
            #expect(abs(location.point.latitude - latitude) < 2e-7 && abs(location.point.longitude - longitude) < 2e-7, "\(location.id)")
        }
        #expect(result.skipped.count == expected["skipped"] as? Int, "skipped in \(name): \(result.skipped)")
    }

    static func json(_ network: Network) -> [String: String] {
        [
            "id": network.id, "name": network.name, "wikidata": network.wikidata ?? "null",
            "canonical_names": network.canonicalNames.joined(separator: "|"), "category": network.category.rawValue,
            "is_large_area": "\(network.isLargeArea)", "default_radius_meters": "\(network.defaultRadius)",
            "tags": network.tags.joined(separator: "|"),
        ]
    }

    static func normalized(_ network: [String: Any]) -> [String: String] {
        [
            "id": network["id"] as? String ?? "", "name": network["name"] as? String ?? "",
            "wikidata": network["wikidata"] as? String ?? "null",
            "canonical_names": (network["canonical_names"] as? [String] ?? []).joined(separator: "|"),
            "category": network["category"] as? String ?? "", "is_large_area": "\(network["is_large_area"] as? Bool ?? false)",
            "default_radius_meters": "\(network["default_radius_meters"] as? Int ?? 0)",
            "tags": (network["tags"] as? [String] ?? []).joined(separator: "|"),
        ]
    }

    @Test(
        "bad files are refused whole, naming the record and the rule, never a value",
        arguments: [
            ("bad_lat.csv", "record 4: latitude"), ("bad_nan.csv", "record 3: latitude"), ("bad_lon.csv", "record 5: longitude"),
            ("bad_columns.csv", "no lon column"), ("bad_networks_dup.csv", "repeats"), ("bad_radius.csv", "record 3: radius"),
            ("bad_quote.csv", "never closed"), ("bad_feature.geojson", "record 2: latitude"), ("bad_json.geojson", "malformed"),
            ("bad_geometry.geojson", "record 2: a ring"),
        ])
    func badFile(_ name: String, _ message: String) throws {
        let bytes = try Self.bytes(name)
        let network = name.contains("networks") || name.hasSuffix("json") ? nil : "costco"
        do {
            let result = try PlaceImporter.read(bytes, network: network, known: try Self.knownNetworks())
            Issue.record("\(name) was accepted with \(result.locations.count) locations")
        } catch let error as PlacesError {
            #expect(error.description.contains(message), "\(name): \(error.description)")
            #expect(!error.description.contains("91.5") && !error.description.contains("-180.5"))
        }
    }

    /// CardOnCue's importer reads a radius with JavaScript's `parseInt(text) || 100`: node computes that here, and
    /// every radius accepted must come out as it does (Costco's default is 100, so "the network's default" agrees).
    @Test(
        "a location's radius is read as CardOnCue's importer reads it, or the row is refused",
        arguments: [
            ("120", true), ("120.7", true), ("99.99", true), (" 80 ", true), ("0", true), ("", true), ("5000", true),
            ("-5", false), ("120m", false), ("1e3", false), ("abc", false), ("NaN", false), (".5", false), ("+90", false),
            ("0x20", false), ("9999999999", false), ("1.2.3", false), ("12 0", false),
        ])
    func radiusAsCardOnCueReadsIt(_ text: String, _ accepted: Bool) throws {
        let csv = "name,address,lat,lon,radius,phone\nCostco One,,37.7749,-122.4194,100,\nCostco Two,,37.78,-122.42,\"\(text)\",\n"
        let known = try Self.knownNetworks()
        let result = Result { () throws(PlacesError) in try PlaceImporter.read(Array(csv.utf8), network: "costco", known: known) }
        switch (result, accepted) {
        case (.success(let read), true):
            let ours = read.locations.last?.effectiveRadius(in: known.first { $0.id == "costco" }) ?? -1
            let literal = String(decoding: try JSONSerialization.data(withJSONObject: [text]), as: UTF8.self)
            let node = try TestSupport.run("/usr/bin/node", ["-e", "process.stdout.write(String(parseInt(\(literal)[0]) || 100))"])
            #expect(node.status == 0 && String(ours) == node.stdout, "\(text): ours \(ours), CardOnCue's \(node.stdout)")
        case (.failure(let error), false):
            #expect(error.description.hasPrefix("record 3: radius"), "\(text): \(error.description)")
        case (.success(let read), false):
            Issue.record("\(text) was read as \(String(describing: read.locations.last?.radius))")
        case (.failure(let error), true):
            Issue.record("\(text) was refused: \(error.description)")
        }
    }

    @Test("a locations CSV needs a known network; formats are detected; limits hold")
    func rules() throws {
        let costco = try Self.bytes("costco.csv")
        #expect(throws: PlacesError.unknownNetwork) { try PlaceImporter.read(costco, network: "nowhere", known: []) }
        #expect(throws: PlacesError.self) { try PlaceImporter.read(costco, network: nil, known: []) }
        #expect(PlaceFormat.detect(costco) == .locationsCSV)
        #expect(PlaceFormat.detect(try Self.bytes("networks.csv")) == .networksCSV)
        #expect(PlaceFormat.detect(try Self.bytes("stores.geojson")) == .geoJSON)
        #expect(PlaceFormat.detect(try Self.bytes("stores.geojsonseq")) == .geoJSONSequence)
        #expect(PlaceFormat.detect(try Self.bytes("stores_nors.geojsonseq")) == .geoJSONSequence)
        #expect(PlaceFormat.detect(try Self.bytes("overpass.json")) == .overpass)
        #expect(PlaceFormat.detect(Array("hello\n".utf8)) == nil)
        #expect(throws: PlacesError.self) { try PlaceImporter.read(Array("hello\n".utf8)) }
        #expect(throws: PlacesError.self) { try PlaceImporter.read([]) }
        // Every record of a GeoJSON file can be put in one named network, brand or not.
        let forced = try PlaceImporter.read(try Self.bytes("stores.geojson"), network: "costco", known: try Self.knownNetworks())
        #expect(!forced.locations.isEmpty && forced.locations.allSatisfy { $0.networkID == "costco" } && forced.networks.isEmpty)
    }

    /// `JSONSerialization` read `true` as 1 wherever a number was asked for, so `[true, false]` was a place at 0, 1.
    @Test("a boolean is never a coordinate, in GeoJSON or Overpass; a number is text where a property wants text")
    func booleansAreNotCoordinates() throws {
        let brand = #""brand":"Costco","brand:wikidata":"Q715583""#
        let point = { (coordinates: String) in
            Array(#"{"type":"Feature","properties":{\#(brand),"ref":1777},"geometry":{"type":"Point","coordinates":\#(coordinates)}}"#.utf8)
        }
        #expect(throws: PlacesError.record(1, .invalid("a position must be [longitude, latitude]"))) {
            try PlaceImporter.read(point("[true, false]"), format: .geoJSON)
        }
        let read = try PlaceImporter.read(point("[-122.4, 37.7]"), format: .geoJSON)
        #expect(read.locations.count == 1 && read.locations[0].id.hasSuffix(":1777"), "the number 1777 is the reference")
        let overpass = { (lat: String) in
            Array(#"{"elements":[{"type":"node","id":1,"lat":\#(lat),"lon":-122.4,"tags":{\#(brand)}}]}"#.utf8)
        }
        #expect(try PlaceImporter.read(overpass("37.7"), format: .overpass).locations.count == 1)
        #expect(throws: PlacesError.self) { try PlaceImporter.read(overpass("true"), format: .overpass) }
    }
}
